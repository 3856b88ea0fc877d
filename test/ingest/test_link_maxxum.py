"""SimulatorLink with a scripted Maxxum on real loopback sockets: the observation, numbered
commands, and the CAN transport (its port named in the control channel's CLIENT_HELLO, the opening
barrier, frames without barriers, bad datagrams and lost frames counted, frames to the simulator,
the keepalive, and a step that waits for its barrier)."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import pytest
import samples
from convert.test_maxxum import OBSERVATION

from acres_bridge.ingest.can_channel import can_ports
from acres_bridge.ingest.link import CAN_MARK_WAIT_S, SimulatorLink
from acres_bridge.wire import (
    AgentEntry,
    ClientHello,
    Clock,
    FrameReader,
    Hello,
    StepDone,
    StepRequest,
    StreamMark,
    Vehicle,
    decode,
    encode,
)
from acres_bridge.wire.can import CanFrame, barrier_frame, decode_datagram, encode_datagram, is_barrier
from acres_bridge.wire.maxxum import Difflock, MaxxumCommand, MaxxumObservation
from ingest.test_link import TIMEOUT_S as TIMEOUT
from ingest.test_link import Recorder, wait_for

COMMAND = MaxxumCommand(
    seq=0,
    curvature_1pm=0.05,
    pedal=0.5,
    brake=0.0,
    hand_throttle=0.0,
    hitch_lever=0.0,
    hitch_raise=False,
    pto_on=False,
    difflock=Difflock.OPEN,
)
_HELLO = samples.hello()
GROUP = tuple(
    CanFrame(can_id=0x0CF00400 + i, data=bytes(8), dlc=8, stamp_ns=100_000_000, step=12) for i in range(13)
)


@dataclass
class MaxxumRecorder(Recorder):
    observations: list[MaxxumObservation] = field(default_factory=list)
    can: list[CanFrame] = field(default_factory=list)
    can_frame_s: float = 0.0  # how long the listener takes over each CAN frame (a busy publisher)

    def on_sample(self, agent: int, sample: object) -> None:
        if isinstance(sample, MaxxumObservation):
            self.observations.append(sample)
        elif isinstance(sample, CanFrame):
            time.sleep(self.can_frame_s)
            self.can.append(sample)
        else:  # a Maxxum sends no drive-by-wire report
            super().on_sample(agent, sample)


class ScriptedMaxxum:
    """One Maxxum agent: control and vehicle channels over TCP, the CAN transport over UDP."""

    def __init__(self, *, announce_can: bool = True) -> None:
        self.announce_can = announce_can  # False: HELLO says no CAN port, as the game's -RlCanUdp=
        self.control = self._listen()
        self.vehicle = self._listen()
        self.can = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.can.bind(("127.0.0.1", 0))
        self.port = self.control.getsockname()[1]
        self.control_peer: socket.socket | None = None
        self.vehicle_peer: socket.socket | None = None
        self.can_peer: tuple[str, int] | None = None
        self.datagrams: list[tuple[CanFrame, ...]] = []
        self.commands: list[MaxxumCommand] = []
        self.requests: list[StepRequest] = []
        self.client_hellos: list[ClientHello] = []
        self.late_barrier_s: float | None = 0.0  # None: the barrier of a request is lost
        self.barrier_gap_s = 0.0  # between a late group and its barrier: read apart, not in one go
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @staticmethod
    def _listen() -> socket.socket:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(2)
        return sock

    def hello(self) -> Hello:
        agent = AgentEntry(
            index=0,
            name="maxxum",
            vehicle="maxxum",
            sensor_port=0,
            vehicle_port=self.vehicle.getsockname()[1],
            can_port=self.can.getsockname()[1] if self.announce_can else 0,
        )
        return replace(_HELLO, agents=(agent,))

    def _serve(self) -> None:
        try:
            self.control_peer, _ = self.control.accept()
            self.control_peer.sendall(encode(self.hello()))
            self.vehicle.settimeout(TIMEOUT)
            self.vehicle_peer, _ = self.vehicle.accept()
            self._ready.set()
            readers = {self.control_peer: FrameReader(), self.vehicle_peer: FrameReader()}
            selector = selectors.DefaultSelector()
            for sock in (self.control_peer, self.vehicle_peer, self.can):
                selector.register(sock, selectors.EVENT_READ)
            while not self._stop.is_set():
                for key, _ in selector.select(0.1):
                    sock = key.fileobj
                    if sock is self.can:
                        data, self.can_peer = self.can.recvfrom(65536)
                        self.datagrams.append(decode_datagram(data))
                        continue
                    assert isinstance(sock, socket.socket)
                    data = sock.recv(65536)
                    if not data:
                        return
                    readers[sock].feed(data)
                    for frame in readers[sock].frames():
                        self._handle(decode(frame))
        except OSError:
            return

    def _handle(self, message: object) -> None:
        if isinstance(message, ClientHello):
            self.client_hellos.append(message)
        elif isinstance(message, MaxxumCommand):
            self.commands.append(message)
        elif isinstance(message, StepRequest):
            self.requests.append(message)
            self.run(message)

    def run(self, request: StepRequest) -> None:
        """The steps' clocks, a CAN group on the last, the marks, STEP_DONE; the barrier (maybe late)."""
        assert self.control_peer is not None
        assert self.vehicle_peer is not None
        first = sum(r.steps for r in self.requests[:-1]) + 1
        last = first + request.steps - 1
        for step in range(first, last + 1):
            self.control_peer.sendall(encode(Clock(step=step, stamp_ns=step * 1_000_000_000 // 120)))
        barrier = barrier_frame(step=last, stamp_ns=last * 1_000_000_000 // 120, frames_sent=len(GROUP))
        delay = self.late_barrier_s
        if delay == 0.0:
            self.send(GROUP)
            self.send((barrier,))
        self.vehicle_peer.sendall(encode(StreamMark(last_step=last)))
        self.control_peer.sendall(encode(StepDone(request_id=request.request_id, last_step=last)))
        if delay is not None and delay > 0.0:
            time.sleep(delay)
            self.send(GROUP)
            time.sleep(self.barrier_gap_s)
            self.send((barrier,))

    def send(self, frames: tuple[CanFrame, ...]) -> None:
        assert self.can_peer is not None, "the bridge has not opened the CAN transport"
        self.can.sendto(encode_datagram(frames), self.can_peer)

    def wait_ready(self) -> None:
        assert self._ready.wait(TIMEOUT), "the bridge did not open the vehicle channel"
        wait_for(lambda: self.can_peer is not None, "the opening datagram")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(TIMEOUT)
        for sock in (self.control_peer, self.vehicle_peer, self.control, self.vehicle, self.can):
            if sock is not None:
                sock.close()


@dataclass
class Session:
    simulator: ScriptedMaxxum
    link: SimulatorLink
    recorder: MaxxumRecorder


@pytest.fixture
def session() -> Iterator[Session]:
    simulator = ScriptedMaxxum()
    recorder = MaxxumRecorder()
    link = SimulatorLink(host="127.0.0.1", port=simulator.port, listener=recorder, reconnect_interval_s=0.05)
    link.start()
    try:
        assert link.wait_connected(TIMEOUT)
        simulator.wait_ready()
        yield Session(simulator, link, recorder)
    finally:
        link.stop()
        simulator.close()


def test_the_can_udp_port_parameter_opens_a_can_transport_that_hello_does_not_announce() -> None:
    simulator = ScriptedMaxxum(announce_can=False)
    link = SimulatorLink(
        host="127.0.0.1",
        port=simulator.port,
        listener=MaxxumRecorder(),
        reconnect_interval_s=0.05,
        can_udp_port=simulator.can.getsockname()[1],
    )
    link.start()
    try:
        assert link.wait_connected(TIMEOUT)
        simulator.wait_ready()
        wait_for(lambda: simulator.datagrams, "the opening barrier on the given CAN port")
        assert is_barrier(simulator.datagrams[0][0])
    finally:
        link.stop()
        simulator.close()


def test_the_can_udp_port_is_the_first_maxxums_and_the_others_keep_their_announced_ports() -> None:
    def agent(index: int, vehicle: Vehicle, can_port: int) -> AgentEntry:
        return AgentEntry(
            index=index, name=f"a{index}", vehicle=vehicle, sensor_port=0, vehicle_port=1, can_port=can_port
        )

    hello = replace(
        _HELLO,
        agents=(agent(0, Vehicle.POLARIS, 0), agent(1, Vehicle.MAXXUM, 0), agent(2, Vehicle.MAXXUM, 47002)),
    )
    assert can_ports(hello) == {2: 47002}
    assert can_ports(hello, 47190) == {1: 47190, 2: 47002}
    assert can_ports(replace(hello, agents=hello.agents[:1]), 47190) == {}


def observation(step: int) -> MaxxumObservation:
    return replace(OBSERVATION, step=step, stamp_ns=step * 1_000_000_000 // 120)


def test_the_can_transport_opens_with_a_barrier_from_the_bridge(session: Session) -> None:
    (opening,) = session.simulator.datagrams[0]
    assert is_barrier(opening)
    assert (opening.step, opening.stamp_ns) == (0, 0)


def test_the_control_hello_names_the_port_the_can_datagrams_come_from(session: Session) -> None:
    simulator = session.simulator
    wait_for(lambda: simulator.client_hellos, "the control channel's CLIENT_HELLO")
    control = [hello for hello in simulator.client_hellos if hello.role == "control"]
    assert simulator.can_peer is not None
    assert [hello.can_ports for hello in control] == [((0, simulator.can_peer[1]),)]
    assert all(not hello.can_ports for hello in simulator.client_hellos if hello.role != "control")


def test_an_observation_reaches_the_listener(session: Session) -> None:
    assert session.simulator.vehicle_peer is not None
    session.simulator.vehicle_peer.sendall(encode(observation(12)))
    wait_for(lambda: session.recorder.observations, "the observation")
    assert session.recorder.observations == [observation(12)]


def test_maxxum_commands_are_numbered_and_a_step_request_carries_the_last(session: Session) -> None:
    assert session.link.send_command(0, COMMAND)
    assert session.link.send_command(0, replace(COMMAND, pedal=0.6))
    assert not session.link.send_command(1, COMMAND)  # no such agent
    wait_for(lambda: len(session.simulator.commands) == 2, "two commands")
    assert [c.seq for c in session.simulator.commands] == [1, 2]
    assert session.link.request_steps(6, timeout_s=TIMEOUT).ok
    assert session.simulator.requests[-1].command_seqs == (2,)


def test_frames_reach_the_listener_without_barriers_and_bad_datagrams_and_lost_frames_are_counted(
    session: Session,
) -> None:
    sim = session.simulator
    sim.send(GROUP)
    sim.send((barrier_frame(step=12, stamp_ns=100_000_000, frames_sent=13),))
    assert sim.can_peer is not None
    sim.can.sendto(b"ACAN garbage", sim.can_peer)
    sim.send(GROUP[:2])
    sim.send((barrier_frame(step=24, stamp_ns=200_000_000, frames_sent=5),))  # 3 of 5 lost
    # The receipt's problems are counted before its frames reach the listener: wait for both.
    wait_for(lambda: session.link.counters.can_problems["lost"], "the lost frames")
    wait_for(lambda: len(session.recorder.can) >= len(GROUP) + 2, "the frames at the listener")
    assert session.recorder.can == [*GROUP, *GROUP[:2]]
    assert session.link.counters.can_frames == 15
    assert session.link.counters.can_problems == {"datagram": 1, "lost": 3}


def test_frames_from_the_bridge_reach_the_simulator(session: Session) -> None:
    frame = CanFrame(can_id=0x0CFF31FF, data=bytes([0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), dlc=8)
    assert session.link.send_can(0, (frame,))
    assert not session.link.send_can(3, (frame,))  # no CAN transport
    wait_for(lambda: (frame,) in session.simulator.datagrams, "the frame")


def test_the_transport_is_kept_open_each_second_while_nothing_else_is_sent(session: Session) -> None:
    time.sleep(1.3)
    barriers = [d for d in session.simulator.datagrams if len(d) == 1 and is_barrier(d[0])]
    assert len(barriers) >= 2  # the opening one and at least one keepalive


def test_a_step_is_acknowledged_after_the_can_barrier_of_its_last_step(session: Session) -> None:
    assert session.link.request_steps(12, timeout_s=TIMEOUT).ok  # the first barrier: marks are known now
    session.simulator.late_barrier_s = 0.2
    started = time.monotonic()
    outcome = session.link.request_steps(12, timeout_s=TIMEOUT)
    assert outcome.ok
    assert outcome.last_step == 24
    assert time.monotonic() - started >= 0.2
    assert len(session.recorder.can) == 26  # the group of the late barrier is in


def test_a_step_waits_for_the_frames_of_a_barrier_that_came_however_long_their_hand_over_takes(
    session: Session,
) -> None:
    assert session.link.request_steps(12, timeout_s=TIMEOUT).ok
    session.simulator.late_barrier_s = 0.05
    session.recorder.can_frame_s = 1.5 * CAN_MARK_WAIT_S / len(GROUP)  # the group outlasts the grace
    outcome = session.link.request_steps(12, timeout_s=TIMEOUT)
    assert outcome.ok
    assert len(session.recorder.can) == 26  # every frame of the step is handed over before the answer
    assert session.link.counters.can_problems["barrier missing"] == 0


def test_a_barrier_behind_frames_still_being_handed_over_is_not_lost(session: Session) -> None:
    """The group is read before its barrier has come, and its hand-over outlasts the grace: the
    barrier waits in the socket meanwhile (as behind a busy publisher on a loaded machine)."""
    assert session.link.request_steps(12, timeout_s=TIMEOUT).ok
    session.simulator.late_barrier_s = 0.05
    session.simulator.barrier_gap_s = 0.1
    session.recorder.can_frame_s = 1.5 * CAN_MARK_WAIT_S / len(GROUP)
    outcome = session.link.request_steps(12, timeout_s=TIMEOUT)
    assert outcome.ok
    assert len(session.recorder.can) == 26  # every frame of the step is handed over before the answer
    assert session.link.counters.can_problems["barrier missing"] == 0


def test_a_lost_barrier_holds_the_step_only_for_the_grace(session: Session) -> None:
    assert session.link.request_steps(12, timeout_s=TIMEOUT).ok
    session.simulator.late_barrier_s = None  # the datagram is lost
    started = time.monotonic()
    assert session.link.request_steps(12, timeout_s=TIMEOUT).ok
    assert CAN_MARK_WAIT_S <= time.monotonic() - started < TIMEOUT
    assert session.link.counters.can_problems["barrier missing"] == 1
