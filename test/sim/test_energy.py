"""The energy ledger: rolling, drag, brakes, traction, slip, implement work, engine and fuel."""

from __future__ import annotations

import dataclasses
import itertools
import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acres_sim.clock import PHYSICS_DT_S
from acres_sim.errors import ParamsError
from acres_sim.sensors.tile import flat_scene
from acres_sim.vehicles.energy import (
    GASOLINE_LHV_J_PER_L,
    MAXXUM_ENERGY,
    POLARIS_ENERGY,
    EnergyLedger,
    EnergyMeter,
    energy_params,
)
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY
from acres_sim.vehicles.params import MAXXUM, POLARIS, VehicleParams
from acres_sim.vehicles.powertrain import PowertrainParams
from acres_sim.vehicles.tractor import TractorParams
from acres_sim.world.model import AgentSpec, Pose2D, World

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)

# The energy balance of a step is exact; summed over thousands of steps only rounding remains.
CLOSURE = 1e-9


def _flat_polaris() -> World:
    return World(
        seed=1,
        start_utc=START,
        agents=(AgentSpec(name="p", start=Pose2D(0.0, 0.0, 0.0)),),
        scene=flat_scene(),
        perception=False,
    )


def _drive(world: World, meter: EnergyMeter, accel: float, steps: int) -> None:
    """Drive the world's agent 0 with a commanded acceleration, metering each step from its motion;
    a deceleration ends at standstill (the command would reverse the vehicle)."""
    world.set_command(0, accel_mps2=accel, steer_rad=0.0)
    for _ in range(steps):
        before = world.agent(0).state.speed
        after = world.advance().states[0].speed
        meter.step(speed_before_mps=before, speed_after_mps=after)
        if accel < 0.0 and after == 0.0:
            world.set_command(0, accel_mps2=0.0, steer_rad=0.0)
            return


def _kinetic(mass: float, speed: float) -> float:
    return 0.5 * mass * speed * speed


def test_the_models_take_the_constants_of_the_vehicle_models() -> None:
    powertrain, tractor = PowertrainParams(), TractorParams()
    assert POLARIS_ENERGY.rolling_resistance * STANDARD_GRAVITY == pytest.approx(
        powertrain.rolling_resistance_mps2
    )
    assert POLARIS_ENERGY.drag_n_s2_per_m2 == pytest.approx(powertrain.drag_per_m * POLARIS.mass_kg)
    assert POLARIS_ENERGY.brake_decel_mps2 == powertrain.brake_decel_mps2
    assert MAXXUM_ENERGY.rolling_resistance == tractor.rolling_resistance
    assert MAXXUM_ENERGY.driveline_efficiency == tractor.transmission_efficiency
    assert (MAXXUM_ENERGY.idle_rpm, MAXXUM_ENERGY.rated_rpm) == (tractor.idle_rpm, tractor.rated_rpm)
    assert energy_params(POLARIS) == POLARIS_ENERGY
    assert energy_params(MAXXUM) == MAXXUM_ENERGY


def test_rolling_loss_at_constant_speed_on_flat_ground() -> None:
    world = _flat_polaris()
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=POLARIS.mass_kg)
    _drive(world, meter, 1.0, 600)  # to 5 m/s
    speed = world.agent(0).state.speed
    assert speed == pytest.approx(5.0)
    meter.reset()
    _drive(world, meter, 0.0, 1200)  # 10 s at 5 m/s: 50 m
    ledger = meter.ledger
    distance = speed * 1200 * PHYSICS_DT_S
    rolling = POLARIS_ENERGY.rolling_resistance * POLARIS.mass_kg * STANDARD_GRAVITY * distance
    drag = POLARIS_ENERGY.drag_n_s2_per_m2 * speed * speed * distance
    assert ledger.rolling_loss_j == pytest.approx(rolling, rel=1e-12)
    assert rolling == pytest.approx(0.29 * 900.0 * 50.0)  # 13 kJ: 261 N over 50 m
    assert ledger.drag_loss_j == pytest.approx(drag, rel=1e-12)
    assert ledger.traction_work_j == pytest.approx(rolling + drag, rel=1e-12)
    assert ledger.brake_loss_j == 0.0
    assert ledger.engine_power_w == pytest.approx(
        (rolling + drag)
        / 10.0
        * (1.0 + meter.slip / (1.0 - meter.slip))
        / POLARIS_ENERGY.driveline_efficiency
        + POLARIS_ENERGY.accessory_power_w,
        rel=1e-9,
    )


