"""What the Maxxum's tractor model takes and gives: its constants, a command (from the bridge or the
CAN bus), the controls it holds and an observation (acres_sim.vehicles.tractor has the model)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from acres_bridge.wire.maxxum import MAX_DEPTH_STOP_M, Difflock, HitchMode
from acres_sim.clock import PHYSICS_DT_S, PHYSICS_RATE_HZ
from acres_sim.errors import ParamsError, require_finite
from acres_sim.vehicles.hitch import HitchParams
from acres_sim.vehicles.params import MAXXUM, MaxxumParams

__all__ = ["TractorCommand", "TractorControls", "TractorObservation", "TractorParams"]


@dataclass(frozen=True, kw_only=True)
class TractorParams:
    """The tractor's constants; the module docstring gives their meaning and sources."""

    vehicle: MaxxumParams = MAXXUM
    hitch: HitchParams = field(default_factory=HitchParams)
    idle_rpm: float = 800.0
    rated_rpm: float = 2200.0
    high_idle_rpm: float = 2350.0
    droop_rpm: float = 150.0
    engine_tau_s: float = 0.3
    rated_power_kw: float = 107.0
    accessory_kw: float = 1.0
    transmission_efficiency: float = 0.85
    traction_coefficient: float = 0.55
    difflock_traction: tuple[float, float, float] = (0.75, 0.9, 1.0)
    slip_at_traction_limit: float = 0.15
    rolling_resistance: float = 0.04
    brake_decel_mps2: float = MAXXUM.max_brake_decel_mps2
    power_limit_min_speed_mps: float = 0.5
    command_timeout_s: float = 0.25

    def __post_init__(self) -> None:
        """Refuse values that make the model meaningless, naming the field."""
        require_finite(
            self,
            positive=(
                "idle_rpm",
                "rated_rpm",
                "high_idle_rpm",
                "engine_tau_s",
                "rated_power_kw",
                "transmission_efficiency",
                "traction_coefficient",
                "brake_decel_mps2",
                "power_limit_min_speed_mps",
                "command_timeout_s",
            ),
            non_negative=("droop_rpm", "accessory_kw", "rolling_resistance", "slip_at_traction_limit"),
        )
        if not self.idle_rpm < self.rated_rpm < self.high_idle_rpm:
            raise ParamsError(
                "TractorParams: expected idle_rpm < rated_rpm < high_idle_rpm, got "
                f"{self.idle_rpm!r}, {self.rated_rpm!r}, {self.high_idle_rpm!r}"
            )
        if self.droop_rpm >= self.idle_rpm:
            raise ParamsError(f"TractorParams.droop_rpm: expected less than idle_rpm, got {self.droop_rpm!r}")
        if self.transmission_efficiency > 1.0 or self.slip_at_traction_limit >= 1.0:
            raise ParamsError(
                "TractorParams: expected transmission_efficiency <= 1 and slip_at_traction_limit < 1, got "
                f"{self.transmission_efficiency!r}, {self.slip_at_traction_limit!r}"
            )
        factors = self.difflock_traction
        if (
            len(factors) != len(Difflock)
            or not all(0.0 < f <= 1.0 for f in factors)
            or list(factors) != sorted(factors)
        ):
            raise ParamsError(
                "TractorParams.difflock_traction: expected 3 rising factors in (0, 1] (open, rear, rear "
                f"and front), got {factors!r}"
            )
        if self.command_timeout_s < PHYSICS_DT_S:
            raise ParamsError(
                "TractorParams.command_timeout_s: expected at least one physics step, got "
                f"{self.command_timeout_s!r}"
            )

    @property
    def timeout_steps(self) -> int:
        """The command timeout in physics steps (30 for 0.25 s)."""
        return max(1, round(self.command_timeout_s * PHYSICS_RATE_HZ))


