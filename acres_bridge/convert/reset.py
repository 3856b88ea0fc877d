"""/sim/reset: a geometry_msgs/PoseStamped in utm -> the AGENT_RESET of the simulator. Pure.

The world frame is the UTM grid shifted to the tile centre (`world_origin_utm` of SENSOR_META), so
the position is the pose's less the origin and the yaw carries over.
"""

from __future__ import annotations

import math
from typing import Any

from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire import AgentReset
from acres_bridge.wire.messages import RESET_REACH_M

__all__ = ["reset_in_world"]


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
    east, north = p.x - origin_utm[0], p.y - origin_utm[1]
    if max(abs(east), abs(north)) > RESET_REACH_M:
        raise CommandRefusedError(
            f"the pose is {east:.1f} m east and {north:.1f} m north of the tile's centre; a reset must stay "
            f"within {RESET_REACH_M:.0f} m of it in each direction (the tile spans 400 m either way)"
        )
    return AgentReset(agent=agent, x_m=east, y_m=north, yaw_rad=yaw)
