"""An isolated session: the reference simulator, the bridge and a stack in a DDS domain of their own.

    config = SessionConfig(agents=(AgentConfig(name="polaris", vehicle="polaris"),), seed=3)
    with IsolatedSession(config, folder) as session:
        stack = session.start_process("stack", ["ros2", "run", "my_pkg", "follower"])
        client = session.stepping_client(["/clock", "/vehicle/odom"])
        client.step(120)

The one way the scenario runner, the Gymnasium environments and the test kit start a session. The
session leases a domain (acres_bridge.session.domains) that no other live session on this machine
holds, starts the simulator on a free loopback port and the bridge in that domain with the fence
on (localhost discovery, no static peers), and gives the caller an rclpy node in the same domain.
Each process writes its output to ``folder/<name>.log``, at most ``max_log_bytes`` (16 MiB) of it:
past that the log keeps its first and its last part (acres_bridge.processes). ``close()`` (or
leaving the ``with``) ends every process, the stack's whole process group first, then the bridge,
then the simulator, whatever happened, then whatever they left running (a daemon that double-forked,
called setsid and cleared its environment included: acres_bridge.session.leftovers), and gives the
domain back, free once close() returns; a session still open when the program exits is closed then.
If the program dies instead (SIGKILL, the OOM killer), the simulator and the bridge get SIGINT from
the kernel (acres_bridge.spawn), and the session's watch sends every process of the session (by its
ACRES_SESSION_DIR, or the domain lease it holds) one SIGINT, as a Ctrl-C would, and SIGKILL after
5 s (acres_bridge.session.session_watch: a stack's ``ros2 launch`` then ends its nodes); the domain
stays leased until the last of them has ended: each holds the lease.

Only the session's bridge talks to the session's simulator: the session gives the two a token of its
own (acres_bridge.wire.session_token) through a file the bridge removes as it reads it, before any
other process of the session starts; the simulator refuses any other client, and
``refused_clients()`` says how many it refused (the scenario runner makes such an episode an ERROR).
"""

from __future__ import annotations

import atexit
import contextlib
import math
import re
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Final, Self

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from acres_bridge.errors import AcresBridgeError, ProcessFailedError
from acres_bridge.lockstep import SteppingClient
from acres_bridge.processes import (
    MAX_LOG_BYTES,
    MIN_LOG_BYTES,
    SIMULATOR_READY_LINE,
    ChildProcess,
    bridge_command,
    free_port,
    localhost_environment,
    simulator_command,
    stop_signals_deferred,
)
from acres_bridge.session.domains import DomainLease, lease_domain
from acres_bridge.session.leftovers import SessionProcesses
from acres_bridge.wire.session_token import REFUSED_LOG, new_token, write_token
from acres_bridge.wire.vocabulary import Vehicle

__all__ = [
    "READY_TIMEOUT_S",
    "AgentConfig",
    "IsolatedSession",
    "SessionConfig",
    "SessionError",
    "StartPose",
]

READY_TIMEOUT_S: Final = 60.0  # the simulator's start: its kernels load from the cache in well under this
STOP_TIMEOUT_S: Final = 10.0  # after SIGINT, before a process is killed
LOG_DRAIN_TIMEOUT_S: Final = 10.0  # for the rest of a log to be read and the log cut to its bound
TOKEN_FILE: Final = ".session_token"  # in the session's folder until the bridge has taken it
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_ -]{0,63}$")


class SessionError(AcresBridgeError):
    """Raised when a session cannot start: a bad configuration, or a process that never came up
    (the message names the process and ends with its last output)."""


@dataclass(frozen=True, kw_only=True)
class StartPose:
    """An agent's pose before the first step: tile x, y in m (``frame="tile"``) or UTM easting and
    northing of the tile's zone (``frame="utm"``), and the yaw in degrees counter-clockwise from east."""

    x: float
    y: float
    yaw_deg: float
    frame: str = "tile"

    def __post_init__(self) -> None:
        if self.frame not in ("tile", "utm"):
            raise SessionError(f"StartPose.frame must be 'tile' or 'utm', found {self.frame!r}")
        if not all(math.isfinite(v) for v in (self.x, self.y, self.yaw_deg)):
            raise SessionError(
                f"StartPose: expected finite numbers, found {self.x}, {self.y}, {self.yaw_deg}"
            )

    def argument(self, agent: str) -> list[str]:
        """The simulator's option for this pose of `agent`."""
        flag = "--start" if self.frame == "tile" else "--start-utm"
        return [flag, f"{agent}={self.x!r},{self.y!r},{self.yaw_deg!r}"]


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    """An agent of the session: its name, its vehicle and, if given, its start pose."""

    name: str
    vehicle: str = str(Vehicle.POLARIS)
    start: StartPose | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise SessionError(f"agent name {self.name!r}: 1-64 letters, digits, '_', '-' or spaces")
        if self.vehicle not in tuple(Vehicle):
            raise SessionError(
                f"agent {self.name!r}: vehicle must be polaris or maxxum, found {self.vehicle!r}"
            )


