"""The constants of the Polaris's drive-by-wire model, its report rate and the command check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire.dbw import DbwCommand, DbwTarget
from acres_bridge.wire.dbw import check_command as wire_check_command
from acres_sim.clock import PHYSICS_RATE_HZ, is_due
from acres_sim.errors import DbwCommandError, require_finite

__all__ = ["OVERRIDE_SUBSYSTEMS", "REPORT_RATE_HZ", "DbwParams", "check_command", "report_due"]

REPORT_RATE_HZ: Final = 50


OVERRIDE_SUBSYSTEMS: Final = (DbwTarget.STEERING, DbwTarget.THROTTLE, DbwTarget.BRAKE, DbwTarget.GEAR)


def report_due(step: int) -> bool:
    """True when physics step ``step`` yields a report line (50 Hz of simulation time)."""
    return is_due(step, REPORT_RATE_HZ)


def check_command(command: DbwCommand) -> None:
    """Raise DbwCommandError, naming the field, unless the Polaris can take ``command``
    (acres_bridge.wire.dbw.check_command: the protocol's one check)."""
    try:
        wire_check_command(command)
    except CommandRefusedError as error:
        raise DbwCommandError(f"DBW {error}") from None


@dataclass(frozen=True, kw_only=True)
class DbwParams:
    """The constants of the drive-by-wire model; acres_sim.vehicles.dbw.system says what each does.

    Times in s, speeds in m/s, accelerations in m/s^2, pressures in bar; gains of the ULC in 1/s and
    1/s^2. The timeout is the real vehicle's; the lags, the shift time and the ULC's tuning are
    assumed.
    """

    timeout_s: float = 0.1
    steering_tau_s: float = 0.1
    throttle_tau_s: float = 0.2
    brake_tau_s: float = 0.1
    brake_max_bar: float = 120.0
    shift_time_s: float = 0.4
    shift_max_speed_mps: float = 0.1
    yaw_rate_min_speed_mps: float = 0.5
    ulc_accel_default_mps2: float = 1.0
    ulc_decel_default_mps2: float = 2.0
    ulc_speed_gain_per_s: float = 1.0
    ulc_integral_gain_per_s2: float = 0.2
    ulc_hold_bar: float = 30.0
    ulc_stop_speed_mps: float = 0.1

    def __post_init__(self) -> None:
        """Every value must be finite and > 0."""
        require_finite(self, positive=self.__dataclass_fields__)

    @property
    def timeout_steps(self) -> int:
        """The physics steps a command stays in force: 12 for 0.1 s."""
        return max(1, round(self.timeout_s * PHYSICS_RATE_HZ))

    @property
    def shift_steps(self) -> int:
        """The physics steps a gear shift takes."""
        return max(1, round(self.shift_time_s * PHYSICS_RATE_HZ))
