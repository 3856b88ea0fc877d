"""A stack that holds its heading and ignores the route: it must FAIL the route scenarios.

Built by acres_scenario from ``python: heading_hold_stack:build_node`` (see polaris_heading_hold.yaml).
It does what a careless path follower does: engages the drive-by-wire, selects gear L, holds a
speed through the ULC and sends a steering curvature of zero, whatever the route does. On the
route's straights it looks like a follower; at the first U-turn it drives straight on, and the
route scenarios' max_cross_track_error judges it. It runs against the real Polaris unchanged
(msg_profiles table ``polaris``), on simulation time in a session.

Parameters: ``speed_mps`` (default 2.0).
"""

from __future__ import annotations

from typing import Any

from ds_dbw_msgs.msg import GearCmd, SteeringCmd, UlcCmd
from rclpy.node import Node
from std_msgs.msg import Empty

from acres_bridge.msg_profiles import load_profiles

COMMAND_HZ = 50.0  # the drive-by-wire's command rate
ENABLE_EVERY = 25  # ticks between enables while the drive-by-wire does not report enabled
GEAR_LOW = 5


class HeadingHold(Node):
    """Speed through the ULC, zero curvature through the steering, at COMMAND_HZ."""

    def __init__(self) -> None:
        super().__init__("heading_hold")
        self.speed = float(self.declare_parameter("speed_mps", 2.0).value)
        table = load_profiles()
        self.enable = table.topic("polaris", "/vehicle/enable").create_publisher(self)
        self.gear = table.topic("polaris", "/vehicle/gear/cmd").create_publisher(self)
        self.ulc = table.topic("polaris", "/vehicle/ulc/cmd").create_publisher(self)
        self.steering = table.topic("polaris", "/vehicle/steering/cmd").create_publisher(self)
        table.topic("polaris", "/vehicle/dbw_enabled").create_subscription(self, self.on_enabled)
        table.topic("polaris", "/vehicle/gear/report").create_subscription(self, self.on_gear)
        self.enabled = False
        self.in_gear = False
        self.ticks = 0
        self.create_timer(1.0 / COMMAND_HZ, self.tick)

    def on_enabled(self, message: Any) -> None:
        self.enabled = bool(message.data)

    def on_gear(self, report: Any) -> None:
        self.in_gear = report.gear.value == GEAR_LOW

    def tick(self) -> None:
        if not self.enabled and self.ticks % ENABLE_EVERY == 0:
            self.enable.publish(Empty())
        stamp = self.get_clock().now().to_msg()
        if not self.in_gear:
            gear = GearCmd()
            gear.header.stamp = stamp
            gear.cmd.value = GEAR_LOW
            self.gear.publish(gear)
        ulc = UlcCmd(cmd=self.speed, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)
        ulc.header.stamp = stamp
        self.ulc.publish(ulc)
        steering = SteeringCmd(cmd=0.0, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True)
        steering.header.stamp = stamp
        self.steering.publish(steering)
        self.ticks += 1


def build_node() -> Node:
    """The entry point acres_scenario calls."""
    return HeadingHold()
