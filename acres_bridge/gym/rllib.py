"""RLlib over the environments: a PPO configuration whose env runners each run sessions of their own.

    from acres_bridge.gym.rllib import ppo_config
    from acres_bridge.scenario.sweep_runner import init_local_ray
    init_local_ray(2)                        # or ray.init(address=...) on a cluster
    algo = ppo_config("acres/PolarisRoute-v0", num_env_runners=2).build_algo()
    for _ in range(10):
        print(algo.train()["env_runners"]["episode_return_mean"])

The environment is registered with Ray under its Gymnasium id, made by a creator that imports
acres_bridge.gym in the worker (so a cluster's workers need only the package installed), and
each env runner's environments start their own isolated sessions (a DDS domain each, leased on
the worker's machine). The Dict observation is flattened for RLlib's default model. RLlib and
PyTorch are the optional extra ``rl`` (pip install acres_bridge[rl]).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ray.rllib.algorithms.ppo import PPOConfig

__all__ = ["make_env", "ppo_config"]


def make_env(config: dict[str, Any]) -> Any:
    """RLlib's env creator: the environment ``config["id"]`` with the rest of the config as options."""
    import gymnasium as gym  # noqa: PLC0415 (in the worker)

    import acres_bridge.gym  # noqa: F401, PLC0415 (registers the environments in the worker)

    options = dict(config)
    env_id = options.pop("id")
    return gym.make(env_id, **options)


def _flatten_observations(env: Any, spaces: Any = None, device: Any = None) -> Any:
    """The env-to-module connector: the Dict observation as one flat vector for RLlib's model."""
    from ray.rllib.connectors.env_to_module import FlattenObservations  # noqa: PLC0415

    return FlattenObservations()


def ppo_config(
    env_id: str = "acres/PolarisRoute-v0",
    *,
    env_options: dict[str, Any] | None = None,
    num_env_runners: int = 0,
    train_batch_size: int = 2000,
    minibatch_size: int = 64,
    num_epochs: int = 5,
    seed: int | None = 0,
) -> PPOConfig:
    """A PPO configuration for one of the environments. ``num_env_runners=0`` samples in the
    driver (one session); N > 0 samples in N Ray workers, a session each. The sizes are steps of
    one control period (0.1 s of simulated time)."""
    from ray.rllib.algorithms.ppo import PPOConfig  # noqa: PLC0415 (RLlib's import takes seconds)
    from ray.tune.registry import register_env  # noqa: PLC0415

    register_env(env_id, make_env)
    return (
        PPOConfig()
        .environment(env=env_id, env_config={"id": env_id, **(env_options or {})})
        .framework("torch")
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=1,
            num_cpus_per_env_runner=1,
            env_to_module_connector=_flatten_observations,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
        )
        .debugging(seed=seed)
    )
