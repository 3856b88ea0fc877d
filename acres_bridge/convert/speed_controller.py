"""The Maxxum's speed controller: a PI from the speed error to the drive pedal and the service brake.

Pure: no node, no clock, no I/O. The maxxum node calls ``control`` once per period of simulation
time (20 Hz) with the speed set point and the measured speed, and keeps the returned state for the
next call, so the controller behaves the same in free run and in lockstep.

The control law, with e = set point - measured speed (m/s) and T the period (s):

    I' = I + e T                        (held while the output saturates in the direction of e)
    u  = speed_kp e + speed_ki I'
    pedal = clamp(u, 0, 1),  brake = clamp(-u, 0, 1)

A set point below ``stop_speed_mps`` (0.05 m/s) is a stop: pedal 0, full brake, integral cleared.
The integral term is limited to the output range (anti-windup by conditional integration and
clamping), so a long hill or a stalled start never leaves a reserve that overshoots afterwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from acres_bridge.geo.scalar import clamp

__all__ = [
    "CONTROL_RATE_HZ",
    "DEFAULT_CMD_TIMEOUT_S",
    "STOP_SPEED_MPS",
    "Drive",
    "PiState",
    "SpeedControllerParams",
    "control",
]

CONTROL_RATE_HZ: Final = 20  # the spec's 20 Hz of simulation time
STOP_SPEED_MPS: Final = 0.05  # below this set point the controller applies the full brake
DEFAULT_CMD_TIMEOUT_S: Final = 0.5  # the spec's cmd_timeout_s: no guidance for this long stops the commands


@dataclass(frozen=True, kw_only=True)
class SpeedControllerParams:
    """The gains and limits of the controller; ValueError names a bad field.

    ``speed_kp`` pedal per m/s of speed error; ``speed_ki`` pedal per m of integrated error
    (m/s x s); ``max_speed_mps`` the highest set point; ``period_s`` the time between two calls.
    """

    speed_kp: float = 1.0
    speed_ki: float = 0.5
    max_speed_mps: float = 11.0  # the Maxxum's top speed, 40 km/h
    stop_speed_mps: float = STOP_SPEED_MPS
    period_s: float = 1.0 / CONTROL_RATE_HZ

    def __post_init__(self) -> None:
        """Refuse gains and limits that make the controller meaningless."""
        for name in ("speed_kp", "speed_ki"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"SpeedControllerParams.{name}: expected a finite value >= 0, got {value!r}")
        for name in ("max_speed_mps", "period_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"SpeedControllerParams.{name}: expected a finite value > 0, got {value!r}")
        if not (math.isfinite(self.stop_speed_mps) and 0.0 <= self.stop_speed_mps < self.max_speed_mps):
            raise ValueError(
                "SpeedControllerParams.stop_speed_mps: expected 0 <= stop_speed_mps < max_speed_mps, got "
                f"{self.stop_speed_mps!r} with max_speed_mps {self.max_speed_mps!r}"
            )


@dataclass(frozen=True, slots=True)
class PiState:
    """What the controller carries from one period to the next: the integrated error (m)."""

    integral: float = 0.0


@dataclass(frozen=True, slots=True)
class Drive:
    """The drive pedal and the service brake, each a fraction 0 .. 1."""

    pedal: float
    brake: float


FULL_BRAKE: Final = Drive(pedal=0.0, brake=1.0)


def control(
    params: SpeedControllerParams, state: PiState, *, setpoint_mps: float, measured_mps: float
) -> tuple[Drive, PiState]:
    """One period of the PI: the drive for the speed error, and the state for the next period.

    ``setpoint_mps`` is limited to 0 .. max_speed_mps; ``measured_mps`` is the signed forward speed.
    Both must be finite (ValueError otherwise): the node refuses non-finite input before it gets here.
    """
    if not (math.isfinite(setpoint_mps) and math.isfinite(measured_mps)):
        raise ValueError(
            f"speed controller: expected finite speeds, got set point {setpoint_mps!r}, "
            f"measured {measured_mps!r}"
        )
    setpoint = clamp(setpoint_mps, 0.0, params.max_speed_mps)
    if setpoint < params.stop_speed_mps:
        return FULL_BRAKE, PiState()
    error = setpoint - measured_mps
    kp, ki = params.speed_kp, params.speed_ki
    integral = state.integral + error * params.period_s
    if ki > 0.0:  # the integral term alone never leaves the output range
        integral = clamp(integral, -1.0 / ki, 1.0 / ki)
    output = kp * error + ki * integral
    if (output > 1.0 and error > 0.0) or (output < -1.0 and error < 0.0):
        integral = state.integral  # saturated and pushed further: do not integrate
        output = kp * error + ki * integral
    return Drive(pedal=clamp(output, 0.0, 1.0), brake=clamp(-output, 0.0, 1.0)), PiState(integral)
