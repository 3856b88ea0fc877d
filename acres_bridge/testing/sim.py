"""Sim: a test's handle on a lockstep simulation through the bridge, judged in simulated time.

    sim = Sim.connect(vehicle="polaris")           # in a launch_testing test: the launched bridge
    sim.wait_for_stack()                            # until the stack under test sends a command
    sim.step(seconds=5.0)
    odom = sim.latest("/vehicle/odom")
    sim.wait_for(lambda s: s.latest("/vehicle/odom").twist.twist.linear.x > 1.0,
                 sim_seconds=10, what="the Polaris moving at 1 m/s")

The pytest fixture ``acres_sim`` (acres_bridge.testing.pytest_plugin) yields one on a session of
its own. Every message of the watched topics arrives before a step returns (SteppingClient), so
what a test sees depends on simulated time alone, never on how fast the machine is; the stack's
commands are recorded as they come, at the simulated time of the last step of the request under
way (they apply from the next one). Waits on the wall clock are bounded and only guard against a
hang: a test that fails says what it awaited and what came instead. With ``stack_rates`` (command
topic -> Hz of the stack's timers on simulated time), each chunk ends at the next tick of a
declared timer and the step waits until the stack has sent what its timers owe
(acres_bridge.lockstep.stack_pace), raising SimTimeoutError when it falls behind.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Self

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy
from rclpy.signals import SignalHandlerOptions

from acres_bridge.lockstep import SteppingClient
from acres_bridge.lockstep.stack_graph import StackNotOnSimTimeError, wait_for_paced_stack
from acres_bridge.lockstep.stack_pace import StackPace
from acres_bridge.lockstep.stack_reply import (
    BridgeTally,
    PacedReplies,
    StackBehindError,
    StackReplies,
    wait_for_reply,
)
from acres_bridge.msg_profiles import Direction, load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.scenario.criteria import GROUND_TRUTH

__all__ = ["DEFAULT_TOPICS", "PHYSICS_HZ", "Sim", "SimTimeoutError"]

PHYSICS_HZ: Final = 120
# What a test of a stack usually reads, watched without loss: the odometry the stack sees, the
# ground truth the criteria judge, and the vehicle's reports.
DEFAULT_TOPICS: Final = {
    "polaris": (
        "/vehicle/odom",
        GROUND_TRUTH["polaris"],
        "/vehicle/steering/report",
        "/vehicle/throttle/report",
        "/vehicle/brake/report",
        "/vehicle/ulc/report",
        "/vehicle/dbw_enabled",
        "/vehicle/gear/report",
    ),
    "maxxum": ("odom", GROUND_TRUTH["maxxum"], "implement/state", "steering_angle"),
}
_COMMAND_DEPTH: Final = 1000
_NS_PER_S: Final = 1_000_000_000


class SimTimeoutError(AssertionError):
    """A wait of a Sim that did not come true: says what was awaited and what came."""


class Sim:
    """Steps a lockstep session through /step_simulation and keeps every message of its topics
    and of the stack's commands with the simulated time they belong to; see the module."""

    def __init__(
        self,
        node: Node,
        *,
        vehicle: str = "polaris",
        topics: Sequence[str] | None = None,
        namespace: str = "",
        chunk_steps: int = 6,
        stack_reply_s: float = 2.0,
        timeout_s: float = 60.0,
        stack_rates: Mapping[str, float] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.node = node
        self.vehicle = vehicle
        self.namespace = namespace
        self.chunk_steps = chunk_steps
        self._counted_at = 0  # the step a command is counted at: the last of the chunk under way
        self.timeout_s = timeout_s
        self.steps = 0  # physics steps run through this Sim
        self._on_close = on_close
        table = load_profiles()
        watched = tuple(dict.fromkeys(topics if topics is not None else DEFAULT_TOPICS[vehicle]))
        self._log: dict[str, list[tuple[float, Any]]] = {}
        self._executor = SingleThreadedExecutor(context=node.context)
        self._client = SteppingClient(
            node,
            watched,
            vehicle=vehicle,
            namespace=namespace,
            chunk_steps=chunk_steps,
            timeout_s=timeout_s,
            executor=self._executor,
        )
        # resolved topic -> the msg_profiles name (the judges'), in the order the client resolved them
        self._names = dict(zip(self._client.topics, watched, strict=True))
        self.commands_seen = 0
        self._tally = BridgeTally(node)  # what the bridge has taken of the commands seen here
        self._replies = StackReplies(self._executor, lambda: self.commands_seen, stack_reply_s, self._tally)
        self._command_topics: list[str] = []
        for spec in table.table(vehicle):
            if spec.direction is not Direction.SUBSCRIBE or spec.qos is None:
                continue
            topic = resolve_name(spec.ros_name, namespace)
            qos = spec.qos.to_rclpy()
            qos.history, qos.depth = HistoryPolicy.KEEP_LAST, _COMMAND_DEPTH
            node.create_subscription(spec.message_class(), topic, self._command_keeper(topic, spec.name), qos)
            self._names[topic] = spec.name
            self._command_topics.append(topic)
        rates = {self._command_name(t): hz for t, hz in (stack_rates or {}).items()}
        self._pace = StackPace(rates, PHYSICS_HZ)
        self._paced = PacedReplies(self._executor, self._pace, lambda: self.commands_seen, self._tally)

    @classmethod
    def connect(
        cls,
        *,
        vehicle: str = "polaris",
        domain_id: int | None = None,
        topics: Sequence[str] | None = None,
        **options: Any,
    ) -> Self:
        """A Sim with a node of its own in `domain_id` (default: ROS_DOMAIN_ID, as the launched
        processes have it), for a launch_testing test; close() ends the node."""
        context = Context()
        rclpy.init(
            args=[], context=context, domain_id=domain_id, signal_handler_options=SignalHandlerOptions.NO
        )
        node = Node("acres_test_sim", context=context)

        def end() -> None:
            with contextlib.suppress(Exception):
                node.destroy_node()
            context.try_shutdown()

        return cls(node, vehicle=vehicle, topics=topics, on_close=end, **options)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._client.destroy()
        self._executor.shutdown()
        if self._on_close is not None:
            self._on_close()
            self._on_close = None

    @property
    def stack_reply_s(self) -> float:
        """How long (wall-clock s) a step waits for the stack's answer after each chunk."""
        return self._replies.timeout_s

    @stack_reply_s.setter
    def stack_reply_s(self, seconds: float) -> None:
        self._replies.timeout_s = seconds

    # ---- time ----------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        """The simulated time run through this Sim, in s."""
        return self.steps / PHYSICS_HZ

    def step(self, seconds: float | None = None, *, steps: int | None = None) -> None:
        """Run `seconds` of simulated time (or `steps` physics steps), a chunk at a time; after each
        chunk, once the stack has commanded, wait (at most stack_reply_s) for its next command, as
        a stack on the vehicle answers in real time."""
        if (seconds is None) == (steps is None):
            raise ValueError("give seconds or steps")
        total = steps if steps is not None else round(float(seconds or 0.0) * PHYSICS_HZ)
        if total < 0:
            raise ValueError(f"cannot step back in time: {total} steps")
        done = 0
        while done < total:
            chunk = self._pace.request_steps(self.steps, min(self.chunk_steps, total - done))
            before = self.commands_seen
            self._counted_at = self.steps + chunk
            batch = self._client.step(chunk)
            for entry in batch.steps:
                time_s = entry.step / PHYSICS_HZ
                for topic, messages in entry.messages.items():
                    self._log.setdefault(topic, []).extend((time_s, m) for m in messages)
            self.steps += len(batch.steps)
            done += len(batch.steps)
            if self._pace.rates:
                self._wait_for_pace()
            elif self.commands_seen and self.stack_reply_s > 0:
                self._replies.wait(before)

    def _wait_for_pace(self) -> None:
        """Until the stack has sent what its declared rates owe by now; SimTimeoutError otherwise."""
        try:
            self._paced.wait(self.steps)
        except StackBehindError as behind:
            raise SimTimeoutError(f"{behind}{self.stack_logs()}") from None

    def wait_for_stack(self, timeout_s: float = 30.0) -> None:
        """Step a chunk at a time until the stack under test sends its first command (it may take
        a while to discover the bridge); SimTimeoutError after `timeout_s` of wall-clock time.
        With stack rates, first wait without stepping until the declared topics' publishers show
        and subscribe /clock (acres_bridge.lockstep.stack_graph), so that the stack's timers start
        with simulated time; SimTimeoutError when one does not subscribe /clock."""
        deadline = time.monotonic() + timeout_s
        if self._pace.rates:
            declared = [t for t in self._command_topics if self._names[t] in self._pace.rates]
            try:
                wait_for_paced_stack(self.node, declared, timeout_s)
            except StackNotOnSimTimeError as error:
                raise SimTimeoutError(f"{error}{self.stack_logs()}") from None
        while not self.commands_seen:
            if time.monotonic() > deadline:
                publishers = {t: self.node.count_publishers(t) for t in self._command_topics}
                raise SimTimeoutError(
                    f"the stack sent no command within {timeout_s:g} s (at {self.now:.2f} s simulated); "
                    f"publishers of the command topics: {publishers}{self.stack_logs()}"
                )
            self.step(steps=self.chunk_steps)
            if not self._pace.rates:
                wait_for_reply(self._executor, lambda: self.commands_seen, 0, min(0.5, self.stack_reply_s))

    def stack_logs(self) -> str:
        """The last lines of each stack's log, for an error that blames the stack ("" here: a Sim
        of a launch_testing test does not know its stacks; SessionSim does)."""
        return ""

    def wait_for(
        self, predicate: Callable[[Sim], object], *, sim_seconds: float, what: str = "the condition"
    ) -> float:
        """Step until ``predicate(sim)`` holds, at most `sim_seconds` of simulated time; the time
        it held at. SimTimeoutError (an AssertionError) names `what` and the latest messages otherwise."""
        until = self.now + sim_seconds
        while True:
            if predicate(self):
                return self.now
            if self.now >= until - 1e-12:
                raise SimTimeoutError(
                    f"{what}: not within {sim_seconds:g} s of simulated time; {self.describe()}"
                )
            self.step(steps=min(self.chunk_steps, max(1, round((until - self.now) * PHYSICS_HZ))))

    # ---- messages ------------------------------------------------------------------------------

    def messages(self, topic: str, since: float | None = None) -> list[Any]:
        """The messages of `topic` (a watched topic or a command topic, as a user names it), those
        at or after simulated time `since` if given."""
        entries = self._entries(topic)
        return [m for t, m in entries if since is None or t >= since - 1e-12]

    def timed(self, topic: str) -> list[tuple[float, Any]]:
        """The (simulated time, message) pairs of `topic`."""
        return list(self._entries(topic))

    def latest(self, topic: str) -> Any:
        """The last message of `topic`; SimTimeoutError naming the topic when none has come."""
        entries = self._entries(topic)
        if not entries:
            raise SimTimeoutError(f"no message on {topic} in {self.now:.2f} s of simulated time")
        return entries[-1][1]

    def table_name(self, topic: str) -> str:
        """The msg_profiles name of a watched or command topic (what the scenario criteria read)."""
        return self._names[self._resolve(topic)]

    def describe(self) -> str:
        """What came: each topic's count and its last message's time."""
        parts = [
            f"{topic}: {len(entries)} messages, last at {entries[-1][0]:.2f} s"
            if entries
            else f"{topic}: none"
            for topic, entries in sorted(self._log.items())
        ]
        return "; ".join(parts) or "no messages"

    def _entries(self, topic: str) -> list[tuple[float, Any]]:
        return self._log.get(self._resolve(topic), [])

    def _resolve(self, topic: str) -> str:
        resolved = resolve_name(topic.lstrip("/") if not topic.startswith("/") else topic, self.namespace)
        if resolved not in self._names:
            raise KeyError(f"{topic} is not watched by this Sim; it watches {sorted(self._names)}")
        return resolved

    def _command_name(self, topic: str) -> str:
        """The msg_profiles name of the command topic `topic`; ValueError for any other topic."""
        resolved = resolve_name(topic.lstrip("/") if not topic.startswith("/") else topic, self.namespace)
        if resolved not in self._command_topics:
            commands = [self._names[t] for t in self._command_topics]
            raise ValueError(f"stack_rates: {topic} is not a command topic of the {self.vehicle}: {commands}")
        return self._names[resolved]

    def _command_keeper(self, topic: str, name: str) -> Callable[..., None]:  # (message, info)
        def keep(message: Any, info: Mapping[str, Any]) -> None:
            self.commands_seen += 1
            self._tally.saw(topic, info)
            self._pace.sent(name, self._counted_at)
            self._log.setdefault(topic, []).append((self._counted_at / PHYSICS_HZ, message))

        return keep
