"""A stack for the stack-pace tests: a 50 Hz ULC timer on the wall clock, as a node that fixes its
own use_sim_time to false (an override of the constructor wins over the runner's --ros-args), so it
never subscribes /clock."""

from __future__ import annotations

from ds_dbw_msgs.msg import UlcCmd
from rclpy.node import Node
from rclpy.parameter import Parameter

from acres_bridge.msg_profiles import load_profiles


class WallClock(Node):
    def __init__(self) -> None:
        super().__init__("wall_clock_stack", parameter_overrides=[Parameter("use_sim_time", value=False)])
        self.ulc = load_profiles().topic("polaris", "/vehicle/ulc/cmd").create_publisher(self)
        self.create_timer(0.02, self.tick)

    def tick(self) -> None:
        self.ulc.publish(UlcCmd(cmd=0.0, cmd_type=UlcCmd.CMD_VELOCITY, enable=True))


def build_node() -> Node:
    return WallClock()
