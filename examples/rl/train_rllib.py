"""Train PPO with RLlib over acres/PolarisRoute-v0, each env runner in a Ray worker with a session of its own.

    python examples/rl/train_rllib.py --iterations 20
    python examples/rl/train_rllib.py --address 127.0.0.1:6379 --env-runners 4   # a Ray cluster

Without --address, Ray starts on this machine with --cpus CPUs (on loopback: its workers keep DDS
on this machine). Each iteration samples --batch control periods (0.1 simulated s each) and
prints one line; --results writes every iteration's figures as JSON. The algorithm's checkpoint
goes to --checkpoint when given. RLlib and PyTorch are the optional extra ``rl``
(pip install acres_bridge[rl]); docs/gym.md says more.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acres_bridge.gym.rllib import ppo_config
from acres_bridge.scenario.sweep_runner import init_local_ray


def _figures(result: dict[str, Any]) -> dict[str, float]:
    runners, learner = result["env_runners"], result["learners"]["default_policy"]
    return {
        "sampled": float(runners["num_env_steps_sampled_lifetime"]),
        "episode_return_mean": float(runners.get("episode_return_mean", math.nan)),
        "total_loss": float(learner["total_loss"]),
        "vf_loss": float(learner["vf_loss"]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="training iterations (default 20)")
    parser.add_argument("--batch", type=int, default=2000, help="control periods an iteration samples")
    parser.add_argument("--minibatch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--env-runners", type=int, default=1, help="Ray workers sampling, a session each")
    parser.add_argument("--address", help="an existing Ray cluster (default: start Ray on this machine)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray (default 2)")
    parser.add_argument(
        "--folder", type=Path, help="where the sessions write their logs (default: a temporary one)"
    )
    parser.add_argument("--results", type=Path, help="write each iteration's figures here as JSON")
    parser.add_argument("--checkpoint", type=Path, help="save the trained algorithm here")
    options = parser.parse_args(argv)
    if options.iterations < 1 or options.batch < options.minibatch or options.env_runners < 0:
        parser.error("--iterations >= 1, --batch >= --minibatch and --env-runners >= 0")

    import ray  # noqa: PLC0415 (after init_local_ray's loopback switch, when local)

    if options.address:
        ray.init(address=options.address, log_to_driver=False)
    else:
        init_local_ray(options.cpus)
    env_options = {"folder": str(options.folder)} if options.folder else {}
    algo = ppo_config(
        env_options=env_options,
        num_env_runners=options.env_runners,
        train_batch_size=options.batch,
        minibatch_size=options.minibatch,
        num_epochs=options.epochs,
    ).build_algo()
    figures = []
    try:
        for iteration in range(1, options.iterations + 1):
            figures.append(_figures(algo.train()))
            line = ", ".join(f"{key} {value:.4g}" for key, value in figures[-1].items())
            print(f"iteration {iteration}: {line}", flush=True)
        if options.checkpoint:
            algo.save_to_path(str(options.checkpoint.resolve()))
    finally:
        algo.stop()  # ends every env runner's session
        ray.shutdown()
    if options.results:
        options.results.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
