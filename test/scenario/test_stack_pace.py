"""A stack's declared command rates in lockstep: the stepper steps to each tick of the stack's
timers and waits for what they owe in simulated time, so a 50 Hz stack sends at 50 Hz whatever the
request's length; a stack that falls behind is an ERROR that names the topic, owed and sent, and
one whose timers run on the wall clock is named before any step."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from acres_bridge.scenario import Verdict, expand, parse_scenario
from acres_bridge.scenario.episode import run_episode
from acres_bridge.scenario.schema import StackSpec
from acres_bridge.scenario.stack import stack_command
from acres_bridge.testing import SessionSim, SimTimeoutError

pytestmark = pytest.mark.integration

STACKS = Path(__file__).resolve().parent / "stacks"
ULC = "/vehicle/ulc/cmd"
BEHIND = (
    r"the stack fell behind: /vehicle/ulc/cmd sent (\d+) of the (\d+) its 50 Hz timer owes "
    r"by [\d.]+ s of simulated time"
)

DEMO = """\
acres_scenario: 1
name: paced
session: {{vehicle: polaris, perception: false}}
duration_s: 5
stepping: {{mode: lockstep, steps_per_request: 4{rates}}}
stack: {{builtin: dbw_demo_driver, args: {{speed_mps: 2.0}}}}
criteria:
  - {{kind: topic_rate, topic: /vehicle/ulc/cmd, min_hz: 1}}
  - {{kind: no_dbw_timeout}}
"""
RATES = ", stack_rates: {/vehicle/ulc/cmd: 50}"

LAGGING = """\
acres_scenario: 1
name: lagging
session: {{vehicle: polaris, perception: false}}
duration_s: 4
stepping: {{mode: lockstep, stack_rates: {{/vehicle/ulc/cmd: 50}}}}
stack: {{python: "{stack}:build_node", python_path: ["{stacks}"]}}
criteria:
  - {{kind: topic_rate, topic: /vehicle/ulc/cmd, min_hz: 1}}
"""


def _run(text: str, run_dir: Path) -> tuple[Verdict, str | None, dict[str, object]]:
    (episode,) = expand(parse_scenario(text))
    result = run_episode(episode, run_dir, scenario_dir=run_dir)
    return result.verdict, result.error, dict(result.metrics)


def test_a_50_hz_stack_stepped_4_steps_a_request_sends_at_50_hz_of_simulated_time(tmp_path):
    verdict, error, metrics = _run(DEMO.format(rates=RATES), tmp_path)
    assert verdict is Verdict.PASS, error
    rate_hz = metrics["criteria"]["topic_rate"]  # type: ignore[index]
    print(f"ULC rate with stack_rates: {rate_hz} Hz of simulated time")
    assert rate_hz == pytest.approx(50.0, abs=1.0)
    assert metrics["criteria"]["no_dbw_timeout"] == 0  # type: ignore[index]


def test_without_declared_rates_the_stack_answers_at_least_once_a_request(tmp_path):
    """The wait without rates, kept: at least one answer a 4-step request (30 a simulated second),
    more when the stack's timer wakes on a clock within the request; no count is owed."""
    verdict, error, metrics = _run(DEMO.format(rates=""), tmp_path)
    assert verdict is Verdict.PASS, error
    rate_hz = metrics["criteria"]["topic_rate"]  # type: ignore[index]
    print(f"ULC rate without stack_rates: {rate_hz} Hz of simulated time")
    assert 29.0 <= rate_hz <= 50.5


def test_a_stack_short_of_its_declared_rate_is_an_error_naming_topic_owed_and_sent(tmp_path):
    verdict, error, _ = _run(LAGGING.format(stack="lagging_stack", stacks=STACKS), tmp_path)
    assert verdict is Verdict.ERROR
    assert error is not None
    match = re.search(BEHIND, error)
    assert match is not None, error
    sent, owed = int(match[1]), int(match[2])
    assert sent < owed


def test_a_stack_on_the_wall_clock_is_an_error_before_any_step(tmp_path):
    verdict, error, _ = _run(LAGGING.format(stack="wall_clock_stack", stacks=STACKS), tmp_path)
    assert verdict is Verdict.ERROR
    assert error is not None
    assert "do not subscribe /clock" in error
    assert "/wall_clock_stack (/vehicle/ulc/cmd)" in error
    assert "use_sim_time:=true" in error


@pytest.mark.acres_sim(vehicle="polaris", stack_rates={ULC: 50})
def test_a_sim_with_stack_rates_steps_a_50_hz_stack_at_50_hz(acres_sim: SessionSim) -> None:
    acres_sim.start_stack(
        [sys.executable, "-m", "acres_bridge.other.dbw_demo_driver", "--ros-args", "-p", "use_sim_time:=true"]
    )
    acres_sim.wait_for_stack()
    start = acres_sim.now
    acres_sim.step(seconds=2.0)
    sent = len(acres_sim.messages(ULC, since=start + 1e-9))
    assert sent == 100  # 2 s at 50 Hz: one a tick, none skipped


@pytest.mark.acres_sim(vehicle="polaris", stack_rates={ULC: 50})
def test_a_sim_with_stack_rates_says_when_the_stack_falls_behind(acres_sim: SessionSim) -> None:
    command = stack_command(StackSpec(python="lagging_stack:build_node", python_path=[str(STACKS)]), STACKS)
    assert command is not None
    acres_sim.start_stack(command, cwd=STACKS)

    def run_a_second() -> None:
        acres_sim.wait_for_stack()
        acres_sim.step(seconds=1.0)

    with pytest.raises(SimTimeoutError, match=BEHIND):
        run_a_second()
    assert acres_sim.now < 1.0  # it stopped where the stack fell behind


REPEAT = """\
acres_scenario: 1
name: repeat
session: {vehicle: polaris, perception: false}
duration_s: 4
stepping: {mode: lockstep, stack_rates: {/vehicle/ulc/cmd: 50, /vehicle/steering/cmd: 50}}
stack: {builtin: dbw_demo_driver, args: {speed_mps: 2.0}}
record: {topics: all}
criteria:
  - {kind: topic_rate, topic: /vehicle/ulc/cmd, min_hz: 49}
  - {kind: no_dbw_timeout}
"""


def test_a_paced_stack_run_twice_gives_the_same_bytes(tmp_path):
    """The demo driver, a 50 Hz stack on simulated time, from its first commands (its enable, its
    gear, the drive-by-wire's start) into the drive: the second run repeats the first to the byte,
    whatever the machine's load did to either."""
    (episode,) = expand(parse_scenario(REPEAT))
    results = [run_episode(episode, tmp_path / run, scenario_dir=tmp_path) for run in ("a", "b")]
    for result in results:
        assert result.verdict is Verdict.PASS, result.error
    for name in ("metrics.json", "recording.mcap", "episode_log.mcap"):
        first = (tmp_path / "a" / episode.folder / name).read_bytes()
        assert first == (tmp_path / "b" / episode.folder / name).read_bytes(), name
    assert results[0].metrics["criteria"]["topic_rate"] == pytest.approx(50.0, abs=1.0)  # type: ignore[index]
