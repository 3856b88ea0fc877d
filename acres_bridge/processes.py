"""Child processes: the reference simulator, the bridge and helper scripts, as the demo, the
benchmarks and the integration tests run them.

Each child runs in a session of its own, so a Ctrl-C at the terminal reaches only the parent, which
then stops its children in order; if the parent dies instead, each child gets SIGINT
(acres_bridge.spawn). Its stdout and stderr are collected line by line in a background thread: from
a pipe, or, for a child with a log file, from that file, which the child writes itself, so that
what it prints after its parent died is kept and never fails on a pipe nobody reads. DDS discovery
of every child stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).

Output is read in one pass, in time linear in its length and memory bounded whatever it is: a line
is kept in memory as its first 1 KiB and its last 3 KiB with the count of the bytes between, and at
most MAX_LINES lines of at most MAX_KEPT_CHARS characters all together, the newest. A log file
holds at most ``max_log_bytes`` (MAX_LOG_BYTES, 16 MiB) of a child's output: past that it keeps the
first quarter, a marker line that says how many bytes were cut, and the last part, which ends with
the last line written. The parent cuts the file as it reads it, in place
(``fallocate(FALLOC_FL_COLLAPSE_RANGE)``: the kernel moves the child's later writes with it, so
nothing it writes meanwhile is lost); on a file system that cannot (tmpfs, btrfs, NFS) the cut waits
until the child has ended, and what a child prints after its parent died is not cut at all.
"""

from __future__ import annotations

import ctypes
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
from typing import Final, Self

from acres_bridge.errors import ProcessFailedError
from acres_bridge.spawn import STOP_SIGNALS, spawn_popen

