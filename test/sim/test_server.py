"""The simulator's server over real loopback sockets, driven by a raw protocol client."""

from __future__ import annotations

import socket
import struct
import threading
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from acres_bridge.wire import (
    PROTOCOL_VERSION,
    ClientHello,
    Clock,
    EpisodeInfo,
    ErrorReply,
    FrameKind,
    FrameReader,
    Hello,
    InsSample,
    SensorMeta,
    SetState,
    StepDone,
    StepRequest,
    StepStatus,
    StreamMark,
    decode,
    encode,
)
from acres_sim.server import SimServer
from acres_sim.world import World

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)


class Client:
    """One protocol connection: send messages, read frames."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
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


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[tuple[SimServer, threading.Thread]] = []

    def start(*, lockstep: bool = True, seed: int = 42) -> SimServer:
        world = World(seed=seed, start_utc=START, lockstep=lockstep)
        server = SimServer(world, port=0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.stop()
        thread.join(5)


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


def test_a_step_request_gives_clocks_ins_a_mark_and_step_done(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    control, sensor, hello = connect(server)
    assert hello.lockstep
    control.send(StepRequest(7, 120))
    replies = control.until(StepDone)
    assert [m.step for m in replies if isinstance(m, Clock)] == list(range(1, 121))
    assert replies[-1] == StepDone(7, 120, StepStatus.DONE)
    data = sensor.until(StreamMark)
    samples = [m for m in data if isinstance(m, InsSample)]
    assert len(samples) == 100
    assert data[-1] == StreamMark(120)
    assert [s.stamp_ns for s in samples] == [s.step * 1_000_000_000 // 120 for s in samples]


def test_steps_are_refused_unless_paused(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lockstep=False)
    control, _, _ = connect(server)
    control.send(StepRequest(1, 5))
    done = control.until(StepDone)[-1]
    assert isinstance(done, StepDone)
    assert done.status == StepStatus.NOT_PAUSED
    control.send(SetState(state=0))
    episode = control.until(EpisodeInfo)[-1]
    assert isinstance(episode, EpisodeInfo)
    assert (episode.state, episode.episode) == (0, 1)  # stopping resets: a new episode
    control.send(StepRequest(2, 5))
    assert control.until(StepDone)[-1] == StepDone(2, episode.step, StepStatus.STOPPED)


def test_a_bridge_of_another_version_is_refused(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    control = Client(server.control_port)
    assert isinstance(control.next(), Hello)
    body = b'{"protocol_version":2,"client":"future","role":"control"}'
    head = struct.pack("<4sHHI", b"ACRS", 2, int(FrameKind.CLIENT_HELLO), len(body))
    control.sock.sendall(head + struct.pack("<I", zlib.crc32(head)) + body)
    error = control.next()
    assert isinstance(error, ErrorReply)
    assert error.code == "version"
    assert "protocol version 2" in error.message
    with pytest.raises(ConnectionError):
        control.next()


def test_same_seed_same_requests_give_byte_identical_streams(serve) -> None:  # type: ignore[no-untyped-def]
    streams = []
    for _ in range(2):
        server = serve(seed=3)
        control, sensor, _ = connect(server)
        for request_id, steps in enumerate((1, 59, 240), start=1):
            control.send(StepRequest(request_id, steps))
            control.until(StepDone)
            sensor.until(StreamMark)
        hello_length = 16 + struct.unpack_from("<I", control.raw, 8)[0]  # HELLO names this run's ports
        streams.append((bytes(control.raw[hello_length:]), bytes(sensor.raw)))
    assert streams[0] == streams[1]
    assert len(streams[0][1]) > 200 * 352
