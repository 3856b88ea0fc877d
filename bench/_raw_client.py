"""A bare wire-protocol client that steps a lockstep simulator and decodes nothing of the data.

It measures what the simulator alone can do: after the handshake (done with acres_bridge.wire)
it sends STEP_REQUESTs and drains every channel, only counting bytes, until each channel ends
with the frame that closes the request, whose bytes it knows in advance: STEP_DONE on the
control channel, STREAM_MARK on every sensor and vehicle stream. So a request counts as done
on the same condition as in the bridge (the steps ran and all their data arrived), with no
per-message work on this side.
"""

from __future__ import annotations

import selectors
import socket
import time
from dataclasses import dataclass, field
from types import TracebackType

from acres_bridge.wire import (
    PROTOCOL_VERSION,
    ClientHello,
    ClientRole,
    EpisodeInfo,
    FrameKind,
    FrameReader,
    Hello,
    StepDone,
    StepRequest,
    StreamMark,
    decode,
    encode,
)
from bench.errors import BenchError

__all__ = ["RawClient"]

_RECV_BYTES = 1 << 20
_CLIENT = "acres_bridge bench raw client"
_SETTLE_S = 0.2


@dataclass(eq=False)
class _Channel:
    name: str
    sock: socket.socket
    expected: bytes = b""  # the frame that ends the current request on this channel
    tail: bytearray = field(default_factory=bytearray)
    done: bool = True


class RawClient:
    """`with RawClient(port=...) as raw: raw.step(120)` against a lockstep simulator."""

    def __init__(self, *, port: int, host: str = "127.0.0.1", timeout_s: float = 10.0) -> None:
        self._timeout_s = timeout_s
        self.bytes_received = 0
        self._selector = selectors.DefaultSelector()
        self._channels: list[_Channel] = []
        control = self._connect(host, port, "control")
        hello, step = self._handshake(control.sock)
        self.last_step = step
        for agent in hello.agents:
            for role, agent_port in (
                (ClientRole.SENSOR, agent.sensor_port),
                (ClientRole.VEHICLE, agent.vehicle_port),
            ):
                if agent_port:
                    channel = self._connect(host, agent_port, f"{role}/{agent.index}")
                    hello_frame = ClientHello(
                        protocol_version=PROTOCOL_VERSION, client=_CLIENT, role=role, agent=agent.index
                    )
                    channel.sock.sendall(encode(hello_frame))
        for channel in self._channels[1:]:
            if channel.name.startswith("sensor/"):
                self._read_first(channel.sock, FrameKind.SENSOR_META)
        # The vehicle channel acknowledges no CLIENT_HELLO: give the simulator a moment to read it,
        # or the first request would run before that channel is ready and never mark it.
        time.sleep(_SETTLE_S)
        self._control = control
        self._agents = len(hello.agents)
        self._next_request = 1
        for channel in self._channels:
            channel.sock.setblocking(False)
            self._selector.register(channel.sock, selectors.EVENT_READ, channel)

    def __enter__(self) -> RawClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._selector.close()
        for channel in self._channels:
            channel.sock.close()
        self._channels.clear()

    def _connect(self, host: str, port: int, name: str) -> _Channel:
        sock = socket.create_connection((host, port), timeout=self._timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        channel = _Channel(name, sock)
        self._channels.append(channel)
        return channel

    def _handshake(self, sock: socket.socket) -> tuple[Hello, int]:
        """HELLO in, CLIENT_HELLO out, then the EPISODE that follows it: the session and its step."""
        reader = FrameReader()
        hello: Hello | None = None
        deadline = time.monotonic() + self._timeout_s
        while time.monotonic() < deadline:
            for frame in reader.frames():
                message = decode(frame)
                if frame.kind is FrameKind.HELLO and isinstance(message, Hello):
                    hello = message
                    if not hello.lockstep:
                        raise BenchError("the raw client needs a lockstep simulator; this one runs free")
                    client = ClientHello(
                        protocol_version=PROTOCOL_VERSION, client=_CLIENT, role=ClientRole.CONTROL
                    )
                    sock.sendall(encode(client))
                elif isinstance(message, EpisodeInfo) and hello is not None:
                    return hello, message.step
            data = sock.recv(_RECV_BYTES)
            if not data:
                raise BenchError("the simulator closed the control channel during the handshake")
            reader.feed(data)
        raise BenchError(f"no handshake with the simulator within {self._timeout_s} s")

    def _read_first(self, sock: socket.socket, kind: FrameKind) -> None:
        """Wait for the first frame of a channel, which must be `kind`; nothing may follow it yet."""
        reader = FrameReader()
        deadline = time.monotonic() + self._timeout_s
        while time.monotonic() < deadline:
            for frame in reader.frames():
                if frame.kind is not kind:
                    raise BenchError(f"expected {kind.name} first, found {frame.kind.name}")
                return
            data = sock.recv(_RECV_BYTES)
            if not data:
                raise BenchError("the simulator closed a channel during the handshake")
            reader.feed(data)
        raise BenchError(f"no {kind.name} from the simulator within {self._timeout_s} s")

    def step(self, steps: int) -> None:
        """Run `steps` steps and wait until every channel has delivered all their data."""
        request_id = self._next_request
        self._next_request += 1
        last_step = self.last_step + steps
        for channel in self._channels:
            done = (
                StepDone(request_id=request_id, last_step=last_step)
                if channel is self._control
                else StreamMark(last_step=last_step)
            )
            channel.expected = encode(done)
            channel.done = False
        self._control.sock.sendall(
            encode(StepRequest(request_id=request_id, steps=steps, command_seqs=(0,) * self._agents))
        )
        pending = len(self._channels)
        deadline = time.monotonic() + self._timeout_s
        while pending:
            events = self._selector.select(timeout=max(0.0, deadline - time.monotonic()))
            if not events:
                raise BenchError(f"the simulator did not finish {steps} steps within {self._timeout_s} s")
            for key, _ in events:
                channel = key.data
                data = channel.sock.recv(_RECV_BYTES)
                if not data:
                    raise BenchError(f"the simulator closed {channel.name}")
                self.bytes_received += len(data)
                if channel.done:
                    continue
                size = len(channel.expected)
                channel.tail = bytearray(data[-size:]) if len(data) >= size else (channel.tail + data)[-size:]
                if channel.tail == channel.expected:
                    channel.done = True
                    pending -= 1
        self.last_step = last_step
