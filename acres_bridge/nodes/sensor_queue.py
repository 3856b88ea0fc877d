"""A bounded hand-over of large frames from the ingest's I/O thread to a publishing thread.

Each sensor has room for `capacity` frames waiting. When a sensor's room is full, `put` either
drops the new frame and counts it (free run: the simulator does not wait for us, and the
I/O thread must go on with the INS and the clock) or waits for room (lockstep: the simulator
waits for the acknowledged step, so nothing is dropped). `join` waits until every frame put so
far has been handled, which is how a lockstep step is acknowledged only after its clouds and
images are published.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["SensorQueue"]

T = TypeVar("T")


class SensorQueue(Generic[T]):
    """Frames of several sensors (keys) in arrival order, at most `capacity` waiting per sensor."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, found {capacity}")
        self.capacity = capacity
        self._items: deque[tuple[Hashable, T]] = deque()
        self._waiting: Counter[Hashable] = Counter()
        self._unfinished = 0
        self._closed = False
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.dropped: Counter[Hashable] = Counter()
        self.handled: Counter[Hashable] = Counter()

    def put(self, key: Hashable, item: T, *, wait_s: float = 0.0) -> bool:
        """Queue an item of sensor `key`; False (and counted in `dropped`) when there was no room.

        With wait_s > 0 it waits up to that long for room before dropping.
        """
        deadline = time.monotonic() + wait_s
        with self._changed:
            while self._waiting[key] >= self.capacity and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0.0:
                    self.dropped[key] += 1
                    return False
                self._changed.wait(remaining)
            if self._closed:
                self.dropped[key] += 1
                return False
            self._items.append((key, item))
            self._waiting[key] += 1
            self._unfinished += 1
            self._changed.notify_all()
            return True

    def get(self, timeout_s: float) -> tuple[Hashable, T] | None:
        """The oldest item, or None after timeout_s or once closed; call `done` after handling it."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not self._items:
                remaining = deadline - time.monotonic()
                if self._closed or remaining <= 0.0:
                    return None
                self._changed.wait(remaining)
            key, item = self._items.popleft()
            self._waiting[key] -= 1
            self._changed.notify_all()
            return key, item

    def done(self, key: Hashable) -> None:
        """One item taken with `get` has been handled (published or given up)."""
        with self._changed:
            self._unfinished -= 1
            self.handled[key] += 1
            self._changed.notify_all()

    def join(self, timeout_s: float) -> bool:
        """Wait until every item put so far is handled; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while self._unfinished > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0.0:
                    return False
                self._changed.wait(remaining)
            return True

    def waiting(self, key: Hashable) -> int:
        with self._lock:
            return self._waiting[key]

    def close(self) -> None:
        """Wake every waiter; later puts drop, `get` returns None once the queue is empty."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
