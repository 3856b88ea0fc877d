"""The process is asked to stop: SIGINT and SIGTERM as a request its loop reads, and hooks that
end what would otherwise hold the teardown up.

The bridge's processes (the container, the other nodes) stop in order, whatever they are doing:
the signal only asks the executor to stop (rclpy's own handlers, which shut the context down at
once under running threads, are not installed: rclpy.init with SignalHandlerOptions.NO, then
StopRequest); then the nodes are destroyed while the context is still valid, and the context is
shut down last. A second signal meanwhile changes nothing; a teardown that has not ended
STOP_DEADLINE_S after the signal ends the process with a message.

A node whose service callback can block (the ingest's step requests wait for the simulator)
registers a hook; the stop request calls request_shutdown(), which runs every hook in a thread of
its own (a signal handler may interrupt code that holds the very locks a hook needs), so the
blocked callback returns, the executor sees the stop, and the nodes are destroyed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

from rclpy.executors import Executor, ExternalShutdownException
from rclpy.utilities import ok

__all__ = [
    "STOP_DEADLINE_S",
    "StopRequest",
    "add_shutdown_hook",
    "finished",
    "remove_shutdown_hook",
    "request_shutdown",
    "shutdown_requested",
    "spin_until_stopped",
]

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


STOP_DEADLINE_S = 1.8  # after SIGINT or SIGTERM the process is gone within this
_SPIN_S = 0.1  # the executor looks at the stop request at least this often


class StopRequest:
    """SIGINT and SIGTERM as a flag the process's loop reads, and a deadline for the teardown."""

    def __init__(self, process: str = "container") -> None:
        """`process`: the name the deadline's message gives the process."""
        self.requested = threading.Event()
        self.signal_name = ""
        self._process = process
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.requested.is_set():
            return  # a second signal while tearing down: the first one is being served
        self.signal_name = signal.Signals(signum).name
        self.requested.set()
        request_shutdown()  # unblocks callbacks that wait (a step request) so the executor can stop
        threading.Thread(target=self._deadline, name="stop-deadline", daemon=True).start()

    def _deadline(self) -> None:
        """Last resort: a teardown that hangs must not keep the process past the deadline."""
        if not _finished.wait(STOP_DEADLINE_S):
            print(
                f"{self._process}: the teardown after {self.signal_name} did not end within "
                f"{STOP_DEADLINE_S:g} s; exiting",
                file=sys.stderr,
                flush=True,
            )
            os._exit(0)


_finished = threading.Event()  # set once the teardown is over


def finished() -> None:
    """The teardown is over: the deadline need not end the process."""
    _finished.set()


def spin_until_stopped(executor: Executor, stop: StopRequest | None) -> None:
    """Spin `executor` until `stop` is requested or the context shuts down (from elsewhere)."""
    try:
        while ok() and not (stop is not None and stop.requested.is_set()):
            executor.spin_once(timeout_sec=_SPIN_S)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # A context shut down from elsewhere may make rclpy's executor fail on it (building its
        # wait set) instead of raising ExternalShutdownException: that is the way out, not an error.
        if ok():
            raise
