"""In-process hand-over of decoded samples from the ingest node to the subsystem nodes.

Inside one container process the ingest publishes each decoded sample on this bus and every
subscribed node gets the very object, synchronously, without serialisation. A subscriber's
exception is logged and counted; it never reaches the ingest or the other subscribers.
Latched channels (the session, the episode) keep their last sample for late subscribers.
A subscriber that hands samples on to a thread of its own (the perception node) registers a
drain, so that a lockstep step is acknowledged only once that thread has published its data.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["BUS", "BusSubscription", "SampleBus"]

_log = logging.getLogger("acres_bridge.bus")

Callback = Callable[[Any], None]
ProducerWatcher = Callable[[str, bool], None]
Drain = Callable[[float], bool]
T = TypeVar("T")


@dataclass(eq=False)
class BusSubscription:
    """A handle that ends one subscription."""

    bus: SampleBus
    key: str
    callback: Callback
    wants: Callable[[], bool] | None = None  # whether it wants samples now (None: always)

    def close(self) -> None:
        self.bus._unsubscribe(self)


@dataclass
class _Channel:
    subscribers: tuple[BusSubscription, ...] = ()
    producers: int = 0
    latched: bool = False
    last: Any = None
    has_last: bool = False


@dataclass
class SampleBus:
    """Channels by key; any number of subscribers, producers announce themselves."""

    _channels: dict[str, _Channel] = field(default_factory=dict)
    _watchers: list[ProducerWatcher] = field(default_factory=list)
    _drains: list[Drain] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    errors: Counter[str] = field(default_factory=Counter)

    def _channel(self, key: str) -> _Channel:
        channel = self._channels.get(key)
        if channel is None:
            channel = self._channels[key] = _Channel()
        return channel

    def register_producer(self, key: str, *, latched: bool = False) -> None:
        with self._lock:
            channel = self._channel(key)
            channel.producers += 1
            channel.latched = channel.latched or latched
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher(key, True)

    def unregister_producer(self, key: str) -> None:
        with self._lock:
            channel = self._channel(key)
            channel.producers = max(0, channel.producers - 1)
            gone = channel.producers == 0
            if gone:
                channel.has_last, channel.last = False, None
            watchers = list(self._watchers)
        if gone:
            for watcher in watchers:
                watcher(key, False)

    def has_producer(self, key: str) -> bool:
        with self._lock:
            channel = self._channels.get(key)
            return channel is not None and channel.producers > 0

    def _register(self, registry: list[T], entry: T) -> Callable[[], None]:
        """Add entry to one of the bus's lists (watchers, drains); returns the call that removes it."""
        with self._lock:
            registry.append(entry)

        def remove() -> None:
            with self._lock:
                if entry in registry:
                    registry.remove(entry)

        return remove

    def watch_producers(self, watcher: ProducerWatcher) -> Callable[[], None]:
        """Call watcher(key, present) when a producer appears or the last one goes; returns unwatch."""
        return self._register(self._watchers, watcher)

    def add_drain(self, drain: Drain) -> Callable[[], None]:
        """Register drain(timeout_s) -> handled everything in time; returns the call that removes it."""
        return self._register(self._drains, drain)

    def drain(self, timeout_s: float) -> bool:
        """Wait until every registered drain has handled what it was given; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            drains = list(self._drains)
        return all(drain(max(0.0, deadline - time.monotonic())) for drain in drains)

    def subscribe(
        self, key: str, callback: Callback, *, wants: Callable[[], bool] | None = None
    ) -> BusSubscription:
        """Hand each sample of `key` to `callback`; `wants` tells whether the subscriber wants
        samples now (a node whose own topic nobody reads: the simulator need not make them)."""
        subscription = BusSubscription(self, key, callback, wants)
        with self._lock:
            channel = self._channel(key)
            channel.subscribers = (*channel.subscribers, subscription)
            replay = channel.last if channel.latched and channel.has_last else None
            has_replay = channel.latched and channel.has_last
        if has_replay:
            self._deliver(subscription, replay)
        return subscription

    def _unsubscribe(self, subscription: BusSubscription) -> None:
        with self._lock:
            channel = self._channels.get(subscription.key)
            if channel is not None:
                channel.subscribers = tuple(s for s in channel.subscribers if s is not subscription)

    def wanted(self, key: str) -> bool:
        """Whether a subscriber of `key` in this process wants its samples now."""
        channel = self._channels.get(key)
        subscribers = () if channel is None else channel.subscribers
        return any(s.wants is None or s.wants() for s in subscribers)

    def subscriber_count(self, key: str) -> int:
        channel = self._channels.get(key)
        return 0 if channel is None else len(channel.subscribers)

    def publish(self, key: str, sample: Any) -> int:
        """Hand a sample to every subscriber of key, in this thread; returns how many got it."""
        channel = self._channels.get(key)
        if channel is None:
            return 0
        if channel.latched:
            channel.last, channel.has_last = sample, True
        subscribers = channel.subscribers  # a tuple: safe against concurrent (un)subscription
        for subscription in subscribers:
            self._deliver(subscription, sample)
        return len(subscribers)

    def _deliver(self, subscription: BusSubscription, sample: Any) -> None:
        try:
            subscription.callback(sample)
        except Exception:
            self.errors[subscription.key] += 1
            if (
                self.errors[subscription.key] in (1, 10, 100, 1000)
                or self.errors[subscription.key] % 10000 == 0
            ):
                _log.exception(
                    "a subscriber of %s raised (%d times so far)",
                    subscription.key,
                    self.errors[subscription.key],
                )


BUS = SampleBus()
"""The bus of this process."""
