"""ChildProcess starts a child, collects its output, waits for a line, reports an early end and stops it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acres_bridge.errors import ProcessFailedError
from acres_bridge.processes import (
    MAX_LINE_BYTES,
    MAX_LOG_BYTES,
    MIN_LOG_BYTES,
    ChildProcess,
    bridge_command,
    describe_exit,
    free_port,
    localhost_environment,
    simulator_command,
    stop_signals_deferred,
)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.fixture
def started() -> Iterator[list[ChildProcess]]:
    children: list[ChildProcess] = []
    yield children
    for child in children:
        child.stop(timeout_s=2.0)


def start(started: list[ChildProcess], name: str, code: str) -> ChildProcess:
    child = ChildProcess.start(name, python(code))
    started.append(child)
    return child


SERVER = "import time; print('starting'); print('ready at 5'); time.sleep(60)"


def test_wait_for_line_returns_once_the_line_is_printed(started: list[ChildProcess]) -> None:
    child = start(started, "server", SERVER)
    assert child.wait_for_line("ready", timeout_s=10.0)
    assert child.lines[:2] == ["starting", "ready at 5"]
    child.check_alive()


def test_wait_for_line_times_out_with_the_output(started: list[ChildProcess]) -> None:
    child = start(started, "server", SERVER)
    with pytest.raises(ProcessFailedError) as raised:
        child.wait_for_line("never", timeout_s=0.5)
    assert raised.value.returncode is None
    assert str(raised.value).startswith("server did not print 'never' within 0.5 s; its last output:")
    assert raised.value.output == ("starting", "ready at 5")


def test_wait_for_line_gives_up_when_cancelled(started: list[ChildProcess]) -> None:
    child = start(started, "server", SERVER)
    assert not child.wait_for_line("never", timeout_s=10.0, cancelled=lambda: True)


def test_stop_returns_the_exit_status(started: list[ChildProcess]) -> None:
    code = (
        "import sys, time\ntry:\n    print('up'); time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(3)"
    )
    child = start(started, "polite", code)
    child.wait_for_line("up", timeout_s=10.0)
    assert child.stop(timeout_s=10.0) == 3


def test_stop_kills_a_child_that_ignores_sigint(started: list[ChildProcess]) -> None:
    code = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('up'); time.sleep(60)"
    child = start(started, "stubborn", code)
    child.wait_for_line("up", timeout_s=10.0)
    reports: list[str] = []
    assert child.stop(timeout_s=0.5, report=reports.append) == -signal.SIGKILL
    assert reports == ["stubborn ignored SIGINT for 0.5 s; killing it"]


def test_a_child_that_dies_early_is_reported_with_its_output(started: list[ChildProcess]) -> None:
    child = start(
        started, "crasher", "import sys; print('loading'); print('boom', file=sys.stderr); sys.exit(2)"
    )
    with pytest.raises(ProcessFailedError) as raised:
        child.wait_for_line("ready", timeout_s=10.0)
    error = raised.value
    assert (error.process, error.returncode) == ("crasher", 2)
    assert str(error) == "crasher exited with status 2; its last output:\n  loading\n  boom"
    with pytest.raises(ProcessFailedError, match="crasher exited with status 2"):
        child.check_alive()
    assert child.stop() == 2


def test_a_line_printed_just_before_the_end_still_counts(started: list[ChildProcess]) -> None:
    child = start(started, "brief", "print('done')")
    deadline = time.monotonic() + 10.0
    while child.popen.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert child.wait_for_line("done", timeout_s=1.0)


def test_a_silent_child_is_reported_as_such(started: list[ChildProcess]) -> None:
    child = start(started, "mute", "raise SystemExit(1)")
    child.popen.wait(10.0)
    with pytest.raises(ProcessFailedError) as raised:
        child.check_alive()
    assert str(raised.value) == "mute exited with status 1; it printed nothing"


def test_describe_exit() -> None:
    assert describe_exit(0) == "exited with status 0"
    assert describe_exit(-signal.SIGTERM) == "was ended by SIGTERM"


def test_environment_keeps_dds_on_localhost() -> None:
    env = localhost_environment({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "HOME": "/home/x"})
    assert env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "PYTHONUNBUFFERED": "1", "HOME": "/home/x"}


def test_free_port_is_a_tcp_port() -> None:
    assert 0 < free_port() < 65536


def test_command_lines() -> None:
    assert simulator_command(47100, seed=7, lockstep=True, start_utc="20261002T072309", extra=("-v",)) == [
        sys.executable,
        *("-m", "acres_sim.cli", "--port", "47100", "--seed", "7"),
        *("--start-utc", "20261002T072309", "--lockstep", "-v"),
    ]
    assert simulator_command(1, seed=0, lockstep=False)[3:] == ["--port", "1", "--seed", "0"]
    assert bridge_command(47100, vehicle="maxxum", ins=False, rate=2.5) == [
        sys.executable,
        *("-m", "acres_bridge.sim_bridge", "--ros-args", "-p", "control_port:=47100"),
        *("-p", "vehicle:=maxxum", "-p", "ins:=false", "-p", "rate:=2.5"),
    ]


def test_a_child_started_from_a_thread_that_blocks_sigint_still_answers_it(
    started: list[ChildProcess],
) -> None:
    """A Ray worker's threads block SIGINT; its children must not inherit that."""
    code = (
        "import sys, time\ntry:\n    print('up'); time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(3)"
    )
    children: list[ChildProcess] = []

    def start_blocked() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        children.append(ChildProcess.start("blocked", python(code)))

    thread = threading.Thread(target=start_blocked)
    thread.start()
    thread.join()
    started.extend(children)
    children[0].wait_for_line("up", timeout_s=10.0)
    assert children[0].stop(timeout_s=10.0) == 3  # killed (-9) when the mask was inherited


