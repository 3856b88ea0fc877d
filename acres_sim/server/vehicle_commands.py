"""The vehicle channels' commands on their way to the world: numbered, and in lockstep held.

The vehicle channel of a Polaris carries its drive-by-wire: each DBW_COMMAND goes to the world as
soon as it is read in free run (it applies from the next physics step); in lockstep it waits for
the first STEP_REQUEST whose command_seqs counts it and applies from that request's first step
(a request with 0 applies all that came), so however commands and requests interleave on their
two sockets, the same requests give the same steps. MAXXUM_COMMAND is held and applied the same
way. A command for a Maxxum or with an invalid value is logged and ignored; it still counts for
the command numbers that STEP_REQUEST waits for.

`VehicleCommands` numbers, holds and applies them, and waits for those a request counts; it reads
nothing itself: the server reads the channels and runs the requests.
"""

from __future__ import annotations

import logging
import select
import time
from collections.abc import Callable, Iterable, Sequence

from acres_bridge.rate_limited_log import RateLimitedLog
from acres_bridge.wire import DbwCommand
from acres_bridge.wire.maxxum import MaxxumCommand
from acres_sim.errors import AcresSimError
from acres_sim.server.clients import Client, Clients
from acres_sim.vehicles.tractor import command_from_message
from acres_sim.world.model import World

__all__ = ["VehicleCommands"]

_log = logging.getLogger("acres_sim.server")
_COMMAND_WAIT_S = 10.0  # a step request waits this long for the commands sent before it
_HELD_COMMANDS = 4096  # lockstep: commands held for their request, at most (a client that never steps)


class VehicleCommands:
    """Every vehicle channel's commands: to the world at once in free run, at their request in lockstep."""

    def __init__(
        self,
        world: World,
        clients: Clients,
        warn: RateLimitedLog,
        *,
        receive: Callable[[Client], None],
        stopping: Callable[[], bool],
    ) -> None:
        """`receive` reads what a connection sent (and so takes its commands) while a request waits
        for them; `stopping()` ends the wait."""
        self._world = world
        self._clients = clients
        self._warn = warn
        self._receive = receive
        self._stopping = stopping

    def take(self, connection: Client, seq: int, command: DbwCommand | MaxxumCommand) -> None:
        """Number the command on its channel, then hand it to the world (or log why not)."""
        if seq <= connection.command_seq:
            _log.warning(
                "vehicle/%d: command %d after command %d: numbers must increase",
                connection.agent,
                seq,
                connection.command_seq,
            )
        connection.command_seq = max(connection.command_seq, seq)
        if self._world.lockstep:
            # Applied by the request that counts it, not by whichever read came first: the same
            # requests then give the same steps, however the commands and requests interleave.
            connection.held.append((seq, command))
            if len(connection.held) > _HELD_COMMANDS:  # a client that never steps: apply the oldest
                self._apply(connection.agent, *connection.held.pop(0))
            return
        self._apply(connection.agent, seq, command)

    def apply_held(self, seqs: Sequence[int]) -> None:
        """Apply each vehicle channel's held commands that the request counts (``seqs``, per agent:
        the last command the bridge sent before it; 0 counts them all, for a client that does not
        number its requests' commands); later ones wait for a later request."""
        for connection in self._clients.connections:
            if connection.listener != "vehicle" or not connection.held:
                continue
            wanted = seqs[connection.agent] if connection.agent < len(seqs) else 0
            due = [(q, c) for q, c in connection.held if wanted == 0 or q <= wanted]
            connection.held = [(q, c) for q, c in connection.held if not (wanted == 0 or q <= wanted)]
            for seq, command in due:
                self._apply(connection.agent, seq, command)

    def _apply(self, agent: int, seq: int, command: object) -> None:
        """Hand a vehicle command to the world (or log why not)."""
        try:
            if isinstance(command, DbwCommand):
                self._world.apply_dbw_command(agent, command)
            else:
                assert isinstance(command, MaxxumCommand)
                self._world.apply_tractor_command(agent, command_from_message(command))
        except AcresSimError as error:
            reason = str(error)  # one kind per reason: a flood of one bad command is one line per 5 s
            self._warn.warning(
                f"command/{agent}/{reason}",
                f"vehicle/{agent}: command {seq} ignored: {reason}",
            )

    def wait_for(self, seqs: Iterable[int], poll_s: float) -> None:
        """Read each agent's vehicle channel until it has the commands the bridge sent before the request.

        A vehicle channel that is still being opened is accepted here too, and new connections and
        pending output are served each `poll_s`. Nothing else is read, so no other request starts
        while this one waits; after 10 s it steps without the command.
        """
        deadline = time.monotonic() + _COMMAND_WAIT_S
        for agent, wanted in enumerate(seqs):
            while wanted > 0 and not self._stopping() and not self._has_commands(agent, wanted):
                remaining = deadline - time.monotonic()
                self._clients.serve_new_and_writable()
                if remaining <= 0.0 or not self._poll_vehicle(agent, min(remaining, poll_s)):
                    _log.error("agent %d: command %d never arrived; stepping without it", agent, wanted)
                    break

    def _has_commands(self, agent: int, wanted: int) -> bool:
        return any(
            c.listener == "vehicle" and c.agent == agent and c.command_seq >= wanted
            for c in self._clients.connections
        )

    def _poll_vehicle(self, agent: int, timeout: float) -> bool:
        """Accept and read the vehicle channel of ``agent`` for up to ``timeout`` s; False if it has none."""
        clients = self._clients
        listeners = [x for x in clients.listeners if x.role == "vehicle" and x.agent == agent]
        if not listeners:
            return False
        connections = [c for c in clients.connections if c.listener == "vehicle" and c.agent == agent]
        socks = [x.sock for x in listeners] + [c.sock for c in connections]
        readable, _, _ = select.select(socks, [], [], timeout)
        for listener in listeners:
            if listener.sock in readable:
                clients.accept(listener)
        for connection in connections:
            if connection.sock in readable:
                self._receive(connection)
        return True
