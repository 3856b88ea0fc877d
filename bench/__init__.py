"""Benchmarks of the bridge: `python -m bench` prints one table of figures.

Each benchmark is a module with a `BENCHMARK` (a `bench.core.Benchmark`); `bench.registry`
lists them in table order. README.md beside this file explains every row.
"""