def test_a_log_file_gets_the_whole_output(started: list[ChildProcess], tmp_path) -> None:
    log = tmp_path / "child.log"
    child = ChildProcess.start("logged", python("print('one'); print('two')"), log_path=log)
    started.append(child)
    child.popen.wait(10.0)
    child.stop()
    assert log.read_text() == "one\ntwo\n"


def test_stop_with_group_ends_what_the_child_started(started: list[ChildProcess], tmp_path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); print('up', flush=True); time.sleep(60)"
    )
    child = start(started, "parent", code)
    child.wait_for_line("up", timeout_s=10.0)
    grandchild = int(pid_file.read_text())
    child.stop(timeout_s=5.0, group=True)
    assert _wait_until(lambda: not _alive(grandchild), 5.0)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_stop_while_a_child_is_started_comes_once_it_is_recorded(started: list[ChildProcess]) -> None:
    """A SIGTERM whose handler raises, between a child's start and its record, would leave the
    child running unrecorded: held, it is raised once the child is in the list, and only once."""
    stops: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stops.append(signum)
        raise KeyboardInterrupt

    def start_while_stopped_twice() -> None:
        with stop_signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            start(started, "sleeper", "import time; time.sleep(30)")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(KeyboardInterrupt):
            start_while_stopped_twice()
        assert len(started) == 1
        assert stops == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is stop  # the handler is back
    finally:
        signal.signal(signal.SIGTERM, previous)


def _wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def test_a_child_gets_sigint_when_the_process_that_started_it_is_killed(tmp_path) -> None:
    """A program that dies without stopping its children (SIGKILL, the OOM killer) leaves none
    running: each gets SIGINT from the kernel, as from a Ctrl-C."""
    marker = tmp_path / "ended"
    child_code = (
        "import signal, sys, time\n"
        f"def end(*_):\n    open({str(marker)!r}, 'w').write('SIGINT'); sys.exit(0)\n"
        "signal.signal(signal.SIGINT, end)\n"
        "print('up', flush=True); time.sleep(60)"
    )
    parent_code = (
        "import sys, time\n"
        "from acres_bridge.processes import ChildProcess\n"
        f"child = ChildProcess.start('child', [sys.executable, '-c', {child_code!r}])\n"
        "child.wait_for_line('up', 30.0)\n"
        "print(child.pid, flush=True); time.sleep(60)"
    )
    parent = subprocess.Popen(python(parent_code), stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
    finally:
        parent.kill()
        parent.wait()
    assert _wait_until(lambda: not _alive(child)), "the child outlived the process that started it"
    assert marker.read_text() == "SIGINT"


def test_a_child_started_from_a_thread_that_has_ended_runs_on(started: list[ChildProcess], tmp_path) -> None:
    """Linux sends the parent-death signal when the thread that forked a child ends: every child is
    forked from one thread that lasts as long as the process, so a Ray task's or a pool's thread
    ending stops nothing."""
    flag = tmp_path / "go"
    code = (
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGINT, lambda *_: (print('SIGINT', flush=True), sys.exit(5)))\n"
        f"print('up', flush=True)\nwhile not os.path.exists({str(flag)!r}):\n    time.sleep(0.01)\n"
        "print('still here', flush=True)"
    )
    thread = threading.Thread(target=lambda: started.append(ChildProcess.start("child", python(code))))
    thread.start()
    thread.join()
    assert thread.native_id is not None
    assert _wait_until(lambda: not os.path.exists(f"/proc/self/task/{thread.native_id}"))
    child = started[0]
    child.wait_for_line("up", timeout_s=10.0)
    flag.touch()  # after the thread is gone: a signal sent when it ended is handled before this is seen
    child.wait_for_line("still here", timeout_s=10.0)
    assert child.popen.wait(10.0) == 0
    assert "SIGINT" not in child.output


