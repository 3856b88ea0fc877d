"""The Maxxum's CAN bus: the J1939 / ISO 11783 frames the tractor sends and the ones it accepts.

Every 0.1 s of simulation time (``acres_sim.tractor.observation_due``) the tractor sends a group of
13 frames (``frames_from_observation``), all with 29-bit identifiers, 8 data bytes, little-endian
signals (ISO 11783-7 3.3.1) and the J1939 value ranges: a 1-byte signal is valid in 0 .. 250, a
2-byte one in 0 .. 64255, a 4-byte one in 0 .. 4211081215; all-ones means "not available" (in a
command: "don't care"), 0xFE.. an error. A 2-bit state is 00 off, 01 on, 10 error, 11 not
available. A value out of its range is sent as the nearest limit (ISO 11783-7 3.3.3); unused bits
are 1. Standard parameter groups carry what J1939 / ISO 11783-7 defines (engine speed EEC1,
wheel- and ground-based speed WBSD / GBSD, rear hitch, rear PTO, guidance); proprietary B groups
(PGN 0xFF00 .. 0xFFFF) carry the rest, like the spec's 0x18FF1580. docs/can.md has the table.

The tractor accepts four frames from a controller on the bus (``command_from_frame``):

- Guidance system command, PGN 0xAD00 (ISO 11783-7 B.26.1), to the tractor (0x80) or global: the
  curvature, applied while its status says "intended to steer". ISO 11783 counts a right turn
  positive; ROS and ``TractorCommand`` count left positive, so the sign flips.
- Hitch and PTO commands, PGN 0xFE42 (B.10): the rear hitch position (the lever) and the rear PTO
  engagement. The PTO speed and mode commands are not taken: the implement sets the PTO gearbox.
- Drive command, proprietary PGN 0xFF30: pedal, brake, hand throttle, differential locks. It
  restarts the safety brake's timer, as a bridge command does.
- Implement command, proprietary PGN 0xFF31: raise or lower, hitch mode, depth stop.

``decode`` reads any frame of these tables into its signals. The barrier frame that ends each
lockstep step is part of the transport (acres_bridge.wire.can, re-exported here).
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from acres_bridge.wire.can import BARRIER_ID, Barrier, CanFrame, barrier_frame, decode_barrier, is_barrier
from acres_bridge.wire.maxxum import MAX_DEPTH_STOP_M, Difflock, HitchMode
from acres_sim.errors import ParamsError
from acres_sim.tractor import TractorCommand, TractorObservation

__all__ = [
    "BARRIER_ID",
    "BRAKES_ADDRESS",
    "COMMAND_FRAMES",
    "ENGINE_ADDRESS",
    "GLOBAL_ADDRESS",
    "GROUP_SIZE",
    "STATUS_FRAMES",
    "TRACTOR_ADDRESS",
    "Barrier",
    "DecodedFrame",
    "FrameSpec",
    "J1939Id",
    "Signal",
    "barrier_frame",
    "command_from_frame",
    "decode",
    "decode_barrier",
    "encode_frame",
    "frame_spec",
    "frames_from_observation",
    "is_barrier",
    "j1939_id",
    "parse_id",
]

ENGINE_ADDRESS: Final = 0x00  # J1939 preferred address of engine #1
BRAKES_ADDRESS: Final = 0x0B  # J1939 preferred address of the brake system controller
TRACTOR_ADDRESS: Final = 0x80  # the tractor ECU (the spec's 0x18FF1580 comes from it)
GLOBAL_ADDRESS: Final = 0xFF
GROUP_SIZE: Final = 13
_DATA_BYTES: Final = 8
_ALL_ONES: Final = (1 << 64) - 1
_PDU2_MIN_PF: Final = 240
# ISO 11783-7 codes shared by several groups.
_EXIT_ALL_CLEAR: Final = 0b000000
_EXIT_REMOTE_TIMEOUT: Final = 0b000101
_LIMIT_NONE: Final = 0b000
_LIMIT_HIGH: Final = 0b010
_LIMIT_LOW: Final = 0b011
_SPEED_SOURCE_GROUND: Final = 0b001
_DISTANCE_WRAP_M: Final = 4_211_081.216  # ISO 11783-7 A.6: the distance restarts at 0 after its maximum
_HITCH_MODE_CODES: Final = {HitchMode.POSITION: 0, HitchMode.DRAFT: 1, HitchMode.FLOAT: 2}
_HITCH_MODES_BY_CODE: Final = {code: mode for mode, code in _HITCH_MODE_CODES.items()}


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


def _state(name: str, byte: int, bit: int) -> Signal:
    """A J1939 2-bit state: 00 off, 01 on (10 error, 11 not available)."""
    return Signal(name, byte, bit, 2, max_raw=1)


def _code(name: str, byte: int, bit: int, length: int, max_raw: int) -> Signal:
    return Signal(name, byte, bit, length, max_raw=max_raw)


def _percent(name: str, byte: int) -> Signal:
    return Signal(name, byte, scale=0.4, unit="%")


def _torque(name: str, byte: int) -> Signal:
    return Signal(name, byte, scale=1.0, offset=-125.0, unit="%")


def _speed(name: str) -> Signal:
    return Signal(name, 1, length=16, scale=0.001, unit="m/s")


def _distance(name: str) -> Signal:
    return Signal(name, 3, length=32, scale=0.001, unit="m")


def _direction(byte: int, bit: int) -> Signal:
    """ISO 11783-7 A.7: 00 reverse, 01 forward."""
    return _state("direction", byte, bit)


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


STATUS_FRAMES: Final = (
    FrameSpec(
        "EEC1",
        "Electronic engine controller 1",
        0xF004,
        3,
        ENGINE_ADDRESS,
        (
            _code("torque_mode", 1, 1, 4, 14),
            _torque("drivers_demand_torque_pct", 2),
            _torque("actual_torque_pct", 3),
            Signal("engine_speed_rpm", 4, length=16, scale=0.125, unit="r/min"),
            _torque("engine_demand_torque_pct", 8),
        ),
    ),
    FrameSpec(
        "EEC2",
        "Electronic engine controller 2",
        0xF003,
        3,
        ENGINE_ADDRESS,
        (
            _percent("accelerator_pedal_pct", 2),
            Signal("engine_load_pct", 3, unit="%"),
            _percent("remote_accelerator_pct", 4),
        ),
    ),
    FrameSpec(
        "EBC1",
        "Electronic brake controller 1",
        0xF001,
        6,
        BRAKES_ADDRESS,
        (_percent("brake_pedal_pct", 2),),
    ),
    FrameSpec(
        "WBSD",
        "Wheel-based speed and distance",
        0xFE48,
        3,
        TRACTOR_ADDRESS,
        (
            _speed("wheel_speed_mps"),
            _distance("wheel_distance_m"),
            _direction(8, 1),
            _state("key_switch", 8, 3),
            _state("start_stop", 8, 5),
            _state("operator_direction_reversed", 8, 7),
        ),
    ),
    FrameSpec(
        "GBSD",
        "Ground-based speed and distance",
        0xFE49,
        3,
        TRACTOR_ADDRESS,
        (_speed("ground_speed_mps"), _distance("ground_distance_m"), _direction(8, 1)),
    ),
    FrameSpec(
        "MSS",
        "Machine selected speed",
        0xF022,
        3,
        TRACTOR_ADDRESS,
        (
            _speed("selected_speed_mps"),
            _distance("selected_distance_m"),
            _code("exit_code", 7, 1, 6, 61),
            _direction(8, 1),
            _code("speed_source", 8, 3, 3, 6),
            _code("limit_status", 8, 6, 3, 6),
        ),
    ),
    FrameSpec(
        "RHS",
        "Primary or rear hitch status",
        0xFE45,
        3,
        TRACTOR_ADDRESS,
        (
            _percent("hitch_position_pct", 1),
            _code("limit_status", 2, 4, 3, 6),
            _state("in_work", 2, 7),
            Signal("lower_link_force_pct", 3, scale=0.8, offset=-100.0, unit="%"),
            Signal("draft_n", 4, length=16, scale=10.0, offset=-320_000.0, unit="N"),
            _code("exit_code", 6, 1, 6, 61),
        ),
    ),
    FrameSpec(
        "RPTO",
        "Primary or rear PTO output shaft",
        0xFE43,
        3,
        TRACTOR_ADDRESS,
        (
            Signal("pto_speed_rpm", 1, length=16, scale=0.125, unit="r/min"),
            Signal("pto_set_point_rpm", 3, length=16, scale=0.125, unit="r/min"),
            _state("engagement_request_status", 5, 1),
            _state("economy_mode", 5, 3),
            _state("mode_1000", 5, 5),
            _state("engagement", 5, 7),
            _code("exit_code", 7, 1, 6, 61),
        ),
    ),
    FrameSpec(
        "GMS",
        "Guidance machine status",
        0xAC00,
        3,
        TRACTOR_ADDRESS,
        (
            Signal("estimated_curvature_1pm", 1, length=16, scale=0.00025, offset=-8.032, unit="1/m"),
            _state("mechanical_lockout", 3, 1),
            _state("steering_ready", 3, 3),
            _state("steering_input_position", 3, 5),
            _state("request_reset", 3, 7),
            _code("limit_status", 4, 6, 3, 6),
            _code("exit_code", 5, 1, 6, 61),
        ),
    ),
    FrameSpec(
        "DRIVE",
        "Drive state (proprietary)",
        0xFF12,
        6,
        TRACTOR_ADDRESS,
        (
            _percent("pedal_pct", 1),
            _percent("brake_pct", 2),
            _percent("hand_throttle_pct", 3),
            _code("difflock", 4, 1, 2, 2),
            _state("safety_brake", 4, 3),
            Signal("accel_mps2", 5, length=16, scale=0.001, offset=-32.0, unit="m/s^2"),
            Signal("engine_set_rpm", 7, length=16, scale=0.125, unit="r/min"),
        ),
    ),
    FrameSpec(
        "STEER",
        "Steering state (proprietary)",
        0xFF13,
        6,
        TRACTOR_ADDRESS,
        (
            Signal("road_wheel_angle_rad", 1, length=16, scale=0.0001, offset=-3.2, unit="rad"),
            Signal("road_wheel_target_rad", 3, length=16, scale=0.0001, offset=-3.2, unit="rad"),
            Signal("curvature_command_1pm", 5, length=16, scale=0.0001, offset=-3.2, unit="1/m"),
            _state("at_angle_limit", 7, 1),
        ),
    ),
    FrameSpec(
        "HITCH",
        "Hitch and implement state (proprietary)",
        0xFF14,
        6,
        TRACTOR_ADDRESS,
        (
            Signal("lift_deg", 1, length=16, scale=1.0 / 128.0, offset=-200.0, unit="deg"),
            _percent("lever_pct", 3),
            _code("hitch_mode", 4, 1, 2, 2),
            _state("raise_command", 4, 3),
            _state("raised", 4, 5),
            Signal("working_depth_m", 5, length=16, scale=0.0001, unit="m"),
            Signal("depth_stop_m", 7, length=16, scale=0.0001, unit="m"),
        ),
    ),
    FrameSpec(
        "POWER",
        "Power and implement (proprietary)",
        0xFF15,
        6,
        TRACTOR_ADDRESS,
        (
            Signal("pto_power_kw", 1, length=16, scale=0.01, unit="kW"),
            Signal("drawbar_power_kw", 3, length=16, scale=0.01, unit="kW"),
            Signal("engine_power_kw", 5, length=16, scale=0.01, unit="kW"),
            _percent("wheel_slip_pct", 7),
            Signal("implement_code", 8),
        ),
    ),
)

COMMAND_FRAMES: Final = (
    FrameSpec(
        "GSC",
        "Guidance system command",
        0xAD00,
        3,
        GLOBAL_ADDRESS,
        (
            Signal("curvature_1pm", 1, length=16, scale=0.00025, offset=-8.032, unit="1/m"),
            _state("curvature_status", 3, 1),
        ),
        destination=TRACTOR_ADDRESS,
    ),
    FrameSpec(
        "HPC",
        "Hitch and PTO commands",
        0xFE42,
        3,
        GLOBAL_ADDRESS,
        (
            _percent("front_hitch_pct", 1),
            _percent("rear_hitch_pct", 2),
            Signal("front_pto_set_point_rpm", 3, length=16, scale=0.125, unit="r/min"),
            Signal("rear_pto_set_point_rpm", 5, length=16, scale=0.125, unit="r/min"),
            _state("rear_pto_engagement", 7, 5),
            _state("front_pto_engagement", 7, 7),
            _state("rear_pto_economy", 8, 1),
            _state("front_pto_economy", 8, 3),
            _state("rear_pto_mode_1000", 8, 5),
            _state("front_pto_mode_1000", 8, 7),
        ),
    ),
    FrameSpec(
        "DRIVE_CMD",
        "Drive command (proprietary)",
        0xFF30,
        3,
        GLOBAL_ADDRESS,
        (
            _percent("pedal_pct", 1),
            _percent("brake_pct", 2),
            _percent("hand_throttle_pct", 3),
            _code("difflock", 4, 1, 2, 2),
        ),
    ),
    FrameSpec(
        "IMPLEMENT_CMD",
        "Implement command (proprietary)",
        0xFF31,
        3,
        GLOBAL_ADDRESS,
        (
            _state("raise", 1, 1),
            _code("hitch_mode", 1, 3, 2, 2),
            Signal("depth_stop_m", 2, length=16, scale=0.0001, unit="m"),
        ),
    ),
)

_BY_PGN: Final = {spec.pgn: spec for spec in (*STATUS_FRAMES, *COMMAND_FRAMES)}
_BY_NAME: Final = {spec.name: spec for spec in (*STATUS_FRAMES, *COMMAND_FRAMES)}


def frame_spec(name: str) -> FrameSpec:
    """The group ``name`` (e.g. "EEC1", "GSC"); KeyError names the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no CAN group {name!r}; known: {sorted(_BY_NAME)}") from None


