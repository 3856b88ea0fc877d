"""Child processes: the reference simulator, the bridge and helper scripts, as the demo, the
benchmarks and the integration tests run them.

Each child runs in a session of its own, so a Ctrl-C at the terminal reaches only the parent, which
then stops its children in order; if the parent dies instead, each child gets SIGINT
(acres_bridge.spawn). Its stdout and stderr are collected line by line in a background thread: from
a pipe, or, for a child with a log file, from that file, which the child writes itself, so that
what it prints after its parent died is kept and never fails on a pipe nobody reads. DDS discovery
of every child stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Self

from acres_bridge.errors import ProcessFailedError
from acres_bridge.spawn import STOP_SIGNALS, spawn_popen

__all__ = [
    "MAX_LINES",
    "SIMULATOR_READY_LINE",
    "STOP_TIMEOUT_S",
    "TAIL_LINES",
    "ChildProcess",
    "bridge_command",
    "describe_exit",
    "free_port",
    "free_udp_port",
    "localhost_environment",
    "simulator_command",
    "stop_signals_deferred",
]

SIMULATOR_READY_LINE = "listening on"  # the simulator prints it once it accepts connections
STOP_TIMEOUT_S = 10.0  # wait after SIGINT before a child is killed
TAIL_LINES = 30  # lines of output an error about a child shows
MAX_LINES = 10_000  # lines of output kept per child; older ones are dropped
_DRAIN_TIMEOUT_S = 1.0  # wait for the output of an ended child to be read to its end
# A child's log file is read again after 10 ms, and after twice as long each time it had nothing
# new, up to 160 ms: lines come within 10 ms while the child prints, and an idle session (simulator
# and bridge) costs its parent 2.1 ms of CPU a second (7.6 ms read every 20 ms; 0.02 ms by pipes).
_FOLLOW_FIRST_S = 0.01
_FOLLOW_LAST_S = 0.16
_CHUNK = 1 << 16
_POLL_S = 0.05


@contextmanager
def stop_signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM held while the block runs, and delivered when it ends.

    For starting a child and recording it: a stop whose handler raises (KeyboardInterrupt), coming
    between the child's fork and its record, would leave it running with nothing to stop it
    (subprocess.Popen itself may be interrupted after the fork). Held, the stop comes once the
    child is recorded, and ends it with the others. Only the main thread runs signal handlers; in
    another thread the block runs as it is. A signal whose handler Python did not set is not held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        held.append(signum)

    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum, handler in previous.items():
        if handler is not None:
            signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)
        for number in dict.fromkeys(held):
            signal.raise_signal(number)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def free_udp_port() -> int:
    """A UDP port on loopback that nothing is bound to now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def localhost_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: `base` (default this process's), with DDS discovery confined to
    this machine and Python output unbuffered, so lines arrive as they are printed."""
    env = dict(os.environ if base is None else base)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def simulator_command(
    port: int, *, seed: int, lockstep: bool, start_utc: str | None = None, extra: Sequence[str] = ()
) -> list[str]:
    """The command line of the reference simulator (`python -m acres_sim.cli`) listening on `port`."""
    args = [sys.executable, "-m", "acres_sim.cli", "--port", str(port), "--seed", str(seed)]
    if start_utc is not None:
        args += ["--start-utc", start_utc]
    if lockstep:
        args.append("--lockstep")
    return [*args, *extra]


def bridge_command(port: int, **parameters: bool | int | float | str) -> list[str]:
    """The command line of the bridge (`python -m acres_bridge.sim_bridge`) connecting to the simulator
    at `port`, with each keyword as a ROS parameter (booleans as true/false)."""
    args = [sys.executable, "-m", "acres_bridge.sim_bridge", "--ros-args", "-p", f"control_port:={port}"]
    for name, value in parameters.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        args += ["-p", f"{name}:={text}"]
    return args


def describe_exit(returncode: int) -> str:
    """How a process ended: 'exited with status N' or 'was ended by SIGNAME'."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        return f"was ended by {signal.Signals(-returncode).name}"
    except ValueError:
        return f"was ended by signal {-returncode}"


def _followed_lines(path: Path, offset: int, ended: Callable[[], bool]) -> Iterator[str]:
    """The lines written to ``path`` after ``offset``, as they come, until ``ended()`` and nothing
    more is there (a last line without its newline included)."""
    with path.open("rb") as file:
        file.seek(offset)
        partial = b""
        pause = _FOLLOW_FIRST_S
        while True:
            done = ended()  # asked before the read: all the child wrote before it ended is there
            chunk = file.read(_CHUNK)
            if chunk:
                *whole, partial = (partial + chunk).split(b"\n")
                yield from (line.decode(errors="replace") for line in whole)
                pause = _FOLLOW_FIRST_S
            elif done:
                break
            else:
                time.sleep(pause)
                pause = min(2.0 * pause, _FOLLOW_LAST_S)
        if partial:
            yield partial.decode(errors="replace")


class ChildProcess:
    """A child process whose output (stdout and stderr together) is collected line by line."""

    def __init__(
        self, name: str, popen: subprocess.Popen[str], *, log: tuple[Path, int] | None = None
    ) -> None:
        """``log``: the file the child writes its output to and where it starts; None: its pipe."""
        self.name = name
        self.popen = popen
        self._log = log
        self._lines: deque[str] = deque(maxlen=MAX_LINES)
        self._count = 0  # lines read so far, dropped ones included
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._collect, name=f"output of {name}", daemon=True)
        self._reader.start()

    @classmethod
    def start(
        cls,
        name: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        cwd: Path | None = None,
        keep_fds: Sequence[int] = (),
        end_with_parent: bool = True,
    ) -> Self:
        """Start `args` in a session of its own, in `env` (default: localhost_environment()); with
        `log_path`, the child writes its whole output to that file (created, or appended to). The
        child gets SIGINT when this process ends, unless `end_with_parent` is False
        (acres_bridge.spawn); `keep_fds` stay open in it."""
        log, followed = None, None
        if log_path is not None:
            log = log_path.open("ab")
            followed = (log_path, log.tell())
        try:
            popen = spawn_popen(
                list(args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if log is None else log,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=localhost_environment() if env is None else dict(env),
                start_new_session=True,
                cwd=cwd,
                pass_fds=tuple(keep_fds),
                end_with_parent=end_with_parent,
            )
        finally:
            if log is not None:
                log.close()  # the child has its own descriptor of the file
        return cls(name, popen, log=followed)

    def _collect(self) -> None:
        if self._log is None:
            stdout = self.popen.stdout
            assert stdout is not None
            with stdout:
                for line in stdout:
                    self._add(line.rstrip("\n"))
        else:
            path, offset = self._log
            for line in _followed_lines(path, offset, lambda: self.popen.poll() is not None):
                self._add(line)

    def _add(self, line: str) -> None:
        with self._changed:
            self._lines.append(line)
            self._count += 1
            self._changed.notify_all()

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def lines(self) -> list[str]:
        """The output so far (at most MAX_LINES, the newest), one string per line."""
        with self._changed:
            return list(self._lines)

    @property
    def output(self) -> str:
        """The output so far as one text."""
        return "\n".join(self.lines)

    def tail(self, lines: int = TAIL_LINES) -> list[str]:
        """The last `lines` lines of output."""
        with self._changed:
            return list(islice(self._lines, max(0, len(self._lines) - lines), None))

    def check_alive(self) -> None:
        """Raise ProcessFailedError, with the tail of the output, when the process has ended."""
        code = self.popen.poll()
        if code is None:
            return
        self._reader.join(_DRAIN_TIMEOUT_S)
        raise ProcessFailedError(self.name, describe_exit(code), self.tail(), returncode=code)

    def wait_for_line(
        self, text: str, timeout_s: float, *, cancelled: Callable[[], object] | None = None
    ) -> bool:
        """Wait until a line of output contains `text`: True. False when `cancelled()` turns true
        first; ProcessFailedError when the process ends without printing it or timeout_s passes."""
        deadline = time.monotonic() + timeout_s
        checked = 0
        while True:
            found, checked = self._scan(text, checked)
            if found:
                return True
            if self.popen.poll() is not None:
                self._reader.join(_DRAIN_TIMEOUT_S)
                found, checked = self._scan(text, checked)
                if found:
                    return True
                self.check_alive()
            if cancelled is not None and cancelled():
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProcessFailedError(
                    self.name, f"did not print {text!r} within {timeout_s:g} s", self.tail()
                )
            with self._changed:
                if self._count == checked:
                    self._changed.wait(min(left, _POLL_S))

    def _scan(self, text: str, checked: int) -> tuple[bool, int]:
        """Whether a line read after the first `checked` contains `text`; the count of lines read."""
        with self._changed:
            fresh = min(self._count - checked, len(self._lines))
            return any(text in line for line in islice(reversed(self._lines), fresh)), self._count

    def stop(
        self,
        timeout_s: float = STOP_TIMEOUT_S,
        *,
        report: Callable[[str], None] | None = None,
        group: bool = False,
    ) -> int:
        """SIGINT, then SIGKILL if the process has not ended within timeout_s (said to `report` first);
        the exit status, negative for the signal that ended it.

        With `group`, the signals go to the child's whole process group, as a Ctrl-C at a terminal
        does (a `ros2 launch` and the nodes it started), and whatever of the group outlives the
        child is killed: nothing it started is left behind."""
        if self.popen.poll() is None:
            self._signal(signal.SIGINT, group)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                if report is not None:
                    report(f"{self.name} ignored SIGINT for {timeout_s:g} s; killing it")
                self._signal(signal.SIGKILL, group)
                self.popen.wait(timeout_s)
        if group:
            self._signal(signal.SIGKILL, True)
        self._reader.join(_DRAIN_TIMEOUT_S)
        return self.popen.returncode

    def kill(self) -> int:
        """SIGKILL, for a child that keeps nothing a graceful end would save; its exit status."""
        if self.popen.poll() is None:
            self._signal(signal.SIGKILL, False)
        self.popen.wait()  # the kernel ends a killed process at once
        self._reader.join(_DRAIN_TIMEOUT_S)
        return self.popen.returncode

    def _signal(self, signum: signal.Signals, group: bool) -> None:
        """Send `signum` to the child, or to its process group (its session, started for it)."""
        try:
            if group:
                os.killpg(self.popen.pid, signum)
            else:
                self.popen.send_signal(signum)
        except ProcessLookupError:
            pass
