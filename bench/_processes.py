"""The processes a benchmark runs: the reference simulator, the bridge, helpers of bench/.

Each child runs in its own session (a Ctrl-C at the terminal reaches only the benchmark, which
then ends its children), its output collected in the background. `Children` ends every child it
started, newest first, also when the benchmark fails.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

from acres_bridge.plan import SUBSYSTEMS
from bench.errors import BenchError

__all__ = ["BRIDGE_SUBSYSTEMS", "Child", "Children", "cpu_seconds", "free_port"]

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
SEED = 42
START_UTC = "20261002T072309"
# The bridge of the benchmarks: the simulator connection, /clock + /tf, the INS topics, /sim/episode.
BRIDGE_SUBSYSTEMS = ("ingest", "clock_tf", "ins", "episode")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, all its threads, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        # The command name (field 2) may hold spaces; the fields after its ')' are fixed.
        fields = stat.read().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / _CLOCK_TICKS


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass(eq=False)
class Child:
    """A child process whose output (stdout and stderr) is collected line by line."""

    name: str
    popen: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._collect, name=f"output of {self.name}", daemon=True).start()

    def _collect(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def pid(self) -> int:
        return self.popen.pid

    def cpu_seconds(self) -> float:
        """CPU time used so far (user + system, every thread)."""
        self.check_alive()
        return cpu_seconds(self.pid)

    def tail(self, count: int = 15) -> str:
        return "\n".join(self.lines[-count:])

    def check_alive(self) -> None:
        code = self.popen.poll()
        if code is not None:
            last = next((line for line in reversed(self.lines) if line.strip()), "no output")
            raise BenchError(f"{self.name} ended with status {code} ({last}); last output:\n{self.tail()}")

    def wait_for_line(self, text: str, timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines):
            self.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(
                    f"{self.name} did not print {text!r} within {timeout_s} s; its output:\n{self.tail()}"
                )
            time.sleep(0.02)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """SIGINT, then SIGKILL if it has not ended within timeout_s; returns the exit status."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout_s)
        return self.popen.returncode


class Children:
    """Starts the processes of one benchmark and ends them all on exit of the `with` block."""

    def __init__(self) -> None:
        self._started: list[Child] = []

    def __enter__(self) -> Children:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop_all()

    def stop_all(self) -> None:
        while self._started:
            self._started.pop().stop()

    def start(self, name: str, args: list[str]) -> Child:
        popen = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=_environment(),
            start_new_session=True,
        )
        child = Child(name, popen)
        self._started.append(child)
        return child

    def simulator(self, port: int, *, lockstep: bool, name: str = "acres_sim") -> Child:
        """The reference simulator, as `acres_sim` runs it, listening once this returns."""
        args = [sys.executable, "-m", "acres_sim.cli", "--port", str(port), "--seed", str(SEED)]
        args += ["--start-utc", START_UTC, "--log-level", "WARNING"]
        if lockstep:
            args.append("--lockstep")
        child = self.start(name, args)
        child.wait_for_line("listening on")
        return child

    def bridge(
        self,
        port: int,
        *,
        subsystems: tuple[str, ...] = BRIDGE_SUBSYSTEMS,
        name: str = "sim_bridge",
        **parameters: bool | int | float | str,
    ) -> Child:
        """The bridge (`sim_bridge`) connecting to the simulator at `port`, running exactly the
        given subsystems: every other subsystem of the plan is toggled off, so a subsystem added
        to the bridge later does not change what a row measures."""
        known = {subsystem.name for subsystem in SUBSYSTEMS}
        unknown = sorted(set(subsystems) - known)
        if unknown:
            raise BenchError(f"the bridge has no subsystems {unknown}; it has {sorted(known)}")
        args = [sys.executable, "-m", "acres_bridge.sim_bridge", "--ros-args", "-p", f"control_port:={port}"]
        toggles = {subsystem.name: subsystem.name in subsystems for subsystem in SUBSYSTEMS}
        for key, value in {**toggles, **parameters}.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            args += ["-p", f"{key}:={text}"]
        args += ["--log-level", "warn"]
        return self.start(name, args)
