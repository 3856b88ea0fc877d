"""What a session's stack leaves running ends with the session: a daemon that double-forked, called
setsid and cleared its environment included, and the session's domain is free once close() returns.
Each process log keeps its first and last part past its bound."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acres_bridge.process_tree import Identity, ProcessInfo, read_process
from acres_bridge.processes import MIN_LOG_BYTES
from acres_bridge.session import IsolatedSession, SessionConfig, SessionError
from acres_bridge.session.domains import DomainPoolError, lease_domain
from acres_bridge.session.reaper import session_dir
from session.programs import killed_at_the_end

pytestmark = pytest.mark.integration

DAEMON_STACK = Path(__file__).resolve().parent / "stacks" / "daemon_stack.py"


def stack_command(pid_file: Path, *options: str) -> list[str]:
    return [sys.executable, str(DAEMON_STACK), str(pid_file), *options]


def exists(identity: Identity) -> bool:
    """Whether that process is there, running or a zombie nobody reaped."""
    now = read_process(identity[0])
    return now is not None and now.start == identity[1]


def wait_until_gone(identity: Identity, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while exists(identity) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not exists(identity)


def daemon_of(pid_file: Path) -> ProcessInfo:
    """The daemon a stack left, once it has said so; it carries no mark of its session."""
    info = read_process(int(pid_file.read_text()))
    assert info is not None
    assert info.sid == info.pid  # setsid: in no process group or session of the session's
    assert session_dir(info.pid) is None  # no ACRES_SESSION_DIR
    return info


def domain_is_free(domain: int) -> bool:
    try:
        lease = lease_domain(pool=range(domain, domain + 1))
    except DomainPoolError:
        return False
    lease.release()
    return True


@pytest.mark.parametrize("stop", ["answers_sigint", "ignores_sigint_and_sigterm"])
def test_close_ends_the_daemon_a_stack_left_and_frees_the_domain_at_once(tmp_path, stop):
    pid_file = tmp_path / "daemon.pid"
    options = ["--ignore-stop"] if stop == "ignores_sigint_and_sigterm" else []
    with IsolatedSession(SessionConfig(), tmp_path / "session") as session:
        stack = session.start_process("stack", stack_command(pid_file, *options))
        stack.wait_for_line("daemon", 60.0)
        daemon = daemon_of(pid_file)
        domain = session.domain_id
    assert not exists(daemon.identity), "the daemon outlived its session (or is a zombie nobody reaped)"
    assert domain_is_free(domain), "a process of the closed session still holds its domain"


def test_a_close_ends_its_own_session_s_leftovers_only(tmp_path):
    """Two sessions in one program, and processes of the program's own: closing one ends its
    daemon and none of the others'."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    before = subprocess.Popen(sleeper, start_new_session=True)  # the program's, from before the sessions
    during = None
    try:
        with IsolatedSession(SessionConfig(), tmp_path / "a") as a:
            a.start_process("stack", stack_command(tmp_path / "a.pid")).wait_for_line("daemon", 60.0)
            with IsolatedSession(SessionConfig(), tmp_path / "b") as b:
                during = subprocess.Popen(sleeper)  # the program's own, started while both are live
                b.start_process("stack", stack_command(tmp_path / "b.pid")).wait_for_line("daemon", 60.0)
                daemon_a, daemon_b = daemon_of(tmp_path / "a.pid"), daemon_of(tmp_path / "b.pid")
                domain_b = b.domain_id
            assert not exists(daemon_b.identity)
            assert domain_is_free(domain_b)
            assert exists(daemon_a.identity), "a's daemon was ended with b"
            a.check_alive()
        assert not exists(daemon_a.identity)
        assert before.poll() is None
        assert during.poll() is None
    finally:
        for process in (before, during):
            if process is not None:
                process.kill()
                process.wait(10)


def test_a_stack_s_log_keeps_its_first_and_last_part_past_the_bound(tmp_path):
    bound = MIN_LOG_BYTES
    pid_file = tmp_path / "daemon.pid"
    with IsolatedSession(SessionConfig(), tmp_path / "session", max_log_bytes=bound) as session:
        stack = session.start_process("stack", stack_command(pid_file, "--print-bytes", str(3 * bound)))
        stack.wait_for_line("daemon", 60.0)
    data = (tmp_path / "session" / "stack.log").read_bytes()
    count = 3 * bound // 32
    last_line = f"daemon {pid_file.read_text()}\n".encode()
    written = 3 * bound + len(last_line)
    assert len(data) <= bound
    assert data.startswith(b"line 00000000000000000000000000\nline 00000000000000000000000001\n")
    assert data.endswith(f"line {count - 2:026d}\nline {count - 1:026d}\n".encode() + last_line)
    marker = re.search(rb"\n--- ([\d,]+) bytes of output cut here [^\n]*\n", data)
    assert marker is not None
    kept = len(data) - len(marker.group(0))
    assert int(marker.group(1).replace(b",", b"")) == written - kept
    assert stack.tail(1) == [last_line.decode().strip()]


def test_a_log_bound_below_the_least_is_a_session_error():
    with pytest.raises(SessionError, match="max_log_bytes must be an integer of at least"):
        IsolatedSession(SessionConfig(), Path("unused"), max_log_bytes=1000)


def test_a_killed_program_s_daemon_is_ended_by_the_session_s_watch(tmp_path):
    """A program killed with its session open: the watch finds the daemon by the domain lease it
    holds, and ends it, so the domain is leased again once the session's processes have ended."""
    code = (
        "import time\n"
        "from pathlib import Path\n"
        "from acres_bridge.session import IsolatedSession, SessionConfig\n"
        f"session = IsolatedSession(SessionConfig(), Path({str(tmp_path / 'session')!r}))\n"
        "session.start()\n"
        f"stack = session.start_process('stack', {stack_command(tmp_path / 'daemon.pid')!r})\n"
        "stack.wait_for_line('daemon', 60.0)\n"
        f"print(open({str(tmp_path / 'daemon.pid')!r}).read(), session.domain_id, flush=True)\n"
        "time.sleep(600)\n"
    )
    with killed_at_the_end(code) as (pid, domain):
        daemon = read_process(pid)
        assert daemon is not None
    assert wait_until_gone(daemon.identity, 30.0), "the daemon outlived its killed program's session"
    deadline = time.monotonic() + 30.0
    while not domain_is_free(domain) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert domain_is_free(domain)
