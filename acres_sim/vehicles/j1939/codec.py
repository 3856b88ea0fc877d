"""J1939 frames in general: 29-bit identifiers, signals (bits, scale, offset, J1939's value ranges),
parameter groups, and a group's frame from its values and back. The tractor's groups are in
acres_sim.vehicles.j1939.frames."""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from acres_bridge.wire.can import CanFrame
from acres_sim.errors import ParamsError

__all__ = [
    "BRAKES_ADDRESS",
    "ENGINE_ADDRESS",
    "GLOBAL_ADDRESS",
    "TRACTOR_ADDRESS",
    "DecodedFrame",
    "FrameSpec",
    "J1939Id",
    "Signal",
    "decode_frame",
    "encode_frame",
    "j1939_id",
    "parse_id",
]

ENGINE_ADDRESS: Final = 0x00  # J1939 preferred address of engine #1
BRAKES_ADDRESS: Final = 0x0B  # J1939 preferred address of the brake system controller
TRACTOR_ADDRESS: Final = 0x80  # the tractor ECU (the spec's 0x18FF1580 comes from it)
GLOBAL_ADDRESS: Final = 0xFF
_DATA_BYTES: Final = 8
_ALL_ONES: Final = (1 << 64) - 1
_PDU2_MIN_PF: Final = 240

# ---- identifiers ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class J1939Id:
    """The parts of a 29-bit identifier. ``destination`` is None for a broadcast (PDU2) group."""

    priority: int
    pgn: int
    source: int
    destination: int | None


def j1939_id(*, priority: int, pgn: int, source: int, destination: int = GLOBAL_ADDRESS) -> int:
    """The 29-bit identifier of a group; ``destination`` goes into a PDU1 group's PS byte."""
    if not 0 <= priority <= 7 or not 0 <= pgn < 1 << 18 or not 0 <= source <= 0xFF:
        raise ParamsError(f"J1939 id: priority {priority}, PGN {pgn:#x}, source {source:#x} out of range")
    pdu_format = (pgn >> 8) & 0xFF
    if pdu_format < _PDU2_MIN_PF:
        if pgn & 0xFF:
            raise ParamsError(f"J1939 id: the PDU1 PGN {pgn:#x} must end in 00 (the destination byte)")
        pgn |= destination & 0xFF
    return (priority << 26) | (pgn << 8) | source


def parse_id(can_id: int) -> J1939Id:
    """Priority, PGN, source and destination of a 29-bit identifier."""
    pgn = (can_id >> 8) & 0x3FFFF
    source = can_id & 0xFF
    priority = (can_id >> 26) & 0x7
    if ((pgn >> 8) & 0xFF) < _PDU2_MIN_PF:
        return J1939Id(priority, pgn & 0x3FF00, source, pgn & 0xFF)
    return J1939Id(priority, pgn, source, None)


# ---- signals and groups --------------------------------------------------------------------------


@functools.cache
def _decimals(*numbers: float) -> int:
    """The decimal places that write ``numbers`` exactly: a decoded value is rounded to them."""
    places = 0
    for number in numbers:
        exponent = decimal.Decimal(repr(number)).as_tuple().exponent
        places = max(places, -exponent if isinstance(exponent, int) else 0)
    return places


