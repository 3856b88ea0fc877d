"""The kinematic bicycle model: exact motion, limits, body-frame outputs."""

from __future__ import annotations

import dataclasses
import math

import pytest

from acres_sim.clock import PHYSICS_DT_S
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY, VehicleState, at_rest, place, step
from acres_sim.vehicles.params import MAXXUM, POLARIS

DT = PHYSICS_DT_S


def test_at_rest() -> None:
    state = place(POLARIS, 1.0, 2.0, 0.3)
    assert (state.z, state.roll, state.pitch, state.speed, state.steer) == (0.0, 0.0, 0.0, 0.0, 0.0)
    motion = at_rest(state, POLARIS)
    assert motion.specific_force == (0.0, 0.0, STANDARD_GRAVITY)
    assert motion.velocity == (0.0, 0.0, 0.0)
    assert motion.angular_rate == (0.0, 0.0, 0.0)
    after, motion = step(state, POLARIS, 0.0, 0.0, DT)
    assert after == state
    assert motion.specific_force == (0.0, 0.0, STANDARD_GRAVITY)


def test_straight_line_at_constant_speed() -> None:
    yaw = 0.7
    state = VehicleState(x=10.0, y=-5.0, yaw=yaw, speed=5.0)
    for _ in range(1200):
        state, motion = step(state, POLARIS, 0.0, 0.0, DT)
    assert state.x == pytest.approx(10.0 + 50.0 * math.cos(yaw), abs=1e-9)
    assert state.y == pytest.approx(-5.0 + 50.0 * math.sin(yaw), abs=1e-9)
    assert state.yaw == yaw
    assert state.speed == 5.0
    assert motion.velocity == (5.0, 0.0, 0.0)
    assert motion.angular_rate == (0.0, 0.0, 0.0)
    assert motion.specific_force == (0.0, 0.0, STANDARD_GRAVITY)


@pytest.mark.parametrize(
    ("params", "steer", "speed"), [(POLARIS, 0.3, 4.0), (POLARIS, -0.61, 2.0), (MAXXUM, 0.5, 3.0)]
)
def test_constant_steer_drives_a_circle(params, steer: float, speed: float) -> None:
    radius = params.wheelbase_m / math.tan(steer)  # signed: positive turns left
    state = VehicleState(yaw=0.0, speed=speed, steer=steer)
    centre = (0.0, radius)
    lap_steps = round(2 * math.pi * abs(radius) / speed / DT)
    for _ in range(lap_steps):
        state, motion = step(state, params, 0.0, steer, DT)
        assert math.hypot(state.x - centre[0], state.y - centre[1]) == pytest.approx(abs(radius), abs=1e-9)
    # Back at the start after one lap (to within the last fraction of a step).
    assert math.hypot(state.x, state.y) < speed * DT
    yaw_rate = speed / radius
    assert motion.yaw_rate == pytest.approx(yaw_rate)
    assert motion.angular_rate == pytest.approx((0.0, 0.0, yaw_rate))
    assert motion.specific_force == pytest.approx((0.0, speed * yaw_rate, STANDARD_GRAVITY))


def test_steering_angle_and_rate_limits() -> None:
    state = VehicleState(speed=1.0)
    state, _ = step(state, POLARIS, 0.0, 2.0, DT)
    assert state.steer == pytest.approx(POLARIS.max_steer_rate_radps * DT)
    for _ in range(120):
        state, _ = step(state, POLARIS, 0.0, 2.0, DT)
    assert state.steer == POLARIS.max_steer_rad
    state, _ = step(state, POLARIS, 0.0, -2.0, DT)
    assert state.steer == pytest.approx(POLARIS.max_steer_rad - POLARIS.max_steer_rate_radps * DT)


def test_acceleration_and_speed_limits() -> None:
    state = VehicleState()
    state, motion = step(state, POLARIS, 100.0, 0.0, DT)
    assert motion.accel == pytest.approx(POLARIS.max_accel_mps2)
    assert motion.specific_force[0] == pytest.approx(POLARIS.max_accel_mps2)
    for _ in range(20 * 120):
        state, motion = step(state, POLARIS, 100.0, 0.0, DT)
    assert state.speed == POLARIS.max_speed_mps
    assert motion.accel == 0.0


def test_braking_stops_without_reversing() -> None:
    state = VehicleState(speed=1.0)
    state, motion = step(state, POLARIS, -100.0, 0.0, DT)
    assert motion.accel == pytest.approx(-POLARIS.max_brake_decel_mps2)
    steps = 1
    while state.speed > 0.0:
        state, _ = step(state, POLARIS, -100.0, 0.0, DT)
        steps += 1
    assert state.speed == 0.0  # stopped exactly, not overshot into reverse
    assert steps == math.ceil(1.0 / POLARIS.max_brake_decel_mps2 / DT)
    # From standstill a negative acceleration drives backwards, at most the reverse speed limit.
    for _ in range(20 * 120):
        state, _ = step(state, POLARIS, -100.0, 0.0, DT)
    assert state.speed == -POLARIS.max_reverse_speed_mps
    assert state.x < 0.0


def test_reverse_braking() -> None:
    state = VehicleState(speed=-2.0)
    state, motion = step(state, POLARIS, 100.0, 0.0, DT)
    assert motion.accel == pytest.approx(POLARIS.max_brake_decel_mps2)


def test_deterministic() -> None:
    def run() -> list[VehicleState]:
        state = VehicleState()
        out = []
        for k in range(600):
            state, _ = step(state, POLARIS, math.sin(k / 50), 0.5 * math.cos(k / 70), DT)
            out.append(state)
        return out

    assert run() == run()


def test_slope_sets_pitch_and_gravity() -> None:
    grade = 0.1

    def ramp(x: float, y: float) -> float:
        return grade * x

    state = place(POLARIS, 5.0, 0.0, 0.0, terrain=ramp)  # facing uphill
    assert state.z == pytest.approx(0.5)
    assert state.pitch == pytest.approx(-math.atan(grade))  # nose up
    assert state.roll == pytest.approx(0.0)
    motion = at_rest(state, POLARIS)
    slope = math.atan(grade)
    assert motion.specific_force == pytest.approx(
        (STANDARD_GRAVITY * math.sin(slope), 0.0, STANDARD_GRAVITY * math.cos(slope))
    )
    moved, _ = step(dataclasses.replace(state, speed=2.0), POLARIS, 0.0, 0.0, DT, terrain=ramp)
    assert moved.x > state.x
    assert moved.z == pytest.approx(grade * moved.x)
