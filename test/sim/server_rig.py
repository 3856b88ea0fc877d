"""A raw protocol client of the simulator's server, and the sessions the server tests open."""

from __future__ import annotations

import socket
from typing import Any

from acres_bridge.wire import (
    PROTOCOL_VERSION,
    ClientHello,
    EpisodeInfo,
    FrameReader,
    Hello,
    SensorMeta,
    decode,
    encode,
)
from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.server import SimServer
from acres_sim.world.model import AgentSpec

__all__ = ["Client", "connect", "maxxum_session"]


class Client:
    """One protocol connection: send messages, read frames."""

    def __init__(self, port: int, *, sock: socket.socket | None = None) -> None:
        """Connect to `port` (or read the connection `sock` already is)."""
        self.sock = sock or socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = FrameReader()
        self.raw = bytearray()

    def send(self, message: object) -> None:
        self.sock.sendall(encode(message))

    def next(self) -> object:
        while True:
            for frame in self.reader.frames():
                return decode(frame)
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed")
            self.raw += data
            self.reader.feed(data)

    def until(self, kind: type) -> list[object]:
        messages = []
        while True:
            message = self.next()
            messages.append(message)
            if isinstance(message, kind):
                return messages


def connect(server: SimServer) -> tuple[Client, Client, Hello]:
    control = Client(server.control_port)
    hello = control.next()
    assert isinstance(hello, Hello)
    control.send(ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="control"))
    assert isinstance(control.next(), EpisodeInfo)
    sensor = Client(hello.agents[0].sensor_port)
    sensor.send(ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="sensor", agent=0))
    assert isinstance(sensor.next(), SensorMeta)
    return control, sensor, hello


def maxxum_session(
    serve: Any, can_ports: tuple[tuple[int, int], ...] = ()
) -> tuple[SimServer, Client, Client, Hello]:
    """A Maxxum session with its control and vehicle channels; `can_ports` as the control channel's
    CLIENT_HELLO names them (none: the simulator learns the controller from its first datagram)."""
    server = serve(agents=(AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM),))
    control = Client(server.control_port)
    hello = control.next()
    assert isinstance(hello, Hello)
    control.send(
        ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="control", can_ports=can_ports)
    )
    control.next()
    vehicle = Client(hello.agents[0].vehicle_port)
    vehicle.send(ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="vehicle", agent=0))
    return server, control, vehicle, hello
