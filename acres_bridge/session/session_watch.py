"""A session's watch: it ends every process of the session, once, if the session's program dies.

    python -m acres_bridge.session.session_watch FOLDER [LEASE]

IsolatedSession starts one per session. A stack is started without the parent-death signal of
acres_bridge.spawn: the kernel may send that signal several times (once for each thread of the
dying program it passes through), and a second SIGINT while `ros2 launch` shuts down can leave
launch waiting forever. Nor does the watch take that signal: it sees its parent die by being
reparented (checked every 0.1 s), then ends the session's processes as a sweep's reaper does
(acres_bridge.session.reaper: every process whose ACRES_SESSION_DIR is FOLDER, whatever process
group it is in, and every holder of the domain lease LEASE, the session's lock file: a daemon that
cleared its environment): one SIGINT each, as a Ctrl-C would, and SIGKILL to what still runs after
GRACE_S.
It holds the session's domain lease like every process of the session, so the domain stays leased
until the session's processes have ended.

The session's close() kills the watch (it keeps nothing) and stops its processes itself; SIGINT or
SIGTERM while the parent lives end the watch alone, with status 0.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Final

from acres_bridge.session.reaper import end_run_processes

__all__ = ["GRACE_S", "main"]

GRACE_S: Final = 5.0  # after SIGINT, before SIGKILL
_POLL_S: Final = 0.1


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) not in (1, 2):
        print("usage: python -m acres_bridge.session.session_watch FOLDER [LEASE]", file=sys.stderr)
        return 2
    folder = Path(args[0])
    lease = Path(args[1]) if len(args) == 2 else None
    parent = os.getppid()
    asked: list[int] = []  # the stop signals received

    def ask(signum: int, _frame: FrameType | None) -> None:
        asked.append(signum)

    signal.signal(signal.SIGINT, ask)
    signal.signal(signal.SIGTERM, ask)
    while os.getppid() == parent:
        if asked:
            return 0  # the session stops its processes itself
        time.sleep(_POLL_S)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"session_watch: the session's program has ended; stopping the processes of {folder}", flush=True)
    ended = end_run_processes(folder, grace_s=GRACE_S, lease=lease)
    print(f"session_watch: {ended} processes stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
