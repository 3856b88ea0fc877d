"""The pieces every subsystem of the drive-by-wire model shares: the last command of a subsystem and
its timeout, a driver's override, and the rate limit and first-order lag of the actuators."""

from __future__ import annotations

import math
from dataclasses import dataclass

from acres_bridge.geo.scalar import toward
from acres_bridge.wire.dbw import COMMAND_FLAG_ENABLE, COMMAND_FLAG_IGNORE
from acres_sim.clock import PHYSICS_DT_S

__all__ = ["CommandChannel", "DriverOverride", "lag_factor", "ramp"]


@dataclass
class CommandChannel:
    """The last command of one subsystem (steering, throttle, brake, ULC) and its timeout."""

    cmd_type: int = 0
    cmd: float = 0.0
    limit_1: float = 0.0
    limit_2: float = 0.0
    flags: int = 0
    last_step: int = -1  # the step its last command applied at; -1: none yet
    timed_out: bool = False

    @property
    def enable(self) -> bool:
        """The command's enable flag."""
        return bool(self.flags & COMMAND_FLAG_ENABLE)

    @property
    def ignore(self) -> bool:
        """The command's ignore flag: a driver's override does not disable the system."""
        return bool(self.flags & COMMAND_FLAG_IGNORE)


@dataclass
class DriverOverride:
    """A driver's input on one subsystem: active, and the driver's value (None: no value)."""

    active: bool = False
    value: float | None = None


def lag_factor(tau_s: float) -> float:
    """The fraction of the gap a first-order lag of ``tau_s`` closes in one physics step (exact)."""
    return 1.0 - math.exp(-PHYSICS_DT_S / tau_s)


def ramp(value: float, target: float, rate_up: float, rate_down: float) -> float:
    """``value`` moved towards ``target`` by at most rate * dt; a rate of 0 or +inf is no limit."""
    rate = rate_up if target > value else rate_down
    if rate <= 0.0 or math.isinf(rate):
        return target
    return toward(value, target, rate * PHYSICS_DT_S)
