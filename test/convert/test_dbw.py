"""Drive-by-wire conversions: the report line to the seven topics, commands to wire commands."""

from __future__ import annotations

import math

import pytest
from ds_dbw_msgs.msg import BrakeCmd, GearCmd, SteeringCmd, ThrottleCmd, UlcCmd
from hypothesis import given, settings
from hypothesis import strategies as st

from acres_bridge.convert.dbw import command_from_message, report_messages
from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire import DbwReport, DbwTarget, FrameReader, ReportFlags, decode, encode
from acres_bridge.wire.dbw import COMMAND_FLAG_CLEAR, COMMAND_FLAG_COAST_DECEL, COMMAND_FLAG_ENABLE

REPORT = DbwReport(
    step=16490,
    stamp_ns=137_416_666_666,
    flags=int(
        ReportFlags.DBW_ENABLED
        | ReportFlags.STEERING_ENABLED
        | ReportFlags.ULC_ENABLED
        | ReportFlags.THROTTLE_TIMEOUT
        | ReportFlags.BRAKE_OVERRIDE
    ),
    steering_wheel_angle_deg=57.25,
    steering_cmd=0.02,
    steering_cmd_type=3,
    throttle_input_pct=1.5,
    throttle_cmd_pct=12.0,
    throttle_output_pct=11.5,
    throttle_cmd_type=14,
    brake_input_bar=0.5,
    brake_cmd_bar=3.0,
    brake_output_bar=2.5,
    brake_input_pct=0.25,
    brake_cmd_pct=2.5,
    brake_output_pct=2.0,
    brake_cmd_type=1,
    gear=5,
    gear_cmd=5,
    gear_driver=1,
    ulc_cmd_type=1,
    vel_ref_mps=1.5,
    vel_meas_mps=1.5082,
    accel_ref_mps2=0.0,
    accel_meas_mps2=0.041,
    speed_brake_mps=1.51,
    speed_propulsion_mps=1.49,
)


def test_the_report_line_fills_the_seven_topics_with_the_spec_constants() -> None:
    m = report_messages(REPORT)
    for message in (m.steering, m.throttle, m.brake, m.gear, m.ulc, m.velocity):
        assert (message.header.stamp.sec, message.header.stamp.nanosec) == (137, 416_666_666)
        assert message.header.frame_id == ""
    assert m.steering.steering_wheel_angle == pytest.approx(57.25)
    assert (m.steering.cmd_type, m.steering.enabled, m.steering.ready) == (3, True, True)
    assert (m.steering.limit_rate, m.steering.limit_value, m.steering.actuator_temp) == (1000.0, 487.0, -40.0)
    assert (m.throttle.percent_input, m.throttle.percent_cmd, m.throttle.percent_output) == (1.5, 12.0, 11.5)
    assert (m.throttle.timeout, m.throttle.enabled) == (True, False)
    assert (m.brake.pressure_input, m.brake.pressure_cmd, m.brake.pressure_output) == (0.5, 3.0, 2.5)
    assert (m.brake.percent_input, m.brake.percent_cmd, m.brake.percent_output) == (0.25, 2.5, 2.0)
    assert m.brake.override_active
    for nan_field in ("torque_input", "torque_cmd", "torque_output", "accel_cmd", "accel_output"):
        assert math.isnan(getattr(m.brake, nan_field)), nan_field
    assert (m.gear.gear.value, m.gear.cmd.value, m.gear.driver.value) == (5, 5, 1)
    assert m.gear.actuator_temp == -40.0
    assert m.ulc.vel_ref == pytest.approx(1.5)
    assert m.ulc.vel_meas == pytest.approx(1.5082)
    assert m.ulc.accel_meas == pytest.approx(0.041)
    assert (m.ulc.cmd_type, m.ulc.enabled, m.ulc.ready, m.ulc.timeout) == (1, True, True, False)
    assert m.velocity.vehicle_velocity_brake == pytest.approx(1.51)
    assert m.velocity.vehicle_velocity_propulsion == pytest.approx(1.49)
    assert m.enabled.data is True


def test_the_report_line_round_trips_on_the_wire() -> None:
    reader = FrameReader()
    reader.feed(encode(REPORT))
    (frame,) = reader.frames()
    decoded = decode(frame)
    assert isinstance(decoded, DbwReport)
    assert decoded.step == REPORT.step
    assert decoded.gear == 5
    assert decoded.vel_meas_mps == pytest.approx(1.5082)


