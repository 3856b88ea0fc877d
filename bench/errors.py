"""The exceptions of the benchmarks. Each says when it is raised."""

from __future__ import annotations

__all__ = ["BenchError"]


class BenchError(Exception):
    """Raised when a benchmark cannot produce its figures: a process did not start or died, a
    service did not answer in time, a step was refused. The message names what and why."""
