"""Waiting for a real-time stack's answer to a lockstep request, in the stepping code that drives it.

A stack runs on simulated time: after each request it computes, then publishes its commands. The
stepper (the scenario runner, the test kit's Sim) waits for them before it sends the next request,
so that they apply from that request's first step, as a stack on the vehicle answers in time.
``wait_for_reply`` spins until more commands than `seen` have come (at most `timeout_s`), then
takes those already on their way: the answer to one request may be several messages (a speed and
a steering command, a few timer ticks), and a straggler taken later would pass for the answer to
the next request, letting simulated time run ahead of the stack.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from rclpy.executors import Executor

__all__ = ["DRAIN_S", "wait_for_reply"]

DRAIN_S: Final = 0.005  # a spin that takes no command for this long ends the stack's answer


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
