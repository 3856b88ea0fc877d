"""Attacks on the simulator's sockets, each as it was once seen to hurt: it stays up, serves its
good clients and bounds its memory (docs/robustness.md)."""

from __future__ import annotations

import logging
import os
import resource
import socket
import struct
import subprocess
import time
import zlib

import pytest

from acres_bridge.processes import SIMULATOR_READY_LINE, ChildProcess, free_port, simulator_command
from acres_bridge.wire import (
    PROTOCOL_VERSION,
    ClientHello,
    Clock,
    ErrorReply,
    FrameKind,
    Hello,
    StepDone,
    StepRequest,
    encode,
)
from acres_bridge.wire.can import decode_datagram, encode_datagram, is_barrier
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST
from acres_sim.server import SimServer, clients
from acres_sim.vehicles import j1939
from sim.server_rig import Client, connect, maxxum_session

TIMEOUT_S = 60.0


def _header(kind: FrameKind, length: int) -> bytes:
    head = struct.pack("<4sHHI", b"ACRS", PROTOCOL_VERSION, int(kind), length)
    return head + struct.pack("<I", zlib.crc32(head))


def _closed_by_peer(sock: socket.socket, timeout_s: float = TIMEOUT_S) -> bool:
    """Read until the peer closes (True) or timeout_s passes (False)."""
    sock.settimeout(timeout_s)
    try:
        while sock.recv(1 << 16):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


def test_a_client_that_never_reads_is_dropped_and_the_others_keep_their_clock(serve, caplog) -> None:  # type: ignore[no-untyped-def]
    # Once: a client that completed the handshake on a sensor port and never read stopped /clock for 10 s.
    caplog.set_level(logging.WARNING, logger="acres_sim.server")
    server = serve(lockstep=False, perception=True)
    control, sensor, hello = connect(server)
    idle = socket.socket()
    idle.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    idle.connect(("127.0.0.1", hello.agents[0].sensor_port))
    idle.sendall(encode(ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="sensor")))
    clocks: list[int] = []
    deadline = time.monotonic() + TIMEOUT_S
    while not any("fell behind" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "the client that never reads was never dropped"
        message = control.next()
        if isinstance(message, Clock):
            clocks.append(message.step)
    # While it sat on its queue (until 64 MiB of clouds and images waited for it), the clock went on.
    assert len(clocks) >= 120
    assert clocks == list(range(clocks[0], clocks[0] + len(clocks)))  # free run skips no clock
    assert _closed_by_peer(idle)
    idle.close()
    control.sock.close()
    sensor.sock.close()


def test_idle_connections_are_closed_and_those_beyond_the_limit_refused(serve, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Once: 300 idle connections made accept() fail with EMFILE and the simulator exit.
    monkeypatch.setattr(clients, "HANDSHAKE_TIMEOUT_S", TIMEOUT_S)  # none expires while they come
    server: SimServer = serve()
    idle = [
        socket.create_connection(("127.0.0.1", server.control_port), timeout=TIMEOUT_S) for _ in range(70)
    ]
    try:
        refused = 0
        for sock in idle:
            first = Client(server.control_port, sock=sock).next()
            if isinstance(first, ErrorReply):
                assert first.code == "busy"
                refused += 1
            else:
                assert isinstance(first, Hello)
        assert refused == 70 - clients.MAX_CLIENTS
        monkeypatch.setattr(clients, "HANDSHAKE_TIMEOUT_S", 0.5)
        assert all(_closed_by_peer(sock) for sock in idle)  # no CLIENT_HELLO: closed after 0.5 s
    finally:
        for sock in idle:
            sock.close()
    control, _, _ = connect(server)  # a bridge is served as before
    control.send(StepRequest(request_id=1, steps=2))
    assert control.until(StepDone)[-1] == StepDone(request_id=1, last_step=2)


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _simulator(port: int, *, nofile: int | None = None) -> ChildProcess:
    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    args = simulator_command(port, seed=42, lockstep=True, extra=("--no-perception",))
    popen = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=limit,  # noqa: PLW1509  (only setrlimit, before exec)
        start_new_session=True,
    )
    process = ChildProcess("the simulator", popen)
    process.wait_for_line(SIMULATOR_READY_LINE, TIMEOUT_S)
    return process


def test_announced_frame_sizes_allocate_nothing() -> None:
    # Once: six 16-byte headers announcing 64 MiB frames grew the simulator from 68 to 452 MiB.
    port = free_port()
    simulator = _simulator(port)
    try:
        before = _rss_kib(simulator.popen.pid)
        socks = []
        for kind in (FrameKind.LIDAR, FrameKind.CAMERA, FrameKind.CLIENT_HELLO) * 2:
            sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
            sock.sendall(_header(kind, 64 * 1024 * 1024 - 1))
            socks.append(sock)
        hello = Client(port)  # served after them: every header has been read by then
        assert isinstance(hello.next(), Hello)
        assert _rss_kib(simulator.popen.pid) - before < 32 * 1024
        for sock in socks:
            sock.close()
        hello.sock.close()
    finally:
        simulator.stop()


def test_out_of_file_descriptors_the_simulator_goes_on() -> None:
    port = free_port()
    simulator = _simulator(port, nofile=48)
    flood: list[socket.socket] = []
    try:
        for _ in range(80):
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S))
        simulator.wait_for_line("out of file descriptors", TIMEOUT_S)
        for sock in flood:
            sock.close()
        flood.clear()
        assert simulator.popen.poll() is None
        control = Client(port)
        assert isinstance(control.next(), Hello)
        control.sock.close()
    finally:
        for sock in flood:
            sock.close()
        simulator.stop()
        assert simulator.popen.returncode == 0


