"""The benchmarks of the table, in order. To add rows: write a module with a `BENCHMARK`
(a `bench.core.Benchmark`) and append it here."""

from __future__ import annotations

from bench import (
    agents,
    delivery,
    full_set,
    gym_env,
    ins_messages,
    latency,
    live_view,
    lockstep,
    perception,
    scenarios,
    sensor_models,
)
from bench.core import Benchmark, Outcome, Row, Settings

__all__ = ["BENCHMARKS", "Benchmark", "Outcome", "Row", "Settings", "row_names"]

BENCHMARKS: tuple[Benchmark, ...] = (
    lockstep.BENCHMARK,
    latency.BENCHMARK,
    perception.BENCHMARK,
    ins_messages.BENCHMARK,
    sensor_models.BENCHMARK,
    full_set.BENCHMARK,
    live_view.BENCHMARK,
    delivery.BENCHMARK,
    agents.BENCHMARK,
    scenarios.BENCHMARK,
    gym_env.BENCHMARK,
)


def row_names() -> tuple[str, ...]:
    """Every row name of the table, in order."""
    return tuple(name for benchmark in BENCHMARKS for name in benchmark.row_names)
