"""The drive-by-wire system of the simulated Polaris, after the Dataspeed kit (ds_dbw_msgs 2.3.11).

A pure, deterministic model without I/O, advanced once per physics step (1/120 s). Commands and
reports are the wire messages of ``acres_bridge.wire.dbw`` (``DbwCommand``, ``DbwReport``), with the
command types and units of ds_dbw_msgs, so an autonomy stack written for the real Polaris drives it
through the bridge unchanged.

The system and its subsystems
    ENABLE switches the system on (refused while a driver override is active), DISABLE off. A
    subsystem (steering, throttle, brake, ULC) is under by-wire control while the system is enabled
    and its last command had the enable flag and is at most 0.1 s of simulation time old (the real
    vehicle's rule): a command applied at step k drives steps k .. k+11; without a newer one the
    subsystem times out at step k+12 (its report says timeout) and its output returns to the
    passive value: no throttle, no brake pressure, the steering released (it keeps its angle), the
    ULC commanding nothing. A new command ends the timeout. The gear has no enable flag; the system
    must be enabled for a gear command. DISABLE (or an override) stops every subsystem.

Steering (a rate limit, then a first-order lag of 0.1 s, on the steering-wheel angle)
    cmd_type 2 the steering-wheel angle in deg; 3 a curvature in 1/m (road-wheel angle
    atan(wheelbase * curvature), steering-wheel angle = steering ratio * that); 4 a yaw rate in
    rad/s (curvature = yaw rate / speed, the speed at least 0.5 m/s in magnitude, negative when
    reversing); 14 a percent of the 487 deg limit. The wheel turns at most at 1000 deg/s, or at the
    command's cmd_rate when that is smaller and > 0, and stays within +-487 deg (the limits the
    reports of the real vehicle carry). cmd_accel is accepted and not modelled.

Throttle and brake (a first-order lag on the output: throttle 0.2 s, brake 0.1 s)
    Throttle cmd_type 14 percent and 13 raw pedal percent, both 0..100, mapped the same. Brake
    cmd_type 14 percent and 1 pressure in bar; 120 bar is 100 % and full braking (6 m/s^2). A
    command's rate_inc and rate_dec (per s, in the command's unit; 0 or +inf: none) limit how fast
    the demand moves. With a driver's pedal (an override), the larger of pedal and demand acts.

Gear
    1 P, 2 R, 3 N, 4 H (ds_dbw_msgs: DRIVE), 5 L. A shift takes 0.4 s, during which the drive is
    disengaged. It is refused, and the report's gear_cmd keeps the last accepted request, unless the
    system is enabled and the speed is at most 0.1 m/s; so gear_cmd differs from gear only while a
    shift is under way. gear_driver is the gear the driver's lever selects: none (0) while no driver
    acts, the driver's gear while the route follower drives or a gear override is active. The value
    0 is never a command. P holds the vehicle, N coasts, H and L drive forward (L to about 7 m/s,
    acres_sim.vehicles.powertrain), R backward.

ULC (the speed controller of the kit)
    cmd_type 1 a speed in m/s, 2 an acceleration in m/s^2. The reference speed vel_ref follows a
    speed command at most at limit_accel away from zero and limit_decel towards it (0: the defaults
    1.0 and 2.0 m/s^2; +inf: none). accel_ref is the rate of vel_ref plus 1.0/s times the speed error
    plus 0.2/s^2 times its integral, limited to limit_accel and limit_decel and to the vehicle's
    limits; the throttle and the brake then follow the inverse of the powertrain model. A speed
    command drives in the direction of the gear only (the ULC stops when the command has the other
    sign); with enable_shift it shifts to H or R at standstill, with enable_shift_park to P for a
    zero command. At a zero reference and standstill it holds the vehicle with 30 bar. With
    coast_decel it does not brake while moving. A direct throttle or brake command in control
    preempts the ULC.

The report line (50 Hz of simulation time, ``report_due``)
    Every field of ``DbwReport``: the steering-wheel angle, the last steering command and its type;
    the driver's pedal, the by-wire demand and the actuator output of throttle (%) and brake (bar and
    %), with the demand's cmd_type (while the ULC drives: its demands, as 14 percent and 1 pressure);
    gear, gear_cmd, gear_driver; the last ULC cmd_type, vel_ref (the measured speed unless the ULC
    follows a speed command), vel_meas, accel_ref (0 unless the ULC drives), accel_meas; the signed
    speed for both the brake and the propulsion systems; the enabled, timeout and override bits.

Driver overrides
    ``set_driver_override`` is the input of a driver taking over steering, throttle, brake or the
    gear lever, optionally with the driver's value. An active override disables the system and
    latches (until ENABLE, or a command with the clear flag once no override is active), unless the
    subsystem's last command had the ignore flag.

Who drives
    The world asks ``begin_step`` each step; while the system is enabled the DBW drives
    (``actuate``). Without it, a driver outside the DBW (the route follower) may drive the vehicle
    directly; ``follow`` then keeps the DBW's state in step with the vehicle, as a driver's hands and
    feet would. With neither, ``actuate`` runs with passive outputs: a parked Polaris stays in P.
"""

