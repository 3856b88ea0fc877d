"""CAN frames <-> can_msgs/msg/Frame, pure: no node, no I/O (spec: CAN Bus).

``frame_message`` makes the can/rx message of a frame the tractor sent, stamped with the simulation
time of the step that made it and framed ``can`` (never prefixed, spec: Frames). ``checked_frame``
checks a can/tx message as the datagram codec will carry it and refuses, naming the field, a dlc
above 8 or an identifier beyond 29 bits (11 without ``is_extended``). The barrier frame that ends a
lockstep step is a transport marker: ``is_published`` says it never reaches can/rx.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from can_msgs.msg import Frame

from acres_bridge.convert.stamps import stamp, time_ns
from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire.can import EXTENDED_ID_MASK, STANDARD_ID_MASK, CanFrame, is_barrier
from acres_bridge.wire.json_fields import MAX_STAMP_NS

__all__ = [
    "CAN_FRAME_ID",
    "MAX_DLC",
    "CanFrameRefusedError",
    "checked_frame",
    "frame_message",
    "is_published",
]

CAN_FRAME_ID: Final = "can"  # the spec's frame of every CAN message, without a frame prefix
MAX_DLC: Final = 8
_DATA_BYTES: Final = 8


class CanFrameRefusedError(CommandRefusedError):
    """Raised when a can/tx frame cannot go on the bus: the message names the field and its value."""


def is_published(frame: CanFrame) -> bool:
    """False for the barrier frame, which ends a lockstep step and is not a frame of the tractor."""
    return not is_barrier(frame)


def frame_message(frame: CanFrame, frame_id: str = CAN_FRAME_ID) -> Frame:
    """The can_msgs/Frame of a frame from the simulator: data padded with zeros to 8 bytes."""
    message = Frame(
        id=frame.can_id,
        is_rtr=frame.is_rtr,
        is_extended=frame.is_extended,
        is_error=frame.is_error,
        dlc=frame.dlc,
    )
    message.header.stamp = stamp(frame.stamp_ns)
    message.header.frame_id = frame_id
    message.data = np.frombuffer(frame.data.ljust(_DATA_BYTES, b"\x00"), dtype=np.uint8)
    return message


def _stamp_ns(header: Any) -> int:
    """The header's time in ns when a frame may carry it (0 .. MAX_STAMP_NS), else 0."""
    ns = time_ns(header.stamp)
    return ns if 0 <= ns <= MAX_STAMP_NS else 0


def checked_frame(message: Frame) -> CanFrame:
    """The frame of a can/tx message, checked; CanFrameRefusedError names a bad dlc or identifier.

    The first ``dlc`` bytes of ``data`` are the payload (a remote request carries none); the stamp
    is kept when it is a simulation time, else 0; the step is 0 (a controller's frame).
    """
    dlc = int(message.dlc)
    if dlc > MAX_DLC:
        raise CanFrameRefusedError(f"can/tx: dlc {dlc} is above {MAX_DLC}")
    can_id = int(message.id)
    mask, bits = (EXTENDED_ID_MASK, 29) if message.is_extended else (STANDARD_ID_MASK, 11)
    if can_id > mask:
        kind = "an extended" if message.is_extended else "a standard (is_extended false)"
        raise CanFrameRefusedError(
            f"can/tx: id {can_id:#x} is beyond the {bits} bits of {kind} identifier (at most {mask:#x})"
        )
    rtr = bool(message.is_rtr)
    data = b"" if rtr else bytes(np.asarray(message.data, dtype=np.uint8)[:dlc])
    return CanFrame(
        can_id=can_id,
        data=data,
        dlc=dlc,
        is_extended=bool(message.is_extended),
        is_rtr=rtr,
        is_error=bool(message.is_error),
        stamp_ns=_stamp_ns(message.header),
        step=0,
    )
