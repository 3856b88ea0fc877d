"""A command topic that takes reliable and best-effort publishers, and acknowledges the reliable.

The spec subscribes to the command topics with the profile "vehicle" (reliable) and calls a
best-effort publisher compatible too; under DDS a reliable reader matches no best-effort writer,
and a best-effort reader acknowledges nothing, so a reliable publisher could no longer wait for
the bridge to hold its command (`wait_for_all_acked`) before it asks for a lockstep step. So each
command topic has two readers: one reliable (the profile), one best-effort. A message of a
reliable publisher reaches both and is handled once: a copy with the source timestamp and the
publication sequence number of one handled just before is dropped. Each message handled is
then told on /_acres/commands_taken (acres_bridge.ingest.commands_taken).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.exceptions import InvalidHandle

from acres_bridge.ingest.commands_taken import CommandTally
from acres_bridge.msg_profiles import TopicSpec
from acres_bridge.pending_commands import add_command_source

__all__ = ["CommandSubscription"]

_REMEMBERED = 1024  # messages remembered per topic: far more than arrive between the two copies


class CommandSubscription:
    """Both readers of one command topic, with the callback called once per message."""

    def __init__(self, node: Any, spec: TopicSpec, callback: Callable[[Any], None]) -> None:
        self._callback = callback
        self._order: deque[tuple[int, int]] = deque()
        self._seen: set[tuple[int, int]] = set()
        self.duplicates = 0
        # A best-effort publisher is incompatible with the reliable reader by design: no warning.
        quiet = SubscriptionEventCallbacks(incompatible_qos=lambda _event: None)
        self.subscriptions = [
            spec.create_subscription(node, self._on_message, event_callbacks=quiet),
            spec.create_subscription(node, self._on_message, best_effort=True),
        ]
        self.tally = CommandTally(node, self.subscriptions[0].topic_name)
        add_command_source(self)

    def take_pending(self) -> int:
        """Take every message both readers hold and handle it now, as the executor would later:
        the step path calls this so that a command sent before a step request applies from it
        (acres_bridge.pending_commands)."""
        taken = 0
        for subscription in self.subscriptions:
            handle = subscription.handle
            with contextlib.suppress(InvalidHandle), handle:  # InvalidHandle: destroyed with its node
                while (pending := handle.take_message(subscription.msg_type, False)) is not None:
                    self._on_message(*pending)
                    taken += 1
        return taken

    def _on_message(self, message: Any, info: dict[str, Any]) -> None:
        source_timestamp = int(info.get("source_timestamp", 0))
        key = (source_timestamp, int(info.get("publication_sequence_number", 0)))
        if key in self._seen:
            self.duplicates += 1
            return
        self._seen.add(key)
        self._order.append(key)
        if len(self._order) > _REMEMBERED:
            self._seen.discard(self._order.popleft())
        self._callback(message)
        self.tally.took(source_timestamp)
