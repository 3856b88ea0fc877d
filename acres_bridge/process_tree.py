"""This program's process tree, read from /proc: which processes descend from which, and ending them.

A process that is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux; no privilege needed)
adopts every orphan among the descendants it forks from then on: a daemon that double-forks, calls
setsid and clears its environment becomes this process's child instead of init's, so it is found
here (by its parent id) and reaped here. The kernel decides at each fork whether a process has such
an ancestor, so children forked before the call keep handing their orphans to init.

A process is known by its id and its start time (clock ticks after boot): ids are reused, the pair
is not. Signals go through a pidfd opened for that pair, so a process that ended meanwhile and whose
id was taken again is never signalled. Elsewhere than on Linux nothing is found and nothing adopted.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from acres_bridge.spawn import PRCTL

__all__ = [
    "Identity",
    "ProcessInfo",
    "descendants",
    "end_processes",
    "is_subreaper",
    "parse_stat",
    "process_table",
    "read_process",
    "set_subreaper",
]

Identity = tuple[int, int]  # a process's id and its start time in clock ticks after boot
_PR_SET_CHILD_SUBREAPER: Final = 36  # prctl(2)
_PR_GET_CHILD_SUBREAPER: Final = 37
_POLL_S: Final = 0.05


@dataclass(frozen=True)
class ProcessInfo:
    """What /proc/<pid>/stat says of a process that matters here."""

    pid: int
    ppid: int
    sid: int
    start: int  # clock ticks after boot
    zombie: bool  # it has ended and waits for its parent to reap it

    @property
    def identity(self) -> Identity:
        return (self.pid, self.start)


def parse_stat(text: str) -> ProcessInfo | None:
    """The fields of one /proc/<pid>/stat text; None if it is not one. The command's name, in
    parentheses, may hold spaces and parentheses itself: the fields start after the last ')'."""
    pid_text, opened, rest = text.partition(" (")
    _name, closed, after = rest.rpartition(")")
    fields = after.split()
    if not opened or not closed or len(fields) < 20:
        return None
    try:
        return ProcessInfo(
            pid=int(pid_text),
            ppid=int(fields[1]),
            sid=int(fields[3]),
            start=int(fields[19]),
            zombie=fields[0] in ("Z", "X"),
        )
    except ValueError:
        return None


def read_process(pid: int) -> ProcessInfo | None:
    """The process `pid` now, or None when there is none."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            return parse_stat(stat.read())
    except OSError:
        return None


def process_table() -> dict[int, ProcessInfo]:
    """Every process of this machine's /proc, by id (empty without /proc)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    table: dict[int, ProcessInfo] = {}
    for name in names:
        if name.isdigit():
            info = read_process(int(name))
            if info is not None:
                table[info.pid] = info
    return table


def descendants(table: Mapping[int, ProcessInfo], roots: Iterable[int]) -> set[int]:
    """The ids of every process of `table` below `roots` (the roots themselves left out)."""
    children: dict[int, list[int]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info.pid)
    found: set[int] = set()
    waiting = list(roots)
    while waiting:
        for child in children.get(waiting.pop(), ()):
            if child not in found:
                found.add(child)
                waiting.append(child)
    return found


def is_subreaper() -> bool:
    """Whether this process adopts the orphans of its descendants."""
    if PRCTL is None:
        return False
    value = ctypes.c_int(0)
    if PRCTL(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(value), 0, 0, 0) != 0:
        return False
    return value.value != 0


def set_subreaper(on: bool) -> bool:
    """Make this process a child subreaper, or no longer one; whether the system did."""
    if PRCTL is None:
        return False
    return PRCTL(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


def _is(identity: Identity) -> bool:
    now = read_process(identity[0])
    return now is not None and now.start == identity[1]


def _send(identity: Identity, signum: signal.Signals) -> None:
    """Send `signum` to the process `identity`, if it still runs (never to a later one of its id:
    the pidfd, opened before the check, holds on to the process the check saw)."""
    try:
        handle = os.pidfd_open(identity[0])
    except ProcessLookupError:
        return
    except OSError:  # a kernel without pidfds (before 5.3): the check, then the id
        if _is(identity):
            with contextlib.suppress(OSError):
                os.kill(identity[0], signum)
        return
    try:
        if _is(identity):
            signal.pidfd_send_signal(handle, signum)
    except OSError:
        pass
    finally:
        os.close(handle)


def _reap(pid: int) -> None:
    """Collect the exit status of an ended child of this process (a zombie otherwise)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def end_processes(
    find: Callable[[Mapping[int, ProcessInfo]], Collection[int]],
    *,
    grace_s: float,
    kill_wait_s: float = 5.0,
    reapable: Callable[[int], bool] = lambda _pid: True,
) -> int:
    """End the processes `find(table)` names and everything below them: SIGINT once each, as a
    Ctrl-C would, SIGKILL to those still running after `grace_s` (and to any that appears later),
    until none runs or `kill_wait_s` more have passed. Ended children of this process among them
    are reaped when `reapable(pid)` (not those a subprocess.Popen will wait for). `find` is asked
    again at each look, so a process that appears meanwhile is ended too. How many were ended."""
    own = os.getpid()
    targets: set[Identity] = set()
    asked: set[Identity] = set()
    kill_from = time.monotonic() + grace_s
    give_up = kill_from + kill_wait_s
    while True:
        table = process_table()
        named = set(find(table))
        named |= descendants(table, named | {pid for pid, _ in targets})
        targets |= {table[pid].identity for pid in named if pid in table}
        present = [table[pid] for pid, start in targets if pid in table and table[pid].start == start]
        reaped = [info.pid for info in present if info.zombie and info.ppid == own and reapable(info.pid)]
        for pid in reaped:
            _reap(pid)
        running = [info.identity for info in present if not info.zombie]
        if not running and not reaped:  # a child of one reaped now may have come to this process
            return len(targets)
        now = time.monotonic()
        if now >= give_up:
            return len(targets)
        for identity in running:
            if now >= kill_from:
                _send(identity, signal.SIGKILL)
            elif identity not in asked:
                _send(identity, signal.SIGINT)
                asked.add(identity)
        time.sleep(_POLL_S)
