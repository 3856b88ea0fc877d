"""INS sample -> the ROS messages of the spec's Pose and INS section. Pure functions, no node.

Axes: the sample's body values are in base_footprint (x forward, y left, z up). The Polaris's
/oxts/imu uses the OxTS unit's axes, imu_link: x left, y forward, z down; the Maxxum's imu/data
keeps the body axes. /oxts/velocity gives the angular rate in deg/s, as the real vehicle does.
"""

from __future__ import annotations

import math

from geometry_msgs.msg import TransformStamped, TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus

from acres_bridge.convert.frame_names import FrameNames
from acres_bridge.convert.stamps import stamp
from acres_bridge.wire.messages import InsSample

__all__ = [
    "BODY_TO_OXTS",
    "ImuValues",
    "OdometryValues",
    "ground_truth_odometry",
    "ground_truth_values",
    "imu",
    "imu_values",
    "navsat_fix",
    "navsat_fix_values",
    "odometry",
    "odometry_values",
    "oxts_angular_rate_deg",
    "oxts_velocity",
    "quaternion_multiply",
    "transform",
    "transform_values",
]

_HALF_SQRT2 = math.sqrt(0.5)
# The OxTS axes (x left, y forward, z down) in base_footprint: 180 deg about (1, 1, 0)/sqrt(2).
BODY_TO_OXTS = (_HALF_SQRT2, _HALF_SQRT2, 0.0, 0.0)


