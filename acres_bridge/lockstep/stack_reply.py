"""Waiting for a real-time stack's answer to a lockstep request, in the stepping code that drives it.

A stack runs on simulated time: after each request it computes, then publishes its commands. The
stepper (the scenario runner, the test kit's Sim) waits for them before it sends the next request,
so that they apply from that request's first step, as a stack on the vehicle answers in time.
``wait_for_reply`` spins until more commands than `seen` have come (at most `timeout_s`), then
takes those already on their way: the answer to one request may be several messages (a speed and
a steering command, a few timer ticks), and a straggler taken later would pass for the answer to
the next request, letting simulated time run ahead of the stack.

``StackReplies`` is that wait over a run of requests. A stack that answered each of the last
STEADY requests answers every request; if its answer is late, the machine is busy, so it is
waited for up to PATIENT_S. Any other stack (one that commands every other request, or has gone
quiet) is waited for `timeout_s` at most, so a stack that does not answer each request costs that
much a request and no more.

A stack that declares its command rates (topic -> Hz, StackPace) is stepped to each tick of its
timers and waited for by count instead: ``PacedReplies`` spins after each request until the stack
has sent on each declared topic what its timer owes by the request's last step, at most PATIENT_S,
and raises StackBehindError naming the shortfall when it has not. A 50 Hz stack then sends at
50 Hz of simulated time, each command computed at its tick and applied from the next step.

Both waits end only once the bridge has taken the newest command the stepper saw on each topic
(``BridgeTally``, told on /_acres/commands_taken: acres_bridge.ingest.commands_taken), at most
BRIDGE_TAKES_S: the stack's message reaches the stepper and the bridge on two paths, and a
command the bridge took after the next request was sent would apply a request late.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from acres_interfaces.msg import CommandTaken
from rclpy.executors import Executor
from rclpy.node import Node

from acres_bridge.errors import AcresBridgeError
from acres_bridge.ingest.commands_taken import COMMANDS_TAKEN, COMMANDS_TAKEN_QOS
from acres_bridge.lockstep.stack_pace import Shortfall, StackPace

__all__ = [
    "BRIDGE_TAKES_S",
    "DRAIN_S",
    "FIRST_MESSAGE_S",
    "PATIENT_S",
    "STEADY",
    "BridgeTally",
    "PacedReplies",
    "StackBehindError",
    "StackReplies",
    "wait_for_reply",
]

DRAIN_S: Final = 0.005  # a spin that takes no command for this long ends the stack's answer
PATIENT_S: Final = 30.0  # how long a stack that answers every request may take to answer one
FIRST_MESSAGE_S: Final = 0.2  # after each tick, how long a declared topic's first message is awaited
STEADY: Final = 8  # answers in a row that show a stack answers every request
BRIDGE_TAKES_S: Final = 2.0  # how long the bridge may take to take a command the stepper saw


class BridgeTally:
    """The stack's commands the stepper saw beside those the bridge has taken, per topic: the
    newest DDS source timestamp of each (a stack's timestamps rise from message to message)."""

    def __init__(self, node: Node) -> None:
        self.seen: dict[str, int] = {}
        self.taken: dict[str, int] = {}
        self.unconfirmed = 0  # waits that ended before the bridge had taken what the stepper saw
        self._subscription = node.create_subscription(
            CommandTaken, COMMANDS_TAKEN, self._on_taken, COMMANDS_TAKEN_QOS
        )

    def saw(self, topic: str, info: Mapping[str, Any]) -> None:
        """The stepper's reader of `topic` got a message (rclpy's message info)."""
        stamp = int(info.get("source_timestamp", 0))
        if stamp > self.seen.get(topic, 0):
            self.seen[topic] = stamp

    def holds(self) -> bool:
        """Whether the bridge has taken, on every topic, the newest command the stepper saw."""
        return all(self.taken.get(topic, 0) >= stamp for topic, stamp in self.seen.items())

    def wait(self, executor: Executor, limit_s: float = BRIDGE_TAKES_S) -> bool:
        """Spin until holds() (at most `limit_s`, never more than BRIDGE_TAKES_S); False, and
        counted in `unconfirmed`, when the bridge has not taken them by then (a best-effort
        message lost to it, or one sent before its reader matched the stack)."""
        deadline = time.monotonic() + max(0.0, min(BRIDGE_TAKES_S, limit_s))
        while not self.holds():
            if time.monotonic() >= deadline:
                self.unconfirmed += 1
                return False
            executor.spin_once(timeout_sec=0.01)
        return True

    def _on_taken(self, message: CommandTaken) -> None:
        stamp = int(message.source_timestamp_ns)
        if stamp > self.taken.get(message.topic, 0):
            self.taken[message.topic] = stamp


def wait_for_reply(executor: Executor, count: Callable[[], int], seen: int, timeout_s: float) -> bool:
    """Spin `executor` until ``count()`` exceeds `seen` (at most `timeout_s` of wall-clock time),
    then until a spin of DRAIN_S brings no more; True when the stack answered."""
    deadline = time.monotonic() + timeout_s
    while count() <= seen and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.01)
    if count() <= seen:
        return False
    _drain(executor, count)
    return True


