"""Scenario sweeps on Ray: episodes per hour of a Polaris episode, with 1 and 2 Ray workers, and
what Ray costs an episode against running it in this process.

The episode is the route follower (acres_sim --autopilot) driving a Polaris for 60 simulated
seconds in lockstep (12 steps per request), judged by two criteria, with perception off and on.
Ray's cost compares the sweep's time per episode on 1 worker with the median of 3 of the same
episodes run in this process (Ray running beside it, as in the sweep).
One local Ray of 2 CPUs serves every row: 1 worker runs the episodes one at a time (2 CPUs per
episode), 2 workers two at a time (1 CPU each). A sweep's time runs from the submission of its
episodes to the last result; Ray's start, a fixed cost per sweep, is in the notes.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Final

from acres_bridge.scenario import Episode, expand, parse_scenario
from acres_bridge.scenario.episode import run_episode
from acres_bridge.scenario.sweep_runner import SweepOptions, init_local_ray, run_sweep
from bench._stats import median
from bench.core import Benchmark, Outcome, Row, Settings

__all__ = ["BENCHMARK", "run"]

SCENARIO: Final = """\
acres_scenario: 1
name: bench_route
session: {{vehicle: polaris, perception: {perception}}}
duration_s: {duration}
stack: {{builtin: autopilot}}
criteria:
  - {{kind: max_cross_track_error, max_m: 1.0}}
  - {{kind: min_distance, min_m: 1}}
sweep:
  matrix:
    seed: {seeds}
"""
WORKERS: Final = (1, 2)
RAY_CPUS: Final = 2
PERCEPTION: Final = {False: "perception off", True: "perception on"}
ROWS = (
    *(
        (f"scenario episodes per hour, {p}, {w} Ray worker{'s' if w > 1 else ''}", "episodes/h")
        for p in PERCEPTION.values()
        for w in WORKERS
    ),
    *((f"Ray's cost per episode, {p}", "%") for p in PERCEPTION.values()),
)


def _episodes(perception: bool, duration_s: float, count: int) -> list[Episode]:
    text = SCENARIO.format(
        perception=str(perception).lower(), duration=duration_s, seeds=list(range(1, count + 1))
    )
    return expand(parse_scenario(text, "bench"))


def _sweep_s(episodes: list[Episode], workers: int, folder: Path) -> float:
    """Wall time from the submission of the episodes to their last result, on the running Ray."""
    marks: dict[str, float] = {}

    def status(_running: int, _waiting: int) -> None:
        marks.setdefault("start", time.monotonic())  # the first call: the episodes are submitted

    def finished(result: object, _done: int, _total: int) -> None:
        marks["end"] = time.monotonic()

    options = SweepOptions(output=folder, scenario_dir=folder, cpus_per_episode=RAY_CPUS / workers)
    outcome = run_sweep(episodes, options, on_result=finished, on_status=status)
    failed = [r.episode for r in outcome.results if r.verdict != "PASS"]
    if failed:
        raise RuntimeError(f"episodes did not pass: {failed}")
    return marks["end"] - marks["start"]


def _alone_s(episodes: list[Episode], folder: Path, repetitions: int) -> float:
    """The median wall time of the sweep's episodes run one by one in this process, without Ray."""
    walls = []
    for episode in episodes[:repetitions]:
        started = time.monotonic()
        result = run_episode(episode, folder, scenario_dir=folder)
        walls.append(time.monotonic() - started)
        if result.verdict != "PASS":
            raise RuntimeError(
                f"{episode.name} run alone gave {result.verdict}: {result.error or result.failed}"
            )
    return median(walls)


def run(settings: Settings) -> Outcome:
    # --quick, a smoke test of every row: one short episode a sweep.
    duration_s, count, repetitions = settings.pick((60.0, 4, 3), (3.0, 1, 1))
    started = time.monotonic()
    init_local_ray(RAY_CPUS)
    ray_start_s = time.monotonic() - started
    throughput: list[Row] = []
    costs: list[Row] = []
    notes: list[str] = [f"Ray's start: {ray_start_s:.1f} s, once per sweep; not in the figures."]
    try:
        with tempfile.TemporaryDirectory(prefix="acres_bench_") as scratch:
            for perception, label in PERCEPTION.items():
                episodes = _episodes(perception, duration_s, count)
                alone_s = _alone_s(episodes, Path(scratch) / "alone", repetitions)
                per_episode = {}
                for workers in WORKERS:
                    wall = _sweep_s(episodes, workers, Path(scratch) / f"{label}-{workers}")
                    per_episode[workers] = wall / count
                    plural = "s" if workers > 1 else ""
                    throughput.append(
                        Row(
                            name=f"scenario episodes per hour, {label}, {workers} Ray worker{plural}",
                            value=3600.0 / per_episode[workers],
                            unit="episodes/h",
                            notes=f"{count} episodes of {duration_s:g} sim s in {wall:.1f} s",
                        )
                    )
                cost = 100.0 * (per_episode[1] / alone_s - 1.0)
                speedup = per_episode[1] / per_episode[2]
                costs.append(
                    Row(
                        name=f"Ray's cost per episode, {label}",
                        value=cost,
                        unit="%",
                        notes=f"alone {alone_s:.1f} s, on 1 Ray worker {per_episode[1]:.1f} s; target <= 5",
                    )
                )
                notes.append(f"{label}: 2 workers give {speedup:.2f}x the episodes of 1 (target >= 1.7).")
    finally:
        import ray  # noqa: PLC0415 (imported by init_local_ray)

        ray.shutdown()
    return Outcome(rows=(*throughput, *costs), footnotes=tuple(notes))


BENCHMARK = Benchmark(key="scenarios", rows=ROWS, run=run)