def _fraction(owner: str, name: str, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ParamsError(f"{owner}.{name}: expected a number in 0 .. 1, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TractorCommand:
    """Some controls of the tractor; a field left None keeps its current value.

    ``curvature_1pm`` path curvature in 1/m, positive left (any finite value; the steering lock
    saturates it); ``pedal``, ``brake``, ``hand_throttle``, ``hitch_lever`` fractions 0 .. 1;
    ``hitch_raise`` true lifts the implement to transport, false lowers it to the lever's position;
    ``pto_on`` engages the rear PTO; ``difflock`` the differential locks; the implement controls
    ``hitch_mode`` and ``depth_stop_m`` (0 .. 1 m; limited to the implement's deepest). A command
    with a pedal or a brake value restarts the safety brake's timer.
    """

    curvature_1pm: float | None = None
    pedal: float | None = None
    brake: float | None = None
    hand_throttle: float | None = None
    hitch_lever: float | None = None
    hitch_raise: bool | None = None
    pto_on: bool | None = None
    difflock: Difflock | None = None
    hitch_mode: HitchMode | None = None
    depth_stop_m: float | None = None

    def __post_init__(self) -> None:
        """Refuse a value out of its range (ParamsError names the field); plain 1 or "draft" become enums."""
        if self.curvature_1pm is not None and not math.isfinite(self.curvature_1pm):
            raise ParamsError(
                f"TractorCommand.curvature_1pm: expected a finite number, got {self.curvature_1pm!r}"
            )
        for name in ("pedal", "brake", "hand_throttle", "hitch_lever"):
            _fraction("TractorCommand", name, getattr(self, name))
        difflock: object = self.difflock
        if difflock is not None:
            if not isinstance(difflock, int) or isinstance(difflock, bool) or difflock not in tuple(Difflock):
                raise ParamsError(f"TractorCommand.difflock: expected 0, 1 or 2, got {difflock!r}")
            object.__setattr__(self, "difflock", Difflock(difflock))
        if self.hitch_mode is not None:
            if self.hitch_mode not in tuple(HitchMode):
                modes = [str(m) for m in HitchMode]
                raise ParamsError(
                    f"TractorCommand.hitch_mode: expected one of {modes}, got {self.hitch_mode!r}"
                )
            object.__setattr__(self, "hitch_mode", HitchMode(self.hitch_mode))
        depth = self.depth_stop_m
        if depth is not None and not (math.isfinite(depth) and 0.0 <= depth <= MAX_DEPTH_STOP_M):
            raise ParamsError(
                f"TractorCommand.depth_stop_m: expected 0 .. {MAX_DEPTH_STOP_M} m, got {depth!r}"
            )

    @property
    def longitudinal(self) -> bool:
        """True when the command sets the pedal or the brake (it restarts the safety brake's timer)."""
        return self.pedal is not None or self.brake is not None


@dataclass(frozen=True, kw_only=True)
class TractorControls:
    """Every control of the tractor as it stands: the last value commanded for each.

    The defaults are those of a parked tractor: braked, no throttle, wheels straight, implement
    raised to transport, PTO off, differential open, position control.
    """

    curvature_1pm: float = 0.0
    pedal: float = 0.0
    brake: float = 1.0
    hand_throttle: float = 0.0
    hitch_lever: float = 0.0
    hitch_raise: bool = True
    pto_on: bool = False
    difflock: Difflock = Difflock.OPEN
    hitch_mode: HitchMode = HitchMode.POSITION
    depth_stop_m: float = 0.0

    def updated(self, command: TractorCommand) -> TractorControls:
        """These controls with the fields that ``command`` sets."""
        changes = {f.name: getattr(command, f.name) for f in fields(command)}
        return replace(self, **{name: value for name, value in changes.items() if value is not None})


@dataclass(frozen=True, slots=True, kw_only=True)
class TractorObservation:
    """The tractor as physics step ``step`` left it; what the bridge and the CAN frames show.

    Every key of the spec's implement/state (``engine_rpm`` is its "rpm"), the steering angle and
    the speed, and the signals of the CAN group. Speeds are signed (negative backwards); pedal,
    brake and hand throttle are fractions 0 .. 1. ``hitch_position`` is the fraction of the lift
    stroke (0 down, 1 up); ``lower_link_force`` the draft over the hitch's full-scale draft (the
    ISO 11783 nominal lower link force, -1 .. 1); ``engine_load`` the power taken over the power
    available (0 .. 1);
    ``wheel_slip`` 0 .. 1; ``steering_target_rad`` the road-wheel angle of the commanded curvature
    before the lock (``steering_at_limit``: beyond it).
    """

    step: int
    stamp_ns: int
    implement: str
    implement_code: int
    implement_depth_m: float
    depth_stop_m: float
    draft_n: float
    lower_link_force: float
    pto_on: bool
    pto_rpm: float
    pto_speed_rpm: int
    pto_kw: float
    hitch_lever: float
    hitch_lift_deg: float
    hitch_position: float
    hitch_mode: HitchMode
    hitch_raise: bool
    raised: bool
    difflock: Difflock
    engine_rpm: float
    engine_set_rpm: float
    engine_load: float
    engine_kw: float
    drawbar_kw: float
    pedal: float
    brake: float
    hand_throttle: float
    stale: bool
    steering_angle_rad: float
    steering_target_rad: float
    steering_at_limit: bool
    curvature_1pm: float
    curvature_command_1pm: float
    speed_mps: float
    wheel_speed_mps: float
    wheel_slip: float
    accel_mps2: float
    distance_m: float
    wheel_distance_m: float

    @property
    def rpm(self) -> float:
        """The engine speed in r/min: implement/state's "rpm"."""
        return self.engine_rpm
