"""The Maxxum tractor: engine, drive, brakes, steering, hitch, PTO and implement, one physics step at a time.

A pure, deterministic model without I/O. Each physics step (1/120 s) the world calls
``TractorModel.step(speed)`` and passes the returned (acceleration, road-wheel angle) to
``acres_sim.vehicles.kinematics.step``; every 0.1 s of simulation time (``observation_due``) it reads
``observation``. Commands (``TractorCommand``: from the vehicle bridge, or from the CAN bus through
``acres_sim.vehicles.j1939.command_from_frame``) apply from the next step. All constants are in
``TractorParams``; the values below are assumed for a Maxxum 145-class tractor (107 kW rated) with a
continuously variable transmission unless they say otherwise.

Engine (``engine_rpm``)
    The governor's set speed is ``idle_rpm`` (800) plus the throttle times the span to
    ``high_idle_rpm`` (2350); the throttle is the larger of the pedal and the hand throttle. Under
    load the speed droops by ``droop_rpm`` (150) at full load, so full throttle at full load is the
    rated 2200 r/min. The engine follows its target with a lag of ``engine_tau_s`` (0.3 s). Its
    power is ``rated_power_kw`` below the rated speed in proportion to the speed (constant torque);
    the load is the power taken (drive, PTO and ``accessory_kw`` = 1 kW of fan, alternator and
    hydraulics) over that power. At idle the accessories droop the engine to about 796 r/min.

Drive and brakes (the acceleration returned)
    The pedal (0 .. 1) is the fraction of the tractive force available: the least of the traction
    limit ``traction_coefficient`` (0.55) times the weight times the differential lock's factor
    (open 0.75, rear 0.9, rear and front 1.0) and the drive power (engine power less PTO and
    accessories, through ``transmission_efficiency`` 0.85) over the speed (at least
    ``power_limit_min_speed_mps``). Against it: rolling resistance (``rolling_resistance`` 0.04 of
    the weight), the implement's draft (acres_sim.vehicles.implement) and the brakes (full brake
    ``brake_decel_mps2`` = 3 m/s^2). Resistances only oppose motion and hold the tractor at
    standstill. The mass is the tractor's plus the mounted implement's; the drive is forward only
    (the shuttle is not modelled); at the vehicle's top speed the transmission takes only the drive
    that holds it; the result is limited to the vehicle's acceleration and braking limits, as the
    kinematic model limits it. Wheel slip grows linearly with the drive force to
    ``slip_at_traction_limit`` (15 %) at the traction limit; the wheel-based speed is the ground
    speed over (1 - slip). At a constant pedal the unloaded tractor (implement raised, differential
    open) settles at about 2.0 m/s at pedal 0.15, 5.0 m/s at 0.3, 10.2 m/s at 0.5 and the 11 m/s
    limit from 0.55; below 0.1 the drive does not overcome the rolling resistance.

Steering
    The road-wheel angle follows atan(curvature * wheelbase), within the steering lock and at most
    at the steering rate of MaxxumParams (0.7 rad, 0.5 rad/s); positive left.

Safety brake
    A command with a pedal or a brake value (every bridge command; the drive command on the bus)
    restarts a timer of ``command_timeout_s`` (0.25 s: 30 steps, five periods of the bridge's
    20 Hz speed controller). Without one for that long the pedal goes to 0 and the brake to 1 and
    ``stale`` is true until the next such command, which then sets both again. The bridge stops
    its commands 0.5 s after its last input, so the tractor stops 0.25 s after that. Steering,
    hitch and PTO keep their last commands (stationary PTO work is a normal state of a stopped
    tractor). A new model, and a reset one, is stale: parked and braked.

Hitch, PTO and implement
    acres_sim.vehicles.hitch moves the lift arms; acres_sim.vehicles.implement gives the draft and
    the PTO power. The
    PTO turns at the implement's rated PTO speed (540 or 1000 r/min) at the rated engine speed,
    in proportion to the engine speed, while it is on; it takes the implement's PTO power (at most
    what the engine has), before the drive.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Final

from acres_bridge.geo.scalar import clamp, toward
from acres_bridge.wire.maxxum import (
    Difflock,
    HitchMode,
    MaxxumCommand,
    MaxxumObservation,
)
from acres_sim.clock import PHYSICS_DT_S, is_due, step_stamp_ns
from acres_sim.vehicles.hitch import Hitch
from acres_sim.vehicles.implement import CHISEL_PLOW, ImplementParams, draft_n, pto_power_kw
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY
from acres_sim.vehicles.tractor_types import (
    TractorCommand,
    TractorControls,
    TractorObservation,
    TractorParams,
)

__all__ = [
    "OBSERVATION_RATE_HZ",
    "Difflock",
    "HitchMode",
    "TractorCommand",
    "TractorControls",
    "TractorModel",
    "TractorObservation",
    "TractorParams",
    "command_from_message",
    "observation_due",
    "observation_message",
]

OBSERVATION_RATE_HZ: Final = 10
_STILL_MPS: Final = 1e-9  # a speed at or below this is standstill


def observation_due(step: int) -> bool:
    """True when physics step ``step`` yields an observation and a CAN group (10 Hz of simulation time)."""
    return is_due(step, OBSERVATION_RATE_HZ)


class TractorModel:
    """The Maxxum's actuators and powertrain, stepped once per physics step; deterministic, no I/O."""

    def __init__(
        self, *, params: TractorParams | None = None, implement: ImplementParams = CHISEL_PLOW
    ) -> None:
        """A parked tractor (stale, braked, implement raised, engine at idle) with ``implement``."""
        self._p = params if params is not None else TractorParams()
        self._implement = implement
        self._hitch = Hitch(self._p.hitch)
        self._alpha_engine = 1.0 - math.exp(-PHYSICS_DT_S / self._p.engine_tau_s)
        self._timeout_steps = self._p.timeout_steps
        self._distance_m = 0.0
        self._wheel_distance_m = 0.0
        self.reset()

    def reset(self) -> None:
        """Back to parked: controls at their defaults, stale, wheels straight, implement raised, engine idle.

        The odometers (distances) go on: they belong to the hardware, not to the episode.
        """
        self._controls = TractorControls(depth_stop_m=self._implement.default_depth_stop_m)
        self._age = self._timeout_steps + 1
        self._stale = True
        self._steer = 0.0
        self._steer_target = 0.0
        self._engine_rpm = self._p.idle_rpm
        self._hitch.reset()
        self._depth_m = 0.0
        self._draft_n = 0.0
        self._accel = 0.0
        self._slip = 0.0
        self._pto_kw = 0.0
        self._engine_kw = self._p.accessory_kw
        self._load = 0.0

    # ---- inputs --------------------------------------------------------------------------------

    @property
    def params(self) -> TractorParams:
        """The constants."""
        return self._p

    @property
    def implement(self) -> ImplementParams:
        """The implement on the hitch."""
        return self._implement

    @property
    def controls(self) -> TractorControls:
        """The controls in force (after the safety brake, if it holds)."""
        return self._controls

    @property
    def stale(self) -> bool:
        """True while the safety brake holds the tractor."""
        return self._stale

    def command(self, command: TractorCommand) -> None:
        """Take the fields that ``command`` sets; they apply from the next step."""
        self._controls = self._controls.updated(command)
        if command.longitudinal:
            self._age = 0
            self._stale = False

    # ---- stepping ------------------------------------------------------------------------------

    def _max_power_kw(self) -> float:
        p = self._p
        return p.rated_power_kw * min(self._engine_rpm, p.rated_rpm) / p.rated_rpm

    def _pto_rpm(self, on: bool) -> float:
        return float(self._implement.pto_speed) * self._engine_rpm / self._p.rated_rpm if on else 0.0

    def step(self, speed_mps: float) -> tuple[float, float]:
        """One physics step from the signed speed ``speed_mps``: (acceleration m/s^2, road-wheel angle rad).

        The two values are what ``acres_sim.vehicles.kinematics.step`` takes, already within the
        vehicle's limits.
        """
        p = self._p
        vehicle = p.vehicle
        implement = self._implement
        dt = PHYSICS_DT_S

        self._age += 1
        if self._age > self._timeout_steps and not self._stale:
            self._controls = replace(self._controls, pedal=0.0, brake=1.0)
            self._stale = True
        c = self._controls

        # Steering: towards the road-wheel angle of the curvature, within the lock and the rate.
        self._steer_target = math.atan(c.curvature_1pm * vehicle.wheelbase_m)
        target = clamp(self._steer_target, -vehicle.max_steer_rad, vehicle.max_steer_rad)
        max_delta = vehicle.max_steer_rate_radps * dt
        self._steer = toward(self._steer, target, max_delta)

        # Hitch and implement (the hitch's draft control sees the draft of the last step).
        depth_stop = min(c.depth_stop_m, implement.max_depth_m)
        self._hitch.step(
            dt,
            mode=c.hitch_mode,
            lever=c.hitch_lever,
            raise_hitch=c.hitch_raise,
            draft_n=self._draft_n,
            depth_stop_m=depth_stop,
        )
        self._depth_m = self._hitch.working_depth_m(depth_stop) if implement.tillage else 0.0
        self._draft_n = draft_n(implement, self._depth_m, speed_mps)

        # Power: the PTO first, then the drive.
        max_kw = self._max_power_kw()
        spare_kw = max(0.0, max_kw - p.accessory_kw)
        self._pto_kw = min(pto_power_kw(implement, self._pto_rpm(c.pto_on)), spare_kw)
        drive_kw = spare_kw - self._pto_kw

        # Longitudinal forces.
        mass = vehicle.mass_kg + implement.mass_kg
        weight = mass * STANDARD_GRAVITY
        traction = p.traction_coefficient * p.difflock_traction[c.difflock] * weight
        speed = abs(speed_mps)
        by_power = p.transmission_efficiency * drive_kw * 1000.0 / max(speed, p.power_limit_min_speed_mps)
        drive = c.pedal * min(traction, by_power)
        resist = p.rolling_resistance * weight + self._draft_n + c.brake * p.brake_decel_mps2 * mass
        if speed_mps >= vehicle.max_speed_mps - _STILL_MPS:  # the transmission holds the top speed
            drive = min(drive, max(0.0, resist + mass * (vehicle.max_speed_mps - speed_mps) / dt))
        if speed <= _STILL_MPS:
            accel = max(0.0, drive - resist) / mass
        else:
            accel = (drive - math.copysign(resist, speed_mps)) / mass
        braking = accel * speed_mps < 0.0
        limit = vehicle.max_brake_decel_mps2 if braking else vehicle.max_accel_mps2
        self._accel = clamp(accel, -limit, limit)
        self._slip = p.slip_at_traction_limit * drive / traction

        # Engine: the governor's target drooped by the load, reached with a first-order lag.
        delivered_kw = drive * speed / p.transmission_efficiency / 1000.0
        self._engine_kw = delivered_kw + self._pto_kw + p.accessory_kw
        self._load = min(self._engine_kw / max_kw, 1.0)
        target_rpm = self._set_rpm(c) - p.droop_rpm * self._load
        self._engine_rpm += (target_rpm - self._engine_rpm) * self._alpha_engine

        # Odometers.
        self._distance_m += speed * dt
        self._wheel_distance_m += speed / (1.0 - self._slip) * dt
        return self._accel, self._steer

    def _set_rpm(self, controls: TractorControls) -> float:
        p = self._p
        throttle = max(controls.pedal, controls.hand_throttle)
        return p.idle_rpm + throttle * (p.high_idle_rpm - p.idle_rpm)

    # ---- observation ---------------------------------------------------------------------------

    def observation(self, *, step: int, speed_mps: float) -> TractorObservation:
        """What the tractor shows after physics step ``step``, at its signed speed ``speed_mps`` then."""
        p = self._p
        c = self._controls
        hitch = self._hitch
        vehicle = p.vehicle
        return TractorObservation(
            step=step,
            stamp_ns=step_stamp_ns(step),
            implement=self._implement.name,
            implement_code=self._implement.code,
            implement_depth_m=self._depth_m,
            depth_stop_m=min(c.depth_stop_m, self._implement.max_depth_m),
            draft_n=self._draft_n,
            lower_link_force=self._draft_n / hitch.params.draft_full_scale_n,
            pto_on=c.pto_on,
            pto_rpm=self._pto_rpm(c.pto_on),
            pto_speed_rpm=int(self._implement.pto_speed),
            pto_kw=self._pto_kw,
            hitch_lever=c.hitch_lever,
            hitch_lift_deg=hitch.lift_deg,
            hitch_position=hitch.params.position(hitch.lift_deg),
            hitch_mode=c.hitch_mode,
            hitch_raise=c.hitch_raise,
            raised=hitch.raised,
            difflock=c.difflock,
            engine_rpm=self._engine_rpm,
            engine_set_rpm=self._set_rpm(c),
            engine_load=self._load,
            engine_kw=self._engine_kw,
            drawbar_kw=self._draft_n * abs(speed_mps) / 1000.0,
            pedal=c.pedal,
            brake=c.brake,
            hand_throttle=c.hand_throttle,
            stale=self._stale,
            steering_angle_rad=self._steer,
            steering_target_rad=self._steer_target,
            steering_at_limit=abs(self._steer_target) > vehicle.max_steer_rad,
            curvature_1pm=math.tan(self._steer) / vehicle.wheelbase_m,
            curvature_command_1pm=c.curvature_1pm,
            speed_mps=speed_mps,
            wheel_speed_mps=speed_mps / (1.0 - self._slip),
            wheel_slip=self._slip,
            accel_mps2=self._accel,
            distance_m=self._distance_m,
            wheel_distance_m=self._wheel_distance_m,
        )


