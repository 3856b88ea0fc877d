"""The CAN transport of the Maxxum: CAN frames in UDP datagrams, shared by the simulator and the bridge.

One datagram carries one or more frames. Little-endian, like the rest of the protocol:

    header   8 bytes   magic b"ACAN", version uint8 (CAN_VERSION), reserved uint8 (0),
                       count uint16 (1 .. MAX_FRAMES_PER_DATAGRAM)
    frame   32 bytes   can_id uint32 (29 bits, without flag bits), flags uint8 (bit 0 extended,
                       bit 1 remote request, bit 2 error frame), dlc uint8 (0..8), pad 2 bytes (0),
                       data 8 bytes (the first dlc bytes; the rest 0), stamp_ns int64 (the
                       simulation time of the frame), step uint64 (the physics step that made it)

A datagram is read whole or refused whole: ``decode_datagram`` raises ProtocolError, naming the
field, for a wrong size, magic, version, count, flag, dlc or identifier, a non-zero pad or a stamp
out of range. UDP checksums the datagram; the codec adds none.

The barrier frame (``BARRIER_ID``) ends the frames of one physics step in lockstep: the simulator
sends it after each step, so a receiver knows that every frame of that step has been sent. It is a
transport marker, not a frame of the tractor's bus; docs/can.md has its payload.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntFlag
from typing import Final

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.json_fields import MAX_STAMP_NS

__all__ = [
    "BARRIER_ID",
    "CAN_MAGIC",
    "CAN_VERSION",
    "EXTENDED_ID_MASK",
    "MAX_FRAMES_PER_DATAGRAM",
    "STANDARD_ID_MASK",
    "Barrier",
    "CanFlags",
    "CanFrame",
    "barrier_frame",
    "decode_barrier",
    "decode_datagram",
    "encode_datagram",
    "is_barrier",
]

CAN_MAGIC: Final = b"ACAN"
CAN_VERSION: Final = 1
MAX_FRAMES_PER_DATAGRAM: Final = 64
EXTENDED_ID_MASK: Final = (1 << 29) - 1
STANDARD_ID_MASK: Final = (1 << 11) - 1
MAX_DLC: Final = 8

_HEADER = struct.Struct("<4sBBH")
_FRAME = struct.Struct("<IBB2s8sqQ")
_NO_PAD = b"\x00\x00"

# The barrier: J1939 priority 7, proprietary B PGN 0xFFFF, source 0x80 (the tractor ECU).
BARRIER_ID: Final = 0x1CFFFF80
_BARRIER = struct.Struct("<IHH")
_BARRIER_FILL = 0xFFFF


class CanFlags(IntFlag):
    """The flag bits of a frame in a datagram."""

    EXTENDED = 1
    RTR = 2
    ERROR = 4


_KNOWN_FLAGS = int(CanFlags.EXTENDED | CanFlags.RTR | CanFlags.ERROR)


@dataclass(frozen=True, slots=True, kw_only=True)
class CanFrame:
    """One CAN frame with the simulation time and physics step that made it.

    ``can_id`` is the identifier without flag bits (29 bits when ``is_extended``, else 11). ``data``
    holds the ``dlc`` data bytes of a data frame; a remote request (``is_rtr``) carries a dlc and no
    data. The fields of can_msgs/msg/Frame, so the bridge fills that message field by field.
    """

    can_id: int
    data: bytes = b""
    dlc: int = 0
    is_extended: bool = True
    is_rtr: bool = False
    is_error: bool = False
    stamp_ns: int = 0
    step: int = 0

    def __post_init__(self) -> None:
        """Refuse a frame that no datagram can carry (ValueError names the field)."""
        mask = EXTENDED_ID_MASK if self.is_extended else STANDARD_ID_MASK
        if not 0 <= self.can_id <= mask:
            bits = 29 if self.is_extended else 11
            raise ValueError(f"CanFrame.can_id {self.can_id:#x}: expected a {bits}-bit identifier")
        if not 0 <= self.dlc <= MAX_DLC:
            raise ValueError(f"CanFrame.dlc {self.dlc}: expected 0..{MAX_DLC}")
        expected = 0 if self.is_rtr else self.dlc
        if len(self.data) != expected:
            what = "a remote request carries no data" if self.is_rtr else f"dlc is {self.dlc}"
            raise ValueError(f"CanFrame.data has {len(self.data)} bytes: {what}")
        if not 0 <= self.stamp_ns <= MAX_STAMP_NS:
            raise ValueError(f"CanFrame.stamp_ns {self.stamp_ns}: expected 0 .. {MAX_STAMP_NS}")
        if not 0 <= self.step < 1 << 64:
            raise ValueError(f"CanFrame.step {self.step}: expected a 64-bit unsigned integer")

    @property
    def flags(self) -> CanFlags:
        """The flag bits of the frame in a datagram."""
        flags = CanFlags(0)
        if self.is_extended:
            flags |= CanFlags.EXTENDED
        if self.is_rtr:
            flags |= CanFlags.RTR
        if self.is_error:
            flags |= CanFlags.ERROR
        return flags


@dataclass(frozen=True, slots=True)
class Barrier:
    """The payload of a barrier frame: the low 32 bits of the step it ends, and the frames before it.

    ``frames_sent`` counts the frames the simulator sent after the previous barrier (saturating at
    65535), so that a receiver can tell a lost datagram from a quiet step.
    """

    step_low32: int
    frames_sent: int


def encode_datagram(frames: Iterable[CanFrame]) -> bytes:
    """One datagram with ``frames``; ValueError for none or more than MAX_FRAMES_PER_DATAGRAM."""
    frames = tuple(frames)
    if not 1 <= len(frames) <= MAX_FRAMES_PER_DATAGRAM:
        raise ValueError(
            f"a CAN datagram carries 1 .. {MAX_FRAMES_PER_DATAGRAM} frames, got {len(frames)}: "
            "split the frames over several datagrams"
        )
    parts = [_HEADER.pack(CAN_MAGIC, CAN_VERSION, 0, len(frames))]
    parts.extend(
        _FRAME.pack(
            frame.can_id,
            int(frame.flags),
            frame.dlc,
            _NO_PAD,
            frame.data.ljust(MAX_DLC, b"\x00"),
            frame.stamp_ns,
            frame.step,
        )
        for frame in frames
    )
    return b"".join(parts)


def decode_datagram(data: bytes | bytearray | memoryview) -> tuple[CanFrame, ...]:
    """The frames of one datagram; ProtocolError, naming the field, for anything malformed."""
    data = bytes(data)
    if len(data) < _HEADER.size:
        raise ProtocolError(f"CAN datagram: {len(data)} bytes, shorter than the {_HEADER.size}-byte header")
    magic, version, reserved, count = _HEADER.unpack_from(data)
    if magic != CAN_MAGIC:
        raise ProtocolError(f"CAN datagram: magic {magic!r}, expected {CAN_MAGIC!r}")
    if version != CAN_VERSION:
        raise ProtocolError(
            f"CAN datagram: the peer speaks CAN transport version {version}, this side speaks {CAN_VERSION}",
            version_mismatch=version,
        )
    if reserved != 0:
        raise ProtocolError(f"CAN datagram: reserved header byte must be 0, found {reserved}")
    if not 1 <= count <= MAX_FRAMES_PER_DATAGRAM:
        raise ProtocolError(f"CAN datagram: frame count {count}, expected 1 .. {MAX_FRAMES_PER_DATAGRAM}")
    expected = _HEADER.size + count * _FRAME.size
    if len(data) != expected:
        raise ProtocolError(f"CAN datagram: {count} frames need {expected} bytes, found {len(data)}")
    return tuple(
        _decode_frame(index, _FRAME.unpack_from(data, _HEADER.size + index * _FRAME.size))
        for index in range(count)
    )


def _decode_frame(index: int, fields: tuple[int, int, int, bytes, bytes, int, int]) -> CanFrame:
    can_id, flags, dlc, pad, payload, stamp_ns, step = fields
    what = f"CAN datagram frame {index}"
    if flags & ~_KNOWN_FLAGS:
        raise ProtocolError(f"{what}: unknown flag bits {flags:#04x}")
    extended = bool(flags & CanFlags.EXTENDED)
    rtr = bool(flags & CanFlags.RTR)
    mask = EXTENDED_ID_MASK if extended else STANDARD_ID_MASK
    if can_id > mask:
        bits = 29 if extended else 11
        raise ProtocolError(f"{what}: identifier {can_id:#x} is beyond {bits} bits")
    if dlc > MAX_DLC:
        raise ProtocolError(f"{what}: dlc {dlc}, expected 0..{MAX_DLC}")
    if pad != _NO_PAD:
        raise ProtocolError(f"{what}: pad bytes must be 0, found {pad.hex()}")
    used = 0 if rtr else dlc
    if any(payload[used:]):
        raise ProtocolError(f"{what}: data bytes after the first {used} must be 0, found {payload.hex()}")
    if not 0 <= stamp_ns <= MAX_STAMP_NS:
        raise ProtocolError(f"{what}: stamp_ns must be in 0 .. {MAX_STAMP_NS}, found {stamp_ns}")
    return CanFrame(
        can_id=can_id,
        data=payload[:used],
        dlc=dlc,
        is_extended=extended,
        is_rtr=rtr,
        is_error=bool(flags & CanFlags.ERROR),
        stamp_ns=stamp_ns,
        step=step,
    )


def barrier_frame(*, step: int, stamp_ns: int, frames_sent: int) -> CanFrame:
    """The barrier that ends physics step ``step``, after ``frames_sent`` frames since the last one."""
    payload = _BARRIER.pack(step & 0xFFFF_FFFF, min(max(frames_sent, 0), 0xFFFF), _BARRIER_FILL)
    return CanFrame(can_id=BARRIER_ID, data=payload, dlc=len(payload), stamp_ns=stamp_ns, step=step)


def is_barrier(frame: CanFrame) -> bool:
    """True for a barrier frame (which the bridge does not publish)."""
    return frame.is_extended and not frame.is_rtr and frame.can_id == BARRIER_ID


def decode_barrier(frame: CanFrame) -> Barrier:
    """The payload of a barrier frame; ProtocolError for another frame or a malformed payload."""
    if not is_barrier(frame):
        raise ProtocolError(f"CAN frame {frame.can_id:#x} is not the barrier {BARRIER_ID:#x}")
    if len(frame.data) != _BARRIER.size:
        raise ProtocolError(f"CAN barrier: expected {_BARRIER.size} data bytes, found {len(frame.data)}")
    step_low32, frames_sent, fill = _BARRIER.unpack(frame.data)
    if fill != _BARRIER_FILL:
        raise ProtocolError(f"CAN barrier: bytes 7 and 8 must be 0xFF, found {fill:#06x}")
    return Barrier(step_low32, frames_sent)
