"""Gymnasium environments over the bridge: learn in simulation, drive the vehicle with the same topics.

    import gymnasium as gym
    import acres_bridge.gym  # registers the environments
    env = gym.make("acres/PolarisRoute-v0", observations=("state", "lidar"))
    env = gym.make("acres/MaxxumField-v0")

docs/gym.md has the spaces, the reward and the path to the vehicle (the policy_driver node).
"""

from gymnasium.envs.registration import register, registry

from acres_bridge.gym.env import MaxxumFieldEnv, PolarisRouteEnv, RewardWeights, RouteEnv

__all__ = ["MAXXUM_FIELD", "POLARIS_ROUTE", "MaxxumFieldEnv", "PolarisRouteEnv", "RewardWeights", "RouteEnv"]

POLARIS_ROUTE = "acres/PolarisRoute-v0"
MAXXUM_FIELD = "acres/MaxxumField-v0"

for _id, _entry_point in (
    (POLARIS_ROUTE, "acres_bridge.gym.env:PolarisRouteEnv"),
    (MAXXUM_FIELD, "acres_bridge.gym.env:MaxxumFieldEnv"),
):
    if _id not in registry:
        register(id=_id, entry_point=_entry_point)
