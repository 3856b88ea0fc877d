"""The ULC, the speed controller of the Dataspeed kit: a reference speed ramped within the command's
acceleration limits, a PI loop on it, and the pedals that the powertrain model needs for the result
(acres_sim.vehicles.dbw.system's docstring gives the rules)."""

from __future__ import annotations

from acres_bridge.geo.scalar import clamp
from acres_bridge.wire.dbw import (
    COMMAND_FLAG_COAST_DECEL,
    COMMAND_FLAG_ENABLE_SHIFT,
    COMMAND_FLAG_ENABLE_SHIFT_PARK,
    UlcCmdType,
)
from acres_sim.clock import PHYSICS_DT_S
from acres_sim.vehicles.dbw.actuators import CommandChannel, ramp
from acres_sim.vehicles.dbw.gear import GearShifter
from acres_sim.vehicles.dbw.params import DbwParams
from acres_sim.vehicles.params import PolarisParams
from acres_sim.vehicles.powertrain import Gear, Powertrain

__all__ = ["UlcController"]


class UlcController:
    """The ULC's state between steps: the reference speed and acceleration and the error's integral."""

    def __init__(self, vehicle: PolarisParams, params: DbwParams, powertrain: Powertrain) -> None:
        """Idle: the references at 0."""
        self._vehicle = vehicle
        self._p = params
        self._powertrain = powertrain
        self.vel_ref = 0.0
        """The reference speed (m/s)."""
        self.accel_ref = 0.0
        """The acceleration (m/s^2) it asked for in the last step it drove."""
        self._integral = 0.0

    def idle(self, speed_mps: float) -> None:
        """Not driving: the reference follows the measured speed, nothing accumulates."""
        self.vel_ref = speed_mps
        self.accel_ref = 0.0
        self._integral = 0.0

    def run(self, ulc: CommandChannel, speed_mps: float, gears: GearShifter) -> tuple[float, float]:
        """One step of the ULC driving ``ulc``'s command: its (throttle %, brake bar) demands."""
        p = self._p
        vehicle = self._vehicle
        accel_limit = ulc.limit_1 if ulc.limit_1 > 0.0 else p.ulc_accel_default_mps2
        decel_limit = ulc.limit_2 if ulc.limit_2 > 0.0 else p.ulc_decel_default_mps2
        hold = False
        if ulc.cmd_type == UlcCmdType.VELOCITY:
            wanted = ulc.cmd
            if ulc.flags & COMMAND_FLAG_ENABLE_SHIFT and gears.shift_to is None:
                self._shift(ulc, wanted, speed_mps, gears)
            direction = gears.engaged.direction
            target = max(wanted, 0.0) if direction > 0 else min(wanted, 0.0) if direction < 0 else 0.0
            previous = self.vel_ref
            away = previous * target >= 0.0 and abs(target) > abs(previous)
            limit = accel_limit if away else decel_limit
            self.vel_ref = ramp(previous, target, limit, limit)
            error = self.vel_ref - speed_mps
            raw = (
                (self.vel_ref - previous) / PHYSICS_DT_S
                + p.ulc_speed_gain_per_s * error
                + p.ulc_integral_gain_per_s2 * self._integral
            )
            low, high = (-accel_limit, decel_limit) if direction < 0 else (-decel_limit, accel_limit)
            accel = clamp(raw, max(low, -vehicle.max_brake_decel_mps2), min(high, vehicle.max_accel_mps2))
            if accel == raw:
                self._integral += error * PHYSICS_DT_S
            hold = target == 0.0 and abs(speed_mps) <= p.ulc_stop_speed_mps
        else:
            accel = clamp(ulc.cmd, -vehicle.max_brake_decel_mps2, vehicle.max_accel_mps2)
            self.vel_ref = speed_mps
            self._integral = 0.0
        self.accel_ref = accel
        throttle, brake = self._powertrain.pedals(gear=gears.engaged, accel_mps2=accel, speed_mps=speed_mps)
        brake_bar = brake * p.brake_max_bar
        if ulc.flags & COMMAND_FLAG_COAST_DECEL and abs(speed_mps) > p.ulc_stop_speed_mps:
            brake_bar = 0.0
        if hold:
            brake_bar = max(brake_bar, p.ulc_hold_bar)
        return throttle * 100.0, brake_bar

    def _shift(self, ulc: CommandChannel, wanted: float, speed_mps: float, gears: GearShifter) -> None:
        """With enable_shift: shift at standstill to the gear a speed command needs (the ULC drives
        only while the system is enabled)."""
        gear = gears.gear
        if wanted > 0.0 and gear.direction <= 0:
            want = Gear.HIGH
        elif wanted < 0.0 and gear is not Gear.REVERSE:
            want = Gear.REVERSE
        elif wanted == 0.0 and ulc.flags & COMMAND_FLAG_ENABLE_SHIFT_PARK and gear is not Gear.PARK:
            want = Gear.PARK
        else:
            return
        if abs(speed_mps) <= self._p.shift_max_speed_mps:
            gears.request(want, speed_mps, by_wire=True, enabled=True)
