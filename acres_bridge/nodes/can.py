"""can: the Maxxum's CAN bus on can/rx and can/tx (spec: CAN Bus).

can/rx publishes every frame the tractor sends (a group of 13 each 0.1 s of simulation time),
stamped with the simulation time of the step that made it, frame ``can``; the barrier frame that
ends a lockstep step is not published. can/tx takes frames for the tractor: a dlc above 8 or an
identifier beyond 29 bits (11 without is_extended) is refused with a warning and counted; a good
frame goes to the simulator's CAN transport (docs/can.md lists the frames the tractor takes).
Both topics have can_msgs/msg/Frame and the QoS profile ``can`` (reliable, depth 500), the type and
QoS of ros2_socketcan's receiver and sender, so a node written for a real tractor bus runs with
``from_can_bus:=can/rx to_can_bus:=can/tx``.

Parameters (besides those of every subsystem node): allow_unfenced_commands (default false: without
the DDS loopback fence every can/tx frame is refused).
"""

from __future__ import annotations

from typing import Any

from acres_bridge.convert.can import (
    CAN_FRAME_ID,
    CanFrameRefusedError,
    checked_frame,
    frame_message,
    is_published,
)
from acres_bridge.ingest.channels import CAN_RX, CAN_TX
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["Can"]


class Can(SubsystemNode):
    """Publishes the tractor's CAN frames and forwards checked frames from can/tx."""

    DEFAULT_NODE_NAME = "can"
    SERVES = (Vehicle.MAXXUM, "the can node serves the Maxxum's CAN bus; a {vehicle} has none")

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self.forwarded = 0
        self.published = 0
        self._rx = self.publisher("can/rx")
        self._tx = self.outlet(CAN_TX)
        self.subscription("can/tx", self._on_tx)
        self.samples(CAN_RX, self._on_rx)

    def _on_rx(self, frame: CanFrame) -> None:
        if is_published(frame):
            self._rx.publish(frame_message(frame, CAN_FRAME_ID), frame.step)
            self.published += 1

    def _on_tx(self, message: Any) -> None:
        try:
            frame = checked_frame(message)
        except CanFrameRefusedError as error:
            self.refuse("frame", "a can/tx frame", str(error))
            return
        if self._tx.publish(frame):
            self.forwarded += 1