# ---- the vehicle bridge's messages ---------------------------------------------------------------


def command_from_message(message: MaxxumCommand) -> TractorCommand:
    """The tractor command of a MAXXUM_COMMAND (already validated by its decoder): every control set."""
    return TractorCommand(
        curvature_1pm=message.curvature_1pm,
        pedal=message.pedal,
        brake=message.brake,
        hand_throttle=message.hand_throttle,
        hitch_lever=message.hitch_lever,
        hitch_raise=message.hitch_raise,
        pto_on=message.pto_on,
        difflock=Difflock(message.difflock),
        hitch_mode=message.implement.hitch_mode,
        depth_stop_m=message.implement.depth_stop_m,
    )


def observation_message(observation: TractorObservation) -> MaxxumObservation:
    """The MAXXUM_OBSERVATION of an observation."""
    o = observation
    return MaxxumObservation(
        step=o.step,
        stamp_ns=o.stamp_ns,
        implement=o.implement,
        implement_depth_m=o.implement_depth_m,
        pto_kw=o.pto_kw,
        pto_on=o.pto_on,
        pto_rpm=o.pto_rpm,
        hitch_lever=o.hitch_lever,
        hitch_lift_deg=o.hitch_lift_deg,
        hitch_mode=o.hitch_mode,
        raised=o.raised,
        draft_n=o.draft_n,
        difflock=o.difflock,
        engine_rpm=o.engine_rpm,
        stale=o.stale,
        steering_angle_rad=o.steering_angle_rad,
    )
