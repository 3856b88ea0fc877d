"""The simulator's server over real loopback sockets, driven by a raw protocol client."""

from __future__ import annotations

import logging
import math
import socket
import struct
import time
import zlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import pytest

from acres_bridge.wire import (
    PROTOCOL_VERSION,
    ClientHello,
    Clock,
    DbwCommand,
    DbwReport,
    DbwTarget,
    EpisodeInfo,
    ErrorReply,
    FrameKind,
    FrameReader,
    Hello,
    InsSample,
    ReportFlags,
    SensorDemand,
    SensorMeta,
    SetState,
    StepDone,
    StepRequest,
    StepStatus,
    StreamMark,
    decode,
)
from acres_bridge.wire.can import CanFrame, decode_datagram, encode_datagram, is_barrier
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST
from acres_bridge.wire.dbw import COMMAND_FLAG_ENABLE
from acres_bridge.wire.maxxum import Difflock, ImplementControls, MaxxumCommand, MaxxumObservation
from acres_bridge.wire.perception import CameraImage, CameraIntrinsics, LidarScan, camera_intrinsics
from acres_bridge.wire.vocabulary import Source, Vehicle
from acres_sim.sensors.camera import POLARIS_CAMERA
from acres_sim.server import SimServer
from acres_sim.vehicles import j1939
from acres_sim.vehicles.params import POLARIS
from acres_sim.world.model import AgentSpec, World
from acres_sim.world.wire import sensor_meta
from sim.server_rig import Client, connect, maxxum_session

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)


