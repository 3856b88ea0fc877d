"""Observations from the vehicle's own topics: pure, no node, no simulator.

The same code builds the observation in the Gymnasium environment (from a lockstep period's
messages) and in the policy node on the vehicle (from the latest messages), so a policy sees the
same numbers in both:

- ``state``: the INS state relative to the built-in route, float32 (5,): the signed cross-track
  error (m, left of the route positive), the heading error (rad, the vehicle's yaw minus the
  route's, in -pi..pi), the speed (m/s, negative reversing), the yaw rate (rad/s) and the route's
  curvature ``lookahead_m`` ahead (1/m). From /vehicle/odom (utm), placed on the tile with the
  tile's georeference.
- ``lidar``: the ranges of a /lidar/points cloud, float32 (rings, columns) = (32, 1800) on the
  Polaris, in m, 0 where a beam returned nothing.
- ``camera``: a /camera/image_raw image as RGB, uint8 (height, width, 3) = (512, 896, 3).
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from acres_bridge.geo.georef import ACRE_GEOREFERENCE, Georeference
from acres_bridge.geo.rotation import yaw_from_quaternion
from acres_bridge.geo.route import Route, acre_loop

__all__ = [
    "CAMERA_SHAPE",
    "LIDAR_SHAPE",
    "STATE_FIELDS",
    "RouteObserver",
    "camera_image",
    "lidar_ranges",
]

STATE_FIELDS: Final = (
    "cross_track_m",
    "heading_error_rad",
    "speed_mps",
    "yaw_rate_radps",
    "curvature_ahead_1pm",
)
LIDAR_SHAPE: Final = (32, 1800)  # rings, azimuth columns: the Polaris's LiDAR
CAMERA_SHAPE: Final = (512, 896, 3)  # the Polaris's camera, RGB
_POINT_FLOATS: Final = 4  # x, y, z, intensity


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


class RouteObserver:
    """The route-relative state of a vehicle from its odometry; keeps its progress along the
    route so that runs that lie side by side are told apart (Route.project's ``near``)."""

    def __init__(
        self,
        route: Route | None = None,
        *,
        lookahead_m: float = 6.0,
        georef: Georeference = ACRE_GEOREFERENCE,
    ) -> None:
        self.route = route or acre_loop()
        self.lookahead_m = lookahead_m
        self.georef = georef
        self.progress_m: float | None = None  # arc length of the vehicle's projection on the route
        self.travelled_m = 0.0  # progress summed since reset(), forward positive

    def reset(self) -> None:
        self.progress_m = None
        self.travelled_m = 0.0

    def state(self, odom: Any) -> npt.NDArray[np.float32]:
        """The state (STATE_FIELDS) of an odometry message; advances the progress."""
        pose = odom.pose.pose
        q = pose.orientation
        x, y, _ = self.georef.utm_to_world(pose.position.x, pose.position.y, 0.0)
        s, distance = self.route.project(x, y, near=self.progress_m)
        if self.progress_m is not None:
            step = (
                s - self.progress_m + 0.5 * self.route.length
            ) % self.route.length - 0.5 * self.route.length
            self.travelled_m += step
        self.progress_m = s
        px, py, route_yaw = self.route.pose_at(s)
        left = -math.sin(route_yaw) * (x - px) + math.cos(route_yaw) * (y - py)
        cross_track = math.copysign(distance, left)
        twist = odom.twist.twist
        speed = math.copysign(math.hypot(twist.linear.x, twist.linear.y), twist.linear.x)
        ahead = self.route.curvature[self.route.index_at(s + self.lookahead_m)]
        values = (
            cross_track,
            _wrap(yaw_from_quaternion((q.x, q.y, q.z, q.w)) - route_yaw),
            speed,
            twist.angular.z,
            ahead,
        )
        return np.array(values, dtype=np.float32)


def lidar_ranges(cloud: Any, shape: tuple[int, int] = LIDAR_SHAPE) -> npt.NDArray[np.float32]:
    """(rings, columns) ranges in m of an organised cloud (height = columns, width = rings; x, y,
    z, intensity float32); 0 for a beam without a return (NaN point). ValueError for another layout."""
    rings, columns = shape
    if (cloud.height, cloud.width, cloud.point_step) != (columns, rings, 16) or len(
        cloud.data
    ) != columns * rings * 16:
        raise ValueError(
            f"expected an organised cloud of {columns} x {rings} points of 16 bytes, "
            f"found {cloud.height} x {cloud.width} of {cloud.point_step}"
        )
    points = np.frombuffer(cloud.data, dtype=np.float32).reshape(columns, rings, _POINT_FLOATS)
    ranges = np.sqrt(np.einsum("crk,crk->cr", points[..., :3], points[..., :3]))
    cleared: npt.NDArray[np.float32] = np.nan_to_num(ranges, nan=0.0).T.astype(np.float32, copy=False)
    return cleared


def camera_image(image: Any, shape: tuple[int, int, int] = CAMERA_SHAPE) -> npt.NDArray[np.uint8]:
    """An RGB (height, width, 3) array of a bgr8 or rgb8 image; ValueError for another one."""
    height, width, _ = shape
    if (image.height, image.width) != (height, width) or image.encoding not in ("bgr8", "rgb8"):
        found = f"{image.width} x {image.height} {image.encoding}"
        raise ValueError(f"expected a {width} x {height} bgr8 or rgb8 image, found {found}")
    rows = np.frombuffer(image.data, dtype=np.uint8).reshape(height, image.step)[:, : width * 3]
    pixels = rows.reshape(height, width, 3)
    return np.ascontiguousarray(pixels[..., ::-1] if image.encoding == "bgr8" else pixels)