# ---- encoding and decoding -----------------------------------------------------------------------


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


def decode(frame: CanFrame) -> DecodedFrame | None:
    """The signals of a frame of the tables; None for any other frame (unknown PGN, 11-bit, remote, error).

    ParamsError for a frame of a known group with other than 8 data bytes.
    """
    if not frame.is_extended or frame.is_rtr or frame.is_error:
        return None
    ident = parse_id(frame.can_id)
    spec = _BY_PGN.get(ident.pgn)
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


# ---- the tractor's group -------------------------------------------------------------------------


def _on(flag: bool) -> int:
    return 1 if flag else 0


def _status_values(o: TractorObservation) -> dict[str, dict[str, float | None]]:
    """The signal values of each status group for an observation."""
    direction = _on(o.speed_mps >= 0.0)
    load_pct = 100.0 * o.engine_load
    exit_code = _EXIT_REMOTE_TIMEOUT if o.stale else _EXIT_ALL_CLEAR
    if not o.steering_at_limit:
        steering_limit = _LIMIT_NONE
    else:  # ISO counts right positive: a lock to the left limits the ISO curvature from below
        steering_limit = _LIMIT_LOW if o.steering_target_rad > 0.0 else _LIMIT_HIGH
    return {
        "EEC1": {
            "torque_mode": _on(max(o.pedal, o.hand_throttle) > 0.0),
            "drivers_demand_torque_pct": 100.0 * max(o.pedal, o.hand_throttle),
            "actual_torque_pct": load_pct,
            "engine_speed_rpm": o.engine_rpm,
            "engine_demand_torque_pct": load_pct,
        },
        "EEC2": {
            "accelerator_pedal_pct": 100.0 * o.pedal,
            "engine_load_pct": load_pct,
            "remote_accelerator_pct": 100.0 * o.hand_throttle,
        },
        "EBC1": {"brake_pedal_pct": 100.0 * o.brake},
        "WBSD": {
            "wheel_speed_mps": abs(o.wheel_speed_mps),
            "wheel_distance_m": o.wheel_distance_m % _DISTANCE_WRAP_M,
            "direction": direction,
            "key_switch": 1,
            "operator_direction_reversed": 0,
        },
        "GBSD": {
            "ground_speed_mps": abs(o.speed_mps),
            "ground_distance_m": o.distance_m % _DISTANCE_WRAP_M,
            "direction": direction,
        },
        "MSS": {
            "selected_speed_mps": abs(o.speed_mps),
            "selected_distance_m": o.distance_m % _DISTANCE_WRAP_M,
            "exit_code": exit_code,
            "direction": direction,
            "speed_source": _SPEED_SOURCE_GROUND,
            "limit_status": _LIMIT_NONE,
        },
        "RHS": {
            "hitch_position_pct": 100.0 * o.hitch_position,
            "limit_status": _LIMIT_NONE,
            "in_work": _on(o.implement_depth_m > 0.0),
            "lower_link_force_pct": 100.0 * o.lower_link_force,
            "draft_n": o.draft_n,
            "exit_code": _EXIT_ALL_CLEAR,
        },
        "RPTO": {
            "pto_speed_rpm": o.pto_rpm,
            "pto_set_point_rpm": float(o.pto_speed_rpm),
            "economy_mode": 0,
            "mode_1000": _on(o.pto_speed_rpm == 1000),
            "engagement": _on(o.pto_on),
            "exit_code": _EXIT_ALL_CLEAR,
        },
        "GMS": {
            "estimated_curvature_1pm": -o.curvature_1pm,
            "mechanical_lockout": 0,
            "steering_ready": 1,
            "steering_input_position": 1,
            "request_reset": 0,
            "limit_status": steering_limit,
            "exit_code": exit_code,
        },
        "DRIVE": {
            "pedal_pct": 100.0 * o.pedal,
            "brake_pct": 100.0 * o.brake,
            "hand_throttle_pct": 100.0 * o.hand_throttle,
            "difflock": int(o.difflock),
            "safety_brake": _on(o.stale),
            "accel_mps2": o.accel_mps2,
            "engine_set_rpm": o.engine_set_rpm,
        },
        "STEER": {
            "road_wheel_angle_rad": o.steering_angle_rad,
            "road_wheel_target_rad": o.steering_target_rad,
            "curvature_command_1pm": o.curvature_command_1pm,
            "at_angle_limit": _on(o.steering_at_limit),
        },
        "HITCH": {
            "lift_deg": o.hitch_lift_deg,
            "lever_pct": 100.0 * o.hitch_lever,
            "hitch_mode": _HITCH_MODE_CODES[o.hitch_mode],
            "raise_command": _on(o.hitch_raise),
            "raised": _on(o.raised),
            "working_depth_m": o.implement_depth_m,
            "depth_stop_m": o.depth_stop_m,
        },
        "POWER": {
            "pto_power_kw": o.pto_kw,
            "drawbar_power_kw": o.drawbar_kw,
            "engine_power_kw": o.engine_kw,
            "wheel_slip_pct": 100.0 * o.wheel_slip,
            "implement_code": o.implement_code,
        },
    }


