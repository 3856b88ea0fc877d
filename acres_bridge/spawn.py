"""Starting a child process that ends with the process that started it.

A simulator, a bridge or a stack left running by a program that died (SIGKILL, the OOM killer, a
Jupyter kernel restarted, a Ray worker ended) would go on in its DDS domain after that domain is
leased again, and talk to the next session's processes. So a child asks the kernel, between its
fork and its exec, for SIGINT when its parent ends (``prctl(PR_SET_PDEATHSIG)``): what a Ctrl-C
sends, and what a stop sends first. The simulator and the bridge end cleanly on it.

Linux counts the *thread* that forked a child as its parent: a child forked from a thread that ends
first (a Ray task's, a pool's) would be stopped with that thread. So every child is forked from one
thread that lives as long as the process (``spawn_popen``). When the process dies, the kernel may
send the signal once more for each of its threads that the child passes through on its way to a
new parent; a program that cannot take a second SIGINT while it stops (``ros2 launch`` may then
wait forever) is started without it (``end_with_parent=False``), and the session's watch
(acres_bridge.session.session_watch) stops it instead. On other systems children are started as they
are, without the signal.

The children started here are known until they are waited for (``unwaited_children``): the reaper of
a session's leftovers (acres_bridge.session.leftovers) leaves them to their subprocess.Popen.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Final

__all__ = ["PARENT_DEATH_SIGNAL", "PRCTL", "STOP_SIGNALS", "spawn_popen", "unwaited_children"]

PARENT_DEATH_SIGNAL: Final = signal.SIGINT  # what a child gets when its parent ends
_PR_SET_PDEATHSIG: Final = 1  # prctl(2)
STOP_SIGNALS: Final = frozenset({signal.SIGINT, signal.SIGTERM})  # what a stop sends


def _load_prctl() -> Callable[..., int] | None:
    """libc's prctl, loaded once here: the child calls it after fork, where nothing may be loaded
    (process_tree uses it too)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


PRCTL: Final = _load_prctl()


def _end_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """What the child runs between fork and exec: ask for PARENT_DEATH_SIGNAL when its parent
    ends; if the parent has ended already (before the request could count), end at once."""
    prctl = PRCTL
    if prctl is None:
        return None

    def arm() -> None:
        if prctl(_PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent_pid:
            os._exit(1)

    return arm


class _Spawner:
    """Forks children on one daemon thread, made on first use and again after a fork."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        # In a forked child this starts empty: its parent's children are not its own.
        self._started: weakref.WeakSet[subprocess.Popen[Any]] = weakref.WeakSet()

    def record(self, popen: subprocess.Popen[Any]) -> None:
        with self._lock:
            self._started.add(popen)

    def unwaited(self) -> frozenset[int]:
        with self._lock:
            return frozenset(p.pid for p in self._started if p.returncode is None)

    def run(self, job: Callable[[], Any]) -> Any:
        """``job()`` on the spawner thread; its result, or its exception raised here."""
        future: Future[Any] = Future()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="acres-spawner", daemon=True)
                self._thread.start()
            self._jobs.put((job, future))
        return future.result()

    def _serve(self) -> None:
        # The thread's signal mask is its maker's, and a child inherits the mask of the thread that
        # forks it: one that blocks SIGINT (a Ray worker's thread) would never answer a stop.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        while True:
            job, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as error:  # handed to the caller, whatever it is
                future.set_exception(error)


_SPAWNER: Final = _Spawner()


def spawn_popen(args: list[str], *, end_with_parent: bool = True, **options: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen(args, **options)``, the child getting PARENT_DEATH_SIGNAL when this
    process ends (unless ``end_with_parent`` is False); see the module.

    ``options`` must not set ``preexec_fn``: the parent-death request takes that place."""
    if "preexec_fn" in options:
        raise ValueError("spawn_popen sets preexec_fn itself")
    arm = _end_with_parent(os.getpid()) if end_with_parent else None

    def start() -> subprocess.Popen[str]:
        # preexec_fn deadlocks a threaded parent's child when it takes a lock another thread held at
        # the fork (an import, logging); `arm` takes none: a libc call loaded beforehand, getppid, _exit.
        child: subprocess.Popen[str] = subprocess.Popen(args, preexec_fn=arm, **options)  # noqa: PLW1509
        _SPAWNER.record(child)
        return child

    popen: subprocess.Popen[str] = _SPAWNER.run(start)
    return popen


def unwaited_children() -> frozenset[int]:
    """The ids of the children spawn_popen started whose exit status their Popen has not collected."""
    return _SPAWNER.unwaited()
