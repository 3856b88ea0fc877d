"""A small field-task stack for the Maxxum: lower the implement, engage the PTO, drive straight.

Built by acres_scenario from ``python: maxxum_field_stack:build_node`` (see maxxum_field.yaml):
rclpy is initialised before build_node() is called, and the node is spun until the episode ends.
It runs against the real tractor unchanged: the topics, types and QoS are those of the spec
(msg_profiles table ``maxxum``), and its timer runs on simulation time in a session
(use_sim_time), on the wall clock on the vehicle.

Parameters: ``speed_mps`` (default 1.5), ``hitch_lever`` (default 0.6, 0 .. 1), ``pto`` (default true).
"""

from __future__ import annotations

from geometry_msgs.msg import Twist
from rclpy.node import Node
from std_msgs.msg import Bool, Float32

from acres_bridge.msg_profiles import load_profiles

GUIDANCE_HZ = 10.0  # the tractor wants its guidance continuously (its timeout is 0.5 s)


class FieldTask(Node):
    """Sends the hitch and PTO settings once, then the speed at GUIDANCE_HZ."""

    def __init__(self) -> None:
        super().__init__("field_task")
        self.speed = float(self.declare_parameter("speed_mps", 1.5).value)
        self.lever = float(self.declare_parameter("hitch_lever", 0.6).value)
        self.pto = bool(self.declare_parameter("pto", True).value)
        table = load_profiles()
        self.cmd_vel = table.topic("maxxum", "cmd_vel").create_publisher(self)
        self.lever_cmd = table.topic("maxxum", "hitch/lever_cmd").create_publisher(self)
        self.raise_cmd = table.topic("maxxum", "hitch/raise_cmd").create_publisher(self)
        self.pto_cmd = table.topic("maxxum", "pto/cmd").create_publisher(self)
        self.ticks = 0
        self.create_timer(1.0 / GUIDANCE_HZ, self.tick)

    def tick(self) -> None:
        if self.ticks % 10 == 0:  # the settings once a second: one lost to discovery is sent again
            self.lever_cmd.publish(Float32(data=self.lever))
            self.raise_cmd.publish(Bool(data=False))
            self.pto_cmd.publish(Bool(data=self.pto))
        twist = Twist()
        twist.linear.x = self.speed
        self.cmd_vel.publish(twist)
        self.ticks += 1


def build_node() -> Node:
    """The entry point acres_scenario calls."""
    return FieldTask()
