"""The process is asked to stop: hooks that end what would otherwise hold the teardown up.

A node whose service callback can block (the ingest's step requests wait for the simulator)
registers a hook; the container's SIGINT/SIGTERM handler calls request_shutdown(), which runs every
hook in a thread of its own (a signal handler may interrupt code that holds the very locks a hook
needs), so the blocked callback returns, the executor sees the stop, and the nodes are destroyed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

__all__ = ["add_shutdown_hook", "remove_shutdown_hook", "request_shutdown", "shutdown_requested"]

_hooks: list[Callable[[], None]] = []
_lock = threading.Lock()
_requested = threading.Event()


def add_shutdown_hook(hook: Callable[[], None]) -> None:
    with _lock:
        _hooks.append(hook)


def remove_shutdown_hook(hook: Callable[[], None]) -> None:
    with _lock, contextlib.suppress(ValueError):
        _hooks.remove(hook)


def shutdown_requested() -> bool:
    return _requested.is_set()


def request_shutdown() -> None:
    """Run every hook once, in a thread of its own; safe to call from a signal handler."""
    if _requested.is_set():
        return
    _requested.set()
    threading.Thread(target=_run_hooks, name="shutdown-hooks", daemon=True).start()


def _run_hooks() -> None:
    with _lock:
        hooks = list(_hooks)
    for hook in hooks:
        hook()
