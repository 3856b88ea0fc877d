"""Rotations between a body frame and the world (ENU / UTM grid) frame, as plain float tuples.

Conventions: right-handed frames; roll about body x, pitch about body y, yaw about world z, composed
as R = Rz(yaw) @ Ry(pitch) @ Rx(roll) (the ROS "rpy" convention), R mapping body vectors into the
world. Quaternions are (x, y, z, w), as in geometry_msgs. Scalar math on purpose: these run once per
physics step, where numpy's per-call cost would dominate.
"""

from __future__ import annotations

import math

__all__ = [
    "Quaternion",
    "Vec3",
    "quaternion_from_rpy",
    "rpy_from_quaternion",
    "world_to_body",
    "wrap_angle",
    "yaw_from_quaternion",
]

Vec3 = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]

_TWO_PI = 2.0 * math.pi


def wrap_angle(angle: float) -> float:
    """The angle in radians brought into [-pi, pi]."""
    return math.remainder(angle, _TWO_PI)


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> Quaternion:
    """The unit quaternion (x, y, z, w) of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    return (
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    )


def rpy_from_quaternion(q: Quaternion) -> Vec3:
    """(roll, pitch, yaw) in radians of a quaternion (x, y, z, w); it need not be normalised."""
    x, y, z, w = q
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def yaw_from_quaternion(q: Quaternion) -> float:
    """The yaw in radians (counter-clockwise about world z) of a quaternion (x, y, z, w)."""
    return rpy_from_quaternion(q)[2]


def world_to_body(roll: float, pitch: float, yaw: float, v: Vec3) -> Vec3:
    """The world vector ``v`` expressed in the body axes: R^T v."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    vx, vy, vz = v
    # Undo the yaw, then the pitch, then the roll.
    x1 = cy * vx + sy * vy
    y1 = -sy * vx + cy * vy
    x2 = cp * x1 - sp * vz
    z2 = sp * x1 + cp * vz
    return x2, cr * y1 + sr * z2, -sr * y1 + cr * z2
