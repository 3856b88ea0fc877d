"""ins: the pose and INS topics of a vehicle from each INS sample (spec: Pose and INS).

Polaris: /vehicle/odom, /oxts/imu (OxTS axes), /oxts/velocity (angular rate in deg/s),
/oxts/fix, /sim/ground_truth/odom. Maxxum: odom, imu/data (body axes), gnss/fix,
ground_truth/odom. Odometry, the fix and the ground truth are published only for samples
with a UTM position; the IMU and the velocity for every sample.
"""

from __future__ import annotations

from typing import Any

from acres_bridge.convert import ins as convert
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
        self.samples(INS, self._on_ins)

    def _on_ins(self, sample: InsSample) -> None:
        frames = self.frames
        self._imu.publish(convert.imu(sample, self._imu_frame, oxts_axes=self._oxts), sample.step)
        if self._velocity is not None:
            self._velocity.publish(convert.oxts_velocity(sample, self._velocity_frame), sample.step)
        if sample.has_position:
            self._odom.publish(convert.odometry(sample, frames), sample.step)
            self._fix.publish(convert.navsat_fix(sample, self._fix_frame), sample.step)
            self._truth.publish(convert.ground_truth_odometry(sample, frames), sample.step)
