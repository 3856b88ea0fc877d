"""Drive-by-wire conversions, pure: the report line -> the seven report topics, and a command
message -> a checked wire command (or the reason it is refused). No node, no I/O.

The reports carry the real vehicle's constants where the simulator has no value: ready true,
steering limits 1000 deg/s and 487 deg, actuator temperatures -40 C, brake torque and
acceleration NaN, an empty frame name (spec: Drive-by-Wire Reports).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ds_dbw_msgs.msg import (
    BrakeCmd,
    BrakeReport,
    GearCmd,
    GearReport,
    SteeringCmd,
    SteeringReport,
    ThrottleCmd,
    ThrottleReport,
    UlcCmd,
    UlcReport,
    VehicleVelocity,
)
from std_msgs.msg import Bool

from acres_bridge.convert.stamps import stamp
from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire.dbw import (
    COMMAND_FLAG_CLEAR,
    COMMAND_FLAG_COAST_DECEL,
    COMMAND_FLAG_ENABLE,
    COMMAND_FLAG_ENABLE_SHIFT,
    COMMAND_FLAG_ENABLE_SHIFT_PARK,
    COMMAND_FLAG_IGNORE,
    COMMAND_GEARS,
    COMMAND_RANGES,
    DbwCommand,
    DbwReport,
    DbwTarget,
    ReportFlags,
)

__all__ = [
    "ACTUATOR_TEMP_C",
    "STEERING_LIMIT_DEG",
    "STEERING_RATE_LIMIT_DEGPS",
    "DbwMessages",
    "command_from_message",
    "report_messages",
]

STEERING_LIMIT_DEG = 487.0
STEERING_RATE_LIMIT_DEGPS = 1000.0
ACTUATOR_TEMP_C = -40.0


@dataclass(frozen=True)
class DbwMessages:
    """The seven report topics of one report line."""

    steering: Any
    throttle: Any
    brake: Any
    gear: Any
    ulc: Any
    velocity: Any
    enabled: Any


def report_messages(report: DbwReport) -> DbwMessages:
    """The seven report messages of one report line, stamped with its simulation time."""
    flags = ReportFlags(report.flags)
    time = stamp(report.stamp_ns)
    latched = ReportFlags.OVERRIDE_LATCHED in flags

    steering = SteeringReport(
        steering_wheel_angle=report.steering_wheel_angle_deg,
        steering_column_torque=0.0,
        cmd=report.steering_cmd,
        cmd_type=report.steering_cmd_type,
        ready=True,
        enabled=ReportFlags.STEERING_ENABLED in flags,
        override_active=ReportFlags.STEERING_OVERRIDE in flags,
        override_latched=latched,
        timeout=ReportFlags.STEERING_TIMEOUT in flags,
        actuator_temp=ACTUATOR_TEMP_C,
        limit_rate=STEERING_RATE_LIMIT_DEGPS,
        limit_value=STEERING_LIMIT_DEG,
    )
    throttle = ThrottleReport(
        cmd_type=report.throttle_cmd_type,
        percent_input=report.throttle_input_pct,
        percent_cmd=report.throttle_cmd_pct,
        percent_output=report.throttle_output_pct,
        ready=True,
        enabled=ReportFlags.THROTTLE_ENABLED in flags,
        override_active=ReportFlags.THROTTLE_OVERRIDE in flags,
        override_latched=latched,
        timeout=ReportFlags.THROTTLE_TIMEOUT in flags,
        limit_value=100.0,
    )
    nan = math.nan
    brake = BrakeReport(
        cmd_type=report.brake_cmd_type,
        pressure_input=report.brake_input_bar,
        pressure_cmd=report.brake_cmd_bar,
        pressure_output=report.brake_output_bar,
        torque_input=nan,
        torque_cmd=nan,
        torque_output=nan,
        accel_cmd=nan,
        accel_output=nan,
        percent_input=report.brake_input_pct,
        percent_cmd=report.brake_cmd_pct,
        percent_output=report.brake_output_pct,
        ready=True,
        enabled=ReportFlags.BRAKE_ENABLED in flags,
        override_active=ReportFlags.BRAKE_OVERRIDE in flags,
        override_latched=latched,
        timeout=ReportFlags.BRAKE_TIMEOUT in flags,
        limit_value=100.0,
    )
    gear = GearReport(
        ready=True, override_active=ReportFlags.GEAR_OVERRIDE in flags, actuator_temp=ACTUATOR_TEMP_C
    )
    gear.gear.value = report.gear
    gear.cmd.value = report.gear_cmd
    gear.driver.value = report.gear_driver
    ulc = UlcReport(
        cmd_type=report.ulc_cmd_type,
        vel_ref=report.vel_ref_mps,
        vel_meas=report.vel_meas_mps,
        accel_ref=report.accel_ref_mps2,
        accel_meas=report.accel_meas_mps2,
        coast_decel=ReportFlags.ULC_COAST_DECEL in flags,
        ready=True,
        enabled=ReportFlags.ULC_ENABLED in flags,
        override_latched=latched,
        timeout=ReportFlags.ULC_TIMEOUT in flags,
    )
    velocity = VehicleVelocity(
        vehicle_velocity_brake=report.speed_brake_mps,
        vehicle_velocity_propulsion=report.speed_propulsion_mps,
        dir_src=VehicleVelocity.DIR_PRNDL,
    )
    for message in (steering, throttle, brake, gear, ulc, velocity):
        message.header.stamp = time
    enabled = Bool(data=ReportFlags.DBW_ENABLED in flags)
    return DbwMessages(steering, throttle, brake, gear, ulc, velocity, enabled)


def _finite(name: str, value: float) -> float:
    if not math.isfinite(value):
        raise CommandRefusedError(f"{name} must be finite, found {value}")
    return float(value)


def _limit(name: str, value: float) -> float:
    if math.isnan(value) or value < 0:
        raise CommandRefusedError(f"{name} must be >= 0 (0 = default) or +inf, found {value}")
    return float(value)


def _in_range(kind: str, cmd_type: int, cmd: float, ranges: dict[int, tuple[float, float]]) -> float:
    if cmd_type not in ranges:
        raise CommandRefusedError(
            f"{kind}: cmd_type {cmd_type} is not one of {sorted(int(t) for t in ranges)}"
        )
    value = _finite(f"{kind}: cmd", cmd)
    low, high = ranges[cmd_type]
    if not low <= value <= high:
        raise CommandRefusedError(f"{kind}: cmd {value} is outside {low} .. {high} for cmd_type {cmd_type}")
    return value


def _flags(message: Any, names: tuple[tuple[str, int], ...]) -> int:
    return sum(bit for name, bit in names if getattr(message, name))


_COMMON_FLAGS = (
    ("enable", COMMAND_FLAG_ENABLE),
    ("clear", COMMAND_FLAG_CLEAR),
    ("ignore", COMMAND_FLAG_IGNORE),
)
_ULC_FLAGS = (
    ("enable", COMMAND_FLAG_ENABLE),
    ("clear", COMMAND_FLAG_CLEAR),
    ("enable_shift", COMMAND_FLAG_ENABLE_SHIFT),
    ("enable_shift_park", COMMAND_FLAG_ENABLE_SHIFT_PARK),
    ("coast_decel", COMMAND_FLAG_COAST_DECEL),
)


@dataclass(frozen=True, slots=True)
class _RangedCommand:
    """A command with a cmd_type and a cmd of COMMAND_RANGES (all but the gear): its message type,
    the name its refusals give, its target and the ROS fields of its flags and of limit_1, limit_2."""

    message_type: type
    kind: str
    target: DbwTarget
    flags: tuple[tuple[str, int], ...]
    limit_1: str
    limit_2: str

    def command(self, message: Any) -> DbwCommand:
        """The wire command of `message`; CommandRefusedError names the field that is refused."""
        kind = self.kind
        cmd = _in_range(kind, message.cmd_type, message.cmd, COMMAND_RANGES[self.target])
        return DbwCommand(
            seq=0,
            target=self.target,
            cmd_type=message.cmd_type,
            flags=_flags(message, self.flags),
            cmd=cmd,
            limit_1=_limit(f"{kind}: {self.limit_1}", getattr(message, self.limit_1)),
            limit_2=_limit(f"{kind}: {self.limit_2}", getattr(message, self.limit_2)),
        )


_RANGED_COMMANDS = (
    _RangedCommand(SteeringCmd, "steering", DbwTarget.STEERING, _COMMON_FLAGS, "cmd_rate", "cmd_accel"),
    _RangedCommand(ThrottleCmd, "throttle", DbwTarget.THROTTLE, _COMMON_FLAGS, "rate_inc", "rate_dec"),
    _RangedCommand(BrakeCmd, "brake", DbwTarget.BRAKE, _COMMON_FLAGS, "rate_inc", "rate_dec"),
    _RangedCommand(UlcCmd, "ulc", DbwTarget.ULC, _ULC_FLAGS, "limit_accel", "limit_decel"),
)


def command_from_message(message: Any) -> DbwCommand | None:
    """The wire command of a ds_dbw_msgs command (or Empty for enable/disable: pass the target).

    Returns None for a gear command with value 0 (no gear: never sent). Raises CommandRefusedError,
    naming the field, for NaN or infinite values, an unknown cmd_type or an out-of-range value.
    The seq is 0 here; the ingest numbers commands when it sends them.
    """
    if isinstance(message, GearCmd):
        value = message.cmd.value
        if value == 0:
            return None
        if value not in COMMAND_GEARS:
            raise CommandRefusedError(
                f"gear: cmd.value {value} is not one of {COMMAND_GEARS} (1 P, 2 R, 3 N, 4 H, 5 L)"
            )
        return DbwCommand(seq=0, target=DbwTarget.GEAR, cmd_type=value, flags=0, cmd=0.0)
    for ranged in _RANGED_COMMANDS:
        if isinstance(message, ranged.message_type):
            return ranged.command(message)
    raise TypeError(f"not a drive-by-wire command: {type(message).__name__}")
