"""clock_tf: /clock for each physics step and /tf utm -> base_footprint for each INS sample.

Parameters (besides those of every subsystem node): publish_clock (default true; a second
bridge of the same session sets it false, the spec's rule that only agent 0's bridge has /clock).
"""

from __future__ import annotations

from typing import Any

from tf2_msgs.msg import TFMessage

from acres_bridge.convert import ins as convert_ins
from acres_bridge.convert.cdr import time_message
from acres_bridge.convert.ins_cdr import TfEncoder
from acres_bridge.convert.session import clock as clock_message
from acres_bridge.ingest.channels import CLOCK, INS
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import Clock, InsSample

__all__ = ["ClockTf"]


class ClockTf(SubsystemNode):
    """Publishes the simulation clock and the vehicle's pose transform."""

    DEFAULT_NODE_NAME = "clock_tf"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self.publish_clock = bool(self.declare_parameter("publish_clock", True).value)
        if self.publish_clock:
            self._clock_publisher = self.publisher("/clock")
            self.samples(CLOCK, self._on_clock, agent=0)
        self._tf = self.publisher("/tf")
        self._encode_tf = TfEncoder(self.frames)
        self.samples(INS, self._on_ins)

    def _on_clock(self, sample: Clock) -> None:
        self._clock_publisher.publish_serialized(
            time_message(sample.stamp_ns), sample.step, lambda: clock_message(sample)
        )

    def _on_ins(self, sample: InsSample) -> None:
        """Serialized straight to CDR (acres_bridge.convert.ins_cdr), as the ins node's topics."""
        if sample.has_position:
            self._tf.publish_serialized(
                self._encode_tf.tf(sample),
                sample.step,
                lambda: TFMessage(transforms=[convert_ins.transform(sample, self.frames)]),
            )
