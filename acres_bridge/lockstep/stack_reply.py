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
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from rclpy.executors import Executor

__all__ = ["DRAIN_S", "PATIENT_S", "STEADY", "StackReplies", "wait_for_reply"]

DRAIN_S: Final = 0.005  # a spin that takes no command for this long ends the stack's answer
PATIENT_S: Final = 30.0  # how long a stack that answers every request may take to answer one
STEADY: Final = 8  # answers in a row that show a stack answers every request


def wait_for_reply(executor: Executor, count: Callable[[], int], seen: int, timeout_s: float) -> bool:
    """Spin `executor` until ``count()`` exceeds `seen` (at most `timeout_s` of wall-clock time),
    then until a spin of DRAIN_S brings no more; True when the stack answered."""
    deadline = time.monotonic() + timeout_s
    while count() <= seen and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.01)
    if count() <= seen:
        return False
    while True:
        before = count()
        executor.spin_once(timeout_sec=DRAIN_S)
        if count() == before:
            return True


class StackReplies:
    """The wait for a stack's answer after each request of a run, patient with a steady stack."""

    def __init__(self, executor: Executor, count: Callable[[], int], timeout_s: float) -> None:
        self._executor = executor
        self._count = count
        self.timeout_s = timeout_s
        self.streak = 0  # requests answered in a row

    def wait(self, seen: int, limit_s: float = PATIENT_S) -> bool:
        """Wait for the answer to the request just made (`seen`: the commands counted before it),
        at most `limit_s`; True when the stack answered."""
        bound = max(self.timeout_s, PATIENT_S) if self.streak >= STEADY else self.timeout_s
        answered = wait_for_reply(self._executor, self._count, seen, max(0.0, min(bound, limit_s)))
        self.streak = self.streak + 1 if answered else 0
        return answered
