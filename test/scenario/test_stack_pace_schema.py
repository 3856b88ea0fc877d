"""stepping.stack_rates in a scenario file: command topics of the vehicle, each at a rate a timer
on simulated time can keep."""

from __future__ import annotations

import pytest

from acres_bridge.scenario import parse_scenario
from acres_bridge.scenario.episode import episode_topics, stack_rates
from acres_bridge.scenario.errors import ScenarioFileError

SCENARIO = """\
acres_scenario: 1
name: rates
session: {{vehicle: polaris}}
duration_s: 5
stepping: {{mode: {mode}, steps_per_request: 4, stack_rates: {{{rates}}}}}
stack: {{builtin: dbw_demo_driver}}
criteria: [{{kind: min_distance, min_m: 1}}]
"""


def test_declared_rates_are_keyed_by_the_table_s_names():
    scenario = parse_scenario(SCENARIO.format(mode="lockstep", rates="vehicle/ulc/cmd: 50"))
    assert stack_rates(scenario) == {"/vehicle/ulc/cmd": 50.0}


@pytest.mark.parametrize(
    ("rates", "said"),
    [
        ("/vehicle/ulc/cmd: 0", "above 0 and at most the physics rate, 120 Hz"),
        ("/vehicle/ulc/cmd: 121", "above 0 and at most the physics rate, 120 Hz"),
        ("/vehicle/ulc/cmd: .inf", "finite number"),
        ("/vehicle/ulc/cmd: fast", "valid number"),
    ],
)
def test_a_rate_out_of_range_is_refused_with_its_topic(rates, said):
    with pytest.raises(ScenarioFileError, match=said):
        parse_scenario(SCENARIO.format(mode="lockstep", rates=rates))


def test_rates_go_with_lockstep():
    with pytest.raises(ScenarioFileError, match="stack_rates go with mode lockstep"):
        parse_scenario(SCENARIO.format(mode="realtime", rates="/vehicle/ulc/cmd: 50"))


@pytest.mark.parametrize(
    ("rates", "said"),
    [
        ("/vehicle/odom: 50", "/vehicle/odom is not a command topic of the polaris"),
        ("/vehicle/nowhere: 50", "'/vehicle/nowhere' is not a topic of the polaris"),
    ],
)
def test_a_topic_that_is_not_a_command_topic_of_the_vehicle_is_refused(rates, said):
    scenario = parse_scenario(SCENARIO.format(mode="lockstep", rates=rates))
    with pytest.raises(ScenarioFileError, match=said):
        episode_topics(scenario)


def test_auto_requests_are_a_tick_with_rates_and_a_tenth_of_a_second_without():
    paced = parse_scenario(
        SCENARIO.format(mode="lockstep", rates="/vehicle/ulc/cmd: 50").replace("4", "auto")
    )
    assert paced.stepping.steps_per_request == "auto"
    assert paced.stepping.requested_steps() == 36_000  # the ticks shape the requests
    plain = parse_scenario(SCENARIO.format(mode="lockstep", rates="").replace(", steps_per_request: 4", ""))
    assert plain.stepping.steps_per_request == "auto"
    assert plain.stepping.requested_steps() == 12
    capped = parse_scenario(SCENARIO.format(mode="lockstep", rates="/vehicle/ulc/cmd: 50"))
    assert capped.stepping.requested_steps() == 4


@pytest.mark.parametrize("value", ["0", "36001", "fast", "2.5"])
def test_steps_per_request_is_a_whole_count_in_range_or_auto(value):
    with pytest.raises(ScenarioFileError, match="steps_per_request"):
        parse_scenario(SCENARIO.format(mode="lockstep", rates="").replace("4", value))