import math

from acres_bridge.geo.scalar import clamp, toward
from acres_bridge.wire.dbw import (
    COMMAND_FLAG_CLEAR,
    COMMAND_FLAG_COAST_DECEL,
    COMMAND_GEARS,
    BrakeCmdType,
    DbwCommand,
    DbwReport,
    DbwTarget,
    ReportFlags,
    SteeringCmdType,
    ThrottleCmdType,
    UlcCmdType,
)
from acres_sim.clock import PHYSICS_DT_S, step_stamp_ns
from acres_sim.errors import ParamsError
from acres_sim.vehicles.dbw.actuators import CommandChannel, DriverOverride, lag_factor, ramp
from acres_sim.vehicles.dbw.gear import GearShifter
from acres_sim.vehicles.dbw.params import OVERRIDE_SUBSYSTEMS, DbwParams, check_command
from acres_sim.vehicles.dbw.ulc import UlcController
from acres_sim.vehicles.params import POLARIS, PolarisParams
from acres_sim.vehicles.powertrain import Gear, Powertrain, PowertrainParams

__all__ = ["DbwSystem"]


class DbwSystem:
    """The drive-by-wire system of one Polaris: commands in, actuator outputs and report lines out.

    Per physics step the owner calls ``begin_step`` (it applies the commands submitted since the last
    step and returns True when the DBW drives), then either ``actuate`` (the DBW's acceleration and
    road-wheel angle for the vehicle model) or, when another driver drove the vehicle, ``follow``
    with the result; ``report`` gives the report line of the current state at any time.
    """

    def __init__(
        self,
        vehicle: PolarisParams = POLARIS,
        params: DbwParams | None = None,
        powertrain: PowertrainParams | None = None,
    ) -> None:
        """A parked system: disabled, in P, the wheels straight, no command."""
        self._vehicle = vehicle
        self._p = params if params is not None else DbwParams()
        self._powertrain = Powertrain(powertrain)
        p = self._p
        self._alpha_steer = lag_factor(p.steering_tau_s)
        self._alpha_throttle = lag_factor(p.throttle_tau_s)
        self._alpha_brake = lag_factor(p.brake_tau_s)
        self._max_swa = vehicle.steering_wheel_max_deg
        self._max_rate = vehicle.steering_wheel_rate_max_degps
        self.reset()

    def reset(self) -> None:
        """Back to parked: disabled, in P, wheels straight, no command, no override, no queue."""
        self._queue: list[DbwCommand] = []
        self._enabled = False
        self._latched = False
        self._steering = CommandChannel()
        self._throttle = CommandChannel()
        self._brake = CommandChannel()
        self._ulc = CommandChannel()
        self._overrides = {target: DriverOverride() for target in OVERRIDE_SUBSYSTEMS}
        self._swa = 0.0
        self._swa_ramp = 0.0
        self._throttle_demand = 0.0
        self._throttle_input = 0.0
        self._throttle_out = 0.0
        self._throttle_type = 0
        self._brake_demand = 0.0
        self._brake_input = 0.0
        self._brake_out = 0.0
        self._brake_type = 0
        self._gears = GearShifter(self._p)
        self._gear_driver = Gear.NONE
        self._ulc_controller = UlcController(self._vehicle, self._p, self._powertrain)

    # ---- inputs --------------------------------------------------------------------------------

    @property
    def params(self) -> DbwParams:
        """The constants."""
        return self._p

    @property
    def powertrain(self) -> Powertrain:
        """The longitudinal model."""
        return self._powertrain

    def submit(self, command: DbwCommand) -> None:
        """Queue ``command`` for the next step; DbwCommandError (nothing queued) if it is invalid."""
        check_command(command)
        self._queue.append(command)

    def set_driver_override(
        self, subsystem: DbwTarget | int, active: bool, *, value: float | None = None
    ) -> None:
        """A driver takes over (``active``) or lets go of a subsystem, from the next step on.

        ``subsystem`` is STEERING, THROTTLE, BRAKE or GEAR. ``value`` is the driver's input while active:
        the steering-wheel angle in deg (None: the driver holds the wheel where it is), the throttle or
        brake pedal in % (None: 0), a Gear value for the lever (None: the lever stays).
        """
        try:
            target: DbwTarget | None = DbwTarget(subsystem)
        except ValueError:
            target = None
        if target is None or target not in self._overrides:
            names = [t.name for t in OVERRIDE_SUBSYSTEMS]
            raise ParamsError(f"driver override subsystem {subsystem!r}: expected one of {names}")
        if value is not None:
            value = float(value)
            if not math.isfinite(value):
                raise ParamsError(f"driver override value: expected a finite number, got {value!r}")
            if target is DbwTarget.GEAR and value not in COMMAND_GEARS:
                raise ParamsError(f"driver override gear {value!r}: expected 1 P, 2 R, 3 N, 4 H or 5 L")
        override = self._overrides[target]
        override.active = bool(active)
        override.value = value if active else None

    # ---- state ---------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """True while the system is enabled."""
        return self._enabled

    @property
    def gear(self) -> Gear:
        """The engaged gear."""
        return self._gears.gear

    @property
    def steering_wheel_angle_deg(self) -> float:
        """The steering-wheel angle in deg, positive left."""
        return self._swa

    @property
    def gear_refusal(self) -> str | None:
        """Why the last gear request was refused, or None when it was accepted (or none came)."""
        return self._gears.refusal

    def _ignored(self, target: DbwTarget) -> bool:
        channel = {
            DbwTarget.STEERING: self._steering,
            DbwTarget.THROTTLE: self._throttle,
            DbwTarget.BRAKE: self._brake,
        }.get(target)
        return channel is not None and channel.ignore

    def _overriding(self) -> bool:
        """True while a driver override that is not ignored is active."""
        return any(o.active and not self._ignored(t) for t, o in self._overrides.items())

    def _controls(self, channel: CommandChannel) -> bool:
        """True while ``channel`` is under by-wire control."""
        return self._enabled and channel.enable and channel.last_step >= 0 and not channel.timed_out

    def _preempted(self) -> bool:
        """True while a direct throttle or brake command holds the pedals, which preempts the ULC."""
        return any(self._controls(c) and c.cmd_type != 0 for c in (self._throttle, self._brake))

    def _ulc_controls(self) -> bool:
        return self._controls(self._ulc) and not self._preempted()

    def _ulc_drives(self) -> bool:
        return self._ulc_controls() and self._ulc.cmd_type != UlcCmdType.NONE

    # ---- stepping ------------------------------------------------------------------------------

    def begin_step(self, step: int, speed_mps: float) -> bool:
        """Start physics step ``step`` at ``speed_mps``: apply the queued commands, the timeouts and the
        overrides. True when the DBW drives the vehicle in this step (the system is enabled)."""
        queue, self._queue = self._queue, []
        for command in queue:
            self._apply(command, step, speed_mps)
        limit = self._p.timeout_steps
        for channel in (self._steering, self._throttle, self._brake, self._ulc):
            if channel.last_step >= 0 and not channel.timed_out and step - channel.last_step >= limit:
                channel.timed_out = True
        if self._enabled and self._overriding():
            self._enabled = False
            self._latched = True
        lever = self._overrides[DbwTarget.GEAR]
        self._gear_driver = Gear.NONE
        if lever.active:
            gears = self._gears
            self._gear_driver = gears.gear if lever.value is None else Gear(int(lever.value))
            if self._gear_driver not in (gears.gear, gears.shift_to):
                gears.request(self._gear_driver, speed_mps, by_wire=False, enabled=self._enabled)
        return self._enabled

    def _apply(self, command: DbwCommand, step: int, speed_mps: float) -> None:
        target = DbwTarget(command.target)
        if target is DbwTarget.ENABLE:
            if not self._overriding():
                self._enabled = True
                self._latched = False
            return
        if target is DbwTarget.DISABLE:
            self._enabled = False
            return
        if target is DbwTarget.GEAR:
            self._gears.request(Gear(command.cmd_type), speed_mps, by_wire=True, enabled=self._enabled)
            return
        channel = {
            DbwTarget.STEERING: self._steering,
            DbwTarget.THROTTLE: self._throttle,
            DbwTarget.BRAKE: self._brake,
            DbwTarget.ULC: self._ulc,
        }[target]
        channel.cmd_type = command.cmd_type
        channel.cmd = command.cmd
        channel.limit_1 = command.limit_1
        channel.limit_2 = command.limit_2
        channel.flags = command.flags
        channel.last_step = step
        channel.timed_out = False
        if command.flags & COMMAND_FLAG_CLEAR and not any(o.active for o in self._overrides.values()):
            self._latched = False

    def _steering_target(self, speed_mps: float) -> float | None:
        """The steering-wheel angle (deg) the steering command asks for now, or None for no command."""
        channel = self._steering
        kind, cmd = channel.cmd_type, channel.cmd
        vehicle = self._vehicle
        if kind == SteeringCmdType.ANGLE:
            angle = cmd
        elif kind == SteeringCmdType.PERCENT:
            angle = cmd / 100.0 * self._max_swa
        elif kind in (SteeringCmdType.CURVATURE, SteeringCmdType.YAW_RATE):
            curvature = cmd
            if kind == SteeringCmdType.YAW_RATE:
                v_min = self._p.yaw_rate_min_speed_mps
                backwards = speed_mps < 0.0 or (speed_mps == 0.0 and self._gears.gear is Gear.REVERSE)
                speed = max(abs(speed_mps), v_min)
                curvature = cmd / (-speed if backwards else speed)
            angle = vehicle.steering_wheel_deg(math.atan(vehicle.wheelbase_m * curvature))
        else:
            return None
        return clamp(angle, -self._max_swa, self._max_swa)

    def _steer(self, speed_mps: float) -> None:
        """One step of the steering actuator: rate limit, then the first-order lag."""
        override = self._overrides[DbwTarget.STEERING]
        target: float | None = None
        rate = self._max_rate
        if override.active and not self._ignored(DbwTarget.STEERING):
            if override.value is not None:
                target = clamp(override.value, -self._max_swa, self._max_swa)
        elif self._controls(self._steering):
            target = self._steering_target(speed_mps)
            cmd_rate = self._steering.limit_1
            if 0.0 < cmd_rate < rate:
                rate = cmd_rate
        if target is None:  # released: the wheel stays where it is
            self._swa_ramp = self._swa
            return
        step = rate * PHYSICS_DT_S
        self._swa_ramp = toward(self._swa_ramp, target, step)
        change = clamp((self._swa_ramp - self._swa) * self._alpha_steer, -step, step)
        self._swa = clamp(self._swa + change, -self._max_swa, self._max_swa)

    def _run_ulc(self, speed_mps: float) -> tuple[float, float] | None:
        """One step of the ULC: its (throttle %, brake bar) demands, or None when it is not driving."""
        if not self._ulc_drives():
            self._ulc_controller.idle(speed_mps)
            return None
        return self._ulc_controller.run(self._ulc, speed_mps, self._gears)

    def _pedal(self, target: DbwTarget) -> float:
        """The driver's pedal on ``target`` in % (0 without an override)."""
        override = self._overrides[target]
        if not override.active or override.value is None:
            return 0.0
        return override.value

    def actuate(self, speed_mps: float) -> tuple[float, float]:
        """Run the actuators for the current step: (longitudinal acceleration m/s^2, road-wheel angle rad).

        Call after ``begin_step``. Without by-wire control the outputs go to their passive values (or
        follow a driver's override).
        """
        p = self._p
        self._steer(speed_mps)
        self._gears.advance()
        ulc = self._run_ulc(speed_mps)

        throttle, brake = self._throttle, self._brake
        if ulc is not None:
            self._throttle_demand, self._throttle_type = ulc[0], int(ThrottleCmdType.PERCENT)
        elif self._controls(throttle) and throttle.cmd_type != ThrottleCmdType.NONE:
            wanted = clamp(throttle.cmd, 0.0, 100.0)
            self._throttle_demand = ramp(self._throttle_demand, wanted, throttle.limit_1, throttle.limit_2)
            self._throttle_type = throttle.cmd_type
        else:
            self._throttle_demand, self._throttle_type = 0.0, int(ThrottleCmdType.NONE)
        self._throttle_input = clamp(self._pedal(DbwTarget.THROTTLE), 0.0, 100.0)
        pedal = max(self._throttle_demand, self._throttle_input)
        self._throttle_out += (pedal - self._throttle_out) * self._alpha_throttle

        if ulc is not None:
            self._brake_demand, self._brake_type = ulc[1], int(BrakeCmdType.PRESSURE)
        elif self._controls(brake) and brake.cmd_type != BrakeCmdType.NONE:
            per_cmd_unit = 1.0 if brake.cmd_type == BrakeCmdType.PRESSURE else p.brake_max_bar / 100.0
            wanted = clamp(brake.cmd * per_cmd_unit, 0.0, p.brake_max_bar)
            self._brake_demand = ramp(
                self._brake_demand, wanted, brake.limit_1 * per_cmd_unit, brake.limit_2 * per_cmd_unit
            )
            self._brake_type = brake.cmd_type
        else:
            self._brake_demand, self._brake_type = 0.0, int(BrakeCmdType.NONE)
        self._brake_input = clamp(self._pedal(DbwTarget.BRAKE), 0.0, 100.0) * p.brake_max_bar / 100.0
        pressure = max(self._brake_demand, self._brake_input)
        self._brake_out += (pressure - self._brake_out) * self._alpha_brake

        accel = self._powertrain.accel(
            gear=self._gears.engaged,
            throttle=self._throttle_out / 100.0,
            brake=self._brake_out / p.brake_max_bar,
            speed_mps=speed_mps,
        )
        return accel, self._vehicle.road_wheel_rad(self._swa)

    def follow(self, *, speed_mps: float, accel_mps2: float, road_wheel_rad: float) -> None:
        """Another driver drove this step: mirror the vehicle in the DBW's state.

        The steering wheel takes the road-wheel angle, the gear the direction of travel (H forward, R
        backward, selected by that driver), the pedals what that acceleration needs.
        """
        self._swa = clamp(self._vehicle.steering_wheel_deg(road_wheel_rad), -self._max_swa, self._max_swa)
        self._swa_ramp = self._swa
        if speed_mps != 0.0:
            direction = 1 if speed_mps > 0.0 else -1
        else:
            direction = 1 if accel_mps2 > 0.0 else -1 if accel_mps2 < 0.0 else 0
        self._gears.follow(direction)
        self._gear_driver = self._gears.gear
        throttle, brake = self._powertrain.pedals(
            gear=self._gears.gear, accel_mps2=accel_mps2, speed_mps=speed_mps
        )
        self._throttle_input = self._throttle_out = throttle * 100.0
        self._brake_input = self._brake_out = brake * self._p.brake_max_bar
        self._throttle_demand = self._brake_demand = 0.0
        self._throttle_type = self._brake_type = 0
        self._ulc_controller.idle(speed_mps)

    # ---- the report ----------------------------------------------------------------------------

    def _flags(self) -> int:
        flags = ReportFlags(0)
        ulc_drives = self._ulc_drives()
        bits = (
            (self._enabled, ReportFlags.DBW_ENABLED),
            (self._controls(self._steering), ReportFlags.STEERING_ENABLED),
            (self._controls(self._throttle) or ulc_drives, ReportFlags.THROTTLE_ENABLED),
            (self._controls(self._brake) or ulc_drives, ReportFlags.BRAKE_ENABLED),
            (self._ulc_controls(), ReportFlags.ULC_ENABLED),
            (self._steering.timed_out, ReportFlags.STEERING_TIMEOUT),
            (self._throttle.timed_out, ReportFlags.THROTTLE_TIMEOUT),
            (self._brake.timed_out, ReportFlags.BRAKE_TIMEOUT),
            (self._ulc.timed_out, ReportFlags.ULC_TIMEOUT),
            (self._overrides[DbwTarget.STEERING].active, ReportFlags.STEERING_OVERRIDE),
            (self._overrides[DbwTarget.THROTTLE].active, ReportFlags.THROTTLE_OVERRIDE),
            (self._overrides[DbwTarget.BRAKE].active, ReportFlags.BRAKE_OVERRIDE),
            (self._overrides[DbwTarget.GEAR].active, ReportFlags.GEAR_OVERRIDE),
            (self._latched, ReportFlags.OVERRIDE_LATCHED),
            (bool(self._ulc.flags & COMMAND_FLAG_COAST_DECEL), ReportFlags.ULC_COAST_DECEL),
        )
        for on, bit in bits:
            if on:
                flags |= bit
        return int(flags)

    def report(self, *, step: int, speed_mps: float, accel_mps2: float) -> DbwReport:
        """The report line of the current state, as made by physics step ``step``.

        ``speed_mps`` and ``accel_mps2`` are the vehicle's measured signed speed and longitudinal
        acceleration at the end of that step. The steering cmd and cmd_type and the ULC cmd_type are
        those of the last command; the throttle and brake cmd are the by-wire demand now (0 without).
        vel_ref is the measured speed unless the ULC follows a speed command; accel_ref is 0 unless
        the ULC drives.
        """
        to_pct = 100.0 / self._p.brake_max_bar
        tracking = self._ulc_drives() and self._ulc.cmd_type == UlcCmdType.VELOCITY
        return DbwReport(
            step=step,
            stamp_ns=step_stamp_ns(step),
            flags=self._flags(),
            steering_wheel_angle_deg=self._swa,
            steering_cmd=self._steering.cmd,
            steering_cmd_type=self._steering.cmd_type,
            throttle_input_pct=self._throttle_input,
            throttle_cmd_pct=self._throttle_demand,
            throttle_output_pct=self._throttle_out,
            throttle_cmd_type=self._throttle_type,
            brake_input_bar=self._brake_input,
            brake_cmd_bar=self._brake_demand,
            brake_output_bar=self._brake_out,
            brake_input_pct=self._brake_input * to_pct,
            brake_cmd_pct=self._brake_demand * to_pct,
            brake_output_pct=self._brake_out * to_pct,
            brake_cmd_type=self._brake_type,
            gear=int(self._gears.gear),
            gear_cmd=int(self._gears.gear_cmd),
            gear_driver=int(self._gear_driver),
            ulc_cmd_type=self._ulc.cmd_type,
            vel_ref_mps=self._ulc_controller.vel_ref if tracking else speed_mps,
            vel_meas_mps=speed_mps,
            accel_ref_mps2=self._ulc_controller.accel_ref if self._ulc_drives() else 0.0,
            accel_meas_mps2=accel_mps2,
            speed_brake_mps=speed_mps,
            speed_propulsion_mps=speed_mps,
        )