def test_braking_to_a_stop_dissipates_the_kinetic_energy() -> None:
    world = _flat_polaris()
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=POLARIS.mass_kg)
    _drive(world, meter, 2.0, 480)  # to 8 m/s
    speed = world.agent(0).state.speed
    meter.reset()
    _drive(world, meter, -6.0, 240)  # full braking: stopped after 1.33 s
    assert world.agent(0).state.speed == 0.0
    ledger = meter.ledger
    kinetic = _kinetic(POLARIS.mass_kg, speed)  # 28.8 kJ
    dissipated = ledger.brake_loss_j + ledger.rolling_loss_j + ledger.drag_loss_j
    assert dissipated == pytest.approx(kinetic, rel=CLOSURE)
    # The brakes take most; rolling resistance (0.29 of the 6 m/s^2) the rest.
    assert ledger.brake_loss_j == pytest.approx(kinetic * (1.0 - 0.29 / 6.0), rel=0.02)
    assert ledger.traction_work_j == pytest.approx(0.0, abs=1e-6)


def test_a_brake_actuator_stronger_than_the_deceleration_makes_the_wheels_drive_against_it() -> None:
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    # Coasting at constant speed with half the brake: the drive works against the brakes.
    meter.step(speed_before_mps=5.0, speed_after_mps=5.0, brake=0.5)
    ledger = meter.ledger
    distance = 5.0 * PHYSICS_DT_S
    assert ledger.brake_loss_j == pytest.approx(0.5 * 6.0 * 900.0 * distance)
    assert ledger.traction_work_j - ledger.brake_loss_j == pytest.approx(
        ledger.rolling_loss_j + ledger.drag_loss_j
    )


def test_a_standing_vehicle_only_idles() -> None:
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    for _ in range(3600):
        meter.step(speed_before_mps=0.0, speed_after_mps=0.0, dt_s=1.0, brake=1.0)
    ledger = meter.ledger
    assert (ledger.traction_work_j, ledger.brake_loss_j, ledger.rolling_loss_j) == (0.0, 0.0, 0.0)
    assert ledger.engine_power_w == pytest.approx(POLARIS_ENERGY.accessory_power_w)
    assert ledger.engine_work_j == pytest.approx(POLARIS_ENERGY.accessory_power_w * 3600.0)
    accessory_l = POLARIS_ENERGY.accessory_power_w * 3600.0 / 0.30 / GASOLINE_LHV_J_PER_L
    assert ledger.fuel_used_l == pytest.approx(0.7 + accessory_l)  # idle flow plus the accessories
    assert ledger.fuel_energy_j == pytest.approx(ledger.fuel_used_l * GASOLINE_LHV_J_PER_L)
    assert meter.engine_rpm == pytest.approx(POLARIS_ENERGY.idle_rpm, rel=0.05)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=-5.0, max_value=18.0, allow_nan=False), min_size=2, max_size=60),
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=60),
    st.floats(min_value=0.0, max_value=30_000.0),
)
def test_the_ledger_closes_for_any_motion(speeds: list[float], brakes: list[float], draft: float) -> None:
    # Speeds keep their sign within a step, as the kinematic model keeps them.
    steps = [(a, b) for a, b in itertools.pairwise(speeds) if a * b >= 0.0]
    meter = EnergyMeter(MAXXUM_ENERGY, mass_kg=7600.0)
    kinetic = 0.0
    for (v0, v1), brake in zip(steps, brakes * len(steps), strict=False):
        meter.step(speed_before_mps=v0, speed_after_mps=v1, brake=brake, drawbar_force_n=draft)
        kinetic += _kinetic(7600.0, v1) - _kinetic(7600.0, v0)
    ledger = meter.ledger
    balance = (
        ledger.traction_work_j
        - ledger.brake_loss_j
        - ledger.rolling_loss_j
        - ledger.drawbar_work_j
        - ledger.drag_loss_j
    )
    scale = max(1.0, ledger.traction_work_j, ledger.brake_loss_j)
    assert balance == pytest.approx(kinetic, abs=1e-9 * scale)
    for f in dataclasses.fields(EnergyLedger):
        assert getattr(ledger, f.name) >= 0.0, f.name
    assert 0.0 <= meter.slip <= MAXXUM_ENERGY.slip_at_traction_limit


def test_slip_grows_with_traction_and_costs_its_share() -> None:
    gentle, hard = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0), EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    gentle.step(speed_before_mps=5.0, speed_after_mps=5.0 + 0.5 * PHYSICS_DT_S)
    hard.step(speed_before_mps=5.0, speed_after_mps=5.0 + 3.0 * PHYSICS_DT_S)
    assert 0.0 < gentle.slip < hard.slip < POLARIS_ENERGY.slip_at_traction_limit
    ledger = hard.ledger
    assert ledger.slip_loss_j == pytest.approx(ledger.traction_work_j * hard.slip / (1.0 - hard.slip))
    given_slip = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    given_slip.step(speed_before_mps=5.0, speed_after_mps=5.0, slip=0.1, engine_rpm=3000.0)
    assert (given_slip.slip, given_slip.engine_rpm) == (0.1, 3000.0)