def test_a_step_request_gives_clocks_ins_a_mark_and_step_done(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    control, sensor, hello = connect(server)
    assert hello.lockstep
    control.send(StepRequest(request_id=7, steps=120))
    replies = control.until(StepDone)
    assert [m.step for m in replies if isinstance(m, Clock)] == list(range(1, 121))
    assert replies[-1] == StepDone(request_id=7, last_step=120, status=StepStatus.DONE)
    data = sensor.until(StreamMark)
    samples = [m for m in data if isinstance(m, InsSample)]
    assert len(samples) == 100
    assert data[-1] == StreamMark(last_step=120)
    assert [s.stamp_ns for s in samples] == [s.step * 1_000_000_000 // 120 for s in samples]


def test_a_request_of_more_steps_than_the_maximum_is_refused_at_once(serve) -> None:  # type: ignore[no-untyped-def]
    # 2**40 steps would keep the simulator stepping for hours, deaf to every other client.
    server = serve()
    control, _, _ = connect(server)
    control.send(StepRequest(request_id=1, steps=2**40))
    assert control.until(StepDone)[-1] == StepDone(
        request_id=1, last_step=0, status=StepStatus.TOO_MANY_STEPS
    )
    control.send(StepRequest(request_id=2, steps=MAX_STEPS_PER_REQUEST + 1))
    assert control.until(StepDone)[-1].status == StepStatus.TOO_MANY_STEPS
    control.send(StepRequest(request_id=3, steps=2))
    assert control.until(StepDone)[-1] == StepDone(request_id=3, last_step=2)
    assert server.world.step == 2


def test_a_flood_of_one_bad_command_is_logged_once(serve, caplog) -> None:  # type: ignore[no-untyped-def]
    # 200 copies of one refused command must not become 200 log lines (the rest are counted in the
    # next line of that kind, at most every 5 s).
    server = serve()
    control, _, hello = connect(server)
    polaris = vehicle_channel(server, hello, 0)
    with caplog.at_level(logging.WARNING, logger="acres_sim.server"):
        for seq in range(1, 201):
            polaris.send(DbwCommand(seq=seq, target=DbwTarget.GEAR, cmd_type=0, flags=0, cmd=0.0))
        control.send(StepRequest(request_id=1, steps=1, command_seqs=(200,)))
        assert control.until(StepDone)[-1] == StepDone(request_id=1, last_step=1)
    ignored = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert len(ignored) == 1
    assert ignored[0].startswith("vehicle/0: command 1 ignored:")


def test_steps_are_refused_unless_paused(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lockstep=False)
    control, _, _ = connect(server)
    control.send(StepRequest(request_id=1, steps=5))
    done = control.until(StepDone)[-1]
    assert isinstance(done, StepDone)
    assert done.status == StepStatus.NOT_PAUSED
    control.send(SetState(state=0))
    episode = control.until(EpisodeInfo)[-1]
    assert isinstance(episode, EpisodeInfo)
    assert (episode.state, episode.episode) == (0, 1)  # stopping resets: a new episode
    control.send(StepRequest(request_id=2, steps=5))
    assert control.until(StepDone)[-1] == StepDone(
        request_id=2, last_step=episode.step, status=StepStatus.STOPPED
    )


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
            control.send(StepRequest(request_id=request_id, steps=steps))
            control.until(StepDone)
            sensor.until(StreamMark)
        hello_length = 16 + struct.unpack_from("<I", control.raw, 8)[0]  # HELLO names this run's ports
        streams.append((bytes(control.raw[hello_length:]), bytes(sensor.raw)))
    assert streams[0] == streams[1]
    assert len(streams[0][1]) > 200 * 352


# ---- the drive-by-wire on the vehicle channel ---------------------------------------------------

ENABLE = DbwCommand(seq=1, target=DbwTarget.ENABLE, cmd_type=0, flags=0, cmd=0.0)
STEER_LEFT = DbwCommand(seq=2, target=DbwTarget.STEERING, cmd_type=2, flags=COMMAND_FLAG_ENABLE, cmd=200.0)


def vehicle_channel(server: SimServer, hello: Hello, agent: int = 0) -> Client:
    vehicle = Client(hello.agents[agent].vehicle_port)
    vehicle.send(ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="vehicle", agent=agent))
    return vehicle


def test_a_command_sent_before_a_step_request_applies_at_its_first_step(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    control, _, hello = connect(server)
    vehicle = vehicle_channel(server, hello)
    vehicle.send(ENABLE)
    vehicle.send(STEER_LEFT)
    control.send(StepRequest(request_id=1, steps=1, command_seqs=(2,)))
    assert control.until(StepDone)[-1] == StepDone(request_id=1, last_step=1)
    status = server.world.agent(0)
    assert status.dbw_enabled
    assert status.state.steer > 0.0  # the wheel moved in step 1
    assert vehicle.until(StreamMark) == [StreamMark(last_step=1)]  # the first report is due at step 3
    control.send(StepRequest(request_id=2, steps=2, command_seqs=(2,)))
    control.until(StepDone)
    report, mark = vehicle.until(StreamMark)
    assert isinstance(report, DbwReport)
    assert mark == StreamMark(last_step=3)
    assert (report.step, report.stamp_ns) == (3, 3 * 1_000_000_000 // 120)
    assert ReportFlags(report.flags) == ReportFlags.DBW_ENABLED | ReportFlags.STEERING_ENABLED
    assert (report.steering_cmd, report.steering_cmd_type, report.gear) == (200.0, 2, 1)
    assert 0.0 < report.steering_wheel_angle_deg <= 3 * 1000.0 / 120
    assert report.steering_wheel_angle_deg == pytest.approx(
        math.degrees(server.world.agent(0).state.steer) * POLARIS.steering_ratio
    )


def test_a_command_the_request_does_not_count_waits_for_the_next_request(serve) -> None:  # type: ignore[no-untyped-def]
    """Sent before the request but numbered after what the request counts (the bridge sent it
    once the request was on its way), the steering waits for the request that counts it, however
    the two sockets' bytes interleave: the same requests give the same steps."""
    server = serve()
    control, _, hello = connect(server)
    vehicle = vehicle_channel(server, hello)
    vehicle.send(ENABLE)
    vehicle.send(STEER_LEFT)
    time.sleep(0.1)  # both are in the simulator's socket before the request: it reads them together
    control.send(StepRequest(request_id=1, steps=1, command_seqs=(1,)))
    control.until(StepDone)
    assert server.world.agent(0).dbw_enabled
    assert server.world.agent(0).state.steer == 0.0  # command 2 is not this request's
    control.send(StepRequest(request_id=2, steps=1, command_seqs=(2,)))
    control.until(StepDone)
    assert server.world.agent(0).state.steer > 0.0


def test_a_step_request_waits_for_a_command_that_arrives_late(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve()
    control, _, hello = connect(server)
    vehicle = vehicle_channel(server, hello)
    control.send(StepRequest(request_id=1, steps=1, command_seqs=(2,)))
    control.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        control.until(StepDone)  # the simulator waits for command 2
    assert server.world.step == 0
    vehicle.send(ENABLE)
    time.sleep(0.1)
    vehicle.send(STEER_LEFT)
    control.sock.settimeout(10)
    assert control.until(StepDone)[-1] == StepDone(request_id=1, last_step=1)
    assert server.world.agent(0).dbw_enabled
    assert server.world.agent(0).state.steer > 0.0


def test_commands_for_a_maxxum_or_with_invalid_values_are_ignored(serve, caplog) -> None:  # type: ignore[no-untyped-def]
    server = serve(agents=(AgentSpec(name="polaris"), AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM)))
    control, _, hello = connect(server)
    polaris, maxxum = vehicle_channel(server, hello, 0), vehicle_channel(server, hello, 1)
    with caplog.at_level(logging.WARNING, logger="acres_sim.server"):
        maxxum.send(ENABLE)
        polaris.send(
            DbwCommand(seq=1, target=DbwTarget.GEAR, cmd_type=0, flags=0, cmd=0.0)
        )  # gear 0: no command
        polaris.send(
            DbwCommand(seq=2, target=DbwTarget.STEERING, cmd_type=1, flags=COMMAND_FLAG_ENABLE, cmd=3.0)
        )  # torque
        control.send(StepRequest(request_id=1, steps=3, command_seqs=(2, 1)))
        assert control.until(StepDone)[-1] == StepDone(request_id=1, last_step=3)
    ignored = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert len(ignored) == 3  # in the order the channels were read
    for text in ("vehicle/1: command 1 ignored: agent 1 (maxxum)", "0 is no command", "cmd_type 1"):
        assert any(text in message for message in ignored), text
    report, mark = polaris.until(StreamMark)
    assert isinstance(report, DbwReport)
    assert mark == StreamMark(last_step=3)
    assert (report.flags, report.gear, report.gear_cmd, report.steering_cmd_type) == (0, 1, 0, 0)
    assert maxxum.until(StreamMark) == [StreamMark(last_step=3)]  # no report line for a Maxxum


def test_same_commands_same_seed_give_byte_identical_vehicle_streams(serve) -> None:  # type: ignore[no-untyped-def]
    streams = []
    for _ in range(2):
        server = serve(seed=3)
        control, _, hello = connect(server)
        vehicle = vehicle_channel(server, hello)
        seq = 0
        for request_id in range(1, 41):
            for target, cmd_type, value in (
                (DbwTarget.ENABLE, 0, 0.0),
                (DbwTarget.GEAR, 5, 0.0),
                (DbwTarget.STEERING, 3, 0.02),
                (DbwTarget.ULC, 1, 1.5),
            ):
                seq += 1
                vehicle.send(
                    DbwCommand(
                        seq=seq,
                        target=target,
                        cmd_type=cmd_type,
                        flags=COMMAND_FLAG_ENABLE if cmd_type else 0,
                        cmd=value,
                    )
                )
            control.send(StepRequest(request_id=request_id, steps=6, command_seqs=(seq,)))
            control.until(StepDone)
            vehicle.until(StreamMark)
        streams.append(bytes(vehicle.raw))
    assert streams[0] == streams[1]
    reports = [decode(frame) for frame in _frames(streams[0])]
    assert sum(isinstance(m, DbwReport) for m in reports) == 100  # 4 s at 50 Hz
    last = [m for m in reports if isinstance(m, DbwReport)][-1]
    assert last.gear == 5
    assert last.vel_meas_mps > 0.5


def _frames(data: bytes) -> list[object]:
    reader = FrameReader()
    reader.feed(data)
    return list(reader.frames())


def test_a_second_of_steps_sends_ten_clouds_and_ten_images_before_the_mark(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(perception=True)
    control, sensor, _ = connect(server)
    control.send(StepRequest(request_id=8, steps=120))
    data = sensor.until(StreamMark)  # first: the server's send of 23 MB waits for this reader
    control.until(StepDone)
    clouds = [m for m in data if isinstance(m, LidarScan)]
    images = [m for m in data if isinstance(m, CameraImage)]
    assert [c.step for c in clouds] == list(range(12, 121, 12))
    assert [i.step for i in images] == list(range(12, 121, 12))
    assert all((c.columns, c.rings, len(c.points)) == (1800, 32, 921_600) for c in clouds)
    assert all((i.width, i.height, len(i.pixels)) == (896, 512, 1_376_256) for i in images)


def _perception(control: Client, sensor: Client, request: int, steps: int) -> list[object]:
    control.send(StepRequest(request_id=request, steps=steps))
    data = sensor.until(StreamMark)
    control.until(StepDone)
    return [m for m in data if isinstance(m, LidarScan | CameraImage)]


def test_only_the_frames_a_sensor_demand_wants_are_made_and_those_are_the_ones_made_anyway(
    serve,  # type: ignore[no-untyped-def]
) -> None:
    demanding, every = serve(perception=True), serve(perception=True)
    (control, sensor, hello), (control_all, sensor_all, _) = connect(demanding), connect(every)
    assert "sensor_demand" in hello.features
    rig = demanding.world.sensors(0)
    assert rig is not None
    lidar = next(i for i, m in enumerate(demanding.world.agent(0).params.mounts) if m.frame == "lidar")
    control.send(SensorDemand(agent=0, sensors=()))  # nobody wants a frame: no ray is cast
    assert _perception(control, sensor, 1, 24) == []
    assert (rig.rays_cast, rig.skipped) == (0, 4)
    control.send(SensorDemand(agent=0, sensors=(lidar,)))  # the LiDAR is wanted again
    wanted = _perception(control, sensor, 2, 12)
    assert [(type(m).__name__, m.step) for m in wanted] == [("LidarScan", 36)]  # its own schedule
    assert rig.skipped == 5  # the camera's frame of step 36
    made = [m for m in _perception(control_all, sensor_all, 1, 36) if isinstance(m, LidarScan)]
    assert [m.step for m in made] == [12, 24, 36]
    assert wanted[0] == made[-1]  # the skipped scans drew their noise: the same cloud


def test_the_frames_any_bridge_wants_are_made_and_a_bridge_that_said_nothing_wants_all(
    serve,  # type: ignore[no-untyped-def]
) -> None:
    server = serve(perception=True)
    control, sensor, _ = connect(server)
    second = Client(server.control_port)  # another bridge of the session (its own agents)
    assert isinstance(second.next(), Hello)
    second.send(ClientHello(protocol_version=PROTOCOL_VERSION, client="test", role="control"))
    assert isinstance(second.next(), EpisodeInfo)
    rig = server.world.sensors(0)
    assert rig is not None
    lidar = next(i for i, m in enumerate(server.world.agent(0).params.mounts) if m.frame == "lidar")
    control.send(SensorDemand(agent=0, sensors=()))
    made = _perception(control, sensor, 1, 12)  # the second bridge has said nothing of agent 0
    assert sorted(type(m).__name__ for m in made) == ["CameraImage", "LidarScan"]
    second.send(SensorDemand(agent=0, sensors=(lidar,)))
    _until(lambda: rig.wanted == {lidar}, "the second bridge's demand")
    assert [type(m).__name__ for m in _perception(control, sensor, 2, 12)] == ["LidarScan"]
    second.sock.close()  # the bridge that wanted the LiDAR goes
    _until(lambda: rig.wanted == frozenset(), "the demand of the bridge left")
    assert _perception(control, sensor, 3, 12) == []


def _meta(agents: Sequence[AgentSpec], source: Source) -> SensorMeta:
    world = World(seed=1, start_utc=START, agents=agents, source=source)
    return sensor_meta(world, 0)


def test_sensor_meta_gives_the_lidar_layout_and_the_camera_intrinsics() -> None:
    meta = _meta([AgentSpec(name="polaris")], Source.UNREAL)
    kinds = {m.name: m.kind for m in meta.sensors}
    assert kinds == {
        "lidar": "lidar",
        "reolink_camera": "camera",
        "reolink_camera_optical": "frame",
        "imu_link": "ins",
    }
    lidar = next(m for m in meta.sensors if m.kind == "lidar")
    camera = next(m for m in meta.sensors if m.kind == "camera")
    assert (lidar.settings["columns"], lidar.settings["rings"]) == (1800, 32)
    assert camera_intrinsics(camera) == CameraIntrinsics(896, 512, POLARIS_CAMERA.k, POLARIS_CAMERA.d)


def test_a_core_session_has_no_camera_and_sends_no_image(serve) -> None:  # type: ignore[no-untyped-def]
    meta = _meta([AgentSpec(name="polaris")], Source.CORE)
    assert [m.kind for m in meta.sensors if m.name == "reolink_camera"] == ["frame"]
    world = World(seed=1, start_utc=START, lockstep=True, source=Source.CORE)
    outputs = [world.advance() for _ in range(24)]
    assert [(o.step, f.kind) for o in outputs for f in o.frames] == [(12, "lidar"), (24, "lidar")]


def test_agent_ports_puts_each_agent_on_fixed_ports() -> None:
    agents = (AgentSpec(name="a"), AgentSpec(name="b"))
    world = World(seed=1, start_utc=START, lockstep=True, agents=agents, perception=False)
    for _ in range(20):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base > 65000:
            continue
        try:
            server = SimServer(world, port=0, agent_ports=base)
        except OSError:
            continue  # one of the four ports is taken: try elsewhere
        try:
            ports = [(a.sensor_port, a.vehicle_port) for a in server.hello.agents]
            assert ports == [(base, base + 1), (base + 2, base + 3)]
        finally:
            server.close()
        return
    pytest.fail("no four free ports in a row found")


# ---- the Maxxum: vehicle bridge and CAN bus ---------------------------------------------------------


def _command(seq: int) -> MaxxumCommand:
    return MaxxumCommand(
        seq=seq,
        curvature_1pm=0.0,
        pedal=0.4,
        brake=0.0,
        hand_throttle=0.0,
        hitch_lever=0.0,
        hitch_raise=True,
        pto_on=False,
        difflock=Difflock.OPEN,
        implement=ImplementControls(),
    )


def test_a_maxxum_is_observed_at_10_hz_and_driven_by_its_commands(serve) -> None:  # type: ignore[no-untyped-def]
    _, control, vehicle, hello = maxxum_session(serve)
    assert hello.agents[0].can_port > 0
    observations: list[MaxxumObservation] = []
    for seq in range(1, 41):  # 20 Hz commands, 6 steps each: 2 simulated seconds
        vehicle.send(_command(seq))
        control.send(
            StepRequest(request_id=seq, steps=6, command_seqs=(seq,))
        )  # the request waits for the command
        control.until(StepDone)
        observations += [m for m in vehicle.until(StreamMark) if isinstance(m, MaxxumObservation)]
    assert [o.step for o in observations] == list(range(12, 241, 12))
    assert not observations[-1].stale
    assert observations[-1].engine_rpm > 1000.0


# A datagram of a controller setting the rear hitch to 40 %.
HITCH_40 = encode_datagram(
    [j1939.encode_frame(j1939.frame_spec("HPC"), {"rear_hitch_pct": 40.0}, source=0x2A)]
)


def _bus_frames(bus: socket.socket, last_step: int) -> list[CanFrame]:
    """The tractor's frames on `bus` through the barrier of `last_step`."""
    frames: list[CanFrame] = []
    while not frames or not (is_barrier(frames[-1]) and frames[-1].step == last_step):
        data, _ = bus.recvfrom(65536)
        frames += decode_datagram(data)
    return frames


def test_the_can_bus_sends_groups_of_13_and_a_barrier_after_each_step(serve) -> None:  # type: ignore[no-untyped-def]
    server, control, _, hello = maxxum_session(serve)
    bus = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bus.settimeout(5.0)
    try:
        bus.sendto(HITCH_40, ("127.0.0.1", hello.agents[0].can_port))
        _until(lambda: server.can_port(0).taken == 1, "the datagram read")  # the controller, learnt from it
        control.send(StepRequest(request_id=1, steps=24))
        control.until(StepDone)
        frames = _bus_frames(bus, 24)
    finally:
        bus.close()
    barriers = [f for f in frames if is_barrier(f)]
    group = [f for f in frames if not is_barrier(f)]
    assert [b.step for b in barriers] == list(range(barriers[0].step, 25))
    assert len(group) == 26  # steps 12 and 24
    assert {f.step for f in group} == {12, 24}
    assert all(f.is_extended and f.can_id < 1 << 29 for f in group)
    decoded = [j1939.decode(f) for f in group if f.step == 24]
    assert sorted(d.name for d in decoded if d is not None) == sorted(s.name for s in j1939.STATUS_FRAMES)
    hitch_state = next(d for d in decoded if d is not None and d.name == "HITCH")
    assert hitch_state.signals["lever_pct"] == pytest.approx(40.0, abs=0.5)  # the controller's frame arrived


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 10.0
    while not condition():  # the server's thread takes a frame of another connection
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _udp() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5.0)
    return sock


def test_the_can_port_a_bridge_names_in_its_hello_is_the_controller_before_it_sends(serve) -> None:  # type: ignore[no-untyped-def]
    bus, stranger = _udp(), _udp()
    try:
        server, control, _, hello = maxxum_session(serve, can_ports=((0, bus.getsockname()[1]),))
        # Another sender on the bridge's host, first to speak: it is not the controller.
        stranger.sendto(HITCH_40, ("127.0.0.1", hello.agents[0].can_port))
        _until(lambda: server.can_port(0).dropped["foreign"] == 1, "the stranger's datagram read")
        control.send(StepRequest(request_id=1, steps=12))
        control.until(StepDone)
        frames = _bus_frames(bus, 12)  # the named port gets the tractor's frames without speaking first
        assert server.can_port(0).dropped["foreign"] == 1
        decoded = [j1939.decode(f) for f in frames if not is_barrier(f)]
        hitch_state = next(d for d in decoded if d is not None and d.name == "HITCH")
        assert hitch_state.signals["lever_pct"] == pytest.approx(0.0, abs=0.5)  # the stranger changed nothing
        stranger.settimeout(0.2)
        with pytest.raises(TimeoutError):
            stranger.recvfrom(65536)
    finally:
        bus.close()
        stranger.close()


def test_a_datagram_sent_right_after_the_hello_that_names_its_port_is_taken(serve) -> None:  # type: ignore[no-untyped-def]
    bus = _udp()
    try:
        server = serve(agents=(AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM),))
        control = Client(server.control_port)
        hello = control.next()
        assert isinstance(hello, Hello)
        control.send(
            ClientHello(
                protocol_version=PROTOCOL_VERSION,
                client="test",
                role="control",
                can_ports=((0, bus.getsockname()[1]),),
            )
        )
        bus.sendto(HITCH_40, ("127.0.0.1", hello.agents[0].can_port))  # no pause
        control.until(EpisodeInfo)
        # A datagram is not ordered with a step request: wait until the server's thread took it.
        _until(
            lambda: server.can_port(0).taken + server.can_port(0).dropped["foreign"] > 0, "the datagram read"
        )
        control.send(StepRequest(request_id=1, steps=24))
        control.until(StepDone)
        frames = _bus_frames(bus, 24)
    finally:
        bus.close()
    assert server.can_port(0).dropped["foreign"] == 0
    decoded = [j1939.decode(f) for f in frames if not is_barrier(f) and f.step == 24]
    hitch_state = next(d for d in decoded if d is not None and d.name == "HITCH")
    assert hitch_state.signals["lever_pct"] == pytest.approx(40.0, abs=0.5)


def test_free_run_renders_in_a_thread_and_sends_the_frames_with_their_step(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lockstep=False, perception=True)
    _, sensor, _ = connect(server)
    clouds: list[LidarScan] = []
    images: list[CameraImage] = []
    samples: list[InsSample] = []
    deadline = time.monotonic() + 20.0
    while len(images) < 3 and time.monotonic() < deadline:
        message = sensor.next()
        if isinstance(message, LidarScan):
            clouds.append(message)
        elif isinstance(message, CameraImage):
            images.append(message)
        elif isinstance(message, InsSample):
            samples.append(message)
    assert len(images) >= 3
    assert all(frame.step % 12 == 0 for frame in [*clouds, *images])
    assert all(frame.stamp_ns == frame.step * 1_000_000_000 // 120 for frame in [*clouds, *images])
    assert [c.step for c in clouds] == sorted({c.step for c in clouds})  # in step order, none twice
    assert len(samples) > 20  # the INS went on while the frames were made
