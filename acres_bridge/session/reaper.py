"""Find and end every process of a run's sessions, wherever it was started from.

Each process of an isolated session carries ACRES_SESSION_DIR, its session's folder, in its
environment, and hands it on to everything it starts (a ``ros2 launch`` and its nodes). The
processes of a run are those whose ACRES_SESSION_DIR lies under the run's folder, so a sweep that
is interrupted, or whose worker died, can end them all without having known their ids.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["end_run_processes", "run_processes"]

_KEY: Final = b"ACRES_SESSION_DIR="
_POLL_S: Final = 0.05


def _session_dir(pid: int) -> str | None:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for entry in environ.split(b"\0"):
        if entry.startswith(_KEY):
            return entry[len(_KEY) :].decode(errors="replace")
    return None


def run_processes(run_dir: Path) -> Iterator[int]:
    """The ids of the live processes of this user whose session folder is under `run_dir`."""
    root = str(run_dir.resolve())
    own = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        folder = _session_dir(int(entry.name))
        if folder is not None and (folder == root or folder.startswith(root + os.sep)):
            yield int(entry.name)


def end_run_processes(run_dir: Path, grace_s: float = 1.5) -> int:
    """SIGINT to every process of the run, SIGKILL to those still there after `grace_s`; how many
    there were."""
    found = list(run_processes(run_dir))
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT)
    until = time.monotonic() + grace_s
    while time.monotonic() < until and any(True for _ in run_processes(run_dir)):
        time.sleep(_POLL_S)
    for pid in run_processes(run_dir):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(found)
