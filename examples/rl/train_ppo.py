"""Train a route follower for the Polaris with Stable-Baselines3's PPO, and save it.

    python examples/rl/train_ppo.py --steps 20000 --out route_ppo.zip
    python examples/rl/evaluate.py route_ppo.zip

The environment is acres/PolarisRoute-v0 (docs/gym.md): the state observation relative to the
route, the action a speed and a curvature sent as the drive-by-wire commands. The saved model runs
on the vehicle unchanged through policy_driver (``-p policy:=route_ppo.zip``). Stable-Baselines3
and PyTorch are the optional extra ``rl`` (pip install acres_bridge[rl]). On 2 cores, expect
about 100 environment steps a second.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
from stable_baselines3 import PPO

import acres_bridge.gym  # noqa: F401 (registers the environments)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", type=int, default=20_000, help="environment steps of 0.1 s (default 20000)"
    )
    parser.add_argument("--out", type=Path, default=Path("route_ppo.zip"), help="the model file to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episode-s", type=float, default=30.0, help="simulated seconds an episode lasts")
    options = parser.parse_args(argv)
    if options.steps < 64:
        parser.error("--steps must be at least 64 (one PPO batch)")
    env = gym.make("acres/PolarisRoute-v0", max_episode_s=options.episode_s)
    try:
        rollout = min(512, options.steps)
        model = PPO(
            "MultiInputPolicy",
            env,
            n_steps=rollout,
            batch_size=64,
            seed=options.seed,
            device="cpu",
            verbose=0,
        )
        model.learn(total_timesteps=options.steps)
        model.save(options.out)
    finally:
        env.close()
    print(f"train_ppo: {options.steps} steps; saved {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
