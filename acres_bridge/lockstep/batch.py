"""The messages of one step request, sorted into its steps: pure, no node.

The bridge's delivery report lists, per topic, the physics step of every message it published
while the request ran (acres_bridge.ingest.deliveries). A client has received the request when it
holds as many messages of each watched topic as the report lists; the report's steps, ranked,
then say which step each message belongs to. Messages are ranked by their stamp where they carry
one (several publishers of /tf interleave freely), else by arrival (a topic without a stamp has
one publisher, and DDS keeps its order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acres_bridge.convert.stamps import time_ns

__all__ = ["StepBatch", "StepMessages", "message_stamp_ns", "shortfall", "sort_into_steps"]


@dataclass(frozen=True)
class StepMessages:
    """The messages that one physics step made, per watched topic, in the order they were made."""

    step: int  # physics steps since the session's start (step k ends at k/120 s)
    messages: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def __getitem__(self, topic: str) -> Sequence[Any]:
        """The step's messages of one topic (empty when it made none)."""
        return self.messages.get(topic, ())


@dataclass(frozen=True)
class StepBatch:
    """Every watched message of one request, one entry per step in step order."""

    first_step: int
    last_step: int
    steps: Sequence[StepMessages]

    def messages(self, topic: str) -> list[Any]:
        """All of the request's messages of one topic, in step order."""
        return [message for step in self.steps for message in step[topic]]

    def count(self, topic: str) -> int:
        return sum(len(step[topic]) for step in self.steps)


def message_stamp_ns(message: Any) -> int | None:
    """The simulation time a message carries (header stamp, a /clock's clock, the first transform's
    stamp of a TF message), or None for a message without one (std_msgs)."""
    stamp = getattr(getattr(message, "header", None), "stamp", None)
    if stamp is None:
        stamp = getattr(message, "clock", None)
    if stamp is None:
        transforms = getattr(message, "transforms", None)
        if transforms:
            stamp = transforms[0].header.stamp
    return None if stamp is None else time_ns(stamp)


def shortfall(due: Mapping[str, Sequence[int]], received: Mapping[str, Sequence[Any]]) -> dict[str, int]:
    """Topics with fewer messages received than due, and how many are missing."""
    return {
        topic: len(steps) - len(received.get(topic, ()))
        for topic, steps in due.items()
        if len(received.get(topic, ())) < len(steps)
    }


def sort_into_steps(
    first_step: int,
    last_step: int,
    due: Mapping[str, Sequence[int]],
    received: Mapping[str, Sequence[Any]],
) -> StepBatch:
    """The batch of a complete request: each topic's messages given the report's steps by rank.

    A topic with more messages than due had some published before the request (a reset's
    episode): those are the earliest, and are left out.
    """
    by_step: dict[int, dict[str, list[Any]]] = {}
    for topic, steps in due.items():
        messages = list(received.get(topic, ()))
        if any(message_stamp_ns(m) is not None for m in messages):
            messages.sort(key=lambda m: message_stamp_ns(m) or 0)  # stable: arrival order among equals
        messages = messages[len(messages) - len(steps) :] if steps else []
        for step, message in zip(sorted(steps), messages, strict=True):
            by_step.setdefault(step, {}).setdefault(topic, []).append(message)
    numbers = sorted(set(range(first_step, last_step + 1)).union(by_step))
    return StepBatch(first_step, last_step, tuple(StepMessages(n, by_step.get(n, {})) for n in numbers))
