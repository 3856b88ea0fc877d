"""A stack's watch: it ends the stack's process group, once, if the session's program dies.

    python -m acres_bridge.session.stack_watch PGID

IsolatedSession starts one beside each stack (a process of the caller's, run in its own process
group). The stack itself is started without the parent-death signal of acres_bridge.spawn: the
kernel may send that signal several times (once for each thread of the dying program it passes
through), and a second SIGINT while `ros2 launch` shuts down can leave launch waiting forever. Nor
does the watch take that signal: it sees its parent die by being reparented (checked every 0.1 s),
then sends the stack's group one SIGINT, as a Ctrl-C would; SIGTERM if the group still runs after
GRACE_S, SIGKILL after as long again; and ends once no process of the group runs. It holds the
session's domain lease like every process of the session, so the domain stays leased until the
stack has ended.

The session's close() kills the watch (it keeps nothing) and stops the stack itself; SIGINT or
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

__all__ = ["GRACE_S", "group_members", "main"]

GRACE_S: Final = 5.0  # after SIGINT, and again after SIGTERM, before the next signal
_POLL_S: Final = 0.1


def group_members(pgid: int, proc: Path = Path("/proc")) -> list[int]:
    """The live processes (not zombies) of process group ``pgid``."""
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _end_group(pgid: int) -> None:
    """SIGINT to the group, then SIGTERM and SIGKILL to what still runs after GRACE_S each."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, signum)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + GRACE_S
        while group_members(pgid):
            if time.monotonic() > deadline:
                break
            time.sleep(_POLL_S)
        else:
            return


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m acres_bridge.session.stack_watch PGID", file=sys.stderr)
        return 2
    pgid = int(args[0])
    parent = os.getppid()
    asked: list[int] = []  # the stop signals received

    def ask(signum: int, _frame: FrameType | None) -> None:
        asked.append(signum)

    signal.signal(signal.SIGINT, ask)
    signal.signal(signal.SIGTERM, ask)
    while os.getppid() == parent:
        if asked:
            return 0  # the session stops the stack itself
        time.sleep(_POLL_S)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"stack_watch: the session's program has ended; stopping process group {pgid}", flush=True)
    _end_group(pgid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
