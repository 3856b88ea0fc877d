"""RLlib's PPO trains over the environment for a few iterations, as a user runs
examples/rl/train_rllib.py: Ray started on this machine in that process, the environment in a Ray
worker (as on a cluster) with a session of its own, and every session ended with the algorithm.

The training runs in a process of its own, bounded in time, so whatever Ray does to its driver
process stays there; any process of its sessions still alive afterwards is ended and fails the test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from user_env import user_environment

pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install acres_bridge[rl])")
pytest.importorskip("torch", reason="PyTorch is not installed (pip install acres_bridge[rl])")

from acres_bridge.session.reaper import end_run_processes, run_processes

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl" / "train_rllib.py"
BATCH = 64  # control periods a training iteration samples
TRAINING_TIMEOUT_S = 600


def test_ppo_trains_a_few_iterations_over_the_polaris_route_in_a_worker(tmp_path: Path) -> None:
    sessions, results = tmp_path / "sessions", tmp_path / "results.json"
    arguments = ["--iterations", "2", "--batch", str(BATCH), "--minibatch", "32", "--epochs", "1"]
    arguments += ["--env-runners", "1", "--cpus", "2", "--folder", str(sessions), "--results", str(results)]
    try:
        run = subprocess.run(
            [sys.executable, str(EXAMPLE), *arguments],
            cwd=tmp_path,
            env=user_environment(),
            capture_output=True,
            text=True,
            timeout=TRAINING_TIMEOUT_S,
            check=False,
        )
        left = list(run_processes(sessions))
    finally:
        end_run_processes(sessions)
    assert run.returncode == 0, run.stderr[-3000:]
    figures = json.loads(results.read_text())
    assert [f["sampled"] for f in figures] == [BATCH, 2 * BATCH]
    assert math.isfinite(figures[-1]["total_loss"])
    assert math.isfinite(figures[-1]["vf_loss"])
    assert run.stdout.count("iteration ") == 2
    assert left == []  # the worker's environment closed its session
    assert (sessions / "bridge.log").is_file()  # it ran there