def quaternion_multiply(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """a * b for quaternions (x, y, z, w): the rotation b, then a."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def _pose_covariance(variance: tuple[float, float, float]) -> list[float]:
    covariance = [0.0] * 36
    covariance[0], covariance[7], covariance[14] = variance
    return covariance


def _utm_odometry(
    stamp_ns: int,
    frames: FrameNames,
    position: tuple[float, float, float],
    orientation: tuple[float, float, float, float],
) -> Odometry:
    """An Odometry of base_footprint in utm with its stamp and pose; the rest is left to the caller."""
    message = Odometry()
    message.header.stamp = stamp(stamp_ns)
    message.header.frame_id = frames.utm
    message.child_frame_id = frames.base_footprint
    pose = message.pose.pose
    pose.position.x, pose.position.y, pose.position.z = position
    q = pose.orientation
    q.x, q.y, q.z, q.w = orientation
    return message


Vector = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]
OdometryValues = tuple[Vector, Quaternion, list[float], Vector, Vector, list[float]]
ImuValues = tuple[Quaternion, list[float], Vector, list[float], Vector, list[float]]
_ZERO3: Vector = (0.0, 0.0, 0.0)


def odometry_values(sample: InsSample) -> OdometryValues:
    """/vehicle/odom's pose, pose covariance, twist and twist covariance, in field order."""
    return (
        sample.position,
        sample.orientation,
        _pose_covariance(sample.position_variance),
        sample.velocity,
        sample.angular_rate,
        _pose_covariance(sample.velocity_variance),
    )


def ground_truth_values(sample: InsSample) -> OdometryValues:
    """/sim/ground_truth/odom's values: the exact pose; twist.linear.x is the exact forward speed,
    the rest zero."""
    zeros = [0.0] * 36
    return (
        sample.true_position,
        sample.true_orientation,
        zeros,
        (sample.true_speed, 0.0, 0.0),
        _ZERO3,
        zeros,
    )


def _odometry_message(stamp_ns: int, frames: FrameNames, values: OdometryValues) -> Odometry:
    position, orientation, pose_covariance, linear, angular, twist_covariance = values
    message = _utm_odometry(stamp_ns, frames, position, orientation)
    message.pose.covariance = pose_covariance
    twist = message.twist.twist
    twist.linear.x, twist.linear.y, twist.linear.z = linear
    twist.angular.x, twist.angular.y, twist.angular.z = angular
    message.twist.covariance = twist_covariance
    return message


def odometry(sample: InsSample, frames: FrameNames) -> Odometry:
    """/vehicle/odom (Polaris) or odom (Maxxum): the INS pose in utm, the body velocity."""
    return _odometry_message(sample.stamp_ns, frames, odometry_values(sample))


def ground_truth_odometry(sample: InsSample, frames: FrameNames) -> Odometry:
    """/sim/ground_truth/odom: the exact pose; twist.linear.x is the exact forward speed, the rest zero."""
    return _odometry_message(sample.stamp_ns, frames, ground_truth_values(sample))


def imu_values(sample: InsSample, *, oxts_axes: bool) -> ImuValues:
    """/oxts/imu's (oxts_axes) or imu/data's orientation, angular velocity and linear acceleration,
    each with its covariance, in field order."""
    wx, wy, wz = sample.angular_rate
    fx, fy, fz = sample.specific_force
    roll_var, pitch_var, yaw_var = sample.attitude_variance
    rate_var, force_var = sample.angular_rate_variance, sample.specific_force_variance
    if oxts_axes:
        orientation = quaternion_multiply(sample.orientation, BODY_TO_OXTS)
        rate = (wy, wx, -wz)
        force = (fy, fx, -fz)
        attitude_var = (pitch_var, roll_var, yaw_var)
        rate_var = (rate_var[1], rate_var[0], rate_var[2])
        force_var = (force_var[1], force_var[0], force_var[2])
    else:
        orientation = sample.orientation
        rate = (wx, wy, wz)
        force = (fx, fy, fz)
        attitude_var = (roll_var, pitch_var, yaw_var)
    return orientation, _diagonal(attitude_var), rate, _diagonal(rate_var), force, _diagonal(force_var)


def imu(sample: InsSample, frame_id: str, *, oxts_axes: bool) -> Imu:
    """/oxts/imu in the OxTS axes (oxts_axes) or imu/data in the body axes."""
    orientation, attitude_cov, rate, rate_cov, force, force_cov = imu_values(sample, oxts_axes=oxts_axes)
    message = Imu()
    message.header.stamp = stamp(sample.stamp_ns)
    message.header.frame_id = frame_id
    q = message.orientation
    q.x, q.y, q.z, q.w = orientation
    v = message.angular_velocity
    v.x, v.y, v.z = rate
    a = message.linear_acceleration
    a.x, a.y, a.z = force
    message.orientation_covariance = attitude_cov
    message.angular_velocity_covariance = rate_cov
    message.linear_acceleration_covariance = force_cov
    return message


def _diagonal(variance: tuple[float, float, float]) -> list[float]:
    return [variance[0], 0.0, 0.0, 0.0, variance[1], 0.0, 0.0, 0.0, variance[2]]


def oxts_velocity(sample: InsSample, frame_id: str) -> TwistStamped:
    """/oxts/velocity: body velocity in m/s and angular rate in deg/s."""
    message = TwistStamped()
    message.header.stamp = stamp(sample.stamp_ns)
    message.header.frame_id = frame_id
    linear = message.twist.linear
    linear.x, linear.y, linear.z = sample.velocity
    angular = message.twist.angular
    angular.x, angular.y, angular.z = oxts_angular_rate_deg(sample)
    return message


def oxts_angular_rate_deg(sample: InsSample) -> Vector:
    """/oxts/velocity's angular rate: deg/s, as the real vehicle gives it."""
    wx, wy, wz = sample.angular_rate
    return math.degrees(wx), math.degrees(wy), math.degrees(wz)


def navsat_fix(sample: InsSample, frame_id: str) -> NavSatFix:
    """/oxts/fix or gnss/fix: the geodetic position, an RTK fix, the diagonal covariance."""
    message = NavSatFix()
    message.header.stamp = stamp(sample.stamp_ns)
    message.header.frame_id = frame_id
    message.status.status = NavSatStatus.STATUS_GBAS_FIX
    message.status.service = NavSatStatus.SERVICE_GPS
    message.latitude, message.longitude, message.altitude, message.position_covariance = navsat_fix_values(
        sample
    )
    message.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    return message


def navsat_fix_values(sample: InsSample) -> tuple[float, float, float, list[float]]:
    """The fix's latitude, longitude and altitude and its diagonal covariance, in field order."""
    return sample.latitude_deg, sample.longitude_deg, sample.position[2], _diagonal(sample.position_variance)


def transform(sample: InsSample, frames: FrameNames) -> TransformStamped:
    """The /tf transform utm -> base_footprint of one INS sample."""
    message = TransformStamped()
    message.header.stamp = stamp(sample.stamp_ns)
    message.header.frame_id = frames.utm
    message.child_frame_id = frames.base_footprint
    translation, rotation = transform_values(sample)
    t = message.transform.translation
    t.x, t.y, t.z = translation
    r = message.transform.rotation
    r.x, r.y, r.z, r.w = rotation
    return message


def transform_values(sample: InsSample) -> tuple[Vector, Quaternion]:
    """The /tf transform's translation and rotation: the INS pose in utm."""
    return sample.position, sample.orientation
