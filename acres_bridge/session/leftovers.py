"""What a session's processes leave behind, found in this program's process tree and ended at close.

A stack may start a daemon that leaves every mark of its session behind: it double-forks (its parent
ends, so it is in no process tree of the session), calls setsid (it is in no process group of the
session) and clears its environment (it has no ACRES_SESSION_DIR). While a session of this program
is live, the program is a child subreaper (acres_bridge.process_tree), so such an orphan becomes
one of its children rather than init's. At close (``end``), once the session's own processes have
been stopped, the session ends its leftovers: one SIGINT each, SIGKILL after LEFTOVER_GRACE_S, and
reaps them, so that none stays, not even as a zombie, and its domain is free when close returns.

A session's leftovers are, of this program's processes (the session's own, which close() stops
itself, and the other live sessions' and everything below them never among them):

- everything that was below the session's processes when its close began (``snapshot``);
- every orphan adopted by this program that carries the session's ACRES_SESSION_DIR or holds its
  domain lease (its lock, through the descriptor every process of the session inherits);
- when no other session of this program is live, every orphan adopted by this program since the
  first of the sessions then live started: with sessions one after the other (a Ray worker, the
  acres_scenario command, a test), all of the session's;
- and everything below these.

An adopted orphan is a child of this program that it did not fork itself: one in a session of its
own (a process this program forks shares its session unless it asks for a new one, and no
descendant of a session's process can join this program's session), not started by
acres_bridge.spawn (whose children their Popen waits for) and not there when the first of the live
sessions started. So the children the program had before are never touched, nor those it starts
itself in its own session, nor another live session's, except an orphan of another session that
carries this session's folder or holds its lease, which no process but this session's can. An
orphan that cleared its environment and closed its descriptors, while another session of the
program is live, is left to the last of them to close. A process this program starts itself in a
new session, other than through acres_bridge.spawn, and leaves running past the close of the last
live session is taken for a leftover.

The program is a subreaper only while it has a live session, and is again what it was before after
the last one closes (a program that was a subreaper already stays one).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Final

from acres_bridge.process_tree import (
    Identity,
    ProcessInfo,
    descendants,
    end_processes,
    is_subreaper,
    process_table,
    read_process,
    set_subreaper,
)
from acres_bridge.session.reaper import holds_lock, session_dir
from acres_bridge.spawn import unwaited_children

__all__ = ["LEFTOVER_GRACE_S", "SessionProcesses"]

LEFTOVER_GRACE_S: Final = 2.0  # after SIGINT, before SIGKILL


class _Program:
    """This program's live sessions, and what it was before the first of them started."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()
        os.register_at_fork(after_in_child=self.reset)

    def reset(self) -> None:
        self.live: set[SessionProcesses] = set()
        self.baseline: frozenset[Identity] = frozenset()  # this program's children then
        self.made_subreaper = False

    def enter(self, session: SessionProcesses) -> None:
        with self.lock:
            if not self.live:
                own = os.getpid()
                self.baseline = frozenset(i.identity for i in process_table().values() if i.ppid == own)
                self.made_subreaper = not is_subreaper() and set_subreaper(True)
            self.live.add(session)

    def leave(self, session: SessionProcesses) -> None:
        with self.lock:
            self.live.discard(session)
            if not self.live and self.made_subreaper:
                set_subreaper(False)
                self.made_subreaper = False

    def others(self, session: SessionProcesses) -> list[SessionProcesses]:
        with self.lock:
            return [s for s in self.live if s is not session]


_PROGRAM: Final = _Program()


def _present(table: Mapping[int, ProcessInfo], identities: Collection[Identity]) -> set[int]:
    """The ids of those of `identities` that are in `table` (a copy first: another thread may add)."""
    return {pid for pid, start in tuple(identities) if pid in table and table[pid].start == start}


class SessionProcesses:
    """The processes of one session in this program's tree: its own (``add``) and its leftovers."""

    def __init__(self, folder: Path, lease: Path) -> None:
        """`folder`: the session's ACRES_SESSION_DIR; `lease`: its domain's lock file."""
        self.folder = str(folder.resolve())
        self.lease = Path(os.path.realpath(lease))
        self._own: set[Identity] = set()  # the processes the session started
        self._below: set[Identity] = set()  # what was below them when the close began
        self._entered = False

    def enter(self) -> None:
        """Count the session live: from now on the orphans of what it starts come to this program.
        Before it starts anything."""
        if not self._entered:
            _PROGRAM.enter(self)
            self._entered = True

    def add(self, pid: int) -> None:
        """A process the session started (a child of this program)."""
        info = read_process(pid)
        if info is not None:
            self._own.add(info.identity)

    def snapshot(self) -> None:
        """Note everything below the session's processes, before close() stops them (after that
        they are this program's children, or init's, and no longer theirs)."""
        table = process_table()
        self._below |= {table[pid].identity for pid in descendants(table, _present(table, self._own))}

    def end(self, grace_s: float = LEFTOVER_GRACE_S) -> int:
        """End the session's leftovers (see the module) and reap them; no longer live. How many."""
        if not self._entered:
            return 0
        try:
            return end_processes(self._leftovers, grace_s=grace_s, reapable=self._reapable)
        finally:
            _PROGRAM.leave(self)
            self._entered = False

    def _reapable(self, pid: int) -> bool:
        return pid not in unwaited_children()

    def _leftovers(self, table: Mapping[int, ProcessInfo]) -> set[int]:
        """The ids of the session's leftovers in `table` (see the module)."""
        others = _PROGRAM.others(self)
        own = _present(table, self._own)
        theirs = {pid for session in others for pid in _present(table, session._own)}
        theirs |= descendants(table, theirs)
        found = _present(table, self._below)
        for info in self._adopted(table):
            if not others or self._carries_mark(info.pid):
                found.add(info.pid)
        found |= descendants(table, found)
        return found - own - theirs

    def _adopted(self, table: Mapping[int, ProcessInfo]) -> list[ProcessInfo]:
        """The orphans of this program's descendants that it has adopted (see the module)."""
        pid, sid = os.getpid(), os.getsid(0)
        forked = unwaited_children()
        baseline = _PROGRAM.baseline
        return [
            info
            for info in table.values()
            if info.ppid == pid
            and info.sid != sid
            and info.pid not in forked
            and info.identity not in baseline
        ]

    def _carries_mark(self, pid: int) -> bool:
        """Whether process `pid` carries the session's folder or holds its domain lease."""
        return session_dir(pid) == self.folder or holds_lock(pid, self.lease)
