"""maxxum: the Maxxum's state and commands (spec: State and Commands of the Maxxum).

State, from each MAXXUM_OBSERVATION (10 Hz of simulation time): engine_rpm (r/min),
steering_angle (rad, positive left) and implement/state (JSON). From the sensor rig of the session
(SENSOR_META): the static transforms of the mounts on /tf_static. odom, ground_truth/odom,
imu/data and gnss/fix are the ins node's.

Commands: cmd_vel, guidance/curvature_cmd and speed_cmd are the guidance; hitch/lever_cmd,
hitch/raise_cmd, pto/cmd, hand_throttle_cmd and implement/cmd the settings. A message with NaN or
infinity, or an implement/cmd that is no valid JSON object, is refused with a warning and counted.
A PI speed controller (acres_bridge.nodes.speed_controller) sets the pedal and the brake from the
speed set point and the INS's forward speed at 20 Hz of simulation time: it ticks on the clock
channel, at the steps due at 20 Hz, with the INS sample of that step (it waits for it when the clock
comes first), so lockstep and free run behave alike and a lockstep run is repeatable. The curvature
goes to the simulator unchanged. Each tick sends one MAXXUM_COMMAND while guidance has arrived within
cmd_timeout_s of simulation time; after that the bridge stops sending (the simulator's safety
brake then holds the tractor, implement/state's stale turns true). A change of a setting while no
guidance arrives is sent once, at the next tick, with the tractor held (pedal 0, full brake).
Commands are refused, and counted, when the DDS loopback fence is absent (allow_unfenced_commands).

Parameters (besides those of every subsystem node): speed_kp (1.0 pedal per m/s), speed_ki (0.5
pedal per m), max_speed_mps (11.0), cmd_timeout_s (0.5), allow_unfenced_commands (false).
"""

from __future__ import annotations

import math
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final, TypeVar

from tf2_msgs.msg import TFMessage

from acres_bridge.convert import maxxum as convert
from acres_bridge.convert.stamps import stamp
from acres_bridge.errors import CommandRefusedError, ParameterError
from acres_bridge.ingest.channels import CLOCK, INS, MAXXUM_COMMAND, MAXXUM_OBSERVATION, SESSION, SampleOutlet
from acres_bridge.ingest.channels import Session as IngestSession
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.nodes.command_fence import CommandFence
from acres_bridge.nodes.speed_controller import (
    CONTROL_RATE_HZ,
    DEFAULT_CMD_TIMEOUT_S,
    FULL_BRAKE,
    Drive,
    PiState,
    SpeedControllerParams,
    control,
)
from acres_bridge.wire import Clock, Hello, InsSample, SensorMount
from acres_bridge.wire.clock import NS_PER_S, is_due
from acres_bridge.wire.maxxum import MaxxumCommand, MaxxumObservation
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["DEFAULT_CMD_TIMEOUT_S", "DEFAULT_MAX_SPEED_MPS", "Maxxum"]

_SPEEDS_KEPT: Final = 16  # INS samples kept for the ticks: 0.16 s at 100 Hz
_LOG_THROTTLE_S: Final = 1.0
_DEFAULTS: Final = SpeedControllerParams()
DEFAULT_MAX_SPEED_MPS: Final = _DEFAULTS.max_speed_mps  # the Maxxum's top speed, 40 km/h
T = TypeVar("T")
Guidance = tuple[float | None, float | None]  # (speed set point m/s, curvature 1/m); None: unchanged


