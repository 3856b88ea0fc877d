"""Viewers' requests, from the WebSocket server's threads to the bridge's executor: pure, no ROS.

The server calls back on its own threads; the live view applies each request on the executor. In
between, requests wait here, bounded so that no viewer can grow the bridge's memory:

- a subscription (subscribe or unsubscribe of one viewer to one channel) is never dropped: each
  (channel, viewer) keeps only its latest wish, so a burst of any length costs one entry per pair
  the viewers hold, and the executor applies the state the viewer last asked for;
- a viewer's own channels (advertise, unadvertise) and messages (client publish) keep their order
  in one queue of at most ``max_waiting``; beyond that they are refused, counted, and say why;
- refusals seen on the server's threads (a message too large) are counted by kind, never dropped.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

__all__ = ["Subscription", "Taken", "ViewerRequests"]


@dataclass(frozen=True)
class Subscription:
    """A viewer's latest wish for a channel: subscribed (`wanted`) or not."""

    topic: str
    client: int
    wanted: bool


@dataclass(frozen=True)
class Taken:
    """What the executor applies in one pass: the subscriptions (in the order of their last
    change), the ordered client requests, and the refusals by kind (count, the last reason)."""

    subscriptions: tuple[Subscription, ...]
    ordered: tuple[tuple[Any, ...], ...]
    refusals: dict[str, tuple[int, str]]


class ViewerRequests:
    """The requests waiting for the executor (thread-safe)."""

    def __init__(self, max_waiting: int) -> None:
        self.max_waiting = max_waiting
        self._lock = threading.Lock()
        self._subscriptions: dict[tuple[str, int], bool] = {}
        self._ordered: deque[tuple[Any, ...]] = deque()
        self._refusals: Counter[str] = Counter()
        self._reasons: dict[str, str] = {}

    def subscription(self, topic: str, client: int, *, wanted: bool) -> None:
        """A viewer subscribed to (`wanted`) or unsubscribed from a channel: replaces its earlier wish."""
        key = (topic, client)
        with self._lock:
            self._subscriptions.pop(key, None)  # to the end: applied in the order of the last change
            self._subscriptions[key] = wanted

    def ordered(self, item: tuple[Any, ...], kind: str) -> bool:
        """Queue a request whose order counts (advertise, unadvertise, a message); False when the
        queue is full: then it is refused under `kind` and counted."""
        with self._lock:
            if len(self._ordered) < self.max_waiting:
                self._ordered.append(item)
                return True
            self._refuse(kind, f"more than {self.max_waiting} viewer requests waiting")
            return False

    def refuse(self, kind: str, reason: str) -> None:
        """Count a refusal made on the server's thread, for the executor to report."""
        with self._lock:
            self._refuse(kind, reason)

    def _refuse(self, kind: str, reason: str) -> None:
        self._refusals[kind] += 1
        self._reasons[kind] = reason

    def take(self) -> Taken:
        """Everything waiting, emptied in one step."""
        with self._lock:
            subscriptions = tuple(Subscription(t, c, w) for (t, c), w in self._subscriptions.items())
            ordered = tuple(self._ordered)
            refusals = {kind: (n, self._reasons[kind]) for kind, n in self._refusals.items()}
            self._subscriptions.clear()
            self._ordered.clear()
            self._refusals.clear()
            self._reasons.clear()
        return Taken(subscriptions, ordered, refusals)

    def __len__(self) -> int:
        with self._lock:
            return len(self._subscriptions) + len(self._ordered) + len(self._refusals)
