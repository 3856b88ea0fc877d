"""examples/rl as a user runs them: train_ppo.py trains and saves a model, evaluate.py runs it
through policy_driver in the route_policy scenario and prints a verdict per episode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from user_env import user_environment

pytest.importorskip(
    "stable_baselines3", reason="Stable-Baselines3 is not installed (pip install acres_bridge[rl])"
)

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rl"


def _run(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=cwd,
        env=user_environment(),  # ros2 (the scenario's `run` stack) beside this Python
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_model_trained_by_train_ppo_is_evaluated_through_the_policy_node(tmp_path: Path):
    trained = _run([str(EXAMPLES / "train_ppo.py"), "--steps", "128", "--out", "route.zip"], tmp_path)
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert (tmp_path / "route.zip").is_file()

    evaluated = _run(
        [str(EXAMPLES / "evaluate.py"), "route.zip", "--output", "runs", "--first", "1"], tmp_path
    )
    assert evaluated.returncode in (0, 1), evaluated.stderr[-2000:]  # an untrained policy may fail
    lines = evaluated.stdout.splitlines()
    assert [line.split()[:2] for line in lines] in (
        [["PASS", "route_policy/seed=1:"]],
        [["FAIL", "route_policy/seed=1:"]],
    ), evaluated.stdout
    log = (tmp_path / "runs" / "route_policy" / "seed=1" / "stack.log").read_text()
    assert f"driving a polaris with {tmp_path / 'route.zip'}" in log