def test_a_stepping_simulator_answers_a_new_client(serve) -> None:  # type: ignore[no-untyped-def]
    # Once: during a long request new clients got no HELLO until it ended.
    server: SimServer = serve()
    control, _, _ = connect(server)
    control.send(StepRequest(request_id=1, steps=MAX_STEPS_PER_REQUEST))
    while server.world.step < 10:
        time.sleep(0.01)
    late = Client(server.control_port)
    assert isinstance(late.next(), Hello)
    assert server.world.step < MAX_STEPS_PER_REQUEST  # answered while the request still ran
    late.sock.close()


def test_only_the_sessions_bridge_becomes_the_can_controller(serve) -> None:  # type: ignore[no-untyped-def]
    # Once: the sender of any datagram, even refused garbage, got the tractor's CAN frames.
    server, control, _, hello = maxxum_session(serve)
    port, can = hello.agents[0].can_port, server.can_port(0)
    bridge, other = (socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2))
    steps = 0

    def step() -> None:
        nonlocal steps
        steps += 1
        control.send(StepRequest(request_id=steps, steps=1))
        control.until(StepDone)

    try:
        bridge.settimeout(TIMEOUT_S)
        other.settimeout(0.5)
        other.sendto(b"garbage", ("127.0.0.1", port))  # does not decode: nobody's controller
        while can.dropped["datagram"] < 1:
            step()
        assert can.peer is None
        hitch = j1939.encode_frame(j1939.frame_spec("HPC"), {"rear_hitch_pct": 40.0}, source=0x2A)
        bridge.sendto(encode_datagram([hitch]), ("127.0.0.1", port))
        while can.peer is None:
            step()
        assert can.peer == ("127.0.0.1", bridge.getsockname()[1])
        lowered = j1939.encode_frame(j1939.frame_spec("HPC"), {"rear_hitch_pct": 0.0}, source=0x2A)
        for _ in range(2):  # they decode, but do not come from the controller
            other.sendto(encode_datagram([lowered]), ("127.0.0.1", port))
        while can.dropped["foreign"] < 2:
            step()
        last = steps + 24
        control.send(StepRequest(request_id=last, steps=24))
        control.until(StepDone)
        frames = []
        while not frames or not (is_barrier(frames[-1]) and frames[-1].step == last):
            data, _ = bridge.recvfrom(65536)
            frames += decode_datagram(data)
        with pytest.raises(TimeoutError):
            other.recvfrom(65536)  # nothing of the tractor went to the other socket
        group = [f for f in frames if not is_barrier(f)]
        decoded = [j1939.decode(f) for f in group if f.step == group[-1].step]
        hitch_state = next(d for d in decoded if d is not None and d.name == "HITCH")
        assert hitch_state.signals["lever_pct"] == pytest.approx(40.0, abs=0.5)  # its frames drove nothing
    finally:
        bridge.close()
        other.close()
