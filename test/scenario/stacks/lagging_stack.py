"""A stack for the stack-pace tests: a 50 Hz timer on simulated time that sends a ULC command only
on every ``publish_every``-th tick, as a stack whose loop cannot keep its declared rate would."""

from __future__ import annotations

from ds_dbw_msgs.msg import UlcCmd
from rclpy.node import Node

from acres_bridge.msg_profiles import load_profiles

TIMER_HZ = 50.0


class Lagging(Node):
    def __init__(self) -> None:
        super().__init__("lagging_stack")
        self.publish_every = int(self.declare_parameter("publish_every", 2).value)
        self.ulc = load_profiles().topic("polaris", "/vehicle/ulc/cmd").create_publisher(self)
        self.ticks = 0
        self.create_timer(1.0 / TIMER_HZ, self.tick)

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks % self.publish_every:
            return
        command = UlcCmd(cmd=0.0, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)
        command.header.stamp = self.get_clock().now().to_msg()
        self.ulc.publish(command)


def build_node() -> Node:
    return Lagging()
