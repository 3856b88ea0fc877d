"""The drive-by-wire model of the Polaris, alone and in the world."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from datetime import UTC, datetime

import numpy as np
import pytest

from acres_bridge.wire.dbw import (
    COMMAND_FLAG_CLEAR,
    COMMAND_FLAG_ENABLE,
    COMMAND_FLAG_ENABLE_SHIFT,
    COMMAND_FLAG_IGNORE,
    DbwCommand,
    DbwReport,
    DbwTarget,
    ReportFlags,
)
from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.clock import PHYSICS_DT_S
from acres_sim.errors import AgentError, DbwCommandError, ParamsError
from acres_sim.vehicles.dbw import DbwParams, DbwSystem, Gear, check_command, report_due
from acres_sim.vehicles.params import MAXXUM, POLARIS
from acres_sim.world.model import AgentSpec, Pose2D, StepOutput, World

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)
RATIO = POLARIS.steering_ratio
STEERING, THROTTLE, BRAKE, GEAR, ULC, ENABLE, DISABLE = tuple(DbwTarget)
_seq = itertools.count(1)


def cmd(
    target: DbwTarget,
    cmd_type: int = 0,
    value: float = 0.0,
    *,
    enable: bool = True,
    flags: int = 0,
    limit_1: float = 0.0,
    limit_2: float = 0.0,
) -> DbwCommand:
    """A command as the bridge sends it (enable set for the subsystems unless told otherwise)."""
    bits = flags | (COMMAND_FLAG_ENABLE if enable and target in (STEERING, THROTTLE, BRAKE, ULC) else 0)
    return DbwCommand(
        seq=next(_seq),
        target=target,
        cmd_type=cmd_type,
        flags=bits,
        cmd=value,
        limit_1=limit_1,
        limit_2=limit_2,
    )


class Rig:
    """A DbwSystem on its own, at a speed the test sets, stepped as the world steps it."""

    def __init__(self, *, speed: float = 0.0, params: DbwParams | None = None) -> None:
        self.dbw = DbwSystem(POLARIS, params)
        self.step = 0
        self.speed = speed
        self.accel = 0.0

    def shift(self, gear: Gear) -> None:
        """Enable and shift to ``gear`` at standstill, then go back to the speed the test set."""
        speed, self.speed = self.speed, 0.0
        self.submit(cmd(ENABLE), cmd(GEAR, int(gear)))
        self.run(60)
        assert self.dbw.gear is gear
        self.speed = speed

    def submit(self, *commands: DbwCommand) -> None:
        for command in commands:
            self.dbw.submit(command)

    def run(self, steps: int, *, every: Iterable[DbwCommand] = (), period: int = 6) -> list[DbwReport]:
        """Run ``steps`` steps, submitting ``every`` before each ``period``-th (20 Hz by default)."""
        repeated = tuple(every)
        reports = []
        for k in range(steps):
            if repeated and k % period == 0:
                self.submit(*(cmd_again(c) for c in repeated))
            self.step += 1
            self.dbw.begin_step(self.step, self.speed)
            self.accel, _ = self.dbw.actuate(self.speed)
            reports.append(self.report())
        return reports

    def report(self) -> DbwReport:
        return self.dbw.report(step=self.step, speed_mps=self.speed, accel_mps2=self.accel)


def cmd_again(command: DbwCommand) -> DbwCommand:
    return DbwCommand(
        seq=next(_seq),
        target=command.target,
        cmd_type=command.cmd_type,
        flags=command.flags,
        cmd=command.cmd,
        limit_1=command.limit_1,
        limit_2=command.limit_2,
    )


def flags(report: DbwReport) -> ReportFlags:
    return ReportFlags(report.flags)


def _world(*agents: AgentSpec, seed: int = 42) -> World:
    return World(seed=seed, start_utc=START, agents=agents or (AgentSpec(name="polaris"),), perception=False)


def _drive(
    world: World, seconds: float, commands: Iterable[DbwCommand], *, agent: int = 0
) -> list[StepOutput]:
    """Advance ``world``, sending ``commands`` at 50 Hz (before each report step), as a stack would."""
    repeated = tuple(commands)
    outputs = []
    for _ in range(round(seconds * 120)):
        if report_due(world.step + 1) or world.step == 0:
            for command in repeated:
                world.apply_dbw_command(agent, cmd_again(command))
        outputs.append(world.advance())
    return outputs


SPEC_EXAMPLE = (
    cmd(ENABLE),
    cmd(GEAR, int(Gear.LOW)),
    cmd(STEERING, 3, 0.02),
    cmd(ULC, 1, 1.5),
)


# ---- the spec's example ------------------------------------------------------------------------


def test_the_spec_example_drives_a_50_m_circle_at_1_5_mps() -> None:
    world = _world()
    outputs = _drive(world, 40.0, SPEC_EXAMPLE)
    reports = [r for o in outputs for _, r in o.dbw]
    assert len(reports) == 40 * 50
    after_15_s = [r for r in reports if r.stamp_ns >= 15 * 10**9]
    assert all(abs(r.vel_meas_mps - 1.5) <= 0.05 for r in after_15_s)
    assert all(abs(r.vel_ref_mps - 1.5) < 1e-9 for r in after_15_s)
    last = reports[-1]
    assert (last.gear, last.gear_cmd, last.ulc_cmd_type, last.steering_cmd_type) == (5, 5, 1, 3)
    assert last.steering_cmd == pytest.approx(0.02)
    assert last.steering_wheel_angle_deg == pytest.approx(RATIO * math.degrees(math.atan(2.06 * 0.02)))
    on = (
        ReportFlags.DBW_ENABLED
        | ReportFlags.STEERING_ENABLED
        | ReportFlags.THROTTLE_ENABLED
        | ReportFlags.BRAKE_ENABLED
        | ReportFlags.ULC_ENABLED
    )
    assert flags(last) == on
    assert last.speed_brake_mps == last.speed_propulsion_mps == last.vel_meas_mps
    assert abs(last.accel_meas_mps2) < 0.01
    assert 5.0 < last.throttle_output_pct < 30.0
    assert last.brake_output_bar < 1e-3
    # The ground-truth path of the last 20 s: a circle of radius 50 m (algebraic least-squares fit).
    xy = np.array([(o.states[0].x, o.states[0].y) for o in outputs[-20 * 120 :]])
    a = np.c_[2.0 * xy, np.ones(len(xy))]
    (cx, cy, c), *_ = np.linalg.lstsq(a, (xy**2).sum(axis=1), rcond=None)
    radius = math.sqrt(c + cx * cx + cy * cy)
    assert radius == pytest.approx(50.0, abs=3.0)
    # Counter-clockwise (positive curvature turns left).
    assert outputs[-1].motions[0].yaw_rate == pytest.approx(1.5 / 50.0, rel=0.05)


# ---- steering ----------------------------------------------------------------------------------


def _wheel_deg(curvature: float) -> float:
    return RATIO * math.degrees(math.atan(POLARIS.wheelbase_m * curvature))


@pytest.mark.parametrize(
    ("cmd_type", "value", "speed", "expected_deg"),
    [
        (2, 100.0, 0.0, 100.0),
        (2, -250.0, 3.0, -250.0),
        (3, 0.02, 0.0, _wheel_deg(0.02)),
        (3, -0.1, 2.0, _wheel_deg(-0.1)),
        (4, 0.04, 2.0, _wheel_deg(0.02)),  # curvature = yaw rate / speed
        (4, 0.01, 0.1, _wheel_deg(0.02)),  # below 0.5 m/s the speed counts as 0.5 m/s
        (4, 0.04, -2.0, _wheel_deg(-0.02)),  # reversing
        (14, 50.0, 0.0, 243.5),
        (14, -100.0, 0.0, -487.0),
    ],
)
def test_each_steering_cmd_type(cmd_type: int, value: float, speed: float, expected_deg: float) -> None:
    rig = Rig(speed=speed)
    rig.submit(cmd(ENABLE))
    last = rig.run(240, every=[cmd(STEERING, cmd_type, value)])[-1]
    assert last.steering_wheel_angle_deg == pytest.approx(expected_deg, abs=1e-3)
    assert (last.steering_cmd_type, last.steering_cmd) == (cmd_type, pytest.approx(value))
    assert ReportFlags.STEERING_ENABLED in flags(last)


def test_the_wheel_turns_at_most_1000_deg_per_s_and_stops_at_487_deg() -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    angles = [0.0] + [r.steering_wheel_angle_deg for r in rig.run(240, every=[cmd(STEERING, 3, 0.5)])]
    rates = np.diff(angles) / PHYSICS_DT_S
    assert rates.max() <= 1000.0 + 1e-6
    assert rates.max() > 990.0  # it does reach the limit
    assert angles[30] < 250.0  # 0.25 s: 250 deg at the most
    assert max(angles) <= 487.0  # the curvature asks for more than the lock
    assert angles[-1] == pytest.approx(487.0, abs=0.01)
    # The first-order lag: after the ramp, the angle approaches the target, it does not jump.
    assert angles[60] < 487.0 - 1.0


def test_a_smaller_cmd_rate_is_obeyed() -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    angles = [0.0] + [
        r.steering_wheel_angle_deg for r in rig.run(120, every=[cmd(STEERING, 2, 300.0, limit_1=200.0)])
    ]
    rates = np.diff(angles) / PHYSICS_DT_S
    assert rates.max() <= 200.0 + 1e-6
    assert angles[-1] < 201.0


def test_steering_lag_settles_within_a_few_time_constants() -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    reports = rig.run(120, every=[cmd(STEERING, 2, 10.0)])
    # 10 deg takes 0.01 s of ramp; then the 0.1 s lag: 63 % after about 0.1 s, 99 % after 0.5 s.
    assert reports[12].steering_wheel_angle_deg == pytest.approx(10.0 * (1 - math.exp(-1)), abs=0.6)
    assert reports[60].steering_wheel_angle_deg == pytest.approx(10.0, abs=0.1)


# ---- throttle and brake ------------------------------------------------------------------------


@pytest.mark.parametrize("cmd_type", [14, 13])
def test_throttle_follows_with_a_first_order_lag(cmd_type: int) -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    reports = rig.run(120, every=[cmd(THROTTLE, cmd_type, 50.0)])
    tau_steps = round(0.2 / PHYSICS_DT_S)
    assert reports[0].throttle_output_pct < 5.0  # not at once
    assert reports[tau_steps - 1].throttle_output_pct == pytest.approx(50.0 * (1 - math.exp(-1)), rel=1e-6)
    assert reports[-1].throttle_output_pct == pytest.approx(50.0, abs=0.5)
    assert (reports[-1].throttle_cmd_pct, reports[-1].throttle_cmd_type) == (50.0, cmd_type)
    assert reports[-1].throttle_input_pct == 0.0
    assert ReportFlags.THROTTLE_ENABLED in flags(reports[-1])


@pytest.mark.parametrize(
    ("cmd_type", "value", "bar"),
    [(1, 60.0, 60.0), (14, 50.0, 60.0), (1, 150.0, 120.0)],  # 120 bar = 100 %; more saturates
)
def test_brake_follows_with_a_first_order_lag(cmd_type: int, value: float, bar: float) -> None:
    rig = Rig(speed=5.0)
    rig.shift(Gear.NEUTRAL)
    reports = rig.run(60, every=[cmd(BRAKE, cmd_type, value)])
    tau_steps = round(0.1 / PHYSICS_DT_S)
    assert reports[tau_steps - 1].brake_output_bar == pytest.approx(bar * (1 - math.exp(-1)), rel=1e-6)
    last = reports[-1]
    assert last.brake_output_bar == pytest.approx(bar, rel=0.01)
    assert last.brake_cmd_bar == pytest.approx(bar)
    assert last.brake_cmd_pct == pytest.approx(bar / 1.2)
    assert last.brake_output_pct == pytest.approx(last.brake_output_bar / 1.2)
    assert last.brake_cmd_type == cmd_type
    assert rig.accel == pytest.approx(-6.0 * last.brake_output_bar / 120.0 - 0.29 - 0.0011 * 25)


def test_throttle_rate_limit() -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    reports = rig.run(60, every=[cmd(THROTTLE, 14, 80.0, limit_1=40.0)])  # 40 %/s up
    assert reports[59].throttle_cmd_pct == pytest.approx(20.0)  # 0.5 s at 40 %/s


# ---- timeouts, disable, overrides ---------------------------------------------------------------


def test_a_subsystem_without_a_command_for_0_1_s_times_out() -> None:
    rig = Rig(speed=3.0)
    rig.submit(
        cmd(ENABLE),
        cmd(STEERING, 2, 90.0),
        cmd(THROTTLE, 14, 40.0),
        cmd(BRAKE, 14, 10.0),
    )
    reports = rig.run(120)  # one command each, applied at step 1
    held = reports[11]  # step 12: 0.1 s of commands
    for bit in (ReportFlags.STEERING_ENABLED, ReportFlags.THROTTLE_ENABLED, ReportFlags.BRAKE_ENABLED):
        assert bit in flags(held)
    assert not flags(held) & (ReportFlags.STEERING_TIMEOUT | ReportFlags.THROTTLE_TIMEOUT)
    out = reports[12]  # step 13
    timeouts = ReportFlags.STEERING_TIMEOUT | ReportFlags.THROTTLE_TIMEOUT | ReportFlags.BRAKE_TIMEOUT
    assert flags(out) == ReportFlags.DBW_ENABLED | timeouts
    angle = out.steering_wheel_angle_deg
    assert 0.0 < angle < 90.0
    last = reports[-1]
    assert flags(last) == ReportFlags.DBW_ENABLED | timeouts
    assert last.steering_wheel_angle_deg == angle  # released: it keeps its angle
    assert (last.throttle_cmd_pct, last.brake_cmd_bar) == (0.0, 0.0)
    assert last.throttle_output_pct < 0.3  # passive: back to 0 with the lag
    assert last.brake_output_bar < 0.01
    # A new command ends the timeout.
    rig.submit(cmd(THROTTLE, 14, 40.0))
    assert flags(rig.run(1)[0]) == ReportFlags.DBW_ENABLED | ReportFlags.THROTTLE_ENABLED | (
        ReportFlags.STEERING_TIMEOUT | ReportFlags.BRAKE_TIMEOUT
    )


def test_commands_at_10_hz_never_time_out() -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    reports = rig.run(240, every=[cmd(STEERING, 2, 10.0), cmd(ULC, 1, 0.0)], period=12)
    assert not any(flags(r) & (ReportFlags.STEERING_TIMEOUT | ReportFlags.ULC_TIMEOUT) for r in reports)


def test_the_ulc_times_out_and_stops_commanding() -> None:
    world = _world()
    _drive(world, 12.0, SPEC_EXAMPLE)
    assert world.agent(0).state.speed == pytest.approx(1.5, abs=0.05)
    outputs = _drive(world, 6.0, [])
    reports = [r for o in outputs for _, r in o.dbw]
    start = outputs[0].step  # the last command applied at one of the 3 steps before
    timed_out = [r for r in reports if ReportFlags.ULC_TIMEOUT in flags(r)]
    assert start + 9 <= timed_out[0].step <= start + 12
    assert all(ReportFlags.ULC_ENABLED in flags(r) for r in reports if r.step < start + 9)
    assert ReportFlags.ULC_ENABLED not in flags(timed_out[0])
    last = reports[-1]
    assert (last.throttle_cmd_pct, last.brake_cmd_bar, last.accel_ref_mps2) == (0.0, 0.0, 0.0)
    assert last.vel_ref_mps == last.vel_meas_mps
    # It coasts: slower, and it still stands in L with the system enabled.
    assert world.agent(0).state.speed < 0.5
    assert ReportFlags.DBW_ENABLED in flags(last)
    assert last.gear == 5


def test_disable_stops_everything() -> None:
    world = _world()
    _drive(world, 12.0, [*SPEC_EXAMPLE, cmd(THROTTLE, 0)])
    world.apply_dbw_command(0, cmd(DISABLE))
    outputs = _drive(world, 8.0, SPEC_EXAMPLE[2:])  # steering and ULC go on; they no longer act
    reports = [r for o in outputs for _, r in o.dbw]
    on = ReportFlags.DBW_ENABLED | ReportFlags.STEERING_ENABLED | ReportFlags.ULC_ENABLED
    assert all(
        flags(r) & (on | ReportFlags.THROTTLE_ENABLED | ReportFlags.BRAKE_ENABLED) == 0 for r in reports
    )
    last = reports[-1]
    assert (last.throttle_cmd_pct, last.brake_cmd_bar) == (0.0, 0.0)
    assert last.throttle_output_pct < 1e-12
    assert world.agent(0).state.speed == 0.0  # coasted to a stop
    assert not world.agent(0).dbw_enabled
    # Commands and a gear change are refused while disabled.
    world.apply_dbw_command(0, cmd(GEAR, int(Gear.PARK)))
    world.advance()
    assert world.dbw_report(0).gear == 5


def test_a_driver_override_disables_and_latches() -> None:
    world = _world()
    _drive(world, 10.0, SPEC_EXAMPLE)
    world.set_driver_override(0, BRAKE, True, value=50.0)
    world.advance()
    report = world.dbw_report(0)
    assert flags(report) == ReportFlags.BRAKE_OVERRIDE | ReportFlags.OVERRIDE_LATCHED
    assert report.brake_input_bar == pytest.approx(60.0)
    assert report.brake_input_pct == pytest.approx(50.0)
    _drive(world, 3.0, SPEC_EXAMPLE)  # ENABLE is refused while the driver brakes
    assert world.agent(0).state.speed == 0.0
    assert ReportFlags.DBW_ENABLED not in flags(world.dbw_report(0))
    world.set_driver_override(0, BRAKE, False)
    world.apply_dbw_command(0, cmd(STEERING, 2, 0.0, flags=COMMAND_FLAG_CLEAR))
    world.advance()
    assert flags(world.dbw_report(0)) == 0  # cleared, still disabled
    _drive(world, 10.0, SPEC_EXAMPLE)
    assert world.agent(0).state.speed == pytest.approx(1.5, abs=0.05)


def test_an_ignored_override_keeps_control_and_the_larger_pedal_wins() -> None:
    rig = Rig(speed=2.0)
    rig.shift(Gear.HIGH)
    ignoring = cmd(THROTTLE, 14, 10.0, flags=COMMAND_FLAG_IGNORE)
    rig.submit(ignoring)
    rig.dbw.set_driver_override(THROTTLE, True, value=30.0)
    reports = rig.run(120, every=[ignoring])
    last = reports[-1]
    assert ReportFlags.THROTTLE_ENABLED in flags(last)
    assert ReportFlags.THROTTLE_OVERRIDE in flags(last)
    assert ReportFlags.OVERRIDE_LATCHED not in flags(last)
    assert last.throttle_output_pct == pytest.approx(30.0, abs=0.3)
    assert (last.throttle_input_pct, last.throttle_cmd_pct) == (30.0, 10.0)


def test_a_steering_override_holds_or_turns_the_wheel() -> None:
    rig = Rig()
    rig.submit(cmd(ENABLE))
    rig.run(120, every=[cmd(STEERING, 2, 45.0)])
    rig.dbw.set_driver_override(STEERING, True)
    last = rig.run(60, every=[cmd(STEERING, 2, -45.0)])[-1]
    assert last.steering_wheel_angle_deg == pytest.approx(45.0, abs=0.01)  # the driver holds it
    assert flags(last) == ReportFlags.STEERING_OVERRIDE | ReportFlags.OVERRIDE_LATCHED
    rig.dbw.set_driver_override(STEERING, True, value=-20.0)
    assert rig.run(120)[-1].steering_wheel_angle_deg == pytest.approx(-20.0, abs=0.01)


def test_override_inputs_are_validated() -> None:
    dbw = DbwSystem()
    with pytest.raises(ParamsError, match="ULC"):
        dbw.set_driver_override(ULC, True)
    with pytest.raises(ParamsError, match="finite"):
        dbw.set_driver_override(THROTTLE, True, value=math.inf)
    with pytest.raises(ParamsError, match="gear"):
        dbw.set_driver_override(GEAR, True, value=0.0)


# ---- gears -------------------------------------------------------------------------------------


def test_a_gear_change_while_moving_is_refused() -> None:
    world = _world()
    _drive(world, 10.0, SPEC_EXAMPLE)
    world.apply_dbw_command(0, cmd(GEAR, int(Gear.REVERSE)))
    _drive(world, 1.0, SPEC_EXAMPLE[2:])
    report = world.dbw_report(0)
    assert (report.gear, report.gear_cmd) == (5, 5)  # gear_cmd keeps the last accepted request
    assert world.agent(0).state.speed == pytest.approx(1.5, abs=0.05)


def test_gear_shifts_at_standstill_take_time_and_need_the_system() -> None:
    rig = Rig()
    rig.submit(cmd(GEAR, int(Gear.HIGH)))
    rig.run(1)
    assert rig.dbw.gear_refusal is not None
    assert "not enabled" in rig.dbw.gear_refusal
    assert (rig.report().gear, rig.report().gear_cmd) == (1, 0)
    rig.submit(cmd(ENABLE), cmd(GEAR, int(Gear.HIGH)))
    reports = rig.run(60)
    assert [(r.gear, r.gear_cmd) for r in (reports[0], reports[46], reports[47])] == [(1, 4), (1, 4), (4, 4)]
    assert rig.dbw.gear_refusal is None
    rig.speed = 0.5
    rig.submit(cmd(GEAR, int(Gear.PARK)))
    rig.run(60)
    assert rig.dbw.gear == Gear.HIGH
    assert rig.dbw.gear_refusal == "moving at 0.50 m/s"


@pytest.mark.parametrize("value", [0, 6, 7, 15])
def test_gear_values_that_are_no_command_are_refused(value: int) -> None:
    with pytest.raises(DbwCommandError, match="GEAR value"):
        DbwSystem().submit(cmd(GEAR, value))


def test_park_holds_neutral_coasts_reverse_backs() -> None:
    world = _world(AgentSpec(name="polaris", start=Pose2D(0.0, 0.0, 0.0)))
    full = cmd(THROTTLE, 14, 60.0)
    _drive(world, 2.0, [cmd(ENABLE), full])
    assert world.agent(0).state.speed == 0.0  # in P
    _drive(world, 1.0, [cmd(ENABLE), cmd(GEAR, int(Gear.NEUTRAL)), cmd(THROTTLE, 0)])
    _drive(world, 2.0, [cmd(ENABLE), full])
    assert world.agent(0).state.speed == 0.0  # N: no drive
    _drive(world, 1.0, [cmd(ENABLE), cmd(GEAR, int(Gear.REVERSE)), cmd(THROTTLE, 0)])
    _drive(world, 2.0, [cmd(ENABLE), full])
    state = world.agent(0).state
    assert state.speed < -1.0
    assert state.x < 0.0
    report = world.dbw_report(0)
    assert report.gear == 2
    assert report.speed_brake_mps == report.speed_propulsion_mps == pytest.approx(state.speed)


# ---- the ULC -----------------------------------------------------------------------------------


def test_ulc_limits_shape_the_reference() -> None:
    world = _world()
    outputs = _drive(world, 12.0, [cmd(ENABLE), cmd(GEAR, int(Gear.HIGH)), cmd(ULC, 1, 6.0, limit_1=0.5)])
    reports = [r for o in outputs for _, r in o.dbw]
    refs = [r.vel_ref_mps for r in reports]
    slopes = np.diff(refs) / (np.diff([r.step for r in reports]) * PHYSICS_DT_S)
    assert slopes.max() <= 0.5 + 1e-6
    assert all(r.accel_ref_mps2 <= 0.5 + 1e-9 for r in reports)
    assert world.agent(0).state.speed == pytest.approx(refs[-1], abs=0.3)
    # Down at the default 2 m/s^2.
    outputs = _drive(world, 6.0, [cmd(ENABLE), cmd(ULC, 1, 0.0)])
    reports = [r for o in outputs for _, r in o.dbw]
    slopes = np.diff([r.vel_ref_mps for r in reports]) / (np.diff([r.step for r in reports]) * PHYSICS_DT_S)
    assert slopes.min() >= -2.0 - 1e-6
    assert min(r.accel_ref_mps2 for r in reports) >= -2.0 - 1e-9
    last = reports[-1]
    assert world.agent(0).state.speed == 0.0
    assert last.brake_output_bar == pytest.approx(30.0, abs=0.5)  # the standstill hold


def test_ulc_acceleration_mode() -> None:
    world = _world()
    _drive(world, 1.0, [cmd(ENABLE), cmd(GEAR, int(Gear.HIGH))])
    _drive(world, 3.0, [cmd(ENABLE), cmd(ULC, 2, 0.8)])
    last = world.dbw_report(0)
    assert last.ulc_cmd_type == 2
    assert last.accel_ref_mps2 == pytest.approx(0.8)
    assert last.accel_meas_mps2 == pytest.approx(0.8, abs=0.02)
    assert last.vel_ref_mps == last.vel_meas_mps


def test_ulc_reverses_with_enable_shift() -> None:
    world = _world()
    _drive(world, 8.0, [cmd(ENABLE), cmd(ULC, 1, -1.0, flags=COMMAND_FLAG_ENABLE_SHIFT)])
    report = world.dbw_report(0)
    assert (report.gear, report.gear_cmd) == (2, 2)
    assert report.vel_meas_mps == pytest.approx(-1.0, abs=0.05)
    assert report.speed_brake_mps < 0.0


def test_ulc_without_enable_shift_stays_in_its_gear() -> None:
    world = _world()
    _drive(world, 3.0, [cmd(ENABLE), cmd(ULC, 1, 2.0)])
    assert world.agent(0).state.speed == 0.0  # in P it holds
    assert world.dbw_report(0).gear == 1


def test_a_direct_pedal_command_preempts_the_ulc() -> None:
    world = _world()
    _drive(world, 8.0, SPEC_EXAMPLE)
    _drive(world, 2.0, [*SPEC_EXAMPLE, cmd(BRAKE, 14, 50.0)])
    report = world.dbw_report(0)
    assert ReportFlags.ULC_ENABLED not in flags(report)
    assert ReportFlags.BRAKE_ENABLED in flags(report)
    assert world.agent(0).state.speed == 0.0


# ---- commands ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "match"),
    [
        (DbwCommand(seq=1, target=9, cmd_type=0, flags=0, cmd=0.0), "target"),
        (DbwCommand(seq=1, target=1, cmd_type=2, flags=64, cmd=0.0), "flags"),
        (
            DbwCommand(seq=1, target=1, cmd_type=1, flags=1, cmd=5.0),
            "cmd_type 1",
        ),  # torque: not on the Polaris
        (DbwCommand(seq=1, target=1, cmd_type=2, flags=1, cmd=500.0), r"-487.0 \.\. 487.0"),
        (DbwCommand(seq=1, target=1, cmd_type=3, flags=1, cmd=math.nan), "finite"),
        (DbwCommand(seq=1, target=1, cmd_type=2, flags=1, cmd=0.0, limit_1=-1.0), "limit_1"),
        (DbwCommand(seq=1, target=2, cmd_type=14, flags=1, cmd=-1.0), "THROTTLE cmd -1.0"),
        (DbwCommand(seq=1, target=3, cmd_type=8, flags=1, cmd=1.0), "BRAKE cmd_type 8"),
        (DbwCommand(seq=1, target=3, cmd_type=1, flags=1, cmd=250.0), "0.0 .. 200.0"),
        (DbwCommand(seq=1, target=5, cmd_type=1, flags=1, cmd=19.0), "ULC cmd"),
        (DbwCommand(seq=1, target=5, cmd_type=0, flags=1, cmd=1.0), "cmd_type 0"),
        (DbwCommand(seq=1, target=4, cmd_type=0, flags=0, cmd=0.0), "0 is no command"),
    ],
)
def test_invalid_commands_are_refused(command: DbwCommand, match: str) -> None:
    with pytest.raises(DbwCommandError, match=match):
        check_command(command)
    world = _world()
    with pytest.raises(DbwCommandError, match=match):
        world.apply_dbw_command(0, command)
    world.advance()
    assert world.dbw_report(0).flags == 0


def test_the_maxxum_has_no_drive_by_wire() -> None:
    world = _world(AgentSpec(name="polaris"), AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM))
    with pytest.raises(DbwCommandError, match="maxxum"):
        world.apply_dbw_command(1, cmd(ENABLE))
    with pytest.raises(DbwCommandError, match="maxxum"):
        world.dbw_report(1)
    with pytest.raises(AgentError, match="agent index 2"):
        world.apply_dbw_command(2, cmd(ENABLE))


def test_a_command_applies_from_the_next_step() -> None:
    world = _world()
    world.apply_dbw_command(0, cmd(ENABLE))
    world.apply_dbw_command(0, cmd(STEERING, 2, 100.0))
    assert not world.agent(0).dbw_enabled  # queued
    world.advance()
    assert world.agent(0).dbw_enabled
    assert world.agent(0).state.steer > 0.0
    assert world.dbw_report(0).steering_wheel_angle_deg == pytest.approx(
        math.degrees(world.agent(0).state.steer) * RATIO
    )


# ---- the world ---------------------------------------------------------------------------------


def test_reports_come_at_50_hz_for_each_polaris() -> None:
    world = _world(
        AgentSpec(name="polaris"),
        AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM),
        AgentSpec(name="polaris2"),
    )
    outputs = [world.advance() for _ in range(120)]
    with_reports = [o for o in outputs if o.dbw]
    assert len(with_reports) == 50
    assert [o.step for o in with_reports][:3] == [3, 5, 8]
    for o in with_reports:
        assert [index for index, _ in o.dbw] == [0, 2]
        assert all(r.step == o.step and r.stamp_ns == o.stamp_ns for _, r in o.dbw)
        assert report_due(o.step)


def test_resets_leave_the_polaris_parked_and_disabled() -> None:
    world = _world(AgentSpec(name="polaris"), AgentSpec(name="polaris2"))
    for agent in (0, 1):
        _drive(world, 6.0, SPEC_EXAMPLE, agent=agent)
    world.reset_agent(0, x=1.0, y=2.0, yaw=0.0)
    parked = world.dbw_report(0)
    assert (parked.flags, parked.gear, parked.gear_cmd, parked.steering_wheel_angle_deg) == (0, 1, 0, 0.0)
    assert (parked.throttle_output_pct, parked.brake_output_bar, parked.vel_meas_mps) == (0.0, 0.0, 0.0)
    assert world.dbw_report(1).gear == 5  # the other Polaris drives on
    world.reset_session()
    for agent in (0, 1):
        report = world.dbw_report(agent)
        assert (report.flags, report.gear) == (0, 1)
    [world.advance() for _ in range(120)]
    assert all(world.agent(i).state.speed == 0.0 for i in (0, 1))


def test_the_autopilot_gives_way_to_the_drive_by_wire_and_back() -> None:
    world = _world(AgentSpec(name="polaris", autopilot=True))
    _drive(world, 8.0, [])
    report = world.dbw_report(0)
    assert (report.gear, report.gear_driver, report.flags) == (4, 4, 0)  # the follower drives in H
    assert report.throttle_input_pct > 0.0 or report.brake_input_bar > 0.0
    assert report.steering_wheel_angle_deg == pytest.approx(math.degrees(world.agent(0).state.steer) * RATIO)
    _drive(world, 8.0, [cmd(ENABLE), cmd(ULC, 1, 0.0)])
    assert world.agent(0).state.speed == 0.0  # the drive-by-wire stopped it
    assert world.dbw_report(0).gear_driver == 0
    world.apply_dbw_command(0, cmd(DISABLE))
    _drive(world, 8.0, [])
    assert world.agent(0).state.speed > 2.0  # the follower drives again
    assert world.route.distance_to(world.agent(0).state.x, world.agent(0).state.y) < 1.0


def _session(seed: int) -> list[str]:
    world = _world(AgentSpec(name="polaris"), AgentSpec(name="polaris2", autopilot=True), seed=seed)
    out = [repr(o.dbw) for o in _drive(world, 5.0, SPEC_EXAMPLE)]
    world.set_driver_override(0, THROTTLE, True, value=20.0)
    out += [repr(o.dbw) for o in _drive(world, 1.0, [cmd(ULC, 1, 3.0)])]
    world.reset_agent(0, x=0.0, y=0.0, yaw=1.0)
    out += [repr(o) for o in _drive(world, 3.0, [cmd(ENABLE), cmd(STEERING, 4, 0.3)])]
    return out


def test_same_commands_same_seed_same_reports() -> None:
    first = _session(5)
    assert first == _session(5)
    assert len(first) > 100


def test_dbw_params_are_validated() -> None:
    with pytest.raises(ParamsError, match="brake_max_bar"):
        DbwParams(brake_max_bar=0.0)
    assert DbwParams().timeout_steps == 12
    assert DbwParams(timeout_s=0.2).timeout_steps == 24
    with pytest.raises(ParamsError, match="PolarisParams"):
        World(
            seed=0,
            start_utc=START,
            agents=(AgentSpec(name="p", params=MAXXUM),),
        )
