"""The last clock of a lockstep request goes out after the data of its steps.

The simulator sends a step's clock on its control connection and the step's sensor data and
reports on others, so the bridge's readers may hand a step's /clock to DDS before the odometry of
the same step. A stack whose timer fires on the request's last clock (stepped at its own pace,
each request ends on a tick: acres_bridge.lockstep.stack_pace) would then compute from the step
before, now and then. While a step request runs, ClockHold keeps the newest clock of each agent
and publishes the one before when a newer comes, so /clock still runs on through a long request;
once every sample of the request's steps is published, the held clocks go out, just before the
request is answered. Outside requests (a session running free) a clock goes out as it comes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from acres_bridge.wire import Clock

__all__ = ["ClockHold"]


class ClockHold:
    """Holds the newest clock of each agent while a request runs; see the module."""

    def __init__(self, publish: Callable[[int, Clock], None]) -> None:
        self._publish = publish
        self._lock = threading.Lock()
        self._held: dict[int, Clock] | None = None  # agent -> its newest clock; None: not holding

    def hold(self) -> None:
        """Keep each agent's newest clock from now until release()."""
        with self._lock:
            self._held = {}

    def take(self, agent: int, clock: Clock) -> bool:
        """Keep `clock` if holding (publishing the agent's clock it replaces); False when it is to
        be published now."""
        with self._lock:
            if self._held is None:
                return False
            before = self._held.get(agent)
            self._held[agent] = clock
        if before is not None:
            self._publish(agent, before)
        return True

    def release(self) -> int:
        """Stop holding and publish the held clocks; how many."""
        with self._lock:
            held, self._held = self._held or {}, None
        for agent, clock in sorted(held.items()):
            self._publish(agent, clock)
        return len(held)
