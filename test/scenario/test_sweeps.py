"""Sweeps on Ray, as a user runs them: acres_scenario in its own process, its episodes in
sessions of their own, a verdict each, and every process ended whatever happens."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acres_bridge.processes import free_port, localhost_environment
from acres_bridge.scenario import expand, load_scenario
from acres_bridge.scenario.episode import run_episode
from acres_bridge.scenario.results import RESULTS_FILE, TORN_FILE
from acres_bridge.session.reaper import end_run_processes, run_processes
from acres_bridge.tools.bag import open_bag

pytest.importorskip("ray")
pytestmark = pytest.mark.integration

STACKS = Path(__file__).resolve().parent / "stacks"
EXIT_TIMEOUT_S = 30.0
SWEEP_TIMEOUT_S = 240.0

TRACTOR = f"""\
acres_scenario: 1
name: tractor
session: {{vehicle: maxxum, start: {{x: 40, y: -30, yaw_deg: 90}}}}
duration_s: 6
stack: {{python: "tractor_stack:build_node", python_path: ["{STACKS}"], args: {{speed_mps: 1.0}}}}
criteria:
  - {{kind: max_speed, max_mps: 1.5}}
  - {{kind: topic_rate, topic: cmd_vel, min_hz: 5}}
sweep:
  list:
    - {{args: {{speed_mps: 1.0}}}}
    - {{args: {{speed_mps: 3.0}}}}
    - {{args: {{crash_at_s: 1.0}}}}
"""

AUTOPILOT = """\
acres_scenario: 1
name: autopilot
session: {vehicle: polaris, start_utc: 2026-06-21T05:30:00Z}
duration_s: 3
stack: {builtin: autopilot}
record: {topics: all}
criteria:
  - {kind: max_cross_track_error, max_m: 0.5}
  - {kind: min_distance, min_m: 2}
sweep:
  matrix:
    seed: [5, 6, 7]
