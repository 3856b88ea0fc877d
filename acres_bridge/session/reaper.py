"""Find and end every process of a run's sessions, wherever it was started from.

Each process of an isolated session carries ACRES_SESSION_DIR, its session's folder, in its
environment, and hands it on to everything it starts (a ``ros2 launch`` and its nodes). The
processes of a run are those whose ACRES_SESSION_DIR lies under the run's folder, so a sweep that
is interrupted, or whose worker died, can end them all without having known their ids. A process
that cleared its environment (a daemon) is still found by its session's domain lease, when it is
given: it holds the lease's lock as long as it keeps the descriptor it inherited.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["end_run_processes", "holds_lock", "run_processes", "session_dir"]

_KEY: Final = b"ACRES_SESSION_DIR="
_POLL_S: Final = 0.05


def session_dir(pid: int) -> str | None:
    """The ACRES_SESSION_DIR of process `pid`, None without one (or without that process)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for entry in environ.split(b"\0"):
        if entry.startswith(_KEY):
            return entry[len(_KEY) :].decode(errors="replace")
    return None


def holds_lock(pid: int, lock: Path) -> bool:
    """Whether process `pid` holds an flock on the file `lock` (an absolute path without links)
    through a descriptor of its own: a domain lease it inherited."""
    folder = f"/proc/{pid}/fd"
    try:
        descriptors = os.listdir(folder)
    except OSError:
        return False
    for fd in descriptors:
        try:
            if os.readlink(f"{folder}/{fd}") != str(lock):
                continue
            info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text(errors="replace")
        except OSError:
            continue
        if "FLOCK" in info:  # a "lock:" line: this descriptor holds the lock, not one that only tries
            return True
    return False


def run_processes(run_dir: Path, *, lease: Path | None = None) -> Iterator[int]:
    """The ids of the live processes of this user whose session folder is under `run_dir`, and,
    with `lease` (a domain's lock file), those that hold that lease."""
    root = str(run_dir.resolve())
    lock = None if lease is None else Path(os.path.realpath(lease))
    own = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        pid = int(entry.name)
        folder = session_dir(pid)
        in_run = folder is not None and (folder == root or folder.startswith(root + os.sep))
        if in_run or (lock is not None and holds_lock(pid, lock)):
            yield pid


def end_run_processes(run_dir: Path, grace_s: float = 1.5, *, lease: Path | None = None) -> int:
    """SIGINT to every process of the run (and, with `lease`, to every holder of that domain lease),
    SIGKILL to those still there after `grace_s`; how many there were."""
    found = list(run_processes(run_dir, lease=lease))
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT)
    until = time.monotonic() + grace_s
    while time.monotonic() < until and any(True for _ in run_processes(run_dir, lease=lease)):
        time.sleep(_POLL_S)
    for pid in run_processes(run_dir, lease=lease):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(found)
