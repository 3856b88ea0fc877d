"""The clock of a lockstep request goes out after the data of its steps.

The simulator sends a step's clock on its control connection and the step's sensor data and
reports on others, so the bridge's readers may hand a step's /clock to DDS before the odometry of
the same step. A stack whose timer fires on that clock would then compute from the step before,
now and then, and two runs would differ. While a step request runs, ClockHold keeps the clocks the
simulator sends; once every sample of the request's steps is published, the held clocks are
published in order, just before the request is answered. Outside requests (a session running
free) a clock goes out as it comes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from acres_bridge.wire import Clock

__all__ = ["ClockHold"]


class ClockHold:
    """Holds the (agent, clock) samples that come while a request runs; see the module."""

    def __init__(self, publish: Callable[[int, Clock], None]) -> None:
        self._publish = publish
        self._lock = threading.Lock()
        self._held: list[tuple[int, Clock]] | None = None  # None: not holding

    def hold(self) -> None:
        """Keep the clocks that come from now until release()."""
        with self._lock:
            self._held = []

    def take(self, agent: int, clock: Clock) -> bool:
        """Keep `clock` if holding; False when it is to be published now."""
        with self._lock:
            if self._held is None:
                return False
            self._held.append((agent, clock))
            return True

    def release(self) -> int:
        """Stop holding and publish the held clocks in the order they came; how many."""
        with self._lock:
            held, self._held = self._held or [], None
        for agent, clock in held:
            self._publish(agent, clock)
        return len(held)
