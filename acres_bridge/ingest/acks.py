"""The request's data acknowledged by its readers before the request's last clock goes out.

A stack stepped at its own pace (acres_bridge.lockstep.stack_pace) computes at each tick of its
timer from the data it holds. The bridge publishes a request's last clock after the data of its
steps (acres_bridge.ingest.clock_hold), but publishing is not arriving: DDS orders the samples of
one writer, not those of two, so the clock can reach a stack before the step's odometry, and the
tick then computes from the step before, now and then. With ``acked_clock`` on, the bridge waits,
before that clock, until every reliable reader of every writer that published during the request
has acknowledged its samples: a reader then holds the step's data before its clock moves to the
step, and an executor that takes its ready subscriptions before the timer the clock wakes runs the
tick on them. A reader that does not acknowledge within ACK_TIMEOUT_S is waited for no longer
(counted, named in a warning): a stalled reader slows a request and never stops the session.

Fast DDS acknowledges on its writers' heartbeat, every 3 s by default; the bridge's profile
(acres_bridge/container/fastdds_bridge.xml) makes it 5 ms. With a profile file of the user's, the
user's heartbeat holds, and each wait may last ACK_TIMEOUT_S.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Final

from rclpy.duration import Duration
from rclpy.qos import ReliabilityPolicy

__all__ = ["ACKS", "ACK_TIMEOUT_S", "AckWait"]

ACK_TIMEOUT_S: Final = 0.5


class AckWait:
    """The reliable writers that published while a request ran, and the wait for their readers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = False
        self._writers: dict[int, Any] = {}  # id -> rclpy Publisher
        self.timeouts = 0  # waits that ended with a reader not acknowledging

    def open(self) -> None:
        """A request starts: note each reliable writer from now on."""
        with self._lock:
            self._open = True
            self._writers = {}

    def wrote(self, publisher: Any) -> None:
        """`publisher` has published (a check and no more outside a request)."""
        if not self._open:
            return
        with self._lock:
            if (
                self._open
                and id(publisher) not in self._writers
                and publisher.qos_profile.reliability == ReliabilityPolicy.RELIABLE
            ):
                self._writers[id(publisher)] = publisher

    def wait(self, timeout_s: float = ACK_TIMEOUT_S) -> list[str]:
        """Stop noting, and wait until every noted writer's readers have acknowledged all it
        published (at most `timeout_s` in all); the topics still waiting then."""
        with self._lock:
            self._open = False
            writers, self._writers = list(self._writers.values()), {}
        deadline = time.monotonic() + timeout_s
        late: list[str] = []
        for writer in writers:
            remaining = max(0.0, deadline - time.monotonic())
            if not writer.wait_for_all_acked(Duration(nanoseconds=int(remaining * 1e9))):
                late.append(writer.topic_name)
        if late:
            self.timeouts += 1
        return late

    def abandon(self) -> None:
        with self._lock:
            self._open = False
            self._writers = {}


ACKS = AckWait()  # the process's: every step publisher notes its writes here
