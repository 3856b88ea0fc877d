"""policy_driver: drives a vehicle with a policy, through the same topics and the same code as the
Gymnasium environment, on the simulator or on the real vehicle.

    ros2 run acres_bridge policy_driver --ros-args -p policy:=acres_bridge.gym.policy:route_follower
    ros2 run acres_bridge policy_driver --ros-args -p policy:=/path/route_ppo.zip -p vehicle:=polaris

Each control period of the odometry's stamps (``control_period_s``, 0.1 s by default, as in the
environment) the node builds the observation from the latest message of each topic with the
environment's Drive (acres_bridge.gym.drive), and sends what the Drive makes of it: the
engagement's commands until the reports show the vehicle engaged (the Polaris: enable, gear L;
the Maxxum: implement down, PTO), then the policy's action as the vehicle's commands. The control
loop runs on the odometry: when the INS stops, the commands stop and the vehicle's own command
timeout stops the vehicle. In a lockstep session the period ends with the odometry of its last
step, so the node sees what the environment saw at the same step. Before it builds a period's
observation it takes every message its other readers hold (rclpy's executor hands a subscription
one message per wait), so each topic's part is the newest that has come.

Parameters (read-only):
  policy            module:callable (observation -> action) or a Stable-Baselines3 .zip (required)
  algorithm         the Stable-Baselines3 class of a .zip (default PPO)
  vehicle           polaris (default) or maxxum: the topics and the action
  observations      the observation's parts (default: the environment's for the vehicle)
  control_period_s  the control period in s of the odometry's stamps (default 0.1)
  max_speed_mps     the action space's highest speed (default: the environment's, 5.0 / 3.0)
  pto               the Maxxum's PTO while driving (default true)
  resend_s          re-send the period's commands each this much odometry time (default 0.02,
                    50 Hz: the drive-by-wire times a command out after 0.1 s, so a 10 Hz policy
                    alone would let it lapse on the slightest delay); 0 sends once a period,
                    which a lockstep test that counts a command per period wants

An action the policy gets wrong (an exception, a wrong shape, NaN, outside the action space) is
logged (at most once a second), counted, and sends nothing (nor re-sends the last commands) for
that period, so the vehicle's command timeout stops it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from acres_bridge.errors import ParameterError
from acres_bridge.gym.drive import Command, Drive, MaxxumDrive, PolarisDrive
from acres_bridge.gym.policy import Policy, PolicyError, load_policy
from acres_bridge.other import _wiring

__all__ = ["PolicyDriver", "main"]

_LOG_PERIOD_S = 1.0


class PolicyDriver(Node):
    """Sends a policy's actions as a vehicle's commands, one control period of odometry at a time."""

    DEFAULT_NODE_NAME = "policy_driver"

    def __init__(self, *, policy: Policy | None = None, **node_options: Any) -> None:
        super().__init__(self.DEFAULT_NODE_NAME, **node_options)
        self.drive = self._drive()
        self.period_ns = self._duration_ns(
            "control_period_s", 0.1, "the control period in s of the odometry's stamps", low=0.001
        )
        self.resend_ns = self._duration_ns(
            "resend_s",
            0.02,
            "re-send the period's commands each this much odometry time (0: once a period)",
            low=0.0,
        )
        self.held: list[Command] = []  # the commands of the current period, re-sent each resend_s
        self.sent_ns = 0
        self.policy_name, loaded = self._policy(given=policy is not None)
        chosen = policy or loaded
        assert chosen is not None
        self.policy: Policy = chosen
        self.latest: dict[str, Any] = {}
        self.next_tick_ns: int | None = None
        self.periods = 0  # control periods run
        self.actions = 0  # the policy's actions sent
        self.bad_actions = 0  # the policy's actions refused
        vehicle = self.drive.vehicle
        self._commands = {
            name: _wiring.publisher(self, vehicle, name) for name in self.drive.command_topics()
        }
        odom = self.drive.layout.odom
        # The odometry last: when several messages are ready at once, the others are taken first.
        self._others = [
            _wiring.subscription(self, vehicle, name, self._keeper(name))
            for name in self.drive.observed_topics()
            if name != odom
        ]
        _wiring.subscription(self, vehicle, odom, self._on_odometry)
        self.get_logger().info(
            f"driving a {vehicle} with {self.policy_name} every "
            f"{self.period_ns / 1e9:g} s of odometry; observations {list(self.drive.observations)}"
        )

    def _drive(self) -> Drive:
        read_only = ParameterDescriptor(read_only=True)
        vehicle = self.declare_parameter("vehicle", "polaris", read_only).value
        if vehicle not in ("polaris", "maxxum"):
            raise ParameterError(f"parameter vehicle must be polaris or maxxum, found {vehicle!r}")
        kind: type[PolarisDrive] | type[MaxxumDrive] = PolarisDrive if vehicle == "polaris" else MaxxumDrive
        default_speed = 5.0 if vehicle == "polaris" else 3.0
        observations = self.declare_parameter(
            "observations", list(kind.default_observations), read_only
        ).value
        if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
            raise ParameterError(f"parameter observations must be a list of names, found {observations!r}")
        speed = _wiring.finite_parameter(
            self,
            "max_speed_mps",
            default_speed,
            "the action space's highest speed in m/s",
            valid=lambda v: v > 0.0,
            expected="above 0 m/s",
        )
        pto = self.declare_parameter("pto", True, read_only).value
        if vehicle == "polaris":
            return PolarisDrive(observations, max_speed_mps=speed)
        return MaxxumDrive(observations, max_speed_mps=speed, pto=bool(pto))

    def _duration_ns(self, name: str, default_s: float, description: str, *, low: float) -> int:
        """A read-only duration parameter in s, from `low` to 10 s, in whole ns of odometry time."""
        seconds = _wiring.finite_parameter(
            self,
            name,
            default_s,
            description,
            valid=lambda v: low <= v <= 10.0,
            expected=f"from {low:g} to 10 s",
        )
        return round(seconds * 1e9)

    def _policy(self, *, given: bool) -> tuple[str, Policy | None]:
        """The policy's name and, unless one was `given` to the constructor, the policy it names."""
        read_only = ParameterDescriptor(read_only=True)
        name = str(self.declare_parameter("policy", "", read_only).value)
        algorithm = str(self.declare_parameter("algorithm", "PPO", read_only).value)
        if given:
            return name or "a policy given in code", None
        if not name:
            raise ParameterError("parameter policy is required: module:callable or a Stable-Baselines3 .zip")
        try:
            return name, load_policy(name, algorithm=algorithm)
        except PolicyError as error:
            raise ParameterError(str(error)) from None

    def _keeper(self, name: str) -> Callable[[Any], None]:
        def keep(message: Any) -> None:
            self.latest[name] = message

        return keep

    def _on_odometry(self, message: Any) -> None:
        self.latest[self.drive.layout.odom] = message
        stamp_ns = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        if self.next_tick_ns is None:
            self.next_tick_ns = (stamp_ns // self.period_ns + 1) * self.period_ns
            return
        if stamp_ns < self.next_tick_ns:
            if self.resend_ns and self.held and stamp_ns - self.sent_ns >= self.resend_ns:
                self._publish(self.held, stamp_ns)  # keeps the vehicle's command timeout from running out
            return
        self.next_tick_ns = (stamp_ns // self.period_ns + 1) * self.period_ns
        self.periods += 1
        self.get_logger().debug(f"period {self.periods} at the odometry of {stamp_ns} ns")
        _wiring.take_pending(self._others)  # the newest of each topic, not the executor's next
        self._control(stamp_ns)

    def _publish(self, commands: list[Command], stamp_ns: int) -> None:
        for topic, command in commands:
            self._commands[topic].publish(command)
        self.sent_ns = stamp_ns

    def _control(self, stamp_ns: int) -> None:
        """One control period: engage, or the policy's action, sent as the vehicle's commands."""
        commands = self.drive.engage(self.latest)
        if commands is None:
            observation = self.drive.observe(self.latest)
            try:
                action = self.drive.check_action(self.policy(observation))
            except Exception as error:  # a policy's failure must not stop the node
                self.bad_actions += 1
                self.get_logger().error(
                    f"the policy's action was refused ({self.bad_actions} so far), nothing sent: {error}",
                    throttle_duration_sec=_LOG_PERIOD_S,
                )
                self.held = []  # nothing more is sent: the vehicle's command timeout stops it
                return
            commands = self.drive.commands(action)
            self.held = commands
            self.actions += 1
        else:
            self.get_logger().debug(f"engaging: {[topic for topic, _ in commands]}")
            self.held = self.drive.commands(np.zeros(self.drive.action_space.shape))
        self._publish(commands, stamp_ns)


def main(argv: Sequence[str] | None = None) -> int:
    """Run policy_driver until SIGINT or SIGTERM."""
    return _wiring.run(PolicyDriver, argv)


if __name__ == "__main__":
    sys.exit(main())
