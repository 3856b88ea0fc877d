"""The longitudinal model of the Polaris: the gear, the drive, the brakes and the driving resistance.

``Powertrain.accel`` turns the actuator outputs (throttle and brake, as fractions of full) into the
longitudinal acceleration of the vehicle; ``Powertrain.pedals`` is its inverse, used by the speed
controller of the drive-by-wire (ULC) and to show what a driver's pedals would be.

The model, all values assumed for a Ranger-class UTV with a CVT:

- drive: full throttle gives ``drive_accel_mps2`` (3.0 m/s^2, the vehicle's acceleration limit) at
  standstill in H and L, ``reverse_accel_mps2`` (2.0 m/s^2) in R; the drive fades linearly to zero at
  the gear's fade speed (H 24 m/s, L 8 m/s, R 6 m/s). With the resistance below, full throttle
  holds about 7.1 m/s (25 km/h) in L; H and R reach the vehicle's speed limits (18 m/s, 5 m/s),
  which the kinematic model enforces. No throttle gives no drive (a CVT's clutch does not creep).
- resistance: rolling resistance 0.29 m/s^2 (a coefficient of 0.03 on farm tracks) plus
  aerodynamic drag 0.0011 1/m * v^2 (0.5 * 1.2 kg/m^3 * 1.6 m^2 / 900 kg).
- brakes: full brake decelerates at ``brake_decel_mps2`` (6.0 m/s^2, the vehicle's braking limit);
  the brakes only oppose motion, and hold the vehicle at standstill when they exceed the drive.
- gears: P holds the vehicle with the full braking force (the parking pawl), N has no drive; H and
  L drive forward, R backward. Slopes are not modelled (the terrain sets only the attitude).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from acres_sim.errors import require_finite
from acres_sim.vehicles.params import POLARIS

__all__ = ["Gear", "Powertrain", "PowertrainParams"]

_STILL_MPS: Final = 1e-9  # a speed at or below this is standstill


class Gear(IntEnum):
    """The gear values of ds_dbw_msgs/msg/Gear, which calls 4 DRIVE; the spec and the Polaris call it H."""

    NONE = 0
    PARK = 1
    REVERSE = 2
    NEUTRAL = 3
    HIGH = 4
    LOW = 5

    @property
    def direction(self) -> int:
        """+1 for the forward gears (H, L), -1 for R, 0 for the gears without drive (P, N, none)."""
        if self in (Gear.HIGH, Gear.LOW):
            return 1
        return -1 if self is Gear.REVERSE else 0


@dataclass(frozen=True, kw_only=True)
class PowertrainParams:
    """The longitudinal constants; the module docstring gives their sources. Accelerations in m/s^2."""

    drive_accel_mps2: float = POLARIS.max_accel_mps2
    reverse_accel_mps2: float = 2.0
    fade_speed_high_mps: float = 24.0
    fade_speed_low_mps: float = 8.0
    fade_speed_reverse_mps: float = 6.0
    rolling_resistance_mps2: float = 0.29
    drag_per_m: float = 0.0011
    brake_decel_mps2: float = POLARIS.max_brake_decel_mps2

    def __post_init__(self) -> None:
        """Every value must be finite and > 0 (the drag >= 0)."""
        require_finite(
            self,
            positive=[name for name in self.__dataclass_fields__ if name != "drag_per_m"],
            non_negative=("drag_per_m",),
        )


class Powertrain:
    """The longitudinal model: pure functions of the gear, the actuator outputs and the speed."""

    def __init__(self, params: PowertrainParams | None = None) -> None:
        """Use ``params`` or the defaults."""
        self._p = params if params is not None else PowertrainParams()
        p = self._p
        self._drive: dict[Gear, tuple[float, float]] = {
            Gear.HIGH: (p.drive_accel_mps2, p.fade_speed_high_mps),
            Gear.LOW: (p.drive_accel_mps2, p.fade_speed_low_mps),
            Gear.REVERSE: (p.reverse_accel_mps2, p.fade_speed_reverse_mps),
        }

    @property
    def params(self) -> PowertrainParams:
        """The constants."""
        return self._p

    def drive_capacity(self, gear: Gear, speed_mps: float) -> float:
        """The drive acceleration at full throttle (m/s^2, >= 0, in the gear's direction) at a speed."""
        drive = self._drive.get(gear)
        if drive is None:
            return 0.0
        base, fade = drive
        along = max(0.0, gear.direction * speed_mps)
        return base * max(0.0, 1.0 - along / fade)

    def resistance(self, speed_mps: float) -> float:
        """The magnitude of the rolling resistance and the drag at a speed, in m/s^2."""
        return self._p.rolling_resistance_mps2 + self._p.drag_per_m * speed_mps * speed_mps

    def accel(self, *, gear: Gear, throttle: float, brake: float, speed_mps: float) -> float:
        """The longitudinal acceleration (m/s^2, along body x) for throttle and brake fractions (0..1)."""
        drive = gear.direction * throttle * self.drive_capacity(gear, speed_mps)
        hold = self._p.brake_decel_mps2 * (1.0 if gear is Gear.PARK else brake)
        if abs(speed_mps) <= _STILL_MPS:
            surplus = abs(drive) - hold - self._p.rolling_resistance_mps2
            return math.copysign(surplus, drive) if surplus > 0.0 else 0.0
        return drive - math.copysign(hold + self.resistance(speed_mps), speed_mps)

    def pedals(self, *, gear: Gear, accel_mps2: float, speed_mps: float) -> tuple[float, float]:
        """The (throttle, brake) fractions that give ``accel_mps2`` in ``gear`` at a speed, each 0..1.

        The inverse of ``accel``, saturated: an acceleration beyond the drive gives full throttle, a
        deceleration beyond the brakes full brake. At standstill a demand against the gear's direction
        (or any demand without drive) gives the brake that holds the vehicle.
        """
        direction = gear.direction
        moving = abs(speed_mps) > _STILL_MPS
        motion = math.copysign(1.0, speed_mps) if moving else float(direction)
        need = accel_mps2 + motion * self.resistance(speed_mps)
        if direction != 0 and need * direction > 0.0 and (moving or accel_mps2 * direction > 0.0):
            capacity = self.drive_capacity(gear, speed_mps)
            throttle = min(1.0, need * direction / capacity) if capacity > 0.0 else 1.0
            return throttle, 0.0
        decel = max(0.0, -need * motion) if moving else abs(accel_mps2)
        return 0.0, min(1.0, decel / self._p.brake_decel_mps2)
