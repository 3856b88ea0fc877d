"""Step a lockstep session from your own node and receive every message of every step.

Start a lockstep simulator and the bridge, then run this:

    acres_sim --lockstep --perception &
    sim_bridge &
    python examples/lockstep_client.py --steps 600

Each `client.step(n)` returns when every message the n steps made on the watched topics has
arrived here, sorted into its steps: nothing is lost, however large the request or busy the
machine (docs/simulation_control.md, "Delivery").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import rclpy
from rclpy.node import Node

from acres_bridge.lockstep import SteppingClient, SteppingError

TOPICS = ("/clock", "/vehicle/odom", "/lidar/points", "/camera/image_raw")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="physics steps to run (120 = 1 simulated s)")
    parser.add_argument("--per-call", type=int, default=120, help="steps per client.step() call")
    options = parser.parse_args(argv)
    rclpy.init()
    node = Node("lockstep_example")
    client = SteppingClient(node, TOPICS, timeout_s=60.0)
    received = dict.fromkeys(TOPICS, 0)
    try:
        done = 0
        while done < options.steps:
            batch = client.step(min(options.per_call, options.steps - done))
            for step in batch.steps:
                for topic in TOPICS:
                    received[topic] += len(step[topic])  # your policy reads step[topic] here
            done += len(batch.steps)
        print(f"{done} steps: " + ", ".join(f"{topic} {count}" for topic, count in received.items()))
        return 0
    except SteppingError as error:
        print(f"lockstep_client: {error}", file=sys.stderr)
        return 1
    finally:
        client.destroy()
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
