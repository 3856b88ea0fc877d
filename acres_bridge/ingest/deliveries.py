"""The delivery report of a step request: which topic published which step's messages.

Acknowledged lockstep answers a request once its messages are published; a client in another
process still has to know what to wait for. While a request runs, every publisher of a subsystem
node records the physics step of each message it publishes here (`DeliveryLedger.record`); when the
request's data is all published, the ingest closes the request and publishes the report
(acres_interfaces/msg/StepDelivery) on the hidden topic STEP_DELIVERIES before it answers.
Outside a request nothing is kept: free run costs one check per message and no memory.
The report lists every topic with a publisher in the process, the silent ones with no steps, so
a client can tell a topic this bridge does not publish from one that had nothing to say.
"""

from __future__ import annotations

import threading
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Final

from acres_interfaces.msg import StepDelivery as StepDeliveryMessage
from acres_interfaces.msg import TopicDelivery

__all__ = [
    "DELIVERIES_DEPTH",
    "LEDGER",
    "STEP_DELIVERIES",
    "DeliveryLedger",
    "StepDelivery",
    "delivery_message",
]

STEP_DELIVERIES: Final = "/_acres/step_deliveries"  # hidden (leading underscore), in the root namespace
DELIVERIES_DEPTH: Final = 100  # reports kept for a slow reader: one per request


@dataclass(frozen=True)
class StepDelivery:
    """What one request published: the step of every message, per fully qualified topic."""

    first_step: int
    last_step: int
    steps: dict[str, array[int]]  # uint64 ("Q"): 8 bytes a message, however long the request


class DeliveryLedger:
    """The publications of the running step request, from any thread of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recording = False
        self._steps: dict[str, array[int]] = {}
        self._topics: Counter[str] = Counter()  # publishers per topic in this process

    def register(self, topic: str) -> None:
        """A publisher of `topic` exists in this process (listed in every report from now on)."""
        with self._lock:
            self._topics[topic] += 1

    def unregister(self, topic: str) -> None:
        with self._lock:
            self._topics[topic] -= 1
            if self._topics[topic] <= 0:
                del self._topics[topic]

    def record(self, topic: str, step: int) -> None:
        """A message of `step` was published on `topic` (kept only while a request runs)."""
        if not self._recording:
            return
        with self._lock:
            if self._recording:
                steps = self._steps.get(topic)
                if steps is None:
                    steps = self._steps[topic] = array("Q")
                steps.append(step)

    def open(self) -> None:
        """A request starts: record from now on, with nothing kept from before."""
        with self._lock:
            self._recording = True
            self._steps = {}

    def close(self, first_step: int, last_step: int) -> StepDelivery:
        """The request's data is published: what it published, and stop recording."""
        with self._lock:
            self._recording = False
            steps, self._steps = self._steps, {}
            for topic in self._topics:
                steps.setdefault(topic, array("Q"))
        return StepDelivery(first_step, last_step, steps)

    def abandon(self) -> None:
        """The request failed: stop recording and forget it."""
        with self._lock:
            self._recording = False
            self._steps = {}


LEDGER = DeliveryLedger()  # the process's ledger: every subsystem node records into it


def delivery_message(delivery: StepDelivery) -> StepDeliveryMessage:
    """The acres_interfaces/msg/StepDelivery of a report, topics in name order."""
    return StepDeliveryMessage(
        first_step=delivery.first_step,
        last_step=delivery.last_step,
        topics=[TopicDelivery(topic=t, steps=delivery.steps[t]) for t in sorted(delivery.steps)],
    )
