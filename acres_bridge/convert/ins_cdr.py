"""INS sample -> the serialized ROS messages of the spec's Pose and INS section. Pure, no node.

The same messages as acres_bridge.convert.ins (the reference: message objects) from the same
values (its ``*_values`` functions), packed straight to CDR with acres_bridge.convert.cdr: one
``struct.pack`` a message instead of building a message object for rclpy to read back field by
field. The frames are fixed per encoder, as they are per publisher. ``make bench`` shows what
each way costs (``INS sample -> its messages``).
"""

from __future__ import annotations

from typing import Final

from sensor_msgs.msg import NavSatFix, NavSatStatus

from acres_bridge.convert import ins
from acres_bridge.convert.cdr import StampedLayout
from acres_bridge.convert.frame_names import FrameNames
from acres_bridge.wire.messages import InsSample

__all__ = ["InsEncoders", "TfEncoder"]

# Field order after the header (and Odometry's child_frame_id), as struct codes with counts.
_ODOMETRY: Final = "3d 4d 36d 3d 3d 36d"  # pose (position, orientation), covariance; twist, covariance
_IMU: Final = "4d 9d 3d 9d 3d 9d"  # orientation, angular velocity, linear acceleration, each + covariance
_TWIST_STAMPED: Final = "3d 3d"  # linear, angular
# status (status, service), latitude, longitude, altitude, covariance, type
_NAV_SAT_FIX: Final = "b H 3d 9d B"
_TRANSFORM: Final = "3d 4d"  # translation, rotation


class InsEncoders:
    """The serialized INS messages of one vehicle's publishers, frames fixed at construction."""

    def __init__(
        self, frames: FrameNames, *, imu_frame: str, fix_frame: str, velocity_frame: str, oxts_axes: bool
    ) -> None:
        self._oxts_axes = oxts_axes
        self._odometry = StampedLayout(frames.utm, _ODOMETRY, strings=(frames.base_footprint,))
        self._imu = StampedLayout(imu_frame, _IMU)
        self._velocity = StampedLayout(velocity_frame, _TWIST_STAMPED)
        self._fix = StampedLayout(fix_frame, _NAV_SAT_FIX)

    def odometry(self, sample: InsSample) -> bytes:
        """ins.odometry, serialized."""
        return self._pack_odometry(sample.stamp_ns, ins.odometry_values(sample))

    def ground_truth_odometry(self, sample: InsSample) -> bytes:
        """ins.ground_truth_odometry, serialized."""
        return self._pack_odometry(sample.stamp_ns, ins.ground_truth_values(sample))

    def imu(self, sample: InsSample) -> bytes:
        """ins.imu with this encoder's axes, serialized."""
        orientation, attitude_cov, rate, rate_cov, force, force_cov = ins.imu_values(
            sample, oxts_axes=self._oxts_axes
        )
        return self._imu.pack(
            sample.stamp_ns, *orientation, *attitude_cov, *rate, *rate_cov, *force, *force_cov
        )

    def oxts_velocity(self, sample: InsSample) -> bytes:
        """ins.oxts_velocity, serialized."""
        return self._velocity.pack(sample.stamp_ns, *sample.velocity, *ins.oxts_angular_rate_deg(sample))

    def navsat_fix(self, sample: InsSample) -> bytes:
        """ins.navsat_fix, serialized."""
        latitude, longitude, altitude, covariance = ins.navsat_fix_values(sample)
        return self._fix.pack(
            sample.stamp_ns,
            NavSatStatus.STATUS_GBAS_FIX,
            NavSatStatus.SERVICE_GPS,
            latitude,
            longitude,
            altitude,
            *covariance,
            NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN,
        )

    def _pack_odometry(self, stamp_ns: int, values: ins.OdometryValues) -> bytes:
        position, orientation, pose_covariance, linear, angular, twist_covariance = values
        return self._odometry.pack(
            stamp_ns, *position, *orientation, *pose_covariance, *linear, *angular, *twist_covariance
        )


class TfEncoder:
    """/tf of each INS sample serialized: a tf2_msgs/TFMessage of ins.transform alone."""

    def __init__(self, frames: FrameNames) -> None:
        self._layout = StampedLayout(
            frames.utm, _TRANSFORM, strings=(frames.base_footprint,), sequence_of_one=True
        )

    def tf(self, sample: InsSample) -> bytes:
        translation, rotation = ins.transform_values(sample)
        return self._layout.pack(sample.stamp_ns, *translation, *rotation)