@dataclass(frozen=True, kw_only=True)
class SessionConfig:
    """What a session runs: its agents, the simulator's options and the bridge's parameters.

    ``start_utc`` sets the sun and the weather and the episode ids (default: now); with lockstep
    and a fixed ``start_utc`` the same requests give the same data and the same episode log.
    ``episode_log`` is a file name inside the session's folder (None: no episode log)."""

    agents: tuple[AgentConfig, ...] = (AgentConfig(name="polaris"),)
    scene: str = "acre"
    map: str | None = None
    seed: int = 42
    start_utc: datetime | None = None
    core: bool = False
    perception: bool = False
    lockstep: bool = True
    autopilot: bool = False
    episode_log: str | None = "episode_log.mcap"
    bridge_parameters: Mapping[str, bool | int | float | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.agents:
            raise SessionError("a session needs at least one agent")
        names = [a.name for a in self.agents]
        if len(set(names)) != len(names):
            raise SessionError(f"agent names must differ, found {names}")
        if not 0 <= self.seed < 1 << 32:
            raise SessionError(f"seed must be in 0 .. 2^32-1, found {self.seed}")
        if self.start_utc is not None and self.start_utc.tzinfo is None:
            raise SessionError(f"start_utc must carry its time zone, found {self.start_utc!r}")

    @property
    def vehicle(self) -> str:
        """The first agent's vehicle: the one a one-agent session's topics are of."""
        return self.agents[0].vehicle

    def simulator_arguments(self, episode_log: Path | None) -> list[str]:
        """The simulator's options for this session (after its port, seed and lockstep flag)."""
        args: list[str] = []
        if len(self.agents) == 1 and self.agents[0].name == self.agents[0].vehicle:
            args += ["--vehicle", self.agents[0].vehicle]
        else:
            for agent in self.agents:
                args += ["--agent", f"{agent.name}:{agent.vehicle}"]
        for agent in self.agents:
            if agent.start is not None:
                args += agent.start.argument(agent.name)
        args += ["--scene", self.scene, "--perception" if self.perception else "--no-perception"]
        if self.map is not None:
            args += ["--map", self.map]
        if self.core:
            args.append("--core")
        if self.autopilot:
            args.append("--autopilot")
        if episode_log is not None:
            args += ["--episode-log", str(episode_log)]
        return args

    def bridge_arguments(self) -> dict[str, bool | int | float | str]:
        """The bridge's parameters: the vehicle, every agent when there are several, perception."""
        parameters: dict[str, bool | int | float | str] = {"vehicle": self.vehicle}
        if len(self.agents) > 1:
            parameters["agents"] = "auto"
        parameters["perception"] = self.perception
        parameters.update(self.bridge_parameters)
        return parameters


def _utc_text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%S")


_LIVE: weakref.WeakSet[IsolatedSession] = weakref.WeakSet()  # started and not yet closed


@atexit.register
def _close_live_sessions() -> None:
    """At the interpreter's exit, also an exit by an uncaught exception: a session its program
    did not close ends its processes rather than leaving them running without a parent."""
    for session in list(_LIVE):
        session.close()


class IsolatedSession:
    """A simulator, a bridge and the caller's processes in a leased DDS domain; see the module."""

    def __init__(
        self,
        config: SessionConfig,
        folder: Path,
        *,
        ready_timeout_s: float = READY_TIMEOUT_S,
        max_log_bytes: int = MAX_LOG_BYTES,
    ) -> None:
        """`max_log_bytes`: the bound of each process's log (at least MIN_LOG_BYTES)."""
        if not isinstance(max_log_bytes, int) or max_log_bytes < MIN_LOG_BYTES:
            raise SessionError(
                f"max_log_bytes must be an integer of at least {MIN_LOG_BYTES}, found {max_log_bytes!r}"
            )
        self.config = config
        self.folder = Path(folder)
        self.ready_timeout_s = ready_timeout_s
        self.max_log_bytes = max_log_bytes
        self.lease: DomainLease | None = None
        self._tree: SessionProcesses | None = None  # what the processes leave behind is ended at close
        self.port: int | None = None
        self.processes: list[ChildProcess] = []
        self._groups: set[str] = set()  # processes whose whole process group is stopped
        # Ends the processes if this program dies first (acres_bridge.session.session_watch).
        self.watch: ChildProcess | None = None
        self.simulator: ChildProcess | None = None
        self.bridge: ChildProcess | None = None
        self._context: Context | None = None
        self._node: Node | None = None
        self._clients: list[SteppingClient] = []

    # ---- start ---------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    @property
    def domain_id(self) -> int:
        if self.lease is None:
            raise SessionError("the session has not started")
        return self.lease.domain_id

    @property
    def episode_log(self) -> Path | None:
        """The episode log's path, complete once the simulator has stopped."""
        name = self.config.episode_log
        return None if name is None else self.folder / name

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of the session's processes: this process's, the fence (discovery on this
        machine, no static peers), the session's domain, and ACRES_DOMAIN_ID, ACRES_NAMESPACE and
        ACRES_SESSION_DIR (absolute: a stack may run elsewhere) for a stack that wants to know them."""
        env = localhost_environment()
        env.pop("ROS_STATIC_PEERS", None)
        env.pop("ROS_LOCALHOST_ONLY", None)
        env["ROS_DOMAIN_ID"] = env["ACRES_DOMAIN_ID"] = str(self.domain_id)
        env["ACRES_NAMESPACE"] = ""
        env["ACRES_SESSION_DIR"] = str(self.folder.resolve())
        env.update(extra or {})
        return env

    def start(self) -> None:
        """Lease a domain, start the simulator and, once it listens, the bridge. SessionError when
        either cannot start; what had started is ended again."""
        _LIVE.add(self)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.lease = lease_domain()
            self._tree = SessionProcesses(self.folder, self.lease.path)
            self._tree.enter()  # before the first child: the orphans of its descendants come here
            watch = [
                sys.executable,
                "-m",
                "acres_bridge.session.session_watch",
                str(self.folder.resolve()),
                str(self.lease.path.resolve()),
            ]
            with stop_signals_deferred():  # a Ctrl-C meanwhile finds the watch recorded
                self.watch = self._start_child("session.watch", watch, end_with_parent=False)
            self.port = free_port()
            episode_log = self.episode_log
            if episode_log is not None:
                episode_log.unlink(missing_ok=True)  # a session of this folder run again writes it anew
            start_utc = None if self.config.start_utc is None else _utc_text(self.config.start_utc)
            command = simulator_command(
                self.port,
                seed=self.config.seed,
                lockstep=self.config.lockstep,
                start_utc=start_utc,
                extra=self.config.simulator_arguments(episode_log),
            )
            token = self._token_file
            token.unlink(missing_ok=True)  # a session of this folder that died before its bridge took it
            write_token(token, new_token())
            command += ["--session-token-file", str(token)]
            self.simulator = self.start_process("simulator", command, group=False)
            try:
                self.simulator.wait_for_line(SIMULATOR_READY_LINE, self.ready_timeout_s)
            except ProcessFailedError as error:
                raise SessionError(str(error)) from None
            arguments = {"session_token_file": str(token), **self.config.bridge_arguments()}
            self.bridge = self.start_process("bridge", bridge_command(self.port, **arguments), group=False)
            self._wait_until_token_taken(self.bridge)
        except BaseException:
            self.close()
            raise

    @property
    def _token_file(self) -> Path:
        return self.folder / TOKEN_FILE

    def _wait_until_token_taken(self, bridge: ChildProcess) -> None:
        """Until the bridge has read the session's token and removed its file (the simulator read
        it before it listened): no process started after this can find it."""
        deadline = time.monotonic() + self.ready_timeout_s
        while self._token_file.exists():
            try:
                bridge.check_alive()
            except ProcessFailedError as error:
                raise SessionError(str(error)) from None
            if time.monotonic() > deadline:
                raise SessionError(
                    f"the bridge did not take the session's token within {self.ready_timeout_s:g} s; "
                    f"its last lines:\n" + "\n".join(bridge.tail(10))
                )
            time.sleep(0.02)

    def refused_clients(self) -> int:
        """How many connections the session's simulator refused for want of the session's token:
        another process than the session's bridge tried to reach it (its log says each)."""
        marker = REFUSED_LOG.encode()
        path = self.folder / "simulator.log"
        count, tail = 0, b""
        with contextlib.suppress(FileNotFoundError), path.open("rb") as log:
            while block := log.read(1 << 20):
                data = tail + block
                count += data.count(marker)
                tail = data[-(len(marker) - 1) :]  # too short to hold a marker counted already
        return count

    def start_process(
        self,
        name: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        group: bool = True,
        cwd: Path | None = None,
    ) -> ChildProcess:
        """Start a process of the session in its domain, its output in ``folder/<name>.log``.
        With `group` (the default, for stacks) its whole process group is ended at close(); if this
        program dies first, the session's watch ends it (the simulator and the bridge get the
        kernel's parent-death signal as well)."""
        if self.lease is None:
            raise SessionError("start the session before its processes")
        if not _NAME.match(name) or any(p.name == name for p in self.processes):
            raise SessionError(f"process name {name!r} is taken or not a plain name")
        with stop_signals_deferred():  # a Ctrl-C meanwhile finds the process in the list
            process = self._start_child(name, args, env=env, cwd=cwd, end_with_parent=not group)
            self.processes.append(process)
        if group:
            self._groups.add(name)
        return process

    def _start_child(
        self,
        name: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        end_with_parent: bool,
    ) -> ChildProcess:
        assert self.lease is not None
        assert self._tree is not None
        process = ChildProcess.start(
            name,
            args,
            env=self.environment(env),
            log_path=self.folder / f"{name}.log",
            max_log_bytes=self.max_log_bytes,
            cwd=cwd,
            keep_fds=(self.lease.fileno(),),  # the domain stays leased while the process runs
            end_with_parent=end_with_parent,
        )
        self._tree.add(process.pid)
        return process

    # ---- the caller's node ---------------------------------------------------------------------

    @property
    def node(self) -> Node:
        """An rclpy node of the caller in the session's domain (made on first use)."""
        if self._node is None:
            context = Context()
            rclpy.init(
                args=[],
                context=context,
                domain_id=self.domain_id,
                signal_handler_options=SignalHandlerOptions.NO,
            )
            self._context = context
            self._node = Node(f"acres_session_{self.domain_id}", context=context)
        return self._node

    def stepping_client(
        self, topics: Sequence[str], *, executor: Executor | None = None, **options: object
    ) -> SteppingClient:
        """A SteppingClient on the session's node for `topics` of its first agent's vehicle, spun
        by `executor` (default: one of its own; pass one to spin the node between steps too)."""
        client = SteppingClient(
            self.node,
            topics,
            vehicle=self.config.vehicle,
            executor=executor or SingleThreadedExecutor(context=self.node.context),
            **options,  # type: ignore[arg-type]
        )
        self._clients.append(client)
        return client

    # ---- health and end ------------------------------------------------------------------------

    def check_alive(self) -> None:
        """ProcessFailedError, naming the process and its last output, when one of them has ended."""
        for process in self.processes:
            process.check_alive()

    def stop_process(self, process: ChildProcess, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """End one process of the session (its group, for a stack); its exit status."""
        return process.stop(timeout_s, group=process.name in self._groups)

    def close(self) -> None:
        """End every process (the stacks, then the bridge, then the simulator), then what they left
        running, and the caller's node, and give the domain back. Safe to call more than once and
        after a failed start."""
        _LIVE.discard(self)
        for client in self._clients:
            with contextlib.suppress(Exception):
                client.destroy()
        self._clients.clear()
        if self._tree is not None:
            self._tree.snapshot()
        for process in reversed(self.processes):
            self.stop_process(process)
        if self._tree is not None:
            self._tree.end()
        for process in self.processes:  # nothing writes to the logs now: each is complete and bounded
            process.drain(LOG_DRAIN_TIMEOUT_S)
        if self.watch is not None:
            self.watch.kill()  # it keeps nothing; the processes it watched have been stopped
        if self._node is not None:
            with contextlib.suppress(Exception):
                self._node.destroy_node()
            self._node = None
        if self._context is not None:
            self._context.try_shutdown()
            self._context = None
        with contextlib.suppress(OSError):
            self._token_file.unlink(missing_ok=True)
        if self.lease is not None:
            self.lease.release()
