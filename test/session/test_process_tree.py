"""The process tree read from /proc: a process's fields, whatever its name, and what is below it."""

from __future__ import annotations

import os

from acres_bridge.process_tree import ProcessInfo, descendants, parse_stat, process_table, read_process


def stat_text(pid: int, name: str, *, state: str, ppid: int, sid: int, start: int) -> str:
    fields = [state, str(ppid), "7", str(sid), *["0"] * 15, str(start), "0", "0"]
    return f"{pid} ({name}) {' '.join(fields)}\n"


def test_a_stat_line_is_read_whatever_the_command_s_name():
    text = stat_text(42, "a) (b c) Z 9", state="S", ppid=1, sid=42, start=123456)
    assert parse_stat(text) == ProcessInfo(pid=42, ppid=1, sid=42, start=123456, zombie=False)
    assert parse_stat(stat_text(43, "x", state="Z", ppid=42, sid=42, start=5)) == ProcessInfo(
        43, 42, 42, 5, True
    )
    for bad in ("", "42", "42 (x) S 1", "x (y) S 1 2 3" + " 0" * 20):
        assert parse_stat(bad) is None


def test_everything_below_a_process_and_nothing_else():
    table = {
        pid: ProcessInfo(pid=pid, ppid=ppid, sid=pid, start=1, zombie=False)
        for pid, ppid in [(1, 0), (10, 1), (11, 10), (12, 11), (13, 10), (20, 1), (21, 20)]
    }
    assert descendants(table, [10]) == {11, 12, 13}
    assert descendants(table, [11, 20]) == {12, 21}
    assert descendants(table, [12]) == set()


def test_this_process_is_in_the_table_as_its_own_stat_says():
    own = read_process(os.getpid())
    assert own is not None
    assert own.ppid == os.getppid()
    assert own.sid == os.getsid(0)
    assert process_table()[os.getpid()] == own
