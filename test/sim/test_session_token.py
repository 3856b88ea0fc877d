"""A session's simulator serves its session's bridge only: a client without the session's token
is refused on every channel, counted and logged; the bridge's own channels are served."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from acres_bridge.wire import (
    PROTOCOL_VERSION,
    AgentReset,
    ClientHello,
    EpisodeInfo,
    ErrorReply,
    FrameReader,
    Hello,
    SensorMeta,
    decode,
    encode,
)
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.session_token import REFUSED_LOG, new_token, read_token, take_token, write_token
from sim.server_rig import Client

TOKEN = "0123456789abcdef" * 4


def hello(role: str, *, token: str = "", agent: int = 0) -> ClientHello:
    return ClientHello(protocol_version=PROTOCOL_VERSION, client="x", role=role, agent=agent, token=token)


def refused(client: Client) -> ErrorReply:
    error = client.next()
    assert isinstance(error, ErrorReply)
    with pytest.raises(ConnectionError):
        client.next()
    return error


def test_the_session_s_bridge_is_served_on_every_channel(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(token=TOKEN)
    control = Client(server.control_port)
    greeting = control.next()
    assert isinstance(greeting, Hello)
    control.send(hello("control", token=TOKEN))
    assert isinstance(control.next(), EpisodeInfo)
    sensor = Client(greeting.agents[0].sensor_port)
    sensor.send(hello("sensor", token=TOKEN))
    assert isinstance(sensor.next(), SensorMeta)


@pytest.mark.parametrize("token", ["", "f" * 64, TOKEN[:-1]])
def test_a_client_without_the_session_s_token_is_refused_counted_and_logged(  # type: ignore[no-untyped-def]
    serve, caplog, token: str
) -> None:
    """A stack that connects to the simulator itself and sends AGENT_RESET "drove" without driving."""
    server = serve(token=TOKEN)
    caplog.set_level(logging.WARNING, logger="acres_sim.server")
    intruder = Client(server.control_port)
    greeting = intruder.next()
    assert isinstance(greeting, Hello)
    intruder.send(hello("control", token=token))
    error = refused(intruder)
    assert (error.code, error.message) == ("token", "this simulator serves its session's bridge only")
    vehicle = Client(greeting.agents[0].vehicle_port)
    vehicle.send(hello("vehicle", token=token))
    assert refused(vehicle).code == "token"
    assert server._handshake.refused_clients == 2
    assert sum(REFUSED_LOG in r.getMessage() for r in caplog.records) == 2


def test_a_refused_client_s_commands_change_nothing(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(token=TOKEN)
    before = server.world.episode_snapshot()
    intruder = Client(server.control_port)
    assert isinstance(intruder.next(), Hello)
    intruder.sock.sendall(
        encode(hello("control")) + encode(AgentReset(agent=0, x_m=40.0, y_m=0.0, yaw_rad=0.0))
    )
    assert refused(intruder).code == "token"
    assert server.world.episode_snapshot() == before


def test_without_a_token_the_simulator_serves_any_bridge_as_before(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    control = Client(server.control_port)
    assert isinstance(control.next(), Hello)
    control.send(hello("control"))
    assert isinstance(control.next(), EpisodeInfo)


def test_a_client_hello_says_its_token_only_where_it_has_one() -> None:
    assert b"token" not in encode(hello("control"))
    frame = encode(hello("control", token=TOKEN))
    assert f'"token":"{TOKEN}"'.encode() in frame
    (decoded,) = [decode(f) for f in _frames(frame)]
    assert decoded == hello("control", token=TOKEN)


def test_a_token_longer_than_the_bound_is_refused_as_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="field 'token' has at most 128 characters"):
        (_,) = [decode(f) for f in _frames(encode(hello("control", token="a" * 129)))]


def test_a_token_file_is_written_for_its_user_alone_and_read_back(tmp_path: Path) -> None:
    token = new_token()
    path = tmp_path / "token"
    write_token(path, token)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert read_token(path) == token
    with pytest.raises(FileExistsError):
        write_token(path, token)
    assert take_token(path) == token  # the bridge's read: the file is gone after it
    assert not path.exists()


@pytest.mark.parametrize(
    ("content", "why"),
    [("not hex at all\n", "lowercase hex digits"), ("ab" * 15, "lowercase hex digits"), ("a" * 200, "hex")],
)
def test_a_bad_token_file_is_refused_naming_it(tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "token"
    path.write_text(content)
    with pytest.raises(ProtocolError, match=why):
        read_token(path)


def test_a_token_file_must_be_a_regular_file_and_no_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_token(real, TOKEN)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(ProtocolError, match="cannot open it"):
        read_token(tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ProtocolError, match="not a regular file"):
        read_token(tmp_path / "fifo")  # never waits for a writer
    with pytest.raises(ProtocolError, match="cannot open it"):
        read_token(tmp_path / "missing")


def _frames(data: bytes) -> list[bytes]:
    reader = FrameReader()
    reader.feed(data)
    return list(reader.frames())