"""


def scenario_file(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def acres_scenario(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "acres_bridge.scenario.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env or localhost_environment(),
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str], timeout_s: float = SWEEP_TIMEOUT_S) -> tuple[int, str]:
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"acres_scenario did not end within {timeout_s} s:\n{output}")
    return process.returncode, output


def results(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / RESULTS_FILE).read_text().splitlines()]


def test_a_sweep_gives_each_episode_its_verdict_and_the_run_its_exit_status(tmp_path):
    run = tmp_path / "run"
    code, output = finish(
        acres_scenario("run", str(scenario_file(tmp_path, TRACTOR)), "-o", str(run), "--cpus", "2")
    )
    assert code == 2, output  # an episode could not run
    verdicts = {r["episode"]: r for r in results(run)}
    assert {name: r["verdict"] for name, r in verdicts.items()} == {
        "tractor/speed_mps=1.0": "PASS",
        "tractor/speed_mps=3.0": "FAIL",
        "tractor/crash_at_s=1.0": "ERROR",
    }
    failed = verdicts["tractor/speed_mps=3.0"]
    (max_speed,) = [c for c in failed["criteria"] if not c["passed"]]
    assert max_speed["name"] == "max_speed"
    assert max_speed["value"] > 1.5
    crashed = verdicts["tractor/crash_at_s=1.0"]["error"]
    assert crashed.startswith("stack exited with status 3")
    assert "crashing on purpose" in crashed  # the tail of the guilty process's log
    passed = run / "tractor" / "speed_mps=1.0"
    for name in ("episode_log.mcap", "recording.mcap", "simulator.log", "bridge.log"):
        assert (passed / name).stat().st_size > 0, name
    assert (passed / "stack.log").exists()  # a quiet stack's log is empty
    assert json.loads((passed / "verdict.json").read_text()) == {
        "verdict": "PASS",
        "failed": [],
        "error": None,
    }
    with open_bag(passed / "recording.mcap") as bag:  # rosbag2's layout: readable with rosbags too
        topics = bag.topics()
        assert set(topics) == {"/ground_truth/odom", "/cmd_vel"}
        assert (
            topics["/ground_truth/odom"].message_count
            == json.loads((passed / "metrics.json").read_text())["messages"]["ground_truth/odom"]
        )
    assert "3 episode(s)" in output
    assert "1 PASS, 1 FAIL, 1 ERROR" in output
    assert list(run_processes(run)) == []


def test_an_interrupted_sweep_leaves_nothing_running_and_resumes_what_is_missing(tmp_path):
    run = tmp_path / "run"
    path = scenario_file(tmp_path, AUTOPILOT)
    sweep = acres_scenario("run", str(path), "-o", str(run), "--cpus", "1")
    deadline = time.monotonic() + SWEEP_TIMEOUT_S
    while time.monotonic() < deadline and not ((run / RESULTS_FILE).exists() and results(run)):
        assert sweep.poll() is None, sweep.communicate()[0]
        time.sleep(0.1)
    os.kill(sweep.pid, signal.SIGINT)
    code, output = finish(sweep, EXIT_TIMEOUT_S)
    assert code == 0, output
    assert "Traceback" not in output
    first = results(run)
    assert 1 <= len(first) < 3, output
    assert "--resume runs them" in output
    assert list(run_processes(run)) == []
    torn = b'{"criteria": [], "episode": "autopilot/seed=7", "verdict": "PA'  # a write cut by SIGKILL
    with (run / RESULTS_FILE).open("ab") as table:
        table.write(torn)
    code, output = finish(acres_scenario("run", str(path), "-o", str(run), "--cpus", "1", "--resume"))
    assert code == 0, output
    assert f"[{len(first) + 1}/3]" in output  # only the missing ones ran
    assert "a torn last line" in output
    assert (run / TORN_FILE).read_bytes() == torn + b"\n"  # set aside as it was, not lost
    after = results(run)  # every line whole: the first result after the tear is not glued to it
    assert after[: len(first)] == first
    assert sorted(r["episode"] for r in after) == [f"autopilot/seed={s}" for s in (5, 6, 7)]


def test_an_episode_gives_the_same_files_alone_and_in_a_sweep_of_two_workers(tmp_path):
    path = scenario_file(tmp_path, AUTOPILOT.replace("seed: [5, 6, 7]", "seed: [5, 6]"))
    alone = tmp_path / "alone"
    episode = expand(load_scenario(path))[0]
    assert run_episode(episode, alone, scenario_dir=tmp_path).verdict == "PASS"
    swept = tmp_path / "swept"
    code, output = finish(acres_scenario("run", str(path), "-o", str(swept), "--cpus", "2"))
    assert code == 0, output
    for name in ("episode_log.mcap", "recording.mcap", "metrics.json"):
        mine = (alone / episode.folder / name).read_bytes()
        assert mine == (swept / episode.folder / name).read_bytes(), name
    other = swept / "autopilot" / "seed=6" / "episode_log.mcap"
    assert other.read_bytes() != (swept / episode.folder / "episode_log.mcap").read_bytes()  # the seed counts


def test_a_bad_scenario_file_starts_nothing_and_names_the_field(tmp_path):
    path = scenario_file(tmp_path, AUTOPILOT.replace("min_m: 2", "min_m: two"))
    code, output = finish(acres_scenario("run", str(path), "-o", str(tmp_path / "run")))
    assert code == 2
    assert f"{path}:9: criteria[1].min_m: Input should be a valid number" in output
    assert not (tmp_path / "run").exists()


@pytest.fixture
def two_node_cluster(tmp_path):
    """A Ray head and a second node, both on loopback on this machine; ended whatever happens.

    Not by `ray stop`: that ends every Ray process of the machine, a training or a sweep of another
    test running beside this one included. The cluster's processes carry a session folder of
    their own in their environment, and the reaper ends those alone."""
    ray = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray is not None
    marker = tmp_path / "cluster"
    env = {**localhost_environment(), "RAY_AUTH_MODE": "disabled", "ACRES_SESSION_DIR": str(marker)}
    port = free_port()
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    try:
        head = [ray, "start", "--head", f"--port={port}", "--include-dashboard=false", *common]
        subprocess.run(head, env=env, check=True, capture_output=True, timeout=120)
        worker = [ray, "start", f"--address=127.0.0.1:{port}", *common]
        subprocess.run(worker, env=env, check=True, capture_output=True, timeout=120)
        yield f"127.0.0.1:{port}", env
    finally:
        end_run_processes(marker)


def test_a_sweep_runs_on_a_two_node_cluster_through_its_address(tmp_path, two_node_cluster):
    address, env = two_node_cluster
    run = tmp_path / "run"
    path = scenario_file(tmp_path, AUTOPILOT)
    code, output = finish(acres_scenario("run", str(path), "-o", str(run), "--address", address, env=env))
    assert code == 0, output
    assert sorted(r["verdict"] for r in results(run)) == ["PASS", "PASS", "PASS"]
    assert "Connected to Ray cluster" in output or "3 PASS" in output
    assert list(run_processes(run)) == []
