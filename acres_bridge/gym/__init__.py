"""Gymnasium environments over the bridge: learn in simulation, drive the vehicle with the same topics.

    import gymnasium as gym
    import acres_bridge.gym  # registers the environments
    env = gym.make("acres/PolarisRoute-v0", observations=("state", "lidar"))

docs/gym.md has the spaces, the reward and the path to the vehicle.
"""

from gymnasium.envs.registration import register, registry

from acres_bridge.gym.env import PolarisRouteEnv, RewardWeights

__all__ = ["POLARIS_ROUTE", "PolarisRouteEnv", "RewardWeights"]

POLARIS_ROUTE = "acres/PolarisRoute-v0"

if POLARIS_ROUTE not in registry:
    register(id=POLARIS_ROUTE, entry_point="acres_bridge.gym.env:PolarisRouteEnv")
