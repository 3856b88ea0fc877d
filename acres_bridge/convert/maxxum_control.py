"""The Maxxum's guidance controller: from guidance, settings, clock and INS to MAXXUM_COMMANDs.

Pure: no node, no lock, no I/O; the maxxum node feeds it and publishes what it returns. It ticks
on the clock, at the steps due at CONTROL_RATE_HZ (20 Hz) of simulation time, with the INS sample
of that step: when the clock comes first the tick waits for its sample, and a tick whose sample
never came runs at the next due clock with the newest speed there is. So lockstep and free run
behave alike and a lockstep run is repeatable.

Each tick returns one command while guidance has arrived within cmd_timeout_ns of simulation time;
after that the controller stops (the simulator's safety brake then holds the tractor) and forgets
the guidance. A change of a setting while no guidance arrives is returned once, at the next tick,
with the tractor held (pedal 0, full brake).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Final

from acres_bridge.convert.maxxum import Settings, maxxum_command
from acres_bridge.convert.speed_controller import (
    CONTROL_RATE_HZ,
    FULL_BRAKE,
    Drive,
    PiState,
    SpeedControllerParams,
    control,
)
from acres_bridge.wire import Clock
from acres_bridge.wire.clock import is_due
from acres_bridge.wire.maxxum import MaxxumCommand, MaxxumObservation

__all__ = ["GuidanceController"]

_SPEEDS_KEPT: Final = 16  # INS samples kept for the ticks: 0.16 s at 100 Hz
_DEFAULT_PHYSICS_HZ: Final = 120


def _ignore() -> None:
    return None


class GuidanceController:
    """The command state of one Maxxum between sessions; `clear()` starts it anew.

    `on_timeout` is called when guidance times out, `on_no_speed` when a guided tick has no INS
    speed to work from (the tractor is then held): the node logs them.
    """

    def __init__(
        self,
        params: SpeedControllerParams,
        *,
        cmd_timeout_ns: int,
        on_timeout: Callable[[], None] = _ignore,
        on_no_speed: Callable[[], None] = _ignore,
    ) -> None:
        self.params = params
        self.cmd_timeout_ns = cmd_timeout_ns
        self._on_timeout = on_timeout
        self._on_no_speed = on_no_speed
        self.clear()

    def clear(self) -> None:
        """Forget every command: a new session starts with a parked tractor and no guidance."""
        self.physics_hz = _DEFAULT_PHYSICS_HZ
        self.now_ns: int | None = None
        self._speed_setpoint = 0.0
        self._curvature = 0.0
        self._last_guidance_ns: int | None = None  # None: no guidance (never, or timed out)
        self.settings = Settings()
        self._settings_changed = False
        self._pi = PiState()
        self._observed: MaxxumObservation | None = None
        self._speeds: deque[tuple[int, float]] = deque(maxlen=_SPEEDS_KEPT)
        self._pending: Clock | None = None  # a due tick that waits for its INS sample

    # ---- inputs ---------------------------------------------------------------------------------

    def guide(self, speed_mps: float | None, curvature_1pm: float | None) -> None:
        """New guidance (None: that part unchanged), timed at the latest clock."""
        if speed_mps is not None:
            self._speed_setpoint = speed_mps
        if curvature_1pm is not None:
            self._curvature = curvature_1pm
        self._last_guidance_ns = self.now_ns if self.now_ns is not None else 0

    def set(self, settings: Settings) -> None:
        """The settings as the topics now set them; a change goes out at the next tick."""
        if settings != self.settings:
            self.settings = settings
            self._settings_changed = True

    def observe(self, observation: MaxxumObservation) -> None:
        """The tractor's latest observation: the controls no topic has set follow it."""
        self._observed = observation

    def on_ins(self, step: int, forward_speed_mps: float) -> list[MaxxumCommand]:
        """An INS sample's forward speed; the command of a tick that waited for it, if any."""
        self._speeds.append((step, forward_speed_mps))
        return self._due_ticks()

    def on_clock(self, clock: Clock) -> list[MaxxumCommand]:
        """A physics step's clock; the commands of the ticks it completes."""
        commands: list[MaxxumCommand] = []
        self.now_ns = clock.stamp_ns
        if is_due(clock.step, CONTROL_RATE_HZ, self.physics_hz):
            if self._pending is not None:  # its INS sample never came: tick with what there is
                commands += self._tick(self._pending)
            self._pending = clock
            commands += self._due_ticks()
        return commands

    # ---- the tick -------------------------------------------------------------------------------

    def _due_ticks(self) -> list[MaxxumCommand]:
        """The pending tick, once the INS sample of its step (or a later one) has arrived."""
        pending = self._pending
        if pending is None or not self._speeds or self._speeds[-1][0] < pending.step:
            return []
        return self._tick(pending)

    def _measured_speed(self, step: int) -> float | None:
        """The forward speed of the last INS sample at or before ``step`` (the oldest kept if none)."""
        for sample_step, speed in reversed(self._speeds):
            if sample_step <= step:
                return speed
        return self._speeds[0][1] if self._speeds else None

    def _tick(self, clock: Clock) -> list[MaxxumCommand]:
        """One period of the controller at the clock's step: the command to send, if any."""
        self._pending = None
        guided = (
            self._last_guidance_ns is not None
            and clock.stamp_ns - self._last_guidance_ns <= self.cmd_timeout_ns
        )
        if guided:
            drive = self._drive(clock)
        else:
            if self._last_guidance_ns is not None:
                self._on_timeout()
                self._last_guidance_ns = None
                self._speed_setpoint, self._curvature, self._pi = 0.0, 0.0, PiState()
            if not self._settings_changed:
                return []
            drive = FULL_BRAKE
        self._settings_changed = False
        command = maxxum_command(
            curvature_1pm=self._curvature,
            pedal=drive.pedal,
            brake=drive.brake,
            settings=self.settings,
            observed=self._observed,
        )
        return [command]

    def _drive(self, clock: Clock) -> Drive:
        measured = self._measured_speed(clock.step)
        if measured is None:
            self._on_no_speed()
            return FULL_BRAKE
        drive, self._pi = control(
            self.params, self._pi, setpoint_mps=self._speed_setpoint, measured_mps=measured
        )
        return drive
