"""The Maxxum's PI speed controller: stop, saturation, anti-windup, braking, and the closed loop.

The closed-loop cases run the controller at 20 Hz against the simulator's own tractor model
(acres_sim.vehicles.tractor with acres_sim.vehicles.kinematics), as the bridge runs it against the simulator.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acres_bridge.convert.speed_controller import (
    FULL_BRAKE,
    Drive,
    PiState,
    SpeedControllerParams,
    control,
)
from acres_sim.clock import PHYSICS_DT_S
from acres_sim.vehicles import kinematics
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MAXXUM
from acres_sim.vehicles.tractor import TractorCommand, TractorModel

PARAMS = SpeedControllerParams()


def test_the_defaults_are_those_docs_maxxum_md_gives() -> None:
    assert (PARAMS.speed_kp, PARAMS.speed_ki, PARAMS.max_speed_mps) == (1.0, 0.5, 11.0)
    assert (PARAMS.stop_speed_mps, PARAMS.period_s) == (0.05, 0.05)


@pytest.mark.parametrize("setpoint", [0.0, 0.049, -1.0])
def test_a_set_point_below_0_05_m_s_is_the_full_brake_and_clears_the_integral(setpoint: float) -> None:
    drive, state = control(PARAMS, PiState(integral=1.5), setpoint_mps=setpoint, measured_mps=1.0)
    assert drive == FULL_BRAKE == Drive(pedal=0.0, brake=1.0)
    assert state == PiState()


def test_a_speed_error_gives_pedal_and_an_overspeed_gives_brake() -> None:
    forward, state = control(PARAMS, PiState(), setpoint_mps=2.0, measured_mps=1.8)
    assert forward.pedal == pytest.approx(1.0 * 0.2 + 0.5 * 0.2 * 0.05)
    assert forward.brake == 0.0
    assert state.integral == pytest.approx(0.01)
    slower, _ = control(PARAMS, PiState(), setpoint_mps=2.0, measured_mps=2.6)
    assert slower.pedal == 0.0
    assert slower.brake == pytest.approx(0.6 + 0.5 * 0.6 * 0.05)


def test_the_set_point_is_capped_at_max_speed() -> None:
    params = SpeedControllerParams(max_speed_mps=3.0)
    capped, _ = control(params, PiState(), setpoint_mps=50.0, measured_mps=3.0)
    assert capped == Drive(pedal=0.0, brake=0.0)  # no error at the cap


def test_while_saturated_the_integral_does_not_wind_up() -> None:
    state = PiState()
    for _ in range(200):  # 10 s stuck against a wall at full pedal
        drive, state = control(PARAMS, state, setpoint_mps=5.0, measured_mps=0.0)
        assert drive.pedal == 1.0
    assert state.integral == 0.0  # kp * 5 alone saturates: nothing was integrated
    # Once the wall is gone and the speed is reached, the pedal falls at once.
    drive, _ = control(PARAMS, state, setpoint_mps=5.0, measured_mps=5.0)
    assert drive.pedal == 0.0


def test_the_integral_term_alone_never_leaves_the_output_range() -> None:
    params = SpeedControllerParams(speed_kp=0.0, speed_ki=2.0)
    state = PiState()
    for _ in range(1000):
        _, state = control(params, state, setpoint_mps=1.0, measured_mps=0.5)
    assert params.speed_ki * state.integral == pytest.approx(1.0)


@given(
    setpoint=st.floats(-20.0, 20.0),
    measured=st.floats(-20.0, 20.0),
    integral=st.floats(-100.0, 100.0),
)
def test_pedal_and_brake_are_fractions_and_never_both_on(
    setpoint: float, measured: float, integral: float
) -> None:
    drive, state = control(PARAMS, PiState(integral), setpoint_mps=setpoint, measured_mps=measured)
    assert 0.0 <= drive.pedal <= 1.0
    assert 0.0 <= drive.brake <= 1.0
    assert drive.pedal == 0.0 or drive.brake == 0.0
    assert math.isfinite(state.integral)


@pytest.mark.parametrize(
    ("setpoint", "measured", "match"),
    [(math.nan, 0.0, "set point nan"), (1.0, math.inf, "measured inf")],
)
def test_non_finite_speeds_are_refused(setpoint: float, measured: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        control(PARAMS, PiState(), setpoint_mps=setpoint, measured_mps=measured)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("speed_kp", -1.0, r"speed_kp: expected a finite value >= 0, got -1.0"),
        ("speed_ki", math.nan, r"speed_ki: expected a finite value >= 0, got nan"),
        ("max_speed_mps", 0.0, r"max_speed_mps: expected a finite value > 0, got 0.0"),
        ("period_s", math.inf, r"period_s: expected a finite value > 0, got inf"),
        ("stop_speed_mps", 20.0, r"stop_speed_mps: expected 0 <= stop_speed_mps < max_speed_mps, got 20.0"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(field: str, value: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SpeedControllerParams(**{field: value})


def drive_tractor(setpoint: float, seconds: float, *, lowered: bool) -> list[float]:
    """The speed each physics step while the controller drives the tractor model at 20 Hz."""
    tractor = TractorModel()
    state, speeds, pi = VehicleState(), [], PiState()
    for step in range(1, round(seconds / PHYSICS_DT_S) + 1):
        accel, steer = tractor.step(state.speed)
        state, _ = kinematics.step(state, MAXXUM, accel, steer, PHYSICS_DT_S)
        speeds.append(state.speed)
        if step % 6 == 0:
            drive, pi = control(PARAMS, pi, setpoint_mps=setpoint, measured_mps=state.speed)
            tractor.command(TractorCommand(pedal=drive.pedal, brake=drive.brake, hitch_raise=not lowered))
    return speeds


@pytest.mark.parametrize(("lowered", "overshoot"), [(True, 0.05), (False, 0.15)], ids=["plowing", "raised"])
def test_the_loop_holds_2_m_s_within_0_05_with_the_plow_in_the_ground_or_out(
    lowered: bool, overshoot: float
) -> None:
    speeds = drive_tractor(2.0, 20.0, lowered=lowered)
    assert max(speeds) < 2.0 + overshoot
    assert max(abs(s - 2.0) for s in speeds[-120 * 10 :]) < 0.05  # the last 10 s