def test_the_spec_example_commands_are_forwarded_as_they_are() -> None:
    gear = GearCmd()
    gear.cmd.value = gear.cmd.LOW
    low = command_from_message(gear)
    assert low is not None
    assert (low.target, low.cmd_type) == (DbwTarget.GEAR, 5)
    steer = command_from_message(SteeringCmd(cmd=0.02, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True))
    assert steer is not None
    assert (steer.target, steer.cmd_type, steer.cmd, steer.flags) == (
        DbwTarget.STEERING,
        3,
        0.02,
        COMMAND_FLAG_ENABLE,
    )
    ulc = command_from_message(UlcCmd(cmd=1.5, cmd_type=UlcCmd.CMD_VELOCITY, enable=True, coast_decel=True))
    assert ulc is not None
    assert (ulc.target, ulc.cmd_type, ulc.cmd) == (DbwTarget.ULC, 1, 1.5)
    assert ulc.flags == COMMAND_FLAG_ENABLE | COMMAND_FLAG_COAST_DECEL
    brake = command_from_message(
        BrakeCmd(cmd=40.0, cmd_type=BrakeCmd.CMD_PRESSURE, rate_inc=math.inf, clear=True)
    )
    assert brake is not None
    assert (brake.cmd, brake.limit_1, brake.flags) == (40.0, math.inf, COMMAND_FLAG_CLEAR)


def test_gear_zero_is_never_sent() -> None:
    assert command_from_message(GearCmd()) is None


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (SteeringCmd(cmd=math.nan, cmd_type=2, enable=True), "steering: cmd must be finite, found nan"),
        (SteeringCmd(cmd=math.inf, cmd_type=3), "steering: cmd must be finite, found inf"),
        (SteeringCmd(cmd=10.0, cmd_type=1), r"steering: cmd_type 1 is not one of \[0, 2, 3, 4, 14\]"),
        (SteeringCmd(cmd=500.0, cmd_type=2), "steering: cmd 500.0 is outside -487.0 .. 487.0 for cmd_type 2"),
        (SteeringCmd(cmd=0.1, cmd_type=3, cmd_rate=-1.0), r"steering: cmd_rate must be >= 0"),
        (SteeringCmd(cmd=0.1, cmd_type=3, cmd_accel=math.nan), r"steering: cmd_accel must be >= 0"),
        (ThrottleCmd(cmd=120.0, cmd_type=14), "throttle: cmd 120.0 is outside 0.0 .. 100.0 for cmd_type 14"),
        (ThrottleCmd(cmd=-1.0, cmd_type=13), "throttle: cmd -1.0 is outside"),
        (BrakeCmd(cmd=-2.0, cmd_type=8), r"brake: cmd_type 8 is not one of \[0, 1, 14\]"),
        (BrakeCmd(cmd=500.0, cmd_type=1), "brake: cmd 500.0 is outside 0.0 .. 200.0"),
        (UlcCmd(cmd=30.0, cmd_type=1), "ulc: cmd 30.0 is outside -5.0 .. 18.0 for cmd_type 1"),
        (UlcCmd(cmd=1.0, cmd_type=7), r"ulc: cmd_type 7 is not one of \[0, 1, 2\]"),
        (UlcCmd(cmd=1.0, cmd_type=1, limit_decel=-0.5), r"ulc: limit_decel must be >= 0"),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, str) else "",
)
def test_a_bad_command_is_refused_with_the_reason(message: object, reason: str) -> None:
    with pytest.raises(CommandRefusedError, match=reason):
        command_from_message(message)


@pytest.mark.parametrize("value", [6, 7, 15, 200])
def test_gears_the_simulator_has_not_are_refused(value: int) -> None:
    gear = GearCmd()
    gear.cmd.value = value
    with pytest.raises(CommandRefusedError, match=f"gear: cmd.value {value} is not one of"):
        command_from_message(gear)


@settings(max_examples=200, deadline=None)
@given(
    cmd=st.floats(allow_nan=True, allow_infinity=True, width=32),
    cmd_type=st.integers(0, 255),
    rate=st.floats(allow_nan=True, allow_infinity=True, width=32),
)
def test_a_steering_command_is_either_refused_or_finite_and_in_range(
    cmd: float, cmd_type: int, rate: float
) -> None:
    message = SteeringCmd(cmd=cmd, cmd_type=cmd_type, cmd_rate=rate, enable=True)
    try:
        command = command_from_message(message)
    except CommandRefusedError:
        return
    assert command is not None
    assert math.isfinite(command.cmd)
    assert abs(command.cmd) <= 487.0
    assert command.limit_1 >= 0