def _drain(executor: Executor, count: Callable[[], int]) -> None:
    """Spin until a spin of DRAIN_S brings no more commands: those already on their way."""
    while True:
        before = count()
        executor.spin_once(timeout_sec=DRAIN_S)
        if count() == before:
            return


class StackReplies:
    """The wait for a stack's answer after each request of a run, patient with a steady stack."""

    def __init__(
        self,
        executor: Executor,
        count: Callable[[], int],
        timeout_s: float,
        tally: BridgeTally | None = None,
    ) -> None:
        self._executor = executor
        self._count = count
        self.timeout_s = timeout_s
        self.tally = tally
        self.streak = 0  # requests answered in a row

    def wait(self, seen: int, limit_s: float = PATIENT_S) -> bool:
        """Wait for the answer to the request just made (`seen`: the commands counted before it),
        at most `limit_s`; True when the stack answered."""
        bound = max(self.timeout_s, PATIENT_S) if self.streak >= STEADY else self.timeout_s
        answered = wait_for_reply(self._executor, self._count, seen, max(0.0, min(bound, limit_s)))
        self.streak = self.streak + 1 if answered else 0
        if answered and self.tally is not None:
            self.tally.wait(self._executor)
        return answered


class StackBehindError(AcresBridgeError):
    """Raised when a stack has not sent, within the stepper's patience, the commands its declared
    rates owe by the simulated time run: the message names each topic, owed and sent."""

    def __init__(self, shortfalls: list[Shortfall], waited_s: float) -> None:
        self.shortfalls = shortfalls
        super().__init__(
            "the stack fell behind: "
            + "; ".join(str(s) for s in shortfalls)
            + f" (waited {waited_s:.1f} s of wall-clock time; a stack keeps a declared rate only "
            "with its timers on simulated time, use_sim_time, made before its first clock)"
        )


class PacedReplies:
    """The wait after each request for what a stack with declared rates owes (see the module)."""

    def __init__(
        self,
        executor: Executor,
        pace: StackPace,
        count: Callable[[], int],
        tally: BridgeTally | None = None,
    ) -> None:
        self._executor = executor
        self.pace = pace
        self._count = count  # every command of the stack, declared topic or not
        self.tally = tally

    def wait(self, step: int, limit_s: float = PATIENT_S) -> None:
        """Spin until no declared topic is behind at step `step` (at most `limit_s`, never more
        than PATIENT_S) and, while a declared topic has not started, FIRST_MESSAGE_S for its first
        message (the tick a stack starts commanding at is then awaited too, on a busy machine);
        then take the commands already on their way (a tick's other topics), and wait until the
        bridge holds them (BridgeTally). StackBehindError when the stack is still behind."""
        bound = max(0.0, min(PATIENT_S, limit_s))
        started = time.monotonic()
        first_until = started + min(bound, FIRST_MESSAGE_S)
        behind = self.pace.behind(step)
        while (behind and time.monotonic() - started < bound) or (
            self.pace.unstarted() and time.monotonic() < first_until
        ):
            self._executor.spin_once(timeout_sec=0.01)
            behind = self.pace.behind(step)
        if behind:
            raise StackBehindError(behind, time.monotonic() - started)
        _drain(self._executor, self._count)
        if self.tally is not None:
            self.tally.wait(self._executor)
