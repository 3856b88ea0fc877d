"""reset: /sim/reset (Polaris) or sim/reset (Maxxum), a pose in utm, moves the vehicle there.

The pose becomes simulator coordinates with the georeference of the session (the world frame
is the UTM grid shifted to the tile centre, so the yaw carries over). Until the first INS
sample with a position, the bridge cannot know that the vehicle's reported position and the
simulator agree, so the message is ignored with a warning. The vehicle stands still after the
reset, and a new episode of it starts (spec: Reset Pose).
"""

from __future__ import annotations

import math
from typing import Any

from acres_bridge.errors import CommandRefusedError
from acres_bridge.ingest.channels import AGENT_RESET, INS, SESSION, SampleOutlet, Session
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import AgentReset, InsSample
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["PoseReset", "reset_in_world"]


def reset_in_world(message: Any, origin_utm: tuple[float, float, float], *, agent: int) -> AgentReset:
    """The AgentReset of a geometry_msgs/PoseStamped in utm; CommandRefusedError names a bad field."""
    p, q = message.pose.position, message.pose.orientation
    values = (p.x, p.y, q.x, q.y, q.z, q.w)
    if not all(math.isfinite(v) for v in values):
        raise CommandRefusedError(
            f"the pose has a NaN or infinite value: position ({p.x}, {p.y}), orientation {values[2:]}"
        )
    norm = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
    if norm < 1e-6:
        raise CommandRefusedError("the orientation is not a rotation (a zero quaternion)")
    x, y, z, w = (v / norm for v in (q.x, q.y, q.z, q.w))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return AgentReset(agent=agent, x_m=p.x - origin_utm[0], y_m=p.y - origin_utm[1], yaw_rad=yaw)


class PoseReset(SubsystemNode):
    """Forwards /sim/reset to the simulator once the INS has a position."""

    DEFAULT_NODE_NAME = "reset"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self._origin: tuple[float, float, float] | None = None
        self._has_position = False
        self.refused = 0
        self._resets: SampleOutlet[AgentReset] = SampleOutlet(
            self, AGENT_RESET, namespace=self.ingest_namespace, agent=self.agent
        )
        self.samples(SESSION, self._on_session, agent=0)
        self.samples(INS, self._on_ins)
        self.subscription("/sim/reset" if self.vehicle == Vehicle.POLARIS else "sim/reset", self._on_reset)

    def _on_session(self, session: Session) -> None:
        metas = session.sensor_meta
        meta = metas[self.agent] if self.agent < len(metas) else None
        self._origin = meta.world_origin_utm if meta is not None else None
        if not session.connected:
            self._has_position = False

    def _on_ins(self, sample: InsSample) -> None:
        self._has_position = self._has_position or sample.has_position

    def _on_reset(self, message: Any) -> None:
        frame = message.header.frame_id
        if frame not in ("", self.frames.utm):
            self._refuse(f"the pose is in frame {frame!r}; /sim/reset takes poses in {self.frames.utm!r}")
            return
        if not self._has_position or self._origin is None:
            self._refuse("ignored: no INS sample with a position has arrived yet")
            return
        try:
            reset = reset_in_world(message, self._origin, agent=self.agent)
        except CommandRefusedError as error:
            self._refuse(str(error))
            return
        self._resets.publish(reset)

    def _refuse(self, reason: str) -> None:
        self.refused += 1
        self.get_logger().warning(f"/sim/reset: {reason}", throttle_duration_sec=1.0)

    def destroy_node(self) -> None:
        self._resets.close()
        super().destroy_node()
