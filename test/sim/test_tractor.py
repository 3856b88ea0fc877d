"""The Maxxum tractor model driven through the kinematic model, as the world drives it."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest

from acres_bridge.wire import FrameReader, decode, encode
from acres_bridge.wire.maxxum import ImplementControls, MaxxumCommand
from acres_sim.clock import PHYSICS_DT_S, PHYSICS_RATE_HZ
from acres_sim.errors import ParamsError
from acres_sim.vehicles import kinematics
from acres_sim.vehicles.hitch import Hitch, HitchParams
from acres_sim.vehicles.implement import (
    CHISEL_PLOW,
    DISK_MOWER,
    IMPLEMENTS,
    ImplementParams,
    PtoSpeed,
    draft_n,
    pto_power_kw,
)
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MAXXUM
from acres_sim.vehicles.tractor import (
    Difflock,
    HitchMode,
    TractorCommand,
    TractorControls,
    TractorModel,
    TractorObservation,
    TractorParams,
    command_from_message,
    observation_due,
    observation_message,
)

DRIVE = TractorCommand(pedal=0.3, brake=0.0)
LOWER = TractorCommand(hitch_raise=False, hitch_lever=0.0)
PLOW_DEEP = TractorCommand(hitch_raise=False, hitch_lever=0.0, depth_stop_m=0.30)


class Run:
    """A tractor on flat ground, stepped like the world steps it; commands repeat at 20 Hz."""

    def __init__(self, model: TractorModel | None = None) -> None:
        self.model = model if model is not None else TractorModel()
        self.state = kinematics.place(MAXXUM, 0.0, 0.0, 0.0)
        self.step = 0
        self.speeds: list[float] = []

    def drive(self, seconds: float, command: TractorCommand | None = None) -> Run:
        for k in range(round(seconds * PHYSICS_RATE_HZ)):
            if command is not None and k % 6 == 0:
                self.model.command(command)
            accel, steer = self.model.step(self.state.speed)
            self.state, _ = kinematics.step(self.state, MAXXUM, accel, steer, PHYSICS_DT_S)
            self.step += 1
            self.speeds.append(self.state.speed)
        return self

    @property
    def obs(self) -> TractorObservation:
        return self.model.observation(step=self.step, speed_mps=self.state.speed)


@pytest.fixture
def run() -> Run:
    return Run()


# ---- engine ----------------------------------------------------------------------------------------


def test_a_new_tractor_is_parked_stale_braked_and_idling(run):
    obs = run.drive(2.0).obs
    assert obs.stale
    assert (obs.pedal, obs.brake, obs.speed_mps) == (0.0, 1.0, 0.0)
    assert obs.raised
    assert obs.implement_depth_m == 0.0
    assert obs.draft_n == 0.0
    # Idle is 800 r/min; the accessories' 1 kW droops it to about the spec's 796.
    assert obs.engine_rpm == pytest.approx(796.1, abs=0.1)
    assert obs.rpm == obs.engine_rpm


@pytest.mark.parametrize("throttle", [0.0, 0.25, 0.5, 1.0])
def test_governor_holds_the_set_speed_of_the_hand_throttle(run, throttle):
    obs = run.drive(3.0, TractorCommand(brake=1.0, hand_throttle=throttle)).obs
    set_rpm = 800.0 + throttle * (2350.0 - 800.0)
    assert obs.engine_set_rpm == pytest.approx(set_rpm)
    # The engine stands still at the set speed less the droop of the accessories' load.
    droop = 150.0 * 1.0 / (107.0 * min(obs.engine_rpm, 2200.0) / 2200.0)
    assert obs.engine_rpm == pytest.approx(set_rpm - droop, abs=0.5)


def test_the_engine_follows_a_step_of_the_throttle_with_a_lag(run):
    run.drive(1.0, TractorCommand(brake=1.0))
    rpm = [run.drive(0.1, TractorCommand(brake=1.0, hand_throttle=1.0)).obs.engine_rpm for _ in range(20)]
    assert all(b > a for a, b in itertools.pairwise(rpm))
    # Time constant 0.3 s: after 0.3 s about 63 % of the way from 796 to 2346.
    assert rpm[2] == pytest.approx(796 + 0.632 * 1550, abs=15)
    assert rpm[-1] == pytest.approx(2346, abs=2)


def test_load_droops_the_engine_and_full_load_is_the_rated_speed():
    top_speed = Run().drive(40.0, TractorCommand(pedal=1.0, brake=0.0)).obs
    plowing = (
        Run().drive(30.0, replace(PLOW_DEEP, pedal=1.0, brake=0.0, difflock=Difflock.REAR_AND_FRONT)).obs
    )
    assert plowing.engine_load == pytest.approx(1.0)
    assert plowing.engine_rpm == pytest.approx(2200.0, abs=1.0)  # rated speed at full load
    # At the top speed the transmission takes only the power that holds it: rolling resistance.
    assert top_speed.speed_mps == MAXXUM.max_speed_mps
    held_kw = 0.04 * (6500 + 1100) * kinematics.STANDARD_GRAVITY * 11.0 / 0.85 / 1000.0 + 1.0
    assert top_speed.engine_kw == pytest.approx(held_kw)
    assert top_speed.engine_load == pytest.approx(held_kw / 107.0)
    assert top_speed.engine_rpm == pytest.approx(2350.0 - 150.0 * top_speed.engine_load, abs=0.5)
    assert top_speed.engine_rpm > plowing.engine_rpm + 90.0


# ---- drive and brakes ------------------------------------------------------------------------------


@pytest.mark.parametrize(("pedal", "speed"), [(0.15, 2.05), (0.3, 4.98), (0.5, 10.21)])
def test_a_constant_pedal_accelerates_to_a_steady_speed(run, pedal, speed):
    run.drive(120.0, TractorCommand(pedal=pedal, brake=0.0))
    assert run.state.speed == pytest.approx(speed, abs=0.02)
    speeds = run.speeds
    assert all(b >= a for a, b in itertools.pairwise(speeds))  # no overshoot
    assert abs(speeds[-1] - speeds[-120 * 10]) < 0.05  # settled: < 5 cm/s in the last 10 s


def test_full_pedal_accelerates_at_the_vehicles_limit_to_its_top_speed(run):
    run.drive(2.0, TractorCommand(pedal=1.0, brake=0.0))
    assert run.state.speed == pytest.approx(2.0 * MAXXUM.max_accel_mps2, abs=0.01)
    run.drive(30.0, TractorCommand(pedal=1.0, brake=0.0))
    assert run.state.speed == pytest.approx(MAXXUM.max_speed_mps)


def test_no_pedal_no_drive(run):
    run.drive(5.0, TractorCommand(pedal=0.0, brake=0.0, hand_throttle=1.0))
    assert run.state.speed == 0.0


def test_braking_stops_the_tractor_without_reversing(run):
    run.drive(20.0, DRIVE)
    v0 = run.state.speed
    assert v0 > 4.0
    run.drive(0.5, TractorCommand(pedal=0.0, brake=1.0))
    assert run.state.speed == pytest.approx(v0 - 0.5 * MAXXUM.max_brake_decel_mps2, abs=1e-6)
    run.drive(3.0, TractorCommand(pedal=0.0, brake=1.0))
    assert run.state.speed == 0.0
    assert min(run.speeds) == 0.0


def test_the_brake_holds_against_the_pedal_at_standstill(run):
    run.drive(3.0, TractorCommand(pedal=0.5, brake=1.0))
    assert run.state.speed == 0.0


def test_coasting_slows_by_the_rolling_resistance(run):
    run.drive(20.0, DRIVE)
    v0 = run.state.speed
    run.drive(1.0, TractorCommand(pedal=0.0, brake=0.0))
    assert v0 - run.state.speed == pytest.approx(0.04 * kinematics.STANDARD_GRAVITY, rel=1e-6)


# ---- safety brake ----------------------------------------------------------------------------------


def test_safety_brake_after_the_command_timeout(run):
    run.drive(10.0, DRIVE)
    assert not run.model.stale
    timeout = TractorParams().timeout_steps
    assert timeout == 30  # 0.25 s
    run.model.command(DRIVE)
    run.drive(timeout / PHYSICS_RATE_HZ)  # the command drives 30 steps
    assert not run.model.stale
    v = run.state.speed
    run.drive(1 / PHYSICS_RATE_HZ)
    assert run.model.stale
    assert run.obs.stale
    assert (run.model.controls.pedal, run.model.controls.brake) == (0.0, 1.0)
    assert run.state.speed == pytest.approx(v - MAXXUM.max_brake_decel_mps2 * PHYSICS_DT_S)
    run.drive(3.0)
    assert run.state.speed == 0.0
    assert run.model.stale


def test_only_a_pedal_or_brake_command_ends_the_safety_brake(run):
    run.drive(1.0, TractorCommand(curvature_1pm=0.1, hitch_raise=False, pto_on=True))
    assert run.model.stale
    assert run.state.speed == 0.0
    run.model.command(TractorCommand(brake=0.0))
    assert not run.model.stale
    # The safety brake set the pedal to 0: a brake release alone does not drive off.
    run.drive(0.2)
    assert run.state.speed == 0.0


def test_the_safety_brake_keeps_steering_hitch_and_pto(run):
    command = TractorCommand(pedal=0.3, brake=0.0, curvature_1pm=0.1, hitch_raise=False, pto_on=True)
    run.drive(5.0, command).drive(1.0)
    controls = run.model.controls
    assert run.model.stale
    assert (controls.curvature_1pm, controls.hitch_raise, controls.pto_on) == (0.1, False, True)


# ---- steering --------------------------------------------------------------------------------------


def test_steering_turns_to_the_curvature_at_the_rate_limit(run):
    curvature = 0.1
    target = math.atan(curvature * MAXXUM.wheelbase_m)
    run.drive(0.1, TractorCommand(curvature_1pm=curvature, brake=1.0))
    assert run.obs.steering_angle_rad == pytest.approx(0.1 * MAXXUM.max_steer_rate_radps)
    run.drive(1.0, TractorCommand(curvature_1pm=curvature, brake=1.0))
    obs = run.obs
    assert obs.steering_angle_rad == pytest.approx(target)
    assert run.state.steer == pytest.approx(target)  # the kinematic model agrees
    assert obs.curvature_1pm == pytest.approx(curvature)
    assert not obs.steering_at_limit


@pytest.mark.parametrize("curvature", [1.0, -1.0])
def test_steering_stops_at_the_lock(run, curvature):
    obs = run.drive(3.0, TractorCommand(curvature_1pm=curvature, brake=1.0)).obs
    assert obs.steering_angle_rad == pytest.approx(math.copysign(MAXXUM.max_steer_rad, curvature))
    assert obs.steering_at_limit
    assert obs.steering_target_rad == pytest.approx(math.atan(curvature * MAXXUM.wheelbase_m))


def test_positive_curvature_turns_left(run):
    run.drive(8.0, replace(DRIVE, curvature_1pm=0.05))
    assert 0.3 < run.state.yaw < math.pi
    assert run.state.y > 0.0
    assert run.obs.steering_angle_rad > 0.0


# ---- hitch and implement ---------------------------------------------------------------------------


def test_hitch_follows_the_lever_at_its_rate(run):
    run.drive(0.5, TractorCommand(hitch_raise=False, hitch_lever=0.5, brake=1.0))
    assert run.obs.hitch_lift_deg == pytest.approx(60.0 - 0.5 * 25.0)
    run.drive(1.0, TractorCommand(hitch_raise=False, hitch_lever=0.5, brake=1.0))
    obs = run.obs
    assert obs.hitch_lift_deg == pytest.approx(-10.0 + 0.5 * 70.0)
    assert obs.hitch_position == pytest.approx(0.5)
    assert not obs.raised
    run.drive(0.2, TractorCommand(hitch_lever=0.6))
    assert run.obs.hitch_lift_deg == pytest.approx(25.0 + 0.2 * 25.0)


def test_lowering_puts_the_plow_to_its_depth_stop_and_raising_takes_it_out(run):
    obs = run.drive(5.0, replace(LOWER, pedal=0.8, brake=0.0)).obs
    assert obs.implement_depth_m == pytest.approx(CHISEL_PLOW.default_depth_stop_m)
    assert obs.draft_n == pytest.approx(draft_n(CHISEL_PLOW, 0.2, run.speeds[-2]))
    assert obs.draft_n > 10_000.0
    lowered = obs.hitch_lift_deg
    obs = run.drive(1.0, TractorCommand(hitch_raise=True, pedal=0.8, brake=0.0)).obs
    assert obs.hitch_lift_deg == pytest.approx(lowered + 25.0)  # the lift rate
    assert not obs.raised
    obs = run.drive(2.0, TractorCommand(hitch_raise=True, pedal=0.8, brake=0.0)).obs
    assert obs.raised
    assert obs.hitch_lift_deg == 60.0
    assert obs.implement_depth_m == 0.0
    assert obs.draft_n == 0.0


def test_the_depth_stop_limits_the_depth(run):
    obs = run.drive(5.0, replace(LOWER, depth_stop_m=0.12, brake=1.0)).obs
    assert obs.implement_depth_m == pytest.approx(0.12)
    obs = run.drive(1.0, TractorCommand(depth_stop_m=0.9)).obs  # deeper than the plow goes
    assert obs.depth_stop_m == CHISEL_PLOW.max_depth_m


def test_draft_control_holds_the_set_point(run):
    lever = 0.6  # set point (1 - 0.6) * 40 kN = 16 kN
    command = TractorCommand(
        pedal=0.8,
        brake=0.0,
        hitch_raise=False,
        hitch_lever=lever,
        hitch_mode=HitchMode.DRAFT,
        depth_stop_m=0.3,
    )
    obs = run.drive(40.0, replace(command, difflock=Difflock.REAR_AND_FRONT)).obs
    assert obs.hitch_mode is HitchMode.DRAFT
    assert obs.draft_n == pytest.approx(16_000.0, rel=1e-3)
    assert 0.0 < obs.implement_depth_m < 0.3


def test_float_lets_the_implement_ride_on_its_depth_stop(run):
    command = TractorCommand(
        pedal=0.8, brake=0.0, hitch_raise=False, hitch_mode=HitchMode.FLOAT, depth_stop_m=0.15
    )
    obs = run.drive(5.0, replace(command, hitch_lever=1.0)).obs  # the lever plays no part
    assert obs.implement_depth_m == pytest.approx(0.15)
    assert obs.hitch_lift_deg == pytest.approx(HitchParams().lift_for_depth_deg(0.15))


@pytest.mark.parametrize("depth", [0.1, 0.2, 0.3])
def test_draft_grows_with_depth_and_speed(depth):
    speeds = [0.0, 1.0, 2.0, 3.0]
    drafts = [draft_n(CHISEL_PLOW, depth, v) for v in speeds]
    assert all(b > a for a, b in itertools.pairwise(drafts))
    assert draft_n(CHISEL_PLOW, depth + 0.05, 2.0) > draft_n(CHISEL_PLOW, depth, 2.0)
    # D497: F (A + B S) W T = 0.85 (91 + 5.4 S) 9 T, S in km/h, T in cm.
    assert draft_n(CHISEL_PLOW, depth, 8 / 3.6) == pytest.approx(0.85 * (91 + 5.4 * 8) * 9 * depth * 100)
    assert draft_n(CHISEL_PLOW, depth, -2.0) == draft_n(CHISEL_PLOW, depth, 2.0)


def test_no_draft_out_of_the_ground_or_without_tillage():
    assert draft_n(CHISEL_PLOW, 0.0, 2.0) == 0.0
    assert draft_n(CHISEL_PLOW, -0.1, 2.0) == 0.0
    assert draft_n(DISK_MOWER, 0.2, 2.0) == 0.0


def test_a_deep_plow_stops_a_tractor_with_too_little_pedal(run):
    run.drive(20.0, replace(PLOW_DEEP, pedal=0.5, brake=0.0))
    assert run.state.speed == 0.0
    assert not run.obs.stale


# ---- PTO -------------------------------------------------------------------------------------------


def test_pto_speed_and_power_follow_the_engine():
    run = Run(TractorModel(implement=DISK_MOWER))
    obs = run.drive(5.0, TractorCommand(brake=1.0, hand_throttle=1.0, pto_on=True)).obs
    assert obs.pto_on
    assert obs.pto_speed_rpm == 1000
    assert obs.pto_rpm == pytest.approx(1000.0 * obs.engine_rpm / 2200.0)
    assert obs.pto_kw == pytest.approx(15.0 * obs.pto_rpm / 1000.0, rel=1e-3)
    assert obs.engine_load == pytest.approx((obs.pto_kw + 1.0) / 107.0, rel=1e-3)
    obs = run.drive(1.0, TractorCommand(pto_on=False)).obs
    assert (obs.pto_rpm, obs.pto_kw) == (0.0, 0.0)


def test_pto_at_rated_engine_speed_gives_its_rated_speed():
    run = Run(TractorModel(implement=DISK_MOWER))
    # Full throttle under full load droops to the rated 2200 r/min: deep in the mower's PTO and driving.
    obs = run.drive(5.0, TractorCommand(brake=1.0, hand_throttle=0.5, pto_on=True)).obs
    assert obs.pto_rpm == pytest.approx(1000.0 * obs.engine_rpm / 2200.0)
    assert obs.pto_rpm < 1000.0 * 1575.0 / 2200.0


def test_a_plow_takes_no_pto_power(run):
    obs = run.drive(3.0, TractorCommand(brake=1.0, hand_throttle=1.0, pto_on=True)).obs
    assert obs.pto_speed_rpm == 540
    assert obs.pto_rpm == pytest.approx(540.0 * obs.engine_rpm / 2200.0)
    assert obs.pto_kw == 0.0


def test_pto_power_is_pro_rata_of_the_speed():
    assert pto_power_kw(DISK_MOWER, 1000.0) == pytest.approx(15.0)
    assert pto_power_kw(DISK_MOWER, 500.0) == pytest.approx(7.5)
    assert pto_power_kw(DISK_MOWER, 0.0) == 0.0
    assert pto_power_kw(CHISEL_PLOW, 540.0) == 0.0


# ---- differential locks ----------------------------------------------------------------------------


def test_difflock_adds_traction_when_the_pull_is_traction_limited():
    speeds = {}
    slips = {}
    for lock in Difflock:
        obs = Run().drive(30.0, replace(PLOW_DEEP, pedal=1.0, brake=0.0, difflock=lock)).obs
        speeds[lock], slips[lock] = obs.speed_mps, obs.wheel_slip
        assert obs.difflock is lock
    assert speeds[Difflock.OPEN] < speeds[Difflock.REAR] - 0.5  # open: traction limited
    assert speeds[Difflock.REAR] == pytest.approx(speeds[Difflock.REAR_AND_FRONT], abs=0.01)  # power limited
    assert slips[Difflock.REAR_AND_FRONT] < slips[Difflock.REAR] < slips[Difflock.OPEN] + 1e-9


def test_wheel_speed_and_distance_include_the_slip(run):
    obs = run.drive(20.0, replace(LOWER, pedal=0.9, brake=0.0)).obs
    assert 0.0 < obs.wheel_slip <= 0.15
    assert obs.wheel_speed_mps == pytest.approx(obs.speed_mps / (1.0 - obs.wheel_slip))
    assert obs.wheel_distance_m > obs.distance_m > 0.0


# ---- determinism, reset, observation rate ----------------------------------------------------------


def test_the_model_is_deterministic():
    command = replace(LOWER, pedal=0.7, brake=0.0, curvature_1pm=0.03, pto_on=True)
    assert Run().drive(10.0, command).obs == Run().drive(10.0, command).obs


def test_reset_parks_the_tractor_and_keeps_the_odometers(run):
    moved = run.drive(10.0, replace(LOWER, pedal=0.8, brake=0.0, curvature_1pm=0.1)).obs
    run.model.reset()
    obs = run.model.observation(step=run.step, speed_mps=0.0)
    assert obs.stale
    assert obs.raised
    assert obs.steering_angle_rad == 0.0
    assert obs.engine_rpm == 800.0
    assert run.model.controls == TractorControls(depth_stop_m=CHISEL_PLOW.default_depth_stop_m)
    assert obs.distance_m == moved.distance_m


def test_observations_are_due_at_10_hz():
    due = [step for step in range(1, 241) if observation_due(step)]
    assert len(due) == 20
    assert due[:2] == [12, 24]
    assert not observation_due(0)


def test_observation_stamp_is_that_of_its_step(run):
    obs = run.drive(1.0).obs
    assert (obs.step, obs.stamp_ns) == (120, 1_000_000_000)


# ---- the vehicle bridge's messages -----------------------------------------------------------------


def test_command_from_message_sets_every_control():
    message = MaxxumCommand(
        seq=4,
        curvature_1pm=-0.2,
        pedal=0.5,
        brake=0.1,
        hand_throttle=0.3,
        hitch_lever=0.7,
        hitch_raise=False,
        pto_on=True,
        difflock=Difflock.REAR,
        implement=ImplementControls(hitch_mode=HitchMode.DRAFT, depth_stop_m=0.25),
    )
    command = command_from_message(decode(_frame(encode(message))))
    assert command == TractorCommand(
        curvature_1pm=-0.2,
        pedal=0.5,
        brake=0.1,
        hand_throttle=0.3,
        hitch_lever=0.7,
        hitch_raise=False,
        pto_on=True,
        difflock=Difflock.REAR,
        hitch_mode=HitchMode.DRAFT,
        depth_stop_m=0.25,
    )
    assert command.longitudinal
    # Implement controls left out keep their value.
    partial = command_from_message(replace(message, implement=ImplementControls()))
    assert (
        TractorControls(hitch_mode=HitchMode.FLOAT, depth_stop_m=0.1).updated(partial).hitch_mode
        is HitchMode.FLOAT
    )


def test_observation_message_round_trips_through_the_wire(run):
    obs = run.drive(6.0, replace(LOWER, pedal=0.8, brake=0.0, curvature_1pm=-0.1)).obs
    message = observation_message(obs)
    assert decode(_frame(encode(message))) == message
    state = message.implement_state()
    assert state["implement"] == "chisel_plow"
    assert state["rpm"] == obs.engine_rpm
    assert state["hitch_mode"] == "position"
    assert state["implement_depth_m"] == obs.implement_depth_m
    assert message.steering_angle_rad == obs.steering_angle_rad < 0.0


def _frame(data: bytes):
    reader = FrameReader()
    reader.feed(data)
    return next(reader.frames())


# ---- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"curvature_1pm": math.nan}, r"TractorCommand.curvature_1pm: expected a finite number, got nan"),
        ({"curvature_1pm": math.inf}, r"TractorCommand.curvature_1pm: expected a finite number, got inf"),
        ({"pedal": 1.5}, r"TractorCommand.pedal: expected a number in 0 \.\. 1, got 1.5"),
        ({"brake": -0.1}, r"TractorCommand.brake: expected a number in 0 \.\. 1, got -0.1"),
        (
            {"hand_throttle": math.nan},
            r"TractorCommand.hand_throttle: expected a number in 0 \.\. 1, got nan",
        ),
        ({"hitch_lever": 2}, r"TractorCommand.hitch_lever: expected a number in 0 \.\. 1, got 2"),
        ({"difflock": 3}, r"TractorCommand.difflock: expected 0, 1 or 2, got 3"),
        ({"difflock": True}, r"TractorCommand.difflock: expected 0, 1 or 2, got True"),
        (
            {"hitch_mode": "auto"},
            r"TractorCommand.hitch_mode: expected one of \['position', 'draft', 'float'\], got 'auto'",
        ),
        ({"depth_stop_m": 1.2}, r"TractorCommand.depth_stop_m: expected 0 \.\. 1.0 m, got 1.2"),
        ({"depth_stop_m": -0.01}, r"TractorCommand.depth_stop_m: expected 0 \.\. 1.0 m, got -0.01"),
    ],
)
def test_tractor_command_refuses_a_value_out_of_range(changes, message):
    with pytest.raises(ParamsError, match=message):
        TractorCommand(**changes)


def test_tractor_command_takes_plain_values_for_its_enums():
    command = TractorCommand(difflock=2, hitch_mode="float")
    assert command.difflock is Difflock.REAR_AND_FRONT
    assert command.hitch_mode is HitchMode.FLOAT
    assert TractorControls().updated(command).difflock is Difflock.REAR_AND_FRONT


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"idle_rpm": 0.0}, r"TractorParams.idle_rpm: expected a finite value > 0, got 0.0"),
        ({"rated_power_kw": math.nan}, r"TractorParams.rated_power_kw: expected a finite value > 0, got nan"),
        ({"droop_rpm": -1.0}, r"TractorParams.droop_rpm: expected a finite value >= 0, got -1.0"),
        ({"rated_rpm": 2400.0}, r"expected idle_rpm < rated_rpm < high_idle_rpm, got 800.0, 2400.0, 2350.0"),
        ({"droop_rpm": 900.0}, r"TractorParams.droop_rpm: expected less than idle_rpm, got 900.0"),
        (
            {"transmission_efficiency": 1.2},
            r"expected transmission_efficiency <= 1 and slip_at_traction_limit < 1",
        ),
        (
            {"slip_at_traction_limit": 1.0},
            r"expected transmission_efficiency <= 1 and slip_at_traction_limit < 1",
        ),
        ({"difflock_traction": (0.9, 0.8, 1.0)}, r"difflock_traction: expected 3 rising factors in \(0, 1\]"),
        ({"difflock_traction": (0.9, 1.0)}, r"difflock_traction: expected 3 rising factors"),
        ({"difflock_traction": (0.0, 0.5, 1.0)}, r"difflock_traction: expected 3 rising factors"),
        ({"command_timeout_s": 0.001}, r"command_timeout_s: expected at least one physics step, got 0.001"),
    ],
)
def test_tractor_params_refuse_meaningless_values(changes, message):
    with pytest.raises(ParamsError, match=message):
        TractorParams(**changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": ""}, r"ImplementParams.name: expected a non-empty name"),
        ({"code": 0}, r"ImplementParams.code: expected 1 \.\. 250, got 0"),
        ({"code": 251}, r"ImplementParams.code: expected 1 \.\. 250, got 251"),
        ({"mass_kg": -1.0}, r"ImplementParams.mass_kg: expected a finite value >= 0, got -1.0"),
        ({"soil_factor": math.inf}, r"ImplementParams.soil_factor: expected a finite value >= 0, got inf"),
        (
            {"default_depth_stop_m": 0.5},
            r"default_depth_stop_m: expected at most max_depth_m \(0.3\), got 0.5",
        ),
    ],
)
def test_implement_params_refuse_meaningless_values(changes, message):
    with pytest.raises(ParamsError, match=message):
        replace(CHISEL_PLOW, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rate_degps": 0.0}, r"HitchParams.rate_degps: expected a finite value > 0, got 0.0"),
        ({"link_radius_m": math.nan}, r"HitchParams.link_radius_m: expected a finite value > 0, got nan"),
        (
            {"ground_contact_deg": 70.0},
            r"expected -90 < lift_min_deg < ground_contact_deg < lift_max_deg < 90",
        ),
        ({"lift_min_deg": -95.0}, r"expected -90 < lift_min_deg < ground_contact_deg < lift_max_deg < 90"),
        (
            {"raised_margin_deg": -1.0},
            r"HitchParams.raised_margin_deg: expected 0 \.\. the lift range, got -1.0",
        ),
        (
            {"raised_margin_deg": 80.0},
            r"HitchParams.raised_margin_deg: expected 0 \.\. the lift range, got 80.0",
        ),
    ],
)
def test_hitch_params_refuse_meaningless_values(changes, message):
    with pytest.raises(ParamsError, match=message):
        HitchParams(**changes)


def test_hitch_geometry():
    p = HitchParams()
    assert p.point_depth_m(15.0) == pytest.approx(0.0)
    assert p.point_depth_m(-10.0) == pytest.approx(
        0.9 * (math.sin(math.radians(15)) + math.sin(math.radians(10)))
    )
    assert p.point_depth_m(60.0) < -0.5
    assert p.lift_for_depth_deg(p.point_depth_m(5.0)) == pytest.approx(5.0)
    assert p.lift_for_depth_deg(5.0) == p.lift_min_deg
    assert p.lift_for_depth_deg(-5.0) == p.lift_max_deg
    assert (p.lever_lift_deg(-1.0), p.lever_lift_deg(2.0)) == (p.lift_min_deg, p.lift_max_deg)


def test_hitch_in_draft_mode_raises_on_too_much_draft_and_lowers_on_too_little():
    hitch = Hitch()
    for _ in range(300):
        hitch.step(
            PHYSICS_DT_S, mode=HitchMode.POSITION, lever=0.4, raise_hitch=False, draft_n=0.0, depth_stop_m=0.3
        )
    start = hitch.lift_deg
    assert start == pytest.approx(18.0)
    # Set point (1 - 0.5) * 40 kN = 20 kN; 2 deg/s per kN of error.
    hitch.step(
        PHYSICS_DT_S, mode=HitchMode.DRAFT, lever=0.5, raise_hitch=False, draft_n=25_000.0, depth_stop_m=0.3
    )
    assert hitch.lift_deg == pytest.approx(start + 2.0 * 5.0 * PHYSICS_DT_S)
    hitch.step(
        PHYSICS_DT_S, mode=HitchMode.DRAFT, lever=0.5, raise_hitch=False, draft_n=0.0, depth_stop_m=0.3
    )
    assert hitch.lift_deg == pytest.approx(start + (10.0 - 25.0) * PHYSICS_DT_S)  # at most the 25 deg/s rate


def test_implements_by_name():
    assert IMPLEMENTS == {"chisel_plow": CHISEL_PLOW, "disk_mower": DISK_MOWER}
    assert isinstance(CHISEL_PLOW, ImplementParams)
    assert DISK_MOWER.pto_speed is PtoSpeed.RPM_1000
    assert DISK_MOWER.rated_pto_kw == pytest.approx(15.0)


def test_step_returns_what_the_kinematic_model_applies(run):
    model = run.model
    model.command(TractorCommand(pedal=1.0, brake=0.0, curvature_1pm=0.5))
    state = VehicleState()
    for _ in range(60):
        accel, steer = model.step(state.speed)
        state, motion = kinematics.step(state, MAXXUM, accel, steer, PHYSICS_DT_S)
        assert motion.accel == pytest.approx(accel)
        assert state.steer == pytest.approx(steer)
