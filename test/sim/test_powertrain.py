"""The longitudinal model: drive, brakes, resistance, gears, and the inverse used by the ULC."""

from __future__ import annotations

import math

import pytest

from acres_sim.errors import ParamsError
from acres_sim.vehicles.powertrain import Gear, Powertrain, PowertrainParams


@pytest.fixture
def powertrain() -> Powertrain:
    return Powertrain()


def _top_speed(powertrain: Powertrain, gear: Gear) -> float:
    """The speed where full throttle just balances the resistance (bisection)."""
    low, high = 0.0, 40.0
    for _ in range(60):
        mid = 0.5 * (low + high)
        v = gear.direction * mid
        if powertrain.accel(gear=gear, throttle=1.0, brake=0.0, speed_mps=v) * gear.direction > 0.0:
            low = mid
        else:
            high = mid
    return low


def test_gear_directions() -> None:
    assert [g.direction for g in Gear] == [0, 0, -1, 0, 1, 1]
    assert Gear(4) is Gear.HIGH  # ds_dbw_msgs calls it DRIVE


def test_low_is_slower_than_high(powertrain: Powertrain) -> None:
    low = _top_speed(powertrain, Gear.LOW)
    assert low == pytest.approx(7.1, abs=0.1)
    assert _top_speed(powertrain, Gear.HIGH) > 18.0  # the kinematic limit of 18 m/s binds first
    assert _top_speed(powertrain, Gear.REVERSE) > 5.0


def test_standstill_park_neutral_and_brakes(powertrain: Powertrain) -> None:
    # No throttle: no creep. P holds against full throttle, N has no drive.
    assert powertrain.accel(gear=Gear.HIGH, throttle=0.0, brake=0.0, speed_mps=0.0) == 0.0
    assert powertrain.accel(gear=Gear.PARK, throttle=1.0, brake=0.0, speed_mps=0.0) == 0.0
    assert powertrain.accel(gear=Gear.NEUTRAL, throttle=1.0, brake=0.0, speed_mps=0.0) == 0.0
    assert powertrain.accel(gear=Gear.HIGH, throttle=1.0, brake=0.0, speed_mps=0.0) == pytest.approx(
        3.0 - 0.29
    )
    assert powertrain.accel(gear=Gear.REVERSE, throttle=1.0, brake=0.0, speed_mps=0.0) < 0.0
    # Full brake at 5 m/s: 6 m/s^2 plus the resistance; coasting in N: the resistance only.
    assert powertrain.accel(gear=Gear.HIGH, throttle=0.0, brake=1.0, speed_mps=5.0) == pytest.approx(
        -6.0 - 0.29 - 0.0011 * 25
    )
    assert powertrain.accel(gear=Gear.NEUTRAL, throttle=0.0, brake=0.0, speed_mps=-2.0) == pytest.approx(
        0.29 + 0.0011 * 4
    )


@pytest.mark.parametrize("gear", [Gear.HIGH, Gear.LOW, Gear.REVERSE])
@pytest.mark.parametrize("speed", [0.0, 1.5, 4.0])
@pytest.mark.parametrize("accel", [-2.0, -0.1, 0.2, 1.0])
def test_pedals_invert_the_model(powertrain: Powertrain, gear: Gear, speed: float, accel: float) -> None:
    v = gear.direction * speed
    a = gear.direction * accel
    throttle, brake = powertrain.pedals(gear=gear, accel_mps2=a, speed_mps=v)
    assert 0.0 <= throttle <= 1.0
    assert 0.0 <= brake <= 1.0
    assert throttle == 0.0 or brake == 0.0
    result = powertrain.accel(gear=gear, throttle=throttle, brake=brake, speed_mps=v)
    if speed == 0.0 and accel < 0.0:
        assert result == 0.0  # at standstill a deceleration is a hold
        assert brake > 0.0
    elif throttle == 1.0:  # beyond the drive at that speed: saturated
        assert 0.0 < result * gear.direction < accel
    else:
        assert result == pytest.approx(a, abs=1e-12)


def test_params_are_validated() -> None:
    with pytest.raises(ParamsError, match="fade_speed_low_mps"):
        PowertrainParams(fade_speed_low_mps=0.0)
    with pytest.raises(ParamsError, match="drag_per_m"):
        PowertrainParams(drag_per_m=math.nan)
    assert PowertrainParams(drag_per_m=0.0).drag_per_m == 0.0