__all__ = [
    "MAX_KEPT_CHARS",
    "MAX_LINES",
    "MAX_LINE_BYTES",
    "MAX_LOG_BYTES",
    "MIN_LOG_BYTES",
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
MAX_KEPT_CHARS = 4 << 20  # characters of those lines, all together; older lines are dropped
MAX_LOG_BYTES = 16 << 20  # of a child's output in its log file: its first and last parts past that
MIN_LOG_BYTES = 1 << 20  # the least bound a log may be given
_LINE_HEAD = 1024  # bytes kept of the start of a longer line
_LINE_TAIL = 3072  # and of its end
MAX_LINE_BYTES: Final = _LINE_HEAD + _LINE_TAIL  # of a line kept whole in memory
_CUT_ALIGN = 1 << 16  # where a log is cut, and by how much: a multiple of any file system's block
_MARKER_BYTES = 160  # the marker line's width, padded: it is rewritten in place at each cut
_FALLOC_FL_COLLAPSE_RANGE = 0x08  # fallocate(2)
_DRAIN_TIMEOUT_S = 1.0  # wait for the output of an ended child to be read to its end
# A child's log file is read again after 10 ms, and after twice as long each time it had nothing
# new, up to 160 ms: lines come within 10 ms while the child prints, and an idle session (simulator
# and bridge) costs its parent 2.1 ms of CPU a second (7.6 ms read every 20 ms; 0.02 ms by pipes).
_FOLLOW_FIRST_S = 0.01
_FOLLOW_LAST_S = 0.16
_CHUNK = 1 << 18
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


class _LineSplitter:
    """Splits a stream of bytes into lines in one pass: each line kept whole up to MAX_LINE_BYTES,
    a longer one as its first _LINE_HEAD and last _LINE_TAIL bytes and the count of those between;
    so neither time nor memory grows with a line's length beyond that."""

    def __init__(self) -> None:
        self._head = bytearray()  # the first bytes of the line being read
        self._tail = bytearray()  # its last bytes, at most _LINE_TAIL after each piece
        self._length = 0  # its length so far

    def feed(self, chunk: bytes) -> list[str]:
        """The lines `chunk` completes."""
        *whole, rest = chunk.split(b"\n")
        lines = []
        for piece in whole:
            self._extend(piece)
            lines.append(self._finish())
        self._extend(rest)
        return lines

    def close(self) -> list[str]:
        """The last line, if the stream ended without its newline."""
        return [self._finish()] if self._length else []

    def _extend(self, piece: bytes) -> None:
        self._length += len(piece)
        room = _LINE_HEAD - len(self._head)
        if room > 0:
            self._head += piece[:room]
            piece = piece[room:]
        if piece:
            self._tail += piece[-_LINE_TAIL:]
            del self._tail[: max(0, len(self._tail) - _LINE_TAIL)]

    def _finish(self) -> str:
        cut = self._length - len(self._head) - len(self._tail)
        head = self._head.decode(errors="replace")
        tail = self._tail.decode(errors="replace")
        self._head, self._tail, self._length = bytearray(), bytearray(), 0
        text = f"{head} [... {cut:,} bytes cut ...] {tail}" if cut else head + tail
        return text.removesuffix("\r")


def _load_fallocate() -> Callable[..., int] | None:
    """libc's fallocate(2), on Linux."""
    if not sys.platform.startswith("linux"):
        return None
    call = ctypes.CDLL(None, use_errno=True).fallocate
    call.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    call.restype = ctypes.c_int
    return call


_FALLOCATE: Final = _load_fallocate()


def _align_up(value: int, step: int) -> int:
    return -(-value // step) * step


class _BoundedLog:
    """A log file a child appends to, read by its parent from `start` and kept within `max_bytes`
    from there: its first quarter (to an aligned offset), a marker line that replaces the last
    bytes of that part, and its last part. See the module."""

    def __init__(self, fd: int, start: int, max_bytes: int) -> None:
        self.fd = fd
        self.start = start
        self.max_bytes = max_bytes
        self.head_end = _align_up(start + max_bytes // 4, _CUT_ALIGN)  # where cuts begin
        self.slack = max(_CUT_ALIGN, max_bytes // 16)  # a cut leaves this much room below the bound
        self.cut = 0  # bytes of the output cut so far, those under the marker included
        self.in_place = _FALLOCATE is not None  # until the file system says it cannot
        self.failed = False  # a cut met an I/O error (a full disk): the log is left as it is

    def over(self, read_end: int) -> bool:
        return not self.failed and read_end - self.start > self.max_bytes

    def while_running(self, read_end: int) -> int:
        """Cut the read part of the log down below the bound, in place, when it has passed it
        (and the file system can); where the reading goes on."""
        if not self.in_place or not self.over(read_end):
            return read_end
        length = _align_up(read_end - (self.start + self.max_bytes - self.slack), _CUT_ALIGN)
        assert _FALLOCATE is not None
        assert self.head_end + length < read_end  # a cut never reaches what was not read
        if _FALLOCATE(self.fd, _FALLOC_FL_COLLAPSE_RANGE, self.head_end, length) != 0:
            self.in_place = False  # EOPNOTSUPP: cut once the child has ended
            return read_end
        try:
            self._mark(length)
        except OSError:
            self.failed = True
        return read_end - length

    def _copy_down(self, read_end: int) -> int:
        """Copy the last bytes of the log down to the end of the first part and truncate it there;
        where it now ends."""
        keep = self.start + self.max_bytes - self.head_end
        source, target = read_end - keep, self.head_end  # target < source: a forward copy is safe
        while target < self.head_end + keep:
            chunk = os.pread(self.fd, min(_CHUNK, self.head_end + keep - target), source)
            if not chunk:
                break
            os.pwrite(self.fd, chunk, target)
            source += len(chunk)
            target += len(chunk)
        os.ftruncate(self.fd, target)
        return target

    def at_end(self, read_end: int) -> None:
        """Once the child has ended and its log is read: the log within the bound, by copying its
        last part down to the marker and truncating it, if cutting in place could not."""
        if not self.over(read_end):
            return
        try:
            end = self._copy_down(read_end)
            self._mark(read_end - end)
        except OSError:
            self.failed = True

    def _mark(self, removed: int) -> None:
        """Write the marker line, with the count of bytes cut so far, over the end of the first part."""
        self.cut += removed + (0 if self.cut else _MARKER_BYTES)
        text = (
            f"\n--- {self.cut:,} bytes of output cut here (this log keeps the first and the last part"
            f" of at most {self.max_bytes:,} bytes) ---"
        )
        line = text.encode()[: _MARKER_BYTES - 1].ljust(_MARKER_BYTES - 1) + b"\n"
        os.pwrite(self.fd, line, self.head_end - _MARKER_BYTES)


def _follow_log(log: _BoundedLog, ended: Callable[[], bool], emit: Callable[[list[str]], None]) -> None:
    """Hand `emit` the lines written to the log after its start, as they come, until ``ended()``
    and nothing more is there (a last line without its newline included), keeping the log within
    its bound; the log's descriptor is closed at the end."""
    splitter = _LineSplitter()
    read_end = log.start
    pause = _FOLLOW_FIRST_S
    try:
        while True:
            done = ended()  # asked before the read: all the child wrote before it ended is there
            chunk = os.pread(log.fd, _CHUNK, read_end)
            if chunk:
                read_end += len(chunk)
                emit(splitter.feed(chunk))
                read_end = log.while_running(read_end)
                pause = _FOLLOW_FIRST_S
            elif done:
                break
            else:
                time.sleep(pause)
                pause = min(2.0 * pause, _FOLLOW_LAST_S)
        emit(splitter.close())
        log.at_end(read_end)
    finally:
        os.close(log.fd)


class ChildProcess:
    """A child process whose output (stdout and stderr together) is collected line by line."""

    def __init__(self, name: str, popen: subprocess.Popen[str], *, log: _BoundedLog | None = None) -> None:
        """``log``: the file the child writes its output to; None: its pipe."""
        self.name = name
        self.popen = popen
        self._log = log
        self._lines: deque[str] = deque()
        self._kept_chars = 0  # of the lines kept
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
        max_log_bytes: int = MAX_LOG_BYTES,
        cwd: Path | None = None,
        keep_fds: Sequence[int] = (),
        end_with_parent: bool = True,
    ) -> Self:
        """Start `args` in a session of its own, in `env` (default: localhost_environment()); with
        `log_path`, the child writes its output to that file (created, or appended to), of which
        the file keeps at most `max_log_bytes` (see the module). The child gets SIGINT when this
        process ends, unless `end_with_parent` is False (acres_bridge.spawn); `keep_fds` stay open
        in it. ValueError for a bound below MIN_LOG_BYTES."""
        if (
            isinstance(max_log_bytes, bool)
            or not isinstance(max_log_bytes, int)
            or max_log_bytes < MIN_LOG_BYTES
        ):
            raise ValueError(
                f"max_log_bytes must be an integer of at least {MIN_LOG_BYTES}, found {max_log_bytes!r}"
            )
        log, followed = None, None
        try:
            if log_path is not None:
                log = log_path.open("ab")
                followed = _BoundedLog(os.open(log_path, os.O_RDWR), log.tell(), max_log_bytes)
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
        except BaseException:
            if followed is not None:
                os.close(followed.fd)
            raise
        finally:
            if log is not None:
                log.close()  # the child has its own descriptor of the file
        return cls(name, popen, log=followed)

    def _collect(self) -> None:
        if self._log is not None:
            _follow_log(self._log, lambda: self.popen.poll() is not None, self._add)
            return
        stdout = self.popen.stdout
        assert stdout is not None
        with stdout:
            splitter = _LineSplitter()
            while chunk := os.read(stdout.fileno(), _CHUNK):
                self._add(splitter.feed(chunk))
            self._add(splitter.close())

    def _add(self, lines: list[str]) -> None:
        """Keep `lines`, dropping the oldest past MAX_LINES or MAX_KEPT_CHARS."""
        if not lines:
            return
        with self._changed:
            for line in lines:
                self._lines.append(line)
                self._kept_chars += len(line)
            while len(self._lines) > 1 and (
                len(self._lines) > MAX_LINES or self._kept_chars > MAX_KEPT_CHARS
            ):
                self._kept_chars -= len(self._lines.popleft())
            self._count += len(lines)
            self._changed.notify_all()

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def lines(self) -> list[str]:
        """The output so far (at most MAX_LINES and MAX_KEPT_CHARS, the newest), one string per line,
        a long one shortened in its middle (see the module)."""
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

    def drain(self, timeout_s: float) -> bool:
        """Wait until the output of the ended child has been read to its end and its log cut to its
        bound: True; False when `timeout_s` passes first (the child runs, or a process it started
        still writes to its output)."""
        self._reader.join(timeout_s)
        return not self._reader.is_alive()

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
