"""Commands that have reached the bridge but not yet their node: taken before each step request.

A client that publishes a command and then asks for a lockstep step has the command apply from
that step's first physics step (docs/drive_by_wire.md). The command reaches its reader before the
request reaches the step service's (one connection between the two processes, in order), but the
executor may still run the request first: rclpy takes the ready callbacks of a wait node by node,
and one wait can find the request ready while a command that arrived a moment earlier was checked
before it came. So the step path first takes, and hands to its node, every command the command
readers hold (acres_bridge.nodes.command_subscription registers them here).
"""

from __future__ import annotations

import itertools
import weakref
from typing import Protocol

__all__ = ["CommandSource", "add_command_source", "take_pending_commands"]


class CommandSource(Protocol):
    def take_pending(self) -> int:
        """Hand every message its readers hold to its callback, now; how many there were."""
        ...


# In the order registered (a WeakSet's order is its hashes'): the executor takes readers ready
# together in the order they were made, and so does the step path, an enable before a gear command.
_sources: weakref.WeakValueDictionary[int, CommandSource] = weakref.WeakValueDictionary()
_order = itertools.count()


def add_command_source(source: CommandSource) -> None:
    """Register a command topic's readers (kept while the source lives)."""
    _sources[next(_order)] = source


def take_pending_commands() -> int:
    """Take every pending command of every live source, in the order they were registered; call it
    in the executor's thread."""
    return sum(source.take_pending() for source in list(_sources.values()))
