"""maxxum: the Maxxum's state and commands (spec: State and Commands of the Maxxum).

State, from each MAXXUM_OBSERVATION (10 Hz of simulation time): engine_rpm (r/min),
steering_angle (rad, positive left) and implement/state (JSON). From the sensor rig of the session
(SENSOR_META): the static transforms of the mounts on /tf_static. odom, ground_truth/odom,
imu/data and gnss/fix are the ins node's.

Commands: cmd_vel, guidance/curvature_cmd and speed_cmd are the guidance; hitch/lever_cmd,
hitch/raise_cmd, pto/cmd, hand_throttle_cmd and implement/cmd the settings. A message with NaN or
infinity, or an implement/cmd that is no valid JSON object, is refused with a warning and counted.
The guidance controller (acres_bridge.convert.maxxum_control, with the PI speed controller of
acres_bridge.convert.speed_controller) turns the guidance, the settings, the clock and the INS's
forward speed into MAXXUM_COMMANDs at 20 Hz of simulation time; this node feeds it under a lock and
publishes what it returns. After cmd_timeout_s of simulation time without guidance the commands
stop (the simulator's safety brake then holds the tractor, implement/state's stale turns true).
Commands are refused, and counted, when the DDS loopback fence is absent (allow_unfenced_commands).

Parameters (besides those of every subsystem node): speed_kp (1.0 pedal per m/s), speed_ki (0.5
pedal per m), max_speed_mps (11.0), cmd_timeout_s (0.5), allow_unfenced_commands (false).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final, TypeVar

from tf2_msgs.msg import TFMessage

from acres_bridge.convert import maxxum as convert
from acres_bridge.convert.maxxum_control import GuidanceController
from acres_bridge.convert.speed_controller import DEFAULT_CMD_TIMEOUT_S, SpeedControllerParams
from acres_bridge.convert.stamps import stamp
from acres_bridge.errors import CommandRefusedError, ParameterError
from acres_bridge.ingest.channels import CLOCK, INS, MAXXUM_COMMAND, MAXXUM_OBSERVATION, SESSION
from acres_bridge.ingest.channels import Session as IngestSession
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import Clock, Hello, InsSample, SensorMount
from acres_bridge.wire.clock import NS_PER_S
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
    SERVES = (Vehicle.MAXXUM, "the maxxum node serves a Maxxum, not a {vehicle}")

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
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
        self.control = GuidanceController(
            self.controller,
            cmd_timeout_ns=self.cmd_timeout_ns,
            on_timeout=lambda: self.get_logger().info(
                f"no guidance for {timeout_s} s of simulation time: "
                "the commands stop, the tractor's safety brake holds it"
            ),
            on_no_speed=lambda: self.get_logger().warning(
                "no INS sample yet: the tractor is held until the measured speed arrives",
                throttle_duration_sec=_LOG_THROTTLE_S,
            ),
        )
        self.accepted: Counter[str] = Counter()  # command messages taken, by topic
        self.sent = 0  # MAXXUM_COMMANDs handed to the ingest
        self._lock = threading.Lock()
        self._hello: Hello | None = None
        self._rig: tuple[SensorMount, ...] | None = None

        self._engine_rpm = self.publisher("engine_rpm")
        self._steering_angle = self.publisher("steering_angle")
        self._implement_state = self.publisher("implement/state")
        self._tf_static = self.latched_publisher("/tf_static")
        self._commands = self.outlet(MAXXUM_COMMAND)
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

    # ---- inputs from ROS (the executor's thread) ----------------------------------------------

    def _accepted(self, topic: str, message: Any, parse: Callable[[Any], T]) -> T | None:
        """The parsed message, or None when it is refused (counted and logged) or the fence is absent."""
        if not self.command_gate.admit(self.refused):
            return None
        try:
            value = parse(message)
        except CommandRefusedError as error:
            self.refuse(topic, f"a {topic} message", str(error))
            return None
        self.accepted[topic] += 1
        return value

    def _guidance(self, topic: str, parse: Callable[[Any], Guidance]) -> None:
        def on_message(message: Any) -> None:
            guidance = self._accepted(topic, message, parse)
            if guidance is None:
                return
            with self._lock:
                self.control.guide(*guidance)

        self.subscription(topic, on_message)

    def _setting(self, topic: str, apply: Callable[[Any, convert.Settings], convert.Settings]) -> None:
        def on_message(message: Any) -> None:
            with self._lock:
                current = self.control.settings
            settings = self._accepted(topic, message, lambda m: apply(m, current))
            if settings is None:
                return
            with self._lock:
                self.control.set(settings)

        self.subscription(topic, on_message)

    # ---- samples from the ingest (its I/O thread when in this process) --------------------------

    def _on_session(self, session: IngestSession) -> None:
        with self._lock:
            if not session.connected or session.hello != self._hello:
                self.control.clear()
                self._hello = session.hello
                self._rig = None
            if session.hello is not None:
                self.control.physics_hz = session.hello.physics_hz
            now_ns = self.control.now_ns or 0
        meta = session.meta(self.agent)
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
            self.control.observe(observation)
        messages = convert.observation_messages(observation)
        self._engine_rpm.publish(messages.engine_rpm, observation.step)
        self._steering_angle.publish(messages.steering_angle, observation.step)
        self._implement_state.publish(messages.implement_state, observation.step)

    def _on_ins(self, sample: InsSample) -> None:
        with self._lock:
            commands = self.control.on_ins(sample.step, sample.velocity[0])
        self._send(commands)

    def _on_clock(self, clock: Clock) -> None:
        with self._lock:
            commands = self.control.on_clock(clock)
        self._send(commands)

    def _send(self, commands: list[MaxxumCommand]) -> None:
        for command in commands:
            if self._commands.publish(command):
                self.sent += 1
