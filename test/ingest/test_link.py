"""SimulatorLink against a scripted simulator on real loopback sockets: handshake, version
refusal, garbage on the stream, a simulator that goes away and comes back, step acknowledgement."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import samples

from acres_bridge.ingest.link import SimulatorLink
from acres_bridge.wire import (
    PROTOCOL_VERSION,
    ClientHello,
    Clock,
    EpisodeInfo,
    FrameKind,
    FrameReader,
    Hello,
    InsSample,
    SensorMeta,
    StepDone,
    StepRequest,
    StreamMark,
    decode,
    encode,
)

TIMEOUT_S = 10.0


def wait_for(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.005)


@dataclass
class Recorder:
    """A LinkListener that keeps what it was given."""

    sessions: list[Hello] = field(default_factory=list)
    metas: list[SensorMeta] = field(default_factory=list)
    episodes: list[EpisodeInfo] = field(default_factory=list)
    clocks: list[Clock] = field(default_factory=list)
    ins: list[InsSample] = field(default_factory=list)
    disconnects: list[str] = field(default_factory=list)

    def on_session(self, hello: Hello) -> None:
        self.sessions.append(hello)

    def on_sample(self, agent: int, sample: object) -> None:
        kept = {SensorMeta: self.metas, EpisodeInfo: self.episodes, Clock: self.clocks, InsSample: self.ins}
        kept[type(sample)].append(sample)

    def on_disconnect(self, reason: str) -> None:
        self.disconnects.append(reason)


def ins(step: int) -> InsSample:
    """An INS sample without a fix."""
    return samples.ins_sample(step, has_position=False)


class ScriptedSimulator:
    """A minimal simulator: one agent with a sensor channel; the test drives what it sends."""

    def __init__(self, *, version: int = PROTOCOL_VERSION, port: int = 0) -> None:
        self.version = version
        self.control = self._listen(port)
        self.sensor = self._listen(0)
        self.port = self.control.getsockname()[1]
        self.control_peer: socket.socket | None = None
        self.sensor_peer: socket.socket | None = None
        self.received: list[object] = []
        self._ready = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @staticmethod
    def _listen(port: int) -> socket.socket:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(4)
        return sock

    def hello(self) -> bytes:
        hello = samples.hello(samples.agent(0, sensor_port=self.sensor.getsockname()[1]))
        frame = encode(hello)
        if self.version == PROTOCOL_VERSION:
            return frame
        # The same frame as a peer of another version would send it: its version in header and body.
        body = frame[16:].replace(b'"protocol_version":1', f'"protocol_version":{self.version}'.encode())
        head = struct.pack("<4sHHI", b"ACRS", self.version, int(FrameKind.HELLO), len(body))
        return head + struct.pack("<I", zlib.crc32(head)) + body

    def _serve(self) -> None:
        try:
            self.control_peer, _ = self.control.accept()
            self.control_peer.sendall(self.hello())
            self.sensor.settimeout(TIMEOUT_S)
            self.sensor_peer, _ = self.sensor.accept()
            self.sensor_peer.sendall(
                encode(
                    SensorMeta(
                        agent=0,
                        vehicle="polaris",
                        utm_epsg=32616,
                        world_origin_utm=(0.0, 0.0, 0.0),
                        sensors=(),
                    )
                )
            )
            self._ready.set()
            reader = FrameReader()
            while data := self.control_peer.recv(65536):
                reader.feed(data)
                for frame in reader.frames():
                    message = decode(frame)
                    self.received.append(message)
                    if isinstance(message, StepRequest):
                        self.run(message)
        except OSError:
            return

    def run(self, request: StepRequest) -> None:
        """Send the steps' clocks and INS, the mark on the sensor stream, then STEP_DONE."""
        assert self.control_peer is not None
        assert self.sensor_peer is not None
        for step in range(1, request.steps + 1):
            self.control_peer.sendall(encode(Clock(step=step, stamp_ns=step * 1_000_000_000 // 120)))
            self.sensor_peer.sendall(encode(ins(step)))
        self.sensor_peer.sendall(encode(StreamMark(last_step=request.steps)))
        self.control_peer.sendall(encode(StepDone(request_id=request.request_id, last_step=request.steps)))

    def wait_ready(self) -> None:
        assert self._ready.wait(TIMEOUT_S), "the bridge did not open the sensor channel"

    def close(self) -> None:
        for sock in (self.control_peer, self.sensor_peer, self.control, self.sensor):
            if sock is not None:
                sock.close()


@pytest.fixture
def simulators() -> Iterator[list[ScriptedSimulator]]:
    started: list[ScriptedSimulator] = []
    yield started
    for simulator in started:
        simulator.close()


@pytest.fixture
def link_for() -> Iterator[Callable[[int, Recorder], SimulatorLink]]:
    links: list[SimulatorLink] = []

    def make(port: int, recorder: Recorder) -> SimulatorLink:
        link = SimulatorLink(host="127.0.0.1", port=port, listener=recorder, reconnect_interval_s=0.05)
        links.append(link)
        link.start()
        return link

    yield make
    for link in links:
        link.stop()


def test_handshake_gives_the_session_and_the_client_hello(simulators: list[Any], link_for: Any) -> None:
    simulator = ScriptedSimulator()
    simulators.append(simulator)
    recorder = Recorder()
    link_for(simulator.port, recorder)
    simulator.wait_ready()
    wait_for(lambda: recorder.sessions and recorder.metas, "the session and the sensor metadata")
    assert recorder.sessions[0].agents[0].name == "polaris"
    wait_for(lambda: simulator.received, "CLIENT_HELLO")
    hello = simulator.received[0]
    assert isinstance(hello, ClientHello)
    assert (hello.protocol_version, hello.role) == (PROTOCOL_VERSION, "control")


def test_a_simulator_of_another_version_is_refused_with_a_clear_message(
    simulators: list[Any], link_for: Any, caplog: pytest.LogCaptureFixture
) -> None:
    simulator = ScriptedSimulator(version=2)
    simulators.append(simulator)
    recorder = Recorder()
    with caplog.at_level(logging.ERROR, logger="acres_bridge.ingest"):
        link = link_for(simulator.port, recorder)
        wait_for(lambda: "protocol version 2" in caplog.text, "the version error")
    assert "the simulator speaks protocol version 2, this bridge speaks 1" in caplog.text
    assert recorder.sessions == []
    assert link.hello is None


def _session(
    simulators: list[Any], link_for: Any, recorder: Recorder | None = None
) -> tuple[ScriptedSimulator, Recorder, SimulatorLink]:
    """A scripted simulator and a link to it, once the session is open."""
    simulator = ScriptedSimulator()
    simulators.append(simulator)
    recorder = recorder or Recorder()
    link = link_for(simulator.port, recorder)
    simulator.wait_ready()
    wait_for(lambda: link.hello is not None, "the session")
    return simulator, recorder, link


def test_steps_are_acknowledged_after_their_data_was_handed_over(
    simulators: list[Any], link_for: Any
) -> None:
    _, recorder, link = _session(simulators, link_for)
    outcome = link.request_steps(24, timeout_s=TIMEOUT_S)
    assert outcome.ok, outcome.message
    assert outcome.last_step == 24
    # Acknowledged means handed over: nothing may still be on its way.
    assert [c.step for c in recorder.clocks] == list(range(1, 25))
    assert [s.step for s in recorder.ins] == list(range(1, 25))


def test_a_large_announcement_on_the_control_channel_holds_nothing_up(
    simulators: list[Any], link_for: Any
) -> None:
    # Once: a header announcing a 64 MiB frame on the control channel stopped /clock for good.
    simulator, recorder, link = _session(simulators, link_for)
    assert simulator.control_peer is not None
    for kind in (FrameKind.CLOCK, FrameKind.LIDAR):  # too large for a clock; no cloud on this channel
        head = struct.pack("<4sHHI", b"ACRS", PROTOCOL_VERSION, int(kind), 64 * 1024 * 1024 - 1)
        simulator.control_peer.sendall(head + struct.pack("<I", zlib.crc32(head)))
    outcome = link.request_steps(12, timeout_s=TIMEOUT_S)
    assert outcome.ok, outcome.message
    assert [c.step for c in recorder.clocks] == list(range(1, 13))
    assert link.counters.dropped_frames["oversized"] == 1
    assert link.counters.dropped_frames["unexpected kind"] == 1


@dataclass
class HeldRecorder(Recorder):
    """A Recorder that holds the link's thread in its first INS sample until released, as a
    publish held up by a loaded machine would."""

    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def on_sample(self, agent: int, sample: object) -> None:
        super().on_sample(agent, sample)
        if isinstance(sample, InsSample) and len(self.ins) == 1:
            self.entered.set()
            self.release.wait(TIMEOUT_S)


def test_a_stop_does_not_wait_for_the_rest_of_what_was_received(simulators: list[Any], link_for: Any) -> None:
    # Once: a bridge stopped in a long step request handed on the rest of a 4 MiB receive first,
    # thousands of frames, and went past its teardown deadline on a loaded machine.
    recorder = HeldRecorder()
    simulator, recorder, link = _session(simulators, link_for, recorder)
    assert simulator.sensor_peer is not None
    simulator.sensor_peer.sendall(b"".join(encode(ins(step)) for step in range(1, 2001)))
    assert recorder.entered.wait(TIMEOUT_S), "the first sample was not handed on"
    stopping = threading.Thread(target=link.stop)
    stopping.start()
    wait_for(link._stop.is_set, "the stop request")  # the stop is asked for while a sample is held
    recorder.release.set()
    stopping.join(TIMEOUT_S)
    assert not stopping.is_alive()
    assert [s.step for s in recorder.ins] == [1]


def test_garbage_between_frames_is_counted_and_the_stream_goes_on(
    simulators: list[Any], link_for: Any
) -> None:
    simulator = ScriptedSimulator()
    simulators.append(simulator)
    recorder = Recorder()
    link = link_for(simulator.port, recorder)
    simulator.wait_ready()
    assert simulator.sensor_peer is not None
    bad_ins = bytearray(encode(ins(1)))
    bad_ins[16 + 8 : 16 + 16] = struct.pack("<q", -5)  # a negative stamp: a payload that does not decode
    simulator.sensor_peer.sendall(b"garbage\x00\xff" * 7 + bytes(bad_ins) + b"ACR" + encode(ins(2)))
    wait_for(lambda: recorder.ins, "the good sample after the garbage")
    assert [s.step for s in recorder.ins] == [2]
    assert link.counters.dropped_frames["bad magic"] >= 1
    assert link.counters.bad_payloads["INS"] == 1


def test_a_simulator_that_goes_away_and_comes_back(simulators: list[Any], link_for: Any) -> None:
    first = ScriptedSimulator()
    simulators.append(first)
    recorder = Recorder()
    link = link_for(first.port, recorder)
    first.wait_ready()
    wait_for(lambda: recorder.sessions, "the first session")
    port = first.port
    first.close()
    wait_for(lambda: recorder.disconnects, "the disconnection")
    assert link.hello is None
    refused = link.request_steps(1, timeout_s=1.0)
    assert not refused.ok
    assert "not connected" in refused.message
    second = ScriptedSimulator(port=port)
    simulators.append(second)
    second.wait_ready()
    wait_for(lambda: len(recorder.sessions) == 2, "the second session")
    assert link.request_steps(3, timeout_s=TIMEOUT_S).ok
    assert link.counters.sessions == 2
