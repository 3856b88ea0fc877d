"""A custom INS node that replaces the bridge's `ins` subsystem: a worked example.

It publishes /vehicle/odom from the same INS samples as the bridge's own node, but as a
cheaper INS would report it: position at 20 Hz (the first sample of each 50 ms of simulation
time, so a sample lost on the way shifts nothing) and a covariance floor of 0.5 m. Run the
bridge without its own INS node and this one beside it:

    sim_bridge --ros-args -p ins:=false
    python examples/custom_ins.py

In its own process the node reads the bridge's internal ingest topics (_acres_ingest/...); load
it into the bridge's container instead (register it in your package's entry-point group
acres_bridge.components) and it gets the same samples in-process, without serialisation.
"""

from __future__ import annotations

import sys
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException

from acres_bridge.convert.ins import odometry
from acres_bridge.ingest.channels import INS
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import InsSample

COVARIANCE_FLOOR_M2 = 0.25  # (0.5 m)^2
PERIOD_NS = 50_000_000  # 20 Hz


class CustomIns(SubsystemNode):
    """/vehicle/odom at 20 Hz with a covariance floor, from the bridge's INS samples."""

    DEFAULT_NODE_NAME = "custom_ins"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self._odom = self.publisher("/vehicle/odom")
        self._period = -1  # the 50 ms period of simulation time last published
        self.samples(INS, self._on_ins)

    def _on_ins(self, sample: InsSample) -> None:
        period = sample.stamp_ns // PERIOD_NS
        if not sample.has_position or period == self._period:
            return
        self._period = period
        message = odometry(sample, self.frames)
        for index in (0, 7, 14):
            message.pose.covariance[index] = max(message.pose.covariance[index], COVARIANCE_FLOOR_M2)
        self._odom.publish(message, sample.step)


def main() -> int:
    rclpy.init(args=sys.argv)
    node = CustomIns()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
