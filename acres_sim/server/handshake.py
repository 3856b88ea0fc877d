"""The opening of each connection: the session's HELLO, the client's CLIENT_HELLO, the first frames.

A control channel gets the session's HELLO (`session_hello`) as soon as it is accepted. The first
frame of every connection must be a CLIENT_HELLO of the role its port serves (and, but for the
control channel, of its agent): a wrong role gets ERROR "role" and is closed, any other first
frame closes it, and a bridge of another protocol version gets ERROR "version" and is closed.
A simulator of a session (started with the session's token) takes only the session's bridge: a
CLIENT_HELLO without that token gets ERROR "token", is closed, counted (`refused_clients`) and
logged with acres_bridge.wire.session_token.REFUSED_LOG, which the session looks for.
Once accepted, a control channel gets EPISODE_INFO and a sensor channel its agent's SENSOR_META.
A connection that says nothing in time is closed by `Clients` (HANDSHAKE_TIMEOUT_S).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Sequence

from acres_bridge.wire import PROTOCOL_VERSION, AgentEntry, ClientHello, ErrorReply, Hello, encode
from acres_bridge.wire.messages import SENSOR_DEMAND_FEATURE
from acres_bridge.wire.session_token import REFUSED_LOG, TOKEN_ERROR_CODE
from acres_sim import __version__
from acres_sim.clock import PHYSICS_RATE_HZ as PHYSICS_HZ
from acres_sim.server.clients import Client, Clients
from acres_sim.world.model import World
from acres_sim.world.wire import scene_layout, sensor_meta

__all__ = ["Handshake", "session_hello"]

_log = logging.getLogger("acres_sim.server")


def session_hello(world: World, agents: Sequence[AgentEntry]) -> Hello:
    """What the session says of itself to each control channel: the world and the agents' ports."""
    return Hello(
        protocol_version=PROTOCOL_VERSION,
        simulator=f"acres_sim {__version__}",
        session_start_utc=f"{world.start_utc:%Y%m%dT%H%M%S}",
        map=world.map_name,
        source=world.source,
        lockstep=world.lockstep,
        seed=world.seed,
        physics_hz=PHYSICS_HZ,
        agents=tuple(agents),
        scene=scene_layout(world.scene, world.map_name),
        features=(SENSOR_DEMAND_FEATURE,),
    )


class Handshake:
    """Greets each connection and accepts or refuses what it says first."""

    def __init__(
        self,
        world: World,
        hello: Hello,
        clients: Clients,
        *,
        on_control: Callable[[Client, ClientHello], None],
        token: str = "",
    ) -> None:
        """`on_control` is told of each control channel accepted, with its CLIENT_HELLO, before it
        gets EPISODE_INFO. With a `token`, only a CLIENT_HELLO that says it is accepted."""
        self._token = token
        self.refused_clients = 0
        self._world = world
        self._hello = hello
        self._clients = clients
        self._on_control = on_control
        self._metas = [sensor_meta(world, index) for index in range(len(hello.agents))]

    def greet(self, connection: Client) -> None:
        """A new connection: a control channel gets the session's HELLO at once."""
        if connection.listener == "control":
            connection.out += encode(self._hello)
            self._clients.flush(connection)

    def accept(self, connection: Client, message: object) -> bool:
        """The first message of `connection`: whether it was a CLIENT_HELLO it may say (else it is
        closed); an accepted connection is ready and has its first frames queued and flushed."""
        if not isinstance(message, ClientHello):
            self._clients.drop(connection, f"expected CLIENT_HELLO first, got {type(message).__name__}")
            return False
        if self._token and not hmac.compare_digest(message.token.encode(), self._token.encode()):
            self.refused_clients += 1
            _log.warning(
                "%s (%d so far): %r on the %s channel of agent %d",
                REFUSED_LOG,
                self.refused_clients,
                message.client[:80],
                connection.listener,
                connection.agent,
            )
            connection.out += encode(
                ErrorReply(code=TOKEN_ERROR_CODE, message="this simulator serves its session's bridge only")
            )
            self._clients.flush(connection)
            self._clients.drop(connection, "no session token")
            return False
        if message.role != connection.listener or (
            message.role != "control" and message.agent != connection.agent
        ):
            connection.out += encode(
                ErrorReply(
                    code="role",
                    message=f"this port serves the {connection.listener} channel of agent {connection.agent}",
                )
            )
            self._clients.flush(connection)
            self._clients.drop(connection, "wrong role")
            return False
        connection.ready = True
        if connection.listener == "control":
            self._on_control(connection, message)
            connection.out += encode(self._world.episode_snapshot())
        elif connection.listener == "sensor":
            connection.out += encode(self._metas[connection.agent])
        self._clients.flush(connection)
        return True

    def refuse(self, connection: Client, message: str) -> None:
        """Close a connection of another protocol version, with ERROR "version" saying why."""
        _log.error("refusing a %s connection: %s", connection.listener, message)
        connection.out += encode(ErrorReply(code="version", message=message))
        self._clients.flush(connection)
        self._clients.drop(connection, message)
