"""The shipped route scenarios pose what a path follower is tested for: the route's U-turns.

Each episode of examples/scenarios/polaris_route.yaml starts on the route shortly before a turn and
runs long enough to drive through the whole of it. The demo driver passes them; a stack that only
holds its heading (examples/scenarios/heading_hold_stack.py, shipped to fail) fails them with
max_cross_track_error, while its speed, its command rate and its drive-by-wire hold.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from acres_bridge.geo.route import acre_loop
from acres_bridge.scenario import Verdict, expand, load_scenario
from acres_bridge.scenario.episode import run_episode

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ROUTE_SCENARIOS = ("polaris_route.yaml", "polaris_heading_hold.yaml")
TURN_CURVATURE = 1.0 / 6.0  # the U-turns' radius is 6 m
SPEED_MPS = 2.0


def turn_starts() -> list[float]:
    """The arc lengths where the route's turns begin."""
    route = acre_loop()
    turning = np.abs(route.curvature) > 0.5 * TURN_CURVATURE
    begins = np.flatnonzero(turning & ~np.roll(turning, 1))
    return [float(route.s[i]) for i in begins]


@pytest.mark.parametrize("file", ROUTE_SCENARIOS)
def test_every_episode_drives_through_a_whole_u_turn(file: str) -> None:
    route = acre_loop()
    for episode in expand(load_scenario(EXAMPLES / file)):
        start = episode.scenario.session.start
        assert start is not None, episode.name
        s0, off = route.project(start.x, start.y)
        assert off < 0.1, f"{episode.name} starts {off:.2f} m off the route"
        _, _, yaw = route.pose_at(s0)
        assert abs(math.remainder(math.radians(start.yaw_deg) - yaw, math.tau)) < 0.01, episode.name
        reach = s0 + 0.8 * SPEED_MPS * episode.scenario.duration_s  # a margin for starting and turning
        turns = [s for s in turn_starts() if s0 + 5.0 <= s and s + math.pi * 6.0 <= reach]
        assert turns, f"{episode.name} reaches no whole U-turn from s = {s0:.1f} m"


@pytest.mark.integration
def test_the_demo_driver_passes_a_turn_of_the_route_scenario(tmp_path: Path) -> None:
    episodes = expand(load_scenario(EXAMPLES / "polaris_route.yaml"))
    episode = next(e for e in episodes if "start=first_turn" in e.name and "seed=1" in e.name)
    result = run_episode(episode, tmp_path, scenario_dir=EXAMPLES)
    assert result.verdict is Verdict.PASS, result.error or result.failed


@pytest.mark.integration
def test_a_stack_that_holds_its_heading_fails_the_turn(tmp_path: Path) -> None:
    (first, _) = expand(load_scenario(EXAMPLES / "polaris_heading_hold.yaml"))
    result = run_episode(first, tmp_path, scenario_dir=EXAMPLES)
    assert result.verdict is Verdict.FAIL, result.error
    failed = {c["name"]: c["value"] for c in result.criteria if not c["passed"]}
    assert list(failed) == ["max_cross_track_error"]
    assert failed["max_cross_track_error"] > 3.0  # straight on past the turn's apex
    assert result.metrics["criteria"]["topic_rate"] >= 20  # it did command, all along
