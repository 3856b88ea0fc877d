"""Taps on the bridge's own publishers: an in-process observer of every message a topic publishes.

A node of the bridge that shows the bridge's topics (the live view) would otherwise subscribe to
them over DDS in the same process: a second copy of each cloud and image through the middleware
and one more executor callback per message. A tap is called with the message object right after
it is published, in the publisher's thread; it must be quick and must not raise.

``TAPS`` is the process's registry. ``StepPublisher`` registers its topic as published here and
calls the taps of its topic on each publish; a topic without taps costs one dict lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["TAPS", "PublishTaps", "Tap"]

Tap = Callable[[Any], None]


class PublishTaps:
    """Which topics are published in this process, and the taps on each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._published: dict[str, int] = {}  # topic -> publishers of it here
        self.taps: dict[str, tuple[Tap, ...]] = {}  # read without the lock: replaced, never changed

    def register(self, topic: str) -> None:
        with self._lock:
            self._published[topic] = self._published.get(topic, 0) + 1

    def unregister(self, topic: str) -> None:
        with self._lock:
            left = self._published.get(topic, 0) - 1
            if left > 0:
                self._published[topic] = left
            else:
                self._published.pop(topic, None)

    def published_here(self, topic: str) -> bool:
        """Whether a publisher of `topic` in this process calls its taps."""
        with self._lock:
            return topic in self._published

    def add(self, topic: str, tap: Tap) -> None:
        with self._lock:
            self.taps[topic] = (*self.taps.get(topic, ()), tap)

    def remove(self, topic: str, tap: Tap) -> None:
        with self._lock:
            left = tuple(t for t in self.taps.get(topic, ()) if t is not tap)
            if left:
                self.taps[topic] = left
            else:
                self.taps.pop(topic, None)


TAPS = PublishTaps()
