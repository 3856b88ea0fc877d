"""A real scenario run for the report's tests: three episodes of the demo driver, the last one
standing still (its min_distance fails)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acres_bridge.scenario import expand, parse_scenario
from acres_bridge.scenario.episode import run_episode
from acres_bridge.scenario.results import append_result

SWEEP = """\
acres_scenario: 1
name: report_demo
session: {vehicle: polaris}
duration_s: 6
stepping: {steps_per_request: 4}
stack: {builtin: dbw_demo_driver, args: {speed_mps: 2.0}}
criteria:
  - {kind: max_cross_track_error, max_m: 0.5}
  - {kind: min_distance, min_m: 4}
sweep:
  matrix: {seed: [1, 2], start_utc: [2026-06-21T12:00:00Z]}
  list: [{seed: 3, args: {speed_mps: 0.0}}]
"""


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("run")
    for episode in expand(parse_scenario(SWEEP)):
        append_result(run, run_episode(episode, run, scenario_dir=run))
    return run
