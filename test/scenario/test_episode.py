"""One episode in this process, as `acres_scenario run FILE --only NAME` and the Python API run it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from acres_bridge.processes import localhost_environment
from acres_bridge.scenario import Verdict, expand, parse_scenario
from acres_bridge.scenario.episode import _Reader, run_episode
from acres_bridge.session.reaper import run_processes

pytestmark = pytest.mark.integration

STACKS = Path(__file__).resolve().parent / "stacks"

ROS2_RUN = """\
acres_scenario: 1
name: ros2_run
session: {vehicle: polaris}
duration_s: 8
stepping: {steps_per_request: 4}
stack: {run: "acres_bridge dbw_demo_driver", args: {speed_mps: 2.0}}
criteria:
  - {kind: topic_rate, topic: /vehicle/ulc/cmd, min_hz: 20}
  - {kind: min_distance, min_m: 3}
sweep:
  list: [{seed: 1}, {seed: 2}]
"""


def test_a_ros2_run_stack_drives_its_episode_in_the_session_s_domain(tmp_path):
    pytest.importorskip("ros2cli", reason="the ros2 command line is not installed")
    path = tmp_path / "s.yaml"
    path.write_text(ROS2_RUN)
    run = tmp_path / "run"
    command = [sys.executable, "-m", "acres_bridge.scenario.cli", "run", str(path), "-o", str(run)]
    done = subprocess.run(
        [*command, "--only", "ros2_run/seed=2"],
        capture_output=True,
        text=True,
        timeout=240,
        env=localhost_environment(),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 episode(s)" in done.stdout
    (line,) = (run / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert result["episode"] == "ros2_run/seed=2"
    assert result["verdict"] == "PASS", result
    assert result["metrics"]["criteria"]["topic_rate"] >= 20
    assert not (run / "ros2_run" / "seed=1").exists()  # --only ran that one alone
    assert list(run_processes(run)) == []


HUNG = """\
acres_scenario: 1
name: slow
session: {vehicle: polaris}
duration_s: 600
timeout_s: 3
stack: {builtin: autopilot}
criteria: [{kind: min_distance, min_m: 1}]
"""


def test_an_episode_past_its_wall_clock_limit_is_an_error_and_leaves_nothing_running(tmp_path):
    (episode,) = expand(parse_scenario(HUNG))
    result = run_episode(episode, tmp_path, scenario_dir=tmp_path)
    assert result.verdict is Verdict.ERROR
    assert result.error is not None
    assert result.error.startswith("the episode did not end within its wall-clock limit of 3 s")
    assert "--- last lines of simulator.log ---" in result.error
    assert json.loads((tmp_path / "slow" / "verdict.json").read_text())["verdict"] == "ERROR"
    assert list(run_processes(tmp_path)) == []


REALTIME = """\
acres_scenario: 1
name: free_run
session: {vehicle: polaris}
duration_s: 3
stepping: {mode: realtime}
stack: {builtin: autopilot}
criteria:
  - {kind: min_distance, min_m: 1}
  - {kind: no_dbw_override}
"""


def test_a_real_time_episode_runs_until_its_clock_passes_the_duration(tmp_path):
    (episode,) = expand(parse_scenario(REALTIME))
    result = run_episode(episode, tmp_path, scenario_dir=tmp_path)
    # A free-running reader on a busy machine can lose samples (the spec's depth-10 writers): then
    # the episode is an ERROR that names the silence, never a PASS judged on what is missing.
    lost = result.verdict is Verdict.ERROR and "silent for" in str(result.error)
    assert result.verdict is Verdict.PASS or lost, result.error or result.failed
    assert result.metrics["sim_time_s"] >= 3.0
    assert result.metrics["messages"]["/sim/ground_truth/odom"] > 0
    assert list(run_processes(tmp_path)) == []


LOSSY = """\
acres_scenario: 1
name: lossy
session: {vehicle: polaris}
duration_s: 3
stack: {builtin: autopilot}
criteria:
  - {kind: max_speed, max_mps: 10}
  - {kind: min_distance, min_m: 1}
"""


def test_an_episode_that_lost_its_ground_truth_is_an_error_never_a_pass(tmp_path, monkeypatch):
    """A criterion judged on missing data passed (max_speed on zero messages). Here the runner's
    reader loses the ground truth from 1 s on, as a session that drops frames would."""
    read = _Reader.read

    def losing(self: _Reader, topic: str, message: object, time_ns: int) -> None:
        if topic != "/sim/ground_truth/odom" or time_ns < 1_000_000_000:
            read(self, topic, message, time_ns)

    monkeypatch.setattr(_Reader, "read", losing)
    (episode,) = expand(parse_scenario(LOSSY))
    result = run_episode(episode, tmp_path, scenario_dir=tmp_path)
    assert result.verdict is Verdict.ERROR
    assert result.error is not None
    assert result.error.startswith("criteria without evidence, not judged: max_speed: /sim/ground_truth/odom")
    assert re.search(r"silent for 2\.0\d\d s from 0\.99\d s", result.error), result.error
    speed = next(c for c in result.criteria if c["name"] == "max_speed")
    assert speed["evidence"][0]["topic"] == "/sim/ground_truth/odom"
    assert 0 < speed["evidence"][0]["messages"] <= 101
    assert json.loads((tmp_path / "lossy" / "verdict.json").read_text())["verdict"] == "ERROR"


def test_every_criterion_of_an_episode_states_its_evidence(tmp_path):
    (episode,) = expand(parse_scenario(LOSSY))
    result = run_episode(episode, tmp_path, scenario_dir=tmp_path)
    assert result.verdict is Verdict.PASS, result.error or result.failed
    for criterion in result.criteria:
        ((evidence),) = criterion["evidence"]
        assert evidence["topic"] == "/sim/ground_truth/odom"
        assert evidence["messages"] == 276  # 100 Hz from the first fix at 0.25 s to 3 s: none lost
        assert (evidence["from_s"], evidence["to_s"]) == (0.25, 3.0)
        assert evidence["longest_gap_s"] == 0.016667  # two physics steps of 1/120 s
        assert criterion["unjudged"] is None


CHEAT = f"""\
acres_scenario: 1
name: cheat
session: {{vehicle: polaris}}
duration_s: 10
stack: {{python: "cheating_stack:build_node", python_path: ["{STACKS}"]}}
criteria:
  - {{kind: min_distance, min_m: 20}}
"""


def test_a_stack_that_talks_to_the_simulator_itself_is_refused_and_the_episode_is_an_error(tmp_path):
    """A stack that connected to its simulator's control port and sent AGENT_RESET "drove" 90 m
    without driving: min_distance passed, and the simulator's log did not mention it."""
    (episode,) = expand(parse_scenario(CHEAT))
    result = run_episode(episode, tmp_path, scenario_dir=tmp_path)
    assert result.verdict is Verdict.ERROR, result
    assert result.error is not None
    assert "the simulator refused 1 connection(s) without the session's token" in result.error
    stack_log = (tmp_path / "cheat" / "stack.log").read_text()
    assert "cheating_stack: the simulator's port: " in stack_log
    assert "the simulator's port: None" not in stack_log  # it did find the simulator
    simulator_log = (tmp_path / "cheat" / "simulator.log").read_text()
    assert "refused a client without the session's token (1 so far): 'cheat'" in simulator_log
    assert not (tmp_path / "cheat" / ".session_token").exists()
    assert list(run_processes(tmp_path)) == []
