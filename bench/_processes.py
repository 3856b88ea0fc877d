"""The processes a benchmark runs: the reference simulator, the bridge, helpers of bench/.

Each child is an acres_bridge.processes.ChildProcess: it runs in its own session (a Ctrl-C at the
terminal reaches only the benchmark, which then ends its children), its output collected in the
background. `Children` ends every child it started, newest first, also when the benchmark fails.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import TracebackType

from acres_bridge.errors import ProcessFailedError
from acres_bridge.plan import SUBSYSTEMS
from acres_bridge.processes import (
    SIMULATOR_READY_LINE,
    ChildProcess,
    bridge_command,
    simulator_command,
    stop_signals_deferred,
)
from bench.errors import BenchError

__all__ = ["BRIDGE_SUBSYSTEMS", "START_TIMEOUT_S", "Child", "Children", "cpu_seconds"]

START_TIMEOUT_S = 30.0
SEED = 42
START_UTC = "20261002T072309"
# The bridge of the benchmarks: the simulator connection, /clock + /tf, the INS topics, /sim/episode.
BRIDGE_SUBSYSTEMS = ("ingest", "clock_tf", "ins", "episode")
TAIL_LINES = 15  # lines of a process's output in a BenchError
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, all its threads, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        # The command name (field 2) may hold spaces; the fields after its ')' are fixed.
        fields = stat.read().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / _CLOCK_TICKS


class Child(ChildProcess):
    """A process of a benchmark; its end before the benchmark's is a BenchError."""

    def cpu_seconds(self) -> float:
        """CPU time used so far (user + system, every thread)."""
        self.check_alive()
        return cpu_seconds(self.pid)

    def check_alive(self) -> None:
        """BenchError, its first line ending with the process's last line, when the process has ended."""
        try:
            super().check_alive()
        except ProcessFailedError as error:
            last = next((line for line in reversed(error.output) if line.strip()), "no output")
            raise BenchError(
                f"{self.name} ended with status {error.returncode} ({last}); last output:\n{self.text_tail()}"
            ) from error

    def text_tail(self) -> str:
        """The last TAIL_LINES lines of output, as one text."""
        return "\n".join(self.tail(TAIL_LINES))


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

    def start(self, name: str, args: list[str], env: Mapping[str, str] | None = None) -> Child:
        with stop_signals_deferred():  # a stop meanwhile finds the child in the list
            child = Child.start(name, args, env=env)
            self._started.append(child)
        return child

    def simulator(
        self,
        port: int,
        *,
        lockstep: bool,
        name: str = "acres_sim",
        perception: bool = False,
        extra: Sequence[str] = (),
    ) -> Child:
        """The reference simulator, as `acres_sim` runs it, listening once this returns.

        `extra` are further acres_sim options (e.g. --agent). Without `perception` it makes no clouds
        and images, so rows that do not publish them do not pay for them (the bridge would still
        receive and decode them).
        """
        flags = ("--log-level", "WARNING", "--perception" if perception else "--no-perception", *extra)
        args = simulator_command(port, seed=SEED, lockstep=lockstep, start_utc=START_UTC, extra=flags)
        child = self.start(name, args)
        child.wait_for_line(SIMULATOR_READY_LINE, START_TIMEOUT_S)
        return child

    def bridge(
        self,
        port: int,
        *,
        subsystems: tuple[str, ...] = BRIDGE_SUBSYSTEMS,
        name: str = "sim_bridge",
        env: Mapping[str, str] | None = None,
        **parameters: bool | int | float | str,
    ) -> Child:
        """The bridge (`sim_bridge`) connecting to the simulator at `port`, running exactly the
        given subsystems: every other subsystem of the plan is toggled off, so a subsystem added
        to the bridge later does not change what a row measures."""
        known = {subsystem.name for subsystem in SUBSYSTEMS}
        unknown = sorted(set(subsystems) - known)
        if unknown:
            raise BenchError(f"the bridge has no subsystems {unknown}; it has {sorted(known)}")
        toggles = {subsystem.name: subsystem.name in subsystems for subsystem in SUBSYSTEMS}
        args = bridge_command(port, **{**toggles, **parameters})
        return self.start(name, [*args, "--log-level", "warn"], env)
