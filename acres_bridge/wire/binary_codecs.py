"""The codecs of the high-rate messages (clock, INS, step requests and replies, stream marks):
fixed-size little-endian structs. Every decode_* raises ProtocolError, naming the message and the
bad field, for any payload that does not match; nothing else escapes."""

from __future__ import annotations

import math
import struct
from typing import Any

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.json_fields import check_stamp
from acres_bridge.wire.messages import Clock, InsSample, StepDone, StepRequest, StreamMark
from acres_bridge.wire.vocabulary import StepStatus

__all__ = [
    "decode_clock",
    "decode_ins",
    "decode_step_done",
    "decode_step_request",
    "decode_stream_mark",
    "encode_clock",
    "encode_ins",
    "encode_step_done",
    "encode_step_request",
    "encode_stream_mark",
]

_CLOCK = struct.Struct("<Qq")
_STEP_REQUEST = struct.Struct("<IIQ")  # request_id, agent count, steps; then count x uint64
_STEP_DONE = struct.Struct("<IIQ")  # request_id, status, last_step
_STREAM_MARK = struct.Struct("<Q")
_INS = struct.Struct("<QqIxxxx41d")
INS_FLAG_POSITION = 1
# The 41 numbers of an INS payload after step, stamp and flags, in order (names for error messages).
_INS_NUMBERS = (
    *(f"position[{i}]" for i in range(3)),
    "latitude_deg",
    "longitude_deg",
    *(f"orientation[{i}]" for i in range(4)),
    *(f"velocity[{i}]" for i in range(3)),
    *(f"angular_rate[{i}]" for i in range(3)),
    *(f"specific_force[{i}]" for i in range(3)),
    *(f"position_variance[{i}]" for i in range(3)),
    *(f"velocity_variance[{i}]" for i in range(3)),
    *(f"attitude_variance[{i}]" for i in range(3)),
    *(f"true_position[{i}]" for i in range(3)),
    *(f"true_orientation[{i}]" for i in range(4)),
    "true_speed",
    *(f"angular_rate_variance[{i}]" for i in range(3)),
    *(f"specific_force_variance[{i}]" for i in range(3)),
)
# Fields that carry no meaning without a fix: position, latitude, longitude, position variance.
_INS_FIX_ONLY = frozenset((0, 1, 2, 3, 4, 18, 19, 20))


def encode_clock(message: Clock) -> bytes:
    return _CLOCK.pack(message.step, message.stamp_ns)


def encode_step_request(message: StepRequest) -> bytes:
    seqs = message.command_seqs
    return _STEP_REQUEST.pack(message.request_id, len(seqs), message.steps) + struct.pack(
        f"<{len(seqs)}Q", *seqs
    )


def encode_step_done(message: StepDone) -> bytes:
    return _STEP_DONE.pack(message.request_id, message.status, message.last_step)


def encode_stream_mark(message: StreamMark) -> bytes:
    return _STREAM_MARK.pack(message.last_step)


def encode_ins(message: InsSample) -> bytes:
    return _INS.pack(
        message.step,
        message.stamp_ns,
        INS_FLAG_POSITION if message.has_position else 0,
        *message.position,
        message.latitude_deg,
        message.longitude_deg,
        *message.orientation,
        *message.velocity,
        *message.angular_rate,
        *message.specific_force,
        *message.position_variance,
        *message.velocity_variance,
        *message.attitude_variance,
        *message.true_position,
        *message.true_orientation,
        message.true_speed,
        *message.angular_rate_variance,
        *message.specific_force_variance,
    )


def _unpack(what: str, layout: struct.Struct, payload: bytes) -> tuple[Any, ...]:
    if len(payload) != layout.size:
        raise ProtocolError(f"{what}: expected {layout.size} payload bytes, found {len(payload)}")
    return layout.unpack(payload)


def decode_clock(payload: bytes) -> Clock:
    step, stamp_ns = _unpack("CLOCK", _CLOCK, payload)
    check_stamp("CLOCK", stamp_ns)
    return Clock(step=step, stamp_ns=stamp_ns)


def decode_step_request(payload: bytes) -> StepRequest:
    if len(payload) < _STEP_REQUEST.size:
        raise ProtocolError(
            f"STEP_REQUEST: expected at least {_STEP_REQUEST.size} bytes, found {len(payload)}"
        )
    request_id, count, steps = _STEP_REQUEST.unpack_from(payload)
    if len(payload) != _STEP_REQUEST.size + 8 * count:
        raise ProtocolError(
            f"STEP_REQUEST: {count} command sequence numbers need {_STEP_REQUEST.size + 8 * count} bytes, "
            f"found {len(payload)}"
        )
    if steps < 1:
        raise ProtocolError(f"STEP_REQUEST: steps must be at least 1, found {steps}")
    seqs = struct.unpack_from(f"<{count}Q", payload, _STEP_REQUEST.size)
    return StepRequest(request_id=request_id, steps=steps, command_seqs=tuple(seqs))


def decode_step_done(payload: bytes) -> StepDone:
    request_id, status, last_step = _unpack("STEP_DONE", _STEP_DONE, payload)
    if status not in tuple(StepStatus):
        raise ProtocolError(f"STEP_DONE: unknown status {status}")
    return StepDone(request_id=request_id, last_step=last_step, status=StepStatus(status))


def decode_stream_mark(payload: bytes) -> StreamMark:
    (last_step,) = _unpack("STREAM_MARK", _STREAM_MARK, payload)
    return StreamMark(last_step=last_step)


def decode_ins(payload: bytes) -> InsSample:
    values = _unpack("INS", _INS, payload)
    step, stamp_ns, flags = values[:3]
    numbers = values[3:]
    check_stamp("INS", stamp_ns)
    if flags & ~INS_FLAG_POSITION:
        raise ProtocolError(f"INS: unknown flags {flags:#x}")
    has_position = bool(flags & INS_FLAG_POSITION)
    # Without a fix the position fields carry no meaning (NaN is allowed there); all else must be finite.
    for index, value in enumerate(numbers):
        if not math.isfinite(value) and (has_position or index not in _INS_FIX_ONLY):
            raise ProtocolError(f"INS: field {_INS_NUMBERS[index]} must be finite, found {value}")
    n = numbers
    return InsSample(
        step=step,
        stamp_ns=stamp_ns,
        has_position=has_position,
        position=(n[0], n[1], n[2]),
        latitude_deg=n[3],
        longitude_deg=n[4],
        orientation=(n[5], n[6], n[7], n[8]),
        velocity=(n[9], n[10], n[11]),
        angular_rate=(n[12], n[13], n[14]),
        specific_force=(n[15], n[16], n[17]),
        position_variance=(n[18], n[19], n[20]),
        velocity_variance=(n[21], n[22], n[23]),
        attitude_variance=(n[24], n[25], n[26]),
        true_position=(n[27], n[28], n[29]),
        true_orientation=(n[30], n[31], n[32], n[33]),
        true_speed=n[34],
        angular_rate_variance=(n[35], n[36], n[37]),
        specific_force_variance=(n[38], n[39], n[40]),
    )
