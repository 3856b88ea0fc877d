"""RLlib's PPO trains over the environment for a few iterations, the environment in a Ray worker
(as on a cluster) with a session of its own, and every session ends with the algorithm."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install acres_bridge[rl])")
pytest.importorskip("torch", reason="PyTorch is not installed (pip install acres_bridge[rl])")

from acres_bridge.gym.rllib import ppo_config
from acres_bridge.scenario.reaper import run_processes
from acres_bridge.scenario.sweep_runner import init_local_ray

pytestmark = pytest.mark.integration

BATCH = 64  # control periods a training iteration samples


@pytest.fixture
def local_ray():
    init_local_ray(2)
    import ray  # noqa: PLC0415 (after init_local_ray has set Ray's loopback switch)

    yield ray
    ray.shutdown()


def test_ppo_trains_a_few_iterations_over_the_polaris_route_in_a_worker(local_ray, tmp_path):
    config = ppo_config(
        env_options={"folder": str(tmp_path)},
        num_env_runners=1,
        train_batch_size=BATCH,
        minibatch_size=32,
        num_epochs=1,
    )
    algo = config.build_algo()
    try:
        results = [algo.train() for _ in range(2)]
    finally:
        algo.stop()
    sampled = [r["env_runners"]["num_env_steps_sampled_lifetime"] for r in results]
    assert sampled == [BATCH, 2 * BATCH]
    losses = results[-1]["learners"]["default_policy"]
    assert math.isfinite(losses["total_loss"])
    assert math.isfinite(losses["vf_loss"])
    assert list(run_processes(tmp_path)) == []  # the worker's environment closed its session
    assert (tmp_path / "bridge.log").is_file()  # it ran there
