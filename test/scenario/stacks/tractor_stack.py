"""A stack for the sweep tests: drives the Maxxum straight at ``speed_mps`` and, with
``crash_at_s`` > 0, dies at that simulation time with exit status 3, as a crashing stack would."""

from __future__ import annotations

import os
import sys

from geometry_msgs.msg import Twist
from rclpy.node import Node

from acres_bridge.msg_profiles import load_profiles


class Tractor(Node):
    def __init__(self) -> None:
        super().__init__("tractor_under_test")
        self.speed = float(self.declare_parameter("speed_mps", 1.0).value)
        self.crash_at_s = float(self.declare_parameter("crash_at_s", 0.0).value)
        self.cmd_vel = load_profiles().topic("maxxum", "cmd_vel").create_publisher(self)
        self.create_timer(0.1, self.tick)

    def tick(self) -> None:
        now_s = self.get_clock().now().nanoseconds / 1e9
        if 0 < self.crash_at_s <= now_s:
            print(f"tractor_under_test: crashing on purpose at {now_s:.2f} s", file=sys.stderr, flush=True)
            os._exit(3)
        twist = Twist()
        twist.linear.x = self.speed
        self.cmd_vel.publish(twist)


def build_node() -> Node:
    return Tractor()