@pytest.fixture(params=["tmp_path", "tmpfs"])
def log_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A folder for logs: pytest's, and one on a tmpfs (which cannot cut a file in place)."""
    if request.param == "tmp_path":
        yield tmp_path
        return
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no tmpfs at /dev/shm")
    folder = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def numbered_lines(count: int) -> str:
    """Code that prints `count` lines of 32 bytes: 'line ' and the line's number in 26 digits."""
    return f"import sys\nfor n in range({count}):\n    sys.stdout.write(f'line {{n:026d}}\\n')"


def line(number: int) -> bytes:
    return f"line {number:026d}\n".encode()


def test_a_log_past_its_bound_keeps_its_first_and_last_lines_and_says_how_much_was_cut(
    started: list[ChildProcess], log_folder: Path
) -> None:
    bound = MIN_LOG_BYTES
    count = 3 * bound // 32
    log = log_folder / "chatty.log"
    child = ChildProcess.start("chatty", python(numbered_lines(count)), log_path=log, max_log_bytes=bound)
    started.append(child)
    assert child.popen.wait(60.0) == 0
    assert child.drain(60.0)
    data = log.read_bytes()
    assert len(data) <= bound
    assert data.startswith(line(0) + line(1) + line(2))
    assert data.endswith(b"".join(line(n) for n in range(count - 1000, count)))
    markers = re.findall(rb"\n--- ([\d,]+) bytes of output cut here [^\n]*\n", data)
    assert len(markers) == 1
    marker_bytes = len(re.search(rb"\n--- [^\n]*\n", data).group(0))  # type: ignore[union-attr]
    kept = len(data) - marker_bytes
    assert int(markers[0].replace(b",", b"")) == 32 * count - kept
    assert child.tail(2) == [f"line {count - 2:026d}", f"line {count - 1:026d}"]


def test_a_log_within_its_bound_is_left_whole(started: list[ChildProcess], tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    count = MIN_LOG_BYTES // 32
    child = ChildProcess.start(
        "quiet", python(numbered_lines(count)), log_path=log, max_log_bytes=MIN_LOG_BYTES
    )
    started.append(child)
    assert child.popen.wait(60.0) == 0
    assert child.drain(60.0)
    assert log.read_bytes() == b"".join(line(n) for n in range(count))


@pytest.mark.parametrize("logged", [False, True], ids=["pipe", "log_file"])
def test_a_long_line_without_a_newline_is_read_in_bounded_memory_and_its_end_is_kept(
    started: list[ChildProcess], tmp_path: Path, logged: bool
) -> None:
    code = (
        "import sys\nout = sys.stdout.buffer\n"
        "for _ in range(1024):\n    out.write(b'x' * 65536)\n"
        "out.write(b'THE END')"
    )
    log = tmp_path / "long.log" if logged else None
    tracemalloc.start()
    try:
        child = ChildProcess.start("long", python(code), log_path=log)
        started.append(child)
        assert child.popen.wait(120.0) == 0
        assert child.drain(120.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # the line is 64 MiB
    last = child.tail()[-1]
    assert last.endswith("x" * 1000 + "THE END")
    assert last.startswith("x" * 1000)
    assert f"[... {64 * 2**20 + 7 - MAX_LINE_BYTES:,} bytes cut ...]" in last
    assert len(last) < MAX_LINE_BYTES + 100
    if log is not None:
        assert log.stat().st_size <= MAX_LOG_BYTES
        with log.open("rb") as file:
            file.seek(-20, os.SEEK_END)
            assert file.read() == b"x" * 13 + b"THE END"


def test_a_log_bound_below_the_least_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"max_log_bytes must be an integer of at least {MIN_LOG_BYTES}"):
        ChildProcess.start("x", python("pass"), log_path=tmp_path / "x.log", max_log_bytes=4096)
    assert not (tmp_path / "x.log").exists()
