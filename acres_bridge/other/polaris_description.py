"""polaris_description: the Polaris description without robot_state_publisher and purdue_ranger.

Publishes what the spec's Polaris description publishes (spec: Topics of the Other Nodes, Clock and
Transforms), built from the sensor rig of the session (the SENSOR_META of the agent):

  /robot_description  std_msgs/String, latched: the URDF; base_footprint is the root, a link and a
                      fixed joint for each mount of the rig (lidar, reolink_camera,
                      reolink_camera_optical, imu_link)
  /tf_static          tf2_msgs/TFMessage, QoS static: base_footprint -> lidar,
                      base_footprint -> reolink_camera, reolink_camera -> reolink_camera_optical

Both are published when the rig arrives and again when it changes; before the first session,
nothing. The session comes through the ingest's session channel: from the bus inside the bridge's
container, from the internal ROS topic in a process of its own. ``frame_prefix`` prefixes the
frames of the transforms, as robot_state_publisher's frame_prefix does; the URDF keeps the rig's
names. A rig that is not a tree below base_footprint is refused with an error in the log.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from acres_bridge.ingest.channels import SESSION, Session
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.other import _wiring
from acres_bridge.other.description import static_transforms, urdf
from acres_bridge.wire.messages import SensorMount
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["PolarisDescription", "main"]


class PolarisDescription(SubsystemNode):
    """Publishes the URDF and the sensor frames of the Polaris of one agent of the session."""

    DEFAULT_NODE_NAME = "polaris_description"
    SERVES = (Vehicle.POLARIS, "polaris_description describes a Polaris; vehicle is '{vehicle}'")

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self._description = _wiring.publisher(self, "other_nodes", "/robot_description")
        self._tf_static = _wiring.publisher(self, "other_nodes", "/tf_static")
        self.rig: tuple[SensorMount, ...] | None = None  # the rig last published
        self._refused: tuple[SensorMount, ...] | None = None
        self.samples(SESSION, self._on_session)

    def _on_session(self, session: Session) -> None:
        meta = session.meta(self.agent)
        if meta is None or meta.sensors in (self.rig, self._refused):
            return
        if meta.vehicle != Vehicle.POLARIS:
            self._refused = meta.sensors
            self.get_logger().error(f"agent {self.agent} is a {meta.vehicle}, not a Polaris: no description")
            return
        try:
            text = urdf(meta.sensors)
            transforms = static_transforms(
                meta.sensors, frames=self.frames, stamp=self.get_clock().now().to_msg()
            )
        except ValueError as error:
            self._refused = meta.sensors
            self.get_logger().error(f"refused the sensor rig of agent {self.agent}: {error}")
            return
        self._description.publish(String(data=text))
        self._tf_static.publish(TFMessage(transforms=transforms))
        self.rig = meta.sensors
        frames = ", ".join(f"{t.header.frame_id} -> {t.child_frame_id}" for t in transforms)
        self.get_logger().info(f"published the description of agent {self.agent}: {frames}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run polaris_description until SIGINT or SIGTERM."""
    return _wiring.run(PolarisDescription, argv)


if __name__ == "__main__":
    sys.exit(main())