class Maxxum(SubsystemNode):
    """Publishes the tractor's state and drives it from the guidance and setting topics."""

    DEFAULT_NODE_NAME = "maxxum"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        if self.vehicle != Vehicle.MAXXUM:
            raise ParameterError(f"the maxxum node serves a Maxxum, not a {self.vehicle}")
        self.controller = SpeedControllerParams(
            speed_kp=float(self.declare_parameter("speed_kp", _DEFAULTS.speed_kp).value),
            speed_ki=float(self.declare_parameter("speed_ki", _DEFAULTS.speed_ki).value),
            max_speed_mps=float(self.declare_parameter("max_speed_mps", DEFAULT_MAX_SPEED_MPS).value),
        )
        timeout_s = float(self.declare_parameter("cmd_timeout_s", DEFAULT_CMD_TIMEOUT_S).value)
        if not (math.isfinite(timeout_s) and timeout_s > 0.0):
            raise ParameterError(
                f"parameter cmd_timeout_s must be a finite number of seconds > 0, found {timeout_s}"
            )
        self.cmd_timeout_ns = round(timeout_s * NS_PER_S)
        self.fence = CommandFence(self, what="Maxxum command")
        self.accepted: Counter[str] = Counter()  # command messages taken, by topic
        self.refused: Counter[str] = Counter()  # refused, by topic ("unfenced": the fence is absent)
        self.sent = 0  # MAXXUM_COMMANDs handed to the ingest
        self._lock = threading.Lock()
        self._hello: Hello | None = None
        self._rig: tuple[SensorMount, ...] | None = None
        self._clear_commands()

        self._engine_rpm = self.publisher("engine_rpm")
        self._steering_angle = self.publisher("steering_angle")
        self._implement_state = self.publisher("implement/state")
        self._tf_static = self.publisher("/tf_static")
        self._commands: SampleOutlet[MaxxumCommand] = SampleOutlet(
            self, MAXXUM_COMMAND, namespace=self.ingest_namespace, agent=self.agent
        )
        max_speed = self.controller.max_speed_mps

        def twist(message: Any) -> Guidance:
            guidance = convert.guidance_from_twist(message, max_speed_mps=max_speed)
            return guidance.speed_mps, guidance.curvature_1pm

        self._guidance("cmd_vel", twist)
        self._guidance("guidance/curvature_cmd", lambda m: (None, convert.curvature(m)))
        self._guidance("speed_cmd", lambda m: (convert.speed(m, max_speed_mps=max_speed), None))
        self._setting(
            "hitch/lever_cmd", lambda m, s: replace(s, hitch_lever=convert.fraction("hitch/lever_cmd", m))
        )
        self._setting("hitch/raise_cmd", lambda m, s: replace(s, hitch_raise=bool(m.data)))
        self._setting("pto/cmd", lambda m, s: replace(s, pto_on=bool(m.data)))
        self._setting(
            "hand_throttle_cmd",
            lambda m, s: replace(s, hand_throttle=convert.fraction("hand_throttle_cmd", m)),
        )
        self._setting(
            "implement/cmd", lambda m, s: replace(s, implement=convert.implement_controls(m, s.implement))
        )
        self.samples(SESSION, self._on_session, agent=0)
        self.samples(CLOCK, self._on_clock, agent=0)
        self.samples(INS, self._on_ins)
        self.samples(MAXXUM_OBSERVATION, self._on_observation)

    # ---- the command state (under the lock) ----------------------------------------------------

    def _clear_commands(self) -> None:
        """Forget every command: a new session starts with a parked tractor and no guidance."""
        self._physics_hz = 120
        self._now_ns: int | None = None
        self._speed_setpoint = 0.0
        self._curvature = 0.0
        self._last_guidance_ns: int | None = None  # None: no guidance (never, or timed out)
        self._settings = convert.Settings()
        self._settings_changed = False
        self._pi = PiState()
        self._observed: MaxxumObservation | None = None
        self._speeds: deque[tuple[int, float]] = deque(maxlen=_SPEEDS_KEPT)
        self._pending: Clock | None = None  # a due tick that waits for its INS sample

    # ---- inputs from ROS (the executor's thread) ----------------------------------------------

    def _accepted(self, topic: str, message: Any, parse: Callable[[Any], T]) -> T | None:
        """The parsed message, or None when it is refused (counted and logged) or the fence is absent."""
        if not self.fence.allowed:
            self.refused["unfenced"] += 1
            self.fence.refused()
            return None
        try:
            value = parse(message)
        except CommandRefusedError as error:
            self.refused[topic] += 1
            self.get_logger().warning(
                f"refused a {topic} message ({self.refused[topic]} so far): {error}",
                throttle_duration_sec=_LOG_THROTTLE_S,
            )
            return None
        self.accepted[topic] += 1
        return value

    def _guidance(self, topic: str, parse: Callable[[Any], Guidance]) -> None:
        def on_message(message: Any) -> None:
            guidance = self._accepted(topic, message, parse)
            if guidance is None:
                return
            speed, curvature = guidance
            with self._lock:
                if speed is not None:
                    self._speed_setpoint = speed
                if curvature is not None:
                    self._curvature = curvature
                self._last_guidance_ns = self._now_ns if self._now_ns is not None else 0

        self.subscription(topic, on_message)

    def _setting(self, topic: str, apply: Callable[[Any, convert.Settings], convert.Settings]) -> None:
        def on_message(message: Any) -> None:
            with self._lock:
                current = self._settings
            settings = self._accepted(topic, message, lambda m: apply(m, current))
            if settings is None:
                return
            with self._lock:
                if settings != self._settings:
                    self._settings = settings
                    self._settings_changed = True

        self.subscription(topic, on_message)

    # ---- samples from the ingest (its I/O thread when in this process) --------------------------

    def _on_session(self, session: IngestSession) -> None:
        with self._lock:
            if not session.connected or session.hello != self._hello:
                self._clear_commands()
                self._hello = session.hello
                self._rig = None
            if session.hello is not None:
                self._physics_hz = session.hello.physics_hz
            now_ns = self._now_ns or 0
        metas = session.sensor_meta
        meta = metas[self.agent] if self.agent < len(metas) else None
        if meta is None or meta.sensors == self._rig:
            return
        self._rig = meta.sensors
        try:
            transforms = convert.rig_transforms(meta.sensors, frames=self.frames, stamp=stamp(now_ns))
        except ValueError as error:
            self.get_logger().error(f"refused the sensor rig of agent {self.agent}: {error}")
            return
        self._tf_static.publish(TFMessage(transforms=transforms))

    def _on_observation(self, observation: MaxxumObservation) -> None:
        with self._lock:
            self._observed = observation
        messages = convert.observation_messages(observation)
        self._engine_rpm.publish(messages.engine_rpm)
        self._steering_angle.publish(messages.steering_angle)
        self._implement_state.publish(messages.implement_state)

    def _on_ins(self, sample: InsSample) -> None:
        with self._lock:
            self._speeds.append((sample.step, sample.velocity[0]))
            commands = self._due_ticks()
        self._send(commands)

    def _on_clock(self, clock: Clock) -> None:
        commands: list[MaxxumCommand] = []
        with self._lock:
            self._now_ns = clock.stamp_ns
            if is_due(clock.step, CONTROL_RATE_HZ, self._physics_hz):
                if self._pending is not None:  # its INS sample never came: tick with what there is
                    commands += self._tick(self._pending)
                self._pending = clock
                commands += self._due_ticks()
        self._send(commands)

    # ---- the controller's tick (under the lock) ------------------------------------------------

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
                self.get_logger().info(
                    f"no guidance for {self.cmd_timeout_ns / NS_PER_S} s of simulation time: "
                    "the commands stop, the tractor's safety brake holds it"
                )
                self._last_guidance_ns = None
                self._speed_setpoint, self._curvature, self._pi = 0.0, 0.0, PiState()
            if not self._settings_changed:
                return []
            drive = FULL_BRAKE
        self._settings_changed = False
        command = convert.maxxum_command(
            curvature_1pm=self._curvature,
            pedal=drive.pedal,
            brake=drive.brake,
            settings=self._settings,
            observed=self._observed,
        )
        return [command]

    def _drive(self, clock: Clock) -> Drive:
        measured = self._measured_speed(clock.step)
        if measured is None:
            self.get_logger().warning(
                "no INS sample yet: the tractor is held until the measured speed arrives",
                throttle_duration_sec=_LOG_THROTTLE_S,
            )
            return FULL_BRAKE
        drive, self._pi = control(
            self.controller, self._pi, setpoint_mps=self._speed_setpoint, measured_mps=measured
        )
        return drive

    def _send(self, commands: list[MaxxumCommand]) -> None:
        for command in commands:
            self._commands.publish(command)
            self.sent += 1

    def destroy_node(self) -> None:
        self._commands.close()
        super().destroy_node()