def frames_from_observation(observation: TractorObservation) -> tuple[CanFrame, ...]:
    """The 13 frames of the tractor's group for an observation, stamped with its step and time."""
    values = _status_values(observation)
    return tuple(
        encode_frame(spec, values[spec.name], step=observation.step, stamp_ns=observation.stamp_ns)
        for spec in STATUS_FRAMES
    )


# ---- commands from the bus -----------------------------------------------------------------------


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else min(max(percent / 100.0, 0.0), 1.0)


def _flag(state: float | None) -> bool | None:
    return None if state is None else bool(state)


def command_from_frame(frame: CanFrame) -> TractorCommand | None:
    """The tractor command of a controller's frame; None for a frame that commands nothing.

    None also for a guidance command to another address or without "intended to steer", and for a
    command frame whose every signal says "don't care". ParamsError for a malformed command frame.
    """
    decoded = decode(frame)
    if decoded is None:
        return None
    s = decoded.signals
    command: TractorCommand | None = None
    if decoded.name == "GSC":
        aimed = decoded.destination in (TRACTOR_ADDRESS, GLOBAL_ADDRESS)
        curvature = s["curvature_1pm"]
        if aimed and s["curvature_status"] == 1 and curvature is not None:
            command = TractorCommand(curvature_1pm=-curvature)
    elif decoded.name == "HPC":
        command = TractorCommand(
            hitch_lever=_fraction(s["rear_hitch_pct"]), pto_on=_flag(s["rear_pto_engagement"])
        )
    elif decoded.name == "DRIVE_CMD":
        difflock = s["difflock"]
        command = TractorCommand(
            pedal=_fraction(s["pedal_pct"]),
            brake=_fraction(s["brake_pct"]),
            hand_throttle=_fraction(s["hand_throttle_pct"]),
            difflock=None if difflock is None else Difflock(int(difflock)),
        )
    elif decoded.name == "IMPLEMENT_CMD":
        mode = s["hitch_mode"]
        depth = s["depth_stop_m"]
        command = TractorCommand(
            hitch_raise=_flag(s["raise"]),
            hitch_mode=None if mode is None else _HITCH_MODES_BY_CODE[int(mode)],
            depth_stop_m=None if depth is None else min(depth, MAX_DEPTH_STOP_M),
        )
    if command is None or command == TractorCommand():
        return None
    return command