def test_the_engine_speeds_up_with_power() -> None:
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    for _ in range(120):
        meter.step(speed_before_mps=10.0, speed_after_mps=10.0 + 2.0 * PHYSICS_DT_S)
    assert POLARIS_ENERGY.idle_rpm + 1000.0 < meter.engine_rpm < POLARIS_ENERGY.rated_rpm


def test_implement_work_goes_through_the_engine() -> None:
    meter = EnergyMeter(MAXXUM_ENERGY, mass_kg=7600.0)
    meter.step(
        speed_before_mps=2.0,
        speed_after_mps=2.0,
        drawbar_force_n=20_000.0,
        pto_power_w=15_000.0,
        hitch_work_j=700.0,
    )
    ledger = meter.ledger
    distance = 2.0 * PHYSICS_DT_S
    assert ledger.drawbar_work_j == pytest.approx(20_000.0 * distance)
    assert ledger.pto_work_j == pytest.approx(15_000.0 * PHYSICS_DT_S)
    assert ledger.hitch_work_j == 700.0
    wheels = ledger.traction_work_j + ledger.slip_loss_j
    expected = (
        wheels / MAXXUM_ENERGY.driveline_efficiency
        + ledger.pto_work_j
        + 700.0 / MAXXUM_ENERGY.hydraulic_efficiency
        + MAXXUM_ENERGY.accessory_power_w * PHYSICS_DT_S
    )
    assert ledger.engine_work_j == pytest.approx(expected)
    assert ledger.engine_power_w == pytest.approx(expected / PHYSICS_DT_S)


def test_soil_work_counts_as_rolling_loss_paid_by_traction() -> None:
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    meter.step(speed_before_mps=3.0, speed_after_mps=3.0, soil_work_j=12.0)
    plain = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    plain.step(speed_before_mps=3.0, speed_after_mps=3.0)
    assert meter.ledger.rolling_loss_j == pytest.approx(plain.ledger.rolling_loss_j + 12.0)
    assert meter.ledger.traction_work_j == pytest.approx(plain.ledger.traction_work_j + 12.0)


def test_reset_starts_a_new_episode() -> None:
    meter = EnergyMeter(POLARIS_ENERGY, mass_kg=900.0)
    meter.step(speed_before_mps=3.0, speed_after_mps=3.1)
    assert meter.ledger.traction_work_j > 0.0
    meter.reset()
    assert meter.ledger == EnergyLedger()
    assert meter.engine_rpm == POLARIS_ENERGY.idle_rpm


def test_ledger_values_are_the_message_fields_in_order() -> None:
    meter = EnergyMeter(MAXXUM_ENERGY, mass_kg=7600.0)
    meter.step(speed_before_mps=2.0, speed_after_mps=2.1, brake=0.1, drawbar_force_n=1000.0, pto_power_w=10.0)
    ledger = dataclasses.asdict(meter.ledger)
    del ledger["drag_loss_j"]
    assert meter.ledger_values() == tuple(ledger.values())


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"rolling_resistance": -0.1}, "rolling_resistance: expected a finite value >= 0"),
        ({"fuel_lhv_j_per_l": math.nan}, "fuel_lhv_j_per_l: expected a finite value >= 0"),
        ({"driveline_efficiency": 0.0}, "driveline_efficiency: expected a value > 0"),
        ({"marginal_efficiency": 1.2}, "marginal_efficiency: expected at most 1"),
        ({"slip_at_traction_limit": 1.0}, "slip_at_traction_limit: expected below 1"),
        ({"rated_rpm": 1000.0}, "rated_rpm: expected above idle_rpm"),
    ],
)
def test_bad_params_are_refused(change: dict[str, float], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        dataclasses.replace(POLARIS_ENERGY, **change)


@pytest.mark.parametrize("mass", [0.0, -1.0, math.inf])
def test_a_meter_needs_a_mass(mass: float) -> None:
    with pytest.raises(ParamsError, match="mass_kg: expected a finite value > 0"):
        EnergyMeter(POLARIS_ENERGY, mass_kg=mass)


def test_energy_params_of_an_unknown_vehicle_are_refused() -> None:
    plain = VehicleParams(
        vehicle="quad",
        wheelbase_m=1.2,
        track_m=0.9,
        mass_kg=300.0,
        tyre_radius_front_m=0.3,
        tyre_radius_rear_m=0.3,
        max_steer_rad=0.5,
        max_steer_rate_radps=1.0,
        max_speed_mps=10.0,
        max_reverse_speed_mps=2.0,
        max_accel_mps2=2.0,
        max_brake_decel_mps2=4.0,
    )
    with pytest.raises(ParamsError, match="expected PolarisParams or MaxxumParams, got VehicleParams"):
        energy_params(plain)
