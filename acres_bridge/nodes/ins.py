"""ins: the pose and INS topics of a vehicle from each INS sample (spec: Pose and INS).

Polaris: /vehicle/odom, /oxts/imu (OxTS axes), /oxts/velocity (angular rate in deg/s),
/oxts/fix, /sim/ground_truth/odom. Maxxum: odom, imu/data (body axes), gnss/fix,
ground_truth/odom. Odometry, the fix and the ground truth are published only for samples
with a UTM position; the IMU and the velocity for every sample.
"""

from __future__ import annotations

from typing import Any

from acres_bridge.convert import ins as convert
from acres_bridge.convert.ins_cdr import InsEncoders
from acres_bridge.ingest.channels import INS
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import InsSample
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["Ins"]


class Ins(SubsystemNode):
    """Publishes the INS topics of one vehicle."""

    DEFAULT_NODE_NAME = "ins"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        polaris = self.vehicle == Vehicle.POLARIS
        self._oxts = polaris
        imu, fix = ("/oxts/imu", "/oxts/fix") if polaris else ("imu/data", "gnss/fix")
        self._odom = self.publisher("/vehicle/odom" if polaris else "odom")
        self._imu = self.publisher(imu)
        self._fix = self.publisher(fix)
        self._truth = self.publisher("/sim/ground_truth/odom" if polaris else "ground_truth/odom")
        self._velocity = self.publisher("/oxts/velocity") if polaris else None
        self._imu_frame, self._fix_frame = self.frame(imu), self.frame(fix)
        self._velocity_frame = self.frame("/oxts/velocity") if polaris else ""
        self._encode = InsEncoders(
            self.frames,
            imu_frame=self._imu_frame,
            fix_frame=self._fix_frame,
            velocity_frame=self._velocity_frame,
            oxts_axes=polaris,
        )
        self.samples(INS, self._on_ins)

    def _on_ins(self, sample: InsSample) -> None:
        """Every message serialized straight to CDR (acres_bridge.convert.ins_cdr); the message
        objects of acres_bridge.convert.ins are made only for a topic's taps."""
        frames, encode, step = self.frames, self._encode, sample.step
        self._imu.publish_serialized(
            encode.imu(sample), step, lambda: convert.imu(sample, self._imu_frame, oxts_axes=self._oxts)
        )
        if self._velocity is not None:
            self._velocity.publish_serialized(
                encode.oxts_velocity(sample),
                step,
                lambda: convert.oxts_velocity(sample, self._velocity_frame),
            )
        if sample.has_position:
            self._odom.publish_serialized(
                encode.odometry(sample), step, lambda: convert.odometry(sample, frames)
            )
            self._fix.publish_serialized(
                encode.navsat_fix(sample), step, lambda: convert.navsat_fix(sample, self._fix_frame)
            )
            self._truth.publish_serialized(
                encode.ground_truth_odometry(sample),
                step,
                lambda: convert.ground_truth_odometry(sample, frames),
            )
