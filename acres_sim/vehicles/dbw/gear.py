"""The Polaris's gear selector under drive-by-wire: a request starts a shift of ``DbwParams.shift_time_s``
(the drive disengaged meanwhile), refused unless the system is enabled (for a by-wire request) and
the vehicle stands."""

from __future__ import annotations

from acres_sim.vehicles.dbw.params import DbwParams
from acres_sim.vehicles.powertrain import Gear

__all__ = ["GearShifter"]


class GearShifter:
    """The engaged gear, the last accepted by-wire request and a shift under way."""

    def __init__(self, params: DbwParams) -> None:
        """In P, no request, no shift."""
        self._p = params
        self.gear = Gear.PARK
        """The engaged gear (the last one while a shift is under way)."""
        self.gear_cmd = Gear.NONE
        """The last accepted by-wire request (the report's gear_cmd)."""
        self.shift_to: Gear | None = None
        """The gear a shift under way goes to; None without one."""
        self.refusal: str | None = None
        """Why the last request was refused; None when it was accepted (or none came)."""
        self._shift_left = 0

    @property
    def engaged(self) -> Gear:
        """The gear the powertrain drives with: neutral while a shift is under way."""
        return Gear.NEUTRAL if self.shift_to is not None else self.gear

    def request(self, gear: Gear, speed_mps: float, *, by_wire: bool, enabled: bool) -> None:
        """Start a shift to ``gear`` unless refused (not ``enabled`` for a by-wire request, or moving)."""
        if by_wire and not enabled:
            self.refusal = "the drive-by-wire is not enabled"
            return
        if abs(speed_mps) > self._p.shift_max_speed_mps:
            self.refusal = f"moving at {speed_mps:.2f} m/s"
            return
        self.refusal = None
        if by_wire:
            self.gear_cmd = gear
        if gear is self.shift_to or (gear is self.gear and self.shift_to is None):
            return  # already there, or on the way
        self.shift_to = gear
        self._shift_left = self._p.shift_steps

    def advance(self) -> None:
        """One physics step of a shift under way."""
        if self.shift_to is None:
            return
        self._shift_left -= 1
        if self._shift_left <= 0:
            self.gear = self.shift_to
            self.shift_to = None

    def follow(self, direction: int) -> None:
        """Another driver drove: the gear of the direction of travel (H forward, R backward), at once."""
        if direction > 0 and self.gear.direction <= 0:
            self.gear = Gear.HIGH
        elif direction < 0 and self.gear is not Gear.REVERSE:
            self.gear = Gear.REVERSE
        self.shift_to = None
