"""The Polaris drive-by-wire messages of the vehicle channel: commands and the 50 Hz report line.

Units and command types are those of ds_dbw_msgs 2.3.11, so the bridge forwards a command
without converting it and fills the report topics field by field. docs/protocol.md has the
layouts.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag

from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire.errors import ProtocolError

__all__ = [
    "COMMAND_GEARS",
    "COMMAND_RANGES",
    "BrakeCmdType",
    "DbwCommand",
    "DbwReport",
    "DbwTarget",
    "ReportFlags",
    "SteeringCmdType",
    "ThrottleCmdType",
    "UlcCmdType",
    "check_command",
    "check_command_fields",
    "decode_dbw_command",
    "decode_dbw_report",
    "encode_dbw_command",
    "encode_dbw_report",
]


class DbwTarget(IntEnum):
    """Which subsystem a command is for."""

    STEERING = 1
    THROTTLE = 2
    BRAKE = 3
    GEAR = 4
    ULC = 5
    ENABLE = 6
    DISABLE = 7


COMMAND_FLAG_ENABLE = 1
COMMAND_FLAG_CLEAR = 2
COMMAND_FLAG_IGNORE = 4
COMMAND_FLAG_ENABLE_SHIFT = 8
COMMAND_FLAG_ENABLE_SHIFT_PARK = 16
COMMAND_FLAG_COAST_DECEL = 32
_COMMAND_FLAGS = 63


class SteeringCmdType(IntEnum):
    """ds_dbw_msgs SteeringCmd CMD_* values that the Polaris accepts."""

    NONE = 0
    ANGLE = 2
    CURVATURE = 3
    YAW_RATE = 4
    PERCENT = 14


class ThrottleCmdType(IntEnum):
    """ds_dbw_msgs ThrottleCmd CMD_* values that the Polaris accepts."""

    NONE = 0
    PEDAL_RAW = 13
    PERCENT = 14


class BrakeCmdType(IntEnum):
    """ds_dbw_msgs BrakeCmd CMD_* values that the Polaris accepts."""

    NONE = 0
    PRESSURE = 1
    PERCENT = 14


class UlcCmdType(IntEnum):
    """ds_dbw_msgs UlcCmd CMD_* values."""

    NONE = 0
    VELOCITY = 1
    ACCEL = 2


# The commands the simulated Polaris takes: target -> {cmd_type: (lowest, highest) cmd}, in the
# cmd_type's unit; cmd_type NONE carries cmd 0. The bridge refuses anything else before it reaches
# the simulator (naming the ROS field), and the simulator checks again (check_command). Values
# beyond an actuator's reach (a curvature tighter than the steering lock) are accepted and saturate.
COMMAND_RANGES: dict[DbwTarget, dict[int, tuple[float, float]]] = {
    DbwTarget.STEERING: {
        SteeringCmdType.NONE: (0.0, 0.0),
        SteeringCmdType.ANGLE: (-487.0, 487.0),  # steering-wheel deg
        SteeringCmdType.CURVATURE: (-0.5, 0.5),  # 1/m
        SteeringCmdType.YAW_RATE: (-8.5, 8.5),  # rad/s
        SteeringCmdType.PERCENT: (-100.0, 100.0),
    },
    DbwTarget.THROTTLE: {
        ThrottleCmdType.NONE: (0.0, 0.0),
        ThrottleCmdType.PEDAL_RAW: (0.0, 100.0),
        ThrottleCmdType.PERCENT: (0.0, 100.0),
    },
    DbwTarget.BRAKE: {
        BrakeCmdType.NONE: (0.0, 0.0),
        BrakeCmdType.PRESSURE: (0.0, 200.0),  # bar
        BrakeCmdType.PERCENT: (0.0, 100.0),
    },
    DbwTarget.ULC: {
        UlcCmdType.NONE: (0.0, 0.0),
        UlcCmdType.VELOCITY: (-5.0, 18.0),  # m/s
        UlcCmdType.ACCEL: (-10.0, 5.0),  # m/s^2
    },
}
COMMAND_GEARS = (1, 2, 3, 4, 5)  # P R N H L (ds_dbw_msgs calls 4 DRIVE); 0 is no command


@dataclass(frozen=True, slots=True, kw_only=True)
class DbwCommand:
    """One drive-by-wire command, numbered on its vehicle channel from 1.

    cmd_type and cmd are those of the ds_dbw_msgs command (for GEAR, cmd_type is the gear value
    and cmd 0). limit_1 and limit_2: steering cmd_rate (deg/s) and cmd_accel (deg/s^2);
    throttle and brake rate_inc and rate_dec; ULC limit_accel and limit_decel (m/s^2); 0 means
    the default, +inf no limit.
    """

    seq: int
    target: int
    cmd_type: int
    flags: int
    cmd: float
    limit_1: float = 0.0
    limit_2: float = 0.0


def check_command_fields(command: DbwCommand) -> None:
    """Raise CommandRefusedError, naming the field, for what no vehicle takes: an unknown target or
    flag, a cmd that is not finite, a limit below 0 or NaN."""
    if command.target not in tuple(DbwTarget):
        raise CommandRefusedError(f"command target {command.target!r}: expected 1..7")
    target = DbwTarget(command.target)
    if command.flags & ~_COMMAND_FLAGS or command.flags < 0:
        raise CommandRefusedError(f"command flags {command.flags:#x}: unknown bits")
    if not math.isfinite(command.cmd):
        raise CommandRefusedError(f"{target.name} cmd: expected a finite number, found {command.cmd!r}")
    for name, limit in (("limit_1", command.limit_1), ("limit_2", command.limit_2)):
        if math.isnan(limit) or limit < 0.0:
            raise CommandRefusedError(
                f"{target.name} {name}: expected >= 0 (0 default) or +inf, found {limit}"
            )


def check_command(command: DbwCommand) -> None:
    """Raise CommandRefusedError, naming the field, unless the Polaris takes the command: the fields
    (check_command_fields), a gear of COMMAND_GEARS, a cmd_type and cmd of COMMAND_RANGES."""
    check_command_fields(command)
    target = DbwTarget(command.target)
    if target is DbwTarget.GEAR:
        if command.cmd_type not in COMMAND_GEARS:
            raise CommandRefusedError(
                f"GEAR value {command.cmd_type!r}: expected 1 P, 2 R, 3 N, 4 H or 5 L (0 is no command)"
            )
        return
    ranges = COMMAND_RANGES.get(target)
    if ranges is None:  # ENABLE, DISABLE: nothing else to check
        return
    if command.cmd_type not in ranges:
        raise CommandRefusedError(
            f"{target.name} cmd_type {command.cmd_type!r}: expected one of {sorted(int(t) for t in ranges)}"
        )
    low, high = ranges[command.cmd_type]
    if not low <= command.cmd <= high:
        raise CommandRefusedError(
            f"{target.name} cmd {command.cmd}: expected {low} .. {high} for cmd_type {command.cmd_type}"
        )


class ReportFlags(IntFlag):
    """The state bits of the report line."""

    DBW_ENABLED = 1 << 0
    STEERING_ENABLED = 1 << 1
    THROTTLE_ENABLED = 1 << 2
    BRAKE_ENABLED = 1 << 3
    ULC_ENABLED = 1 << 4
    STEERING_TIMEOUT = 1 << 8
    THROTTLE_TIMEOUT = 1 << 9
    BRAKE_TIMEOUT = 1 << 10
    ULC_TIMEOUT = 1 << 11
    STEERING_OVERRIDE = 1 << 16
    THROTTLE_OVERRIDE = 1 << 17
    BRAKE_OVERRIDE = 1 << 18
    GEAR_OVERRIDE = 1 << 19
    OVERRIDE_LATCHED = 1 << 24
    ULC_COAST_DECEL = 1 << 25


_KNOWN_REPORT_FLAGS = int(sum(ReportFlags))


@dataclass(frozen=True, slots=True, kw_only=True)
class DbwReport:
    """The report line of one instant (50 Hz of simulation time), made by physics step `step`."""

    step: int
    stamp_ns: int
    flags: int
    steering_wheel_angle_deg: float
    steering_cmd: float  # in the unit of steering_cmd_type
    steering_cmd_type: int
    throttle_input_pct: float
    throttle_cmd_pct: float
    throttle_output_pct: float
    throttle_cmd_type: int
    brake_input_bar: float
    brake_cmd_bar: float
    brake_output_bar: float
    brake_input_pct: float
    brake_cmd_pct: float
    brake_output_pct: float
    brake_cmd_type: int
    gear: int  # ds_dbw_msgs Gear value
    gear_cmd: int
    gear_driver: int
    ulc_cmd_type: int
    vel_ref_mps: float
    vel_meas_mps: float
    accel_ref_mps2: float
    accel_meas_mps2: float
    speed_brake_mps: float
    speed_propulsion_mps: float


_COMMAND = struct.Struct("<QBBBxxxxxddd")
_REPORT = struct.Struct("<QqI2fB3fB6fB3BB4f2f")
MAX_GEAR = 15


def encode_dbw_command(message: DbwCommand) -> bytes:
    return _COMMAND.pack(
        message.seq,
        message.target,
        message.cmd_type,
        message.flags,
        message.cmd,
        message.limit_1,
        message.limit_2,
    )


def encode_dbw_report(r: DbwReport) -> bytes:
    return _REPORT.pack(
        r.step,
        r.stamp_ns,
        r.flags,
        r.steering_wheel_angle_deg,
        r.steering_cmd,
        r.steering_cmd_type,
        r.throttle_input_pct,
        r.throttle_cmd_pct,
        r.throttle_output_pct,
        r.throttle_cmd_type,
        r.brake_input_bar,
        r.brake_cmd_bar,
        r.brake_output_bar,
        r.brake_input_pct,
        r.brake_cmd_pct,
        r.brake_output_pct,
        r.brake_cmd_type,
        r.gear,
        r.gear_cmd,
        r.gear_driver,
        r.ulc_cmd_type,
        r.vel_ref_mps,
        r.vel_meas_mps,
        r.accel_ref_mps2,
        r.accel_meas_mps2,
        r.speed_brake_mps,
        r.speed_propulsion_mps,
    )


def decode_dbw_command(payload: bytes) -> DbwCommand:
    if len(payload) != _COMMAND.size:
        raise ProtocolError(f"DBW_COMMAND: expected {_COMMAND.size} payload bytes, found {len(payload)}")
    seq, target, cmd_type, flags, cmd, limit_1, limit_2 = _COMMAND.unpack(payload)
    if seq < 1:
        raise ProtocolError("DBW_COMMAND: seq starts at 1, found 0")
    command = DbwCommand(
        seq=seq, target=target, cmd_type=cmd_type, flags=flags, cmd=cmd, limit_1=limit_1, limit_2=limit_2
    )
    try:
        check_command_fields(command)
    except CommandRefusedError as error:
        raise ProtocolError(f"DBW_COMMAND: {error}") from None
    return command


def decode_dbw_report(payload: bytes) -> DbwReport:
    if len(payload) != _REPORT.size:
        raise ProtocolError(f"DBW_REPORT: expected {_REPORT.size} payload bytes, found {len(payload)}")
    v = _REPORT.unpack(payload)
    report = DbwReport(
        step=v[0],
        stamp_ns=v[1],
        flags=v[2],
        steering_wheel_angle_deg=v[3],
        steering_cmd=v[4],
        steering_cmd_type=v[5],
        throttle_input_pct=v[6],
        throttle_cmd_pct=v[7],
        throttle_output_pct=v[8],
        throttle_cmd_type=v[9],
        brake_input_bar=v[10],
        brake_cmd_bar=v[11],
        brake_output_bar=v[12],
        brake_input_pct=v[13],
        brake_cmd_pct=v[14],
        brake_output_pct=v[15],
        brake_cmd_type=v[16],
        gear=v[17],
        gear_cmd=v[18],
        gear_driver=v[19],
        ulc_cmd_type=v[20],
        vel_ref_mps=v[21],
        vel_meas_mps=v[22],
        accel_ref_mps2=v[23],
        accel_meas_mps2=v[24],
        speed_brake_mps=v[25],
        speed_propulsion_mps=v[26],
    )
    if not 0 <= report.stamp_ns < (1 << 31) * 1_000_000_000:
        raise ProtocolError(f"DBW_REPORT: stamp_ns out of range, found {report.stamp_ns}")
    if report.flags & ~_KNOWN_REPORT_FLAGS:
        raise ProtocolError(f"DBW_REPORT: unknown flags {report.flags:#x}")
    for name in ("gear", "gear_cmd", "gear_driver"):
        if getattr(report, name) > MAX_GEAR:
            raise ProtocolError(f"DBW_REPORT: {name} is no Gear value, found {getattr(report, name)}")
    for index in (*range(3, 5), *range(6, 9), *range(10, 16), *range(21, 27)):
        if not math.isfinite(v[index]):
            raise ProtocolError(f"DBW_REPORT: field {_REPORT_FIELDS[index]} must be finite, found {v[index]}")
    return report


_REPORT_FIELDS = tuple(DbwReport.__dataclass_fields__)
