"""A sweep expands into named episodes, each with its values in place."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from acres_bridge.scenario import ScenarioFileError, expand, parse_scenario
from acres_bridge.scenario.sweep import folder_name

BASE = """\
acres_scenario: 1
name: route
session: {vehicle: polaris, seed: 1}
duration_s: 5
stack: {builtin: dbw_demo_driver, args: {speed_mps: 2.0, lookahead_m: 6.0}}
criteria: [{kind: max_speed, max_mps: 5}]
"""


def test_a_scenario_without_a_sweep_is_one_episode_named_after_it():
    (episode,) = expand(parse_scenario(BASE))
    assert episode.name == "route"
    assert episode.folder == "route"


def test_the_matrix_gives_every_combination_in_order_then_the_list():
    text = BASE + (
        "sweep:\n"
        "  matrix:\n"
        "    start_utc: [2026-06-21T05:30:00Z, 2026-06-21T12:00:00Z]\n"
        "    seed: [3, 4]\n"
        "    args: {speed_mps: [1.5]}\n"
        "  list:\n"
        "    - {seed: 9, start: {x: 1, y: 2, yaw_deg: 90, name: headland}}\n"
    )
    episodes = expand(parse_scenario(text))
    assert [e.name for e in episodes] == [
        "route/seed=3,start_utc=2026-06-21T05:30:00Z,speed_mps=1.5",
        "route/seed=3,start_utc=2026-06-21T12:00:00Z,speed_mps=1.5",
        "route/seed=4,start_utc=2026-06-21T05:30:00Z,speed_mps=1.5",
        "route/seed=4,start_utc=2026-06-21T12:00:00Z,speed_mps=1.5",
        "route/seed=9,start=headland",
    ]
    second = episodes[1].scenario
    assert second.session.seed == 3
    assert second.session.start_utc == datetime(2026, 6, 21, 12, 0, tzinfo=UTC)
    assert second.stack.args == {"speed_mps": 1.5, "lookahead_m": 6.0}
    assert second.sweep is None
    last = episodes[-1].scenario
    assert (last.session.seed, last.session.start.x, last.session.start.name) == (9, 1.0, "headland")
    assert last.stack.args["speed_mps"] == 2.0


def test_start_poses_without_a_name_are_labelled_by_their_index():
    text = BASE + "sweep:\n  matrix:\n    start: [{x: 0, y: 0}, {x: 5, y: 0, frame: tile}]\n"
    assert [e.name for e in expand(parse_scenario(text))] == ["route/start=0", "route/start=1"]


def test_two_episodes_named_alike_are_refused():
    text = BASE + "sweep:\n  list: [{seed: 2}, {seed: 2}]\n"
    with pytest.raises(ScenarioFileError, match="episodes named alike: route/seed=2"):
        expand(parse_scenario(text))


def test_an_empty_matrix_list_is_refused_naming_it():
    with pytest.raises(ScenarioFileError, match=r"sweep\.matrix\.seed"):
        parse_scenario(BASE + "sweep:\n  matrix:\n    seed: []\n", "s.yaml")


def test_a_folder_name_has_no_colon_and_keeps_the_scenario_folder():
    assert (
        folder_name("route/seed=3,start_utc=2026-06-21T05:30:00Z")
        == "route/seed=3,start_utc=2026-06-21T05-30-00Z"
    )
    assert folder_name("route/x=a b/c") == "route/x=a-b-c"