@dataclass(frozen=True, slots=True)
class Signal:
    """One parameter of a group: where its bits are, and how a raw value maps to a physical one.

    ``byte`` and ``bit`` are J1939's numbering from 1 (bit 1 the least significant); a signal longer
    than 8 bits continues in the next bytes, least significant byte first. physical = raw * scale +
    offset, rounded to the decimals of scale and offset. ``max_raw`` is the largest valid raw value;
    by default J1939's for the length (0xFA.. for whole bytes, all ones less one for shorter fields).
    """

    name: str
    byte: int
    bit: int = 1
    length: int = 8
    scale: float = 1.0
    offset: float = 0.0
    unit: str = ""
    max_raw: int | None = None

    @property
    def start(self) -> int:
        """The bit position of the least significant bit in the 64-bit little-endian payload."""
        return (self.byte - 1) * 8 + self.bit - 1

    @property
    def mask(self) -> int:
        return (1 << self.length) - 1

    @property
    def valid_max(self) -> int:
        """The largest raw value that is data (not an indicator)."""
        if self.max_raw is not None:
            return self.max_raw
        if self.length >= 8:
            return (0xFA << (self.length - 8)) | ((1 << (self.length - 8)) - 1)
        return self.mask - 1

    @property
    def discrete(self) -> bool:
        """True for a state or a code (unitless, raw value = value), decoded as an int."""
        return self.scale == 1.0 and self.offset == 0.0 and not self.unit

    @property
    def low(self) -> float:
        """The lowest physical value."""
        return self.offset

    @property
    def high(self) -> float:
        """The highest physical value."""
        return self.offset + self.scale * self.valid_max

    def raw(self, value: float | None) -> int:
        """The raw bits of a value: all ones for None, else the nearest step within the valid range."""
        if value is None:
            return self.mask
        if not math.isfinite(value):
            raise ParamsError(f"J1939 signal {self.name}: expected a finite value or None, got {value!r}")
        steps = round((value - self.offset) / self.scale)
        return min(max(steps, 0), self.valid_max)

    def value(self, raw: int) -> float | None:
        """The physical value of raw bits; None for "not available", an error or a reserved value."""
        if raw > self.valid_max:
            return None
        if self.discrete:
            return raw
        return round(raw * self.scale + self.offset, _decimals(self.scale, self.offset))


@dataclass(frozen=True, slots=True)
class FrameSpec:
    """One parameter group as this bus uses it: its identifier parts and its signals."""

    name: str
    title: str
    pgn: int
    priority: int
    source: int
    signals: tuple[Signal, ...]
    destination: int = GLOBAL_ADDRESS

    @property
    def can_id(self) -> int:
        """The 29-bit identifier the tractor sends this group with (for a command: a template)."""
        return j1939_id(
            priority=self.priority, pgn=self.pgn, source=self.source, destination=self.destination
        )

    def signal(self, name: str) -> Signal:
        """The signal ``name``; KeyError names the known ones."""
        for signal in self.signals:
            if signal.name == name:
                return signal
        raise KeyError(f"{self.name} has no signal {name!r}; known: {[s.name for s in self.signals]}")


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """The signals of one frame of the tables: None where the frame says "not available" or an error."""

    name: str
    pgn: int
    priority: int
    source: int
    destination: int | None
    signals: Mapping[str, float | None]


def encode_frame(
    spec: FrameSpec,
    values: Mapping[str, float | None],
    *,
    step: int = 0,
    stamp_ns: int = 0,
    source: int | None = None,
) -> CanFrame:
    """The frame of group ``spec`` with ``values`` (missing or None: not available); unused bits are 1.

    ``source`` replaces the group's source address (a controller sending a command frame).
    """
    unknown = sorted(set(values) - {s.name for s in spec.signals})
    if unknown:
        raise ParamsError(
            f"{spec.name}: unknown signal(s) {unknown}; known: {[s.name for s in spec.signals]}"
        )
    word = _ALL_ONES
    for signal in spec.signals:
        raw = signal.raw(values.get(signal.name))
        word = (word & ~(signal.mask << signal.start)) | (raw << signal.start)
    can_id = j1939_id(
        priority=spec.priority,
        pgn=spec.pgn,
        source=spec.source if source is None else source,
        destination=spec.destination,
    )
    return CanFrame(
        can_id=can_id,
        data=word.to_bytes(_DATA_BYTES, "little"),
        dlc=_DATA_BYTES,
        stamp_ns=stamp_ns,
        step=step,
    )


def decode_frame(frame: CanFrame, groups: Mapping[int, FrameSpec]) -> DecodedFrame | None:
    """The signals of a frame of one of ``groups`` (by PGN); None for any other frame (unknown PGN,
    11-bit, remote, error).

    ParamsError for a frame of a known group with other than 8 data bytes.
    """
    if not frame.is_extended or frame.is_rtr or frame.is_error:
        return None
    ident = parse_id(frame.can_id)
    spec = groups.get(ident.pgn)
    if spec is None:
        return None
    if len(frame.data) != _DATA_BYTES:
        raise ParamsError(
            f"{spec.name} ({frame.can_id:#010x}): expected 8 data bytes, found {len(frame.data)}"
        )
    word = int.from_bytes(frame.data, "little")
    return DecodedFrame(
        name=spec.name,
        pgn=spec.pgn,
        priority=ident.priority,
        source=ident.source,
        destination=ident.destination,
        signals={s.name: s.value((word >> s.start) & s.mask) for s in spec.signals},
    )
