"""The episode log: the MCAP file of the /sim/* channels, as a World drives it (without a server)."""

from __future__ import annotations

import itertools
import logging
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.reader import make_reader
from mcap.records import Schema
from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap_ros2._dynamic import serialize_dynamic
from mcap_ros2.decoder import DecoderFactory
from rosbags.highlevel import AnyReader

from acres_bridge.geo.rotation import quaternion_from_rpy
from acres_bridge.tools.bag import BagWriter
from acres_bridge.tools.cdr_records import cdr_string, pack_stamped_sequence
from acres_bridge.tools.msgdef import definition_text
from acres_bridge.tools.qos import Durability, History, Reliability, parse_offered_qos
from acres_bridge.wire.vocabulary import SimState, Source, Vehicle
from acres_sim.clock import NS_PER_S, PHYSICS_DT_S, step_stamp_ns
from acres_sim.episode.log import (
    CHANNELS,
    EpisodeLog,
    EpisodeLogError,
    MountOffset,
    TaskState,
    TaskStatus,
    VehicleShift,
)
from acres_sim.episode.messages import AGENT_STATE_RECORD, FARM_EVENT_RECORD, FARM_STAMP_RECORD, typestore
from acres_sim.errors import ParamsError
from acres_sim.vehicles.energy import POLARIS_ENERGY
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY
from acres_sim.vehicles.tractor import TractorCommand
from acres_sim.world.farm import EventKind, Part
from acres_sim.world.model import AgentSpec, World
from acres_sim.world.weather import Weather

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)
IN_THE_CROP = {"x": -12.0, "y": -40.0, "yaw": 0.5 * math.pi}  # in a crop strip beside the route


@dataclass(frozen=True)
class Logged:
    """One message of the file: its times and the mcap_ros2 decoding."""

    log_time: int
    publish_time: int
    message: Any


def _world(*agents: AgentSpec, start: datetime = START, **kwargs: Any) -> World:
    return World(
        seed=42,
        start_utc=start,
        agents=agents or (AgentSpec(name="polaris", autopilot=True),),
        perception=False,
        **kwargs,
    )


def _read(path: Path) -> dict[str, list[Logged]]:
    found: dict[str, list[Logged]] = defaultdict(list)
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, message, decoded in reader.iter_decoded_messages(log_time_order=False):
            found[channel.topic].append(Logged(message.log_time, message.publish_time, decoded))
    return found


def _run(world: World, log: EpisodeLog, steps: int) -> None:
    for _ in range(steps):
        log.on_step(world, world.advance())


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[tuple[World, EpisodeLog]]:
    world = _world()
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    yield world, log
    log.close()


def test_a_session_gives_every_channel_at_its_rate(tmp_path: Path) -> None:
    world = _world()
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    _run(world, log, 1200)
    log.close()
    messages = _read(tmp_path / "episode.mcap")
    counts = {name: len(messages.get(name, [])) for name in CHANNELS}
    assert counts == {
        "/sim/episode": 1,
        "/sim/agents": 1,
        "/sim/agent_states": 1200,
        "/sim/farm_stamps": 0,  # the route runs beside the crop
        "/sim/farm_events": 0,
        "/sim/conditions": 11,  # at 0 s and each whole second to 10 s
        "/sim/shifts": 1,  # the empty list: every vehicle is nominal
        "/sim/task": 0,
    }
    assert [m.message.step for m in messages["/sim/agent_states"]] == list(range(1, 1201))
    for m in messages["/sim/agent_states"]:
        stamp = step_stamp_ns(m.message.step)
        assert m.log_time == m.publish_time == stamp
        assert m.message.header.stamp.sec * NS_PER_S + m.message.header.stamp.nanosec == stamp
        assert m.message.header.frame_id == "world"
    conditions = messages["/sim/conditions"]
    assert [m.log_time for m in conditions] == [k * NS_PER_S for k in range(11)]
    assert conditions[0].message.local_time.sec == int(START.timestamp())
    assert messages["/sim/shifts"][0].message.shifts == []


def test_the_file_is_what_rosbag2_writes(logged: tuple[World, EpisodeLog]) -> None:
    world, log = logged
    _run(world, log, 12)
    log.close()
    with log.path.open("rb") as stream:
        reader = make_reader(stream)
        header = reader.get_header()
        summary = reader.get_summary()
        metadata = [r for r in reader.iter_metadata() if r.name == "rosbag2"]
    assert header.profile == Profile.ROS2
    assert summary is not None
    channels = {c.topic: c for c in summary.channels.values()}
    assert list(channels) == list(CHANNELS)
    for channel in channels.values():
        schema = summary.schemas[channel.schema_id]
        assert schema.encoding == SchemaEncoding.ROS2
        assert schema.data.decode() == definition_text(schema.name)
        assert channel.message_encoding == MessageEncoding.CDR
        assert channel.metadata["topic_type_hash"].startswith("RIHS01_")
        (offer,) = parse_offered_qos(channel.metadata["offered_qos_profiles"])
        assert offer.reliability is Reliability.RELIABLE
        assert offer.history is History.KEEP_LAST
        latched = channel.topic == "/sim/episode"
        assert offer.durability is (Durability.TRANSIENT_LOCAL if latched else Durability.VOLATILE)
        assert offer.depth == (1 if latched else 10)
    assert summary.schemas[channels["/sim/agent_states"].schema_id].name == "acres_interfaces/msg/AgentStates"
    bag = yaml.safe_load(metadata[0].metadata["serialized_metadata"])
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in bag["topics_with_message_count"]}
    assert counts["/sim/agent_states"] == 12
    assert bag["starting_time"]["nanoseconds_since_epoch"] == 0  # simulation time


def test_the_agent_states_are_the_worlds(tmp_path: Path) -> None:
    world = _world(
        AgentSpec(name="polaris", autopilot=True), AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM)
    )
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    expected = []
    for _ in range(240):
        if world.step % 6 == 0:
            world.apply_tractor_command(1, TractorCommand(pedal=0.3, brake=0.0, curvature_1pm=0.02))
        output = world.advance()
        log.on_step(world, output)
        expected.append((output.states, world.dbw_report(0), world.tractor_observation(1)))
    log.close()
    states = _read(tmp_path / "episode.mcap")["/sim/agent_states"]
    for m, (truth, report, tractor) in zip(states, expected, strict=True):
        polaris, maxxum = m.message.agents
        assert (polaris.name, maxxum.name) == ("polaris", "maxxum")
        for got, state in ((polaris, truth[0]), (maxxum, truth[1])):
            p = got.pose.position
            q = got.pose.orientation
            assert (p.x, p.y, p.z) == (state.x, state.y, state.z)
            assert (q.x, q.y, q.z, q.w) == quaternion_from_rpy(state.roll, state.pitch, state.yaw)
            assert (got.speed_mps, got.steering_angle_rad) == (state.speed, state.steer)
            assert got.twist.linear.x == state.speed
        assert (polaris.gear, polaris.throttle_pct, polaris.brake_pct) == (
            report.gear,
            report.throttle_output_pct,
            report.brake_output_pct,
        )
        assert maxxum.gear == 0
        assert maxxum.engine_rpm == tractor.engine_rpm
        assert (maxxum.throttle_pct, maxxum.brake_pct) == (pytest.approx(30.0), 0.0)
        assert maxxum.dbw_enabled
        assert not maxxum.safety_brake
    last = states[-1].message.agents
    assert last[0].energy.traction_work_j > 0.0
    assert last[0].energy.fuel_used_l > 0.0
    assert last[1].energy.rolling_loss_j > 0.0
    assert 800.0 < last[1].engine_rpm < 2400.0


def test_the_same_seed_and_steps_give_the_same_bytes(tmp_path: Path) -> None:
    files = []
    for run in ("a", "b"):
        world = _world()
        (tmp_path / run).mkdir()
        log = EpisodeLog(world, tmp_path / run / "episode.mcap")
        _run(world, log, 120)
        world.reset_agent(0, **IN_THE_CROP)
        log.on_episode(world)
        _run(world, log, 600)
        log.close()
        files.append((tmp_path / run / "episode.mcap").read_bytes())
    assert files[0] == files[1]


def test_episode_changes_write_the_episode_and_the_agents(tmp_path: Path) -> None:
    world = _world(AgentSpec(name="polaris", autopilot=True), AgentSpec(name="polaris2", autopilot=True))
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    _run(world, log, 60)
    world.reset_agent(1, x=-18.0, y=0.0, yaw=0.5 * math.pi)  # agent 1: the episode, not a new session one
    log.on_episode(world)
    _run(world, log, 60)
    log.on_episode(world)  # nothing changed: nothing written
    world.set_state(SimState.PAUSED)
    log.on_episode(world)
    world.set_state(SimState.PLAYING)
    log.on_episode(world)
    world.reset_session()
    log.on_episode(world)
    _run(world, log, 1)
    log.close()
    messages = _read(tmp_path / "episode.mcap")
    episodes = [m.message for m in messages["/sim/episode"]]
    assert [(e.episode, e.state, e.step) for e in episodes] == [
        (0, 1, 0),
        (0, 1, 60),
        (0, 2, 120),
        (0, 1, 120),
        (1, 1, 120),
    ]
    assert episodes[-1].episode_id == "20261002T072309-0001"
    assert (episodes[0].seed, episodes[0].source, episodes[0].map) == (42, "unreal", "V03ACRE")
    assert episodes[0].agents == ["polaris", "polaris2"]
    assert messages["/sim/episode"][1].log_time == step_stamp_ns(60)
    agents = [m.message for m in messages["/sim/agents"]]
    assert [a.episode_id for a in agents] == ["20261002T072309-0000", "20261002T072309-0001"]
    info = agents[0].agents[0]
    assert (info.name, info.index, info.vehicle, info.implement) == ("polaris", 0, "polaris", "")
    assert (info.wheelbase_m, info.track_width_m, info.mass_kg) == (2.06, 1.32, 900.0)
    # Agent 1's ledger restarted with its reset; agent 0's did not.
    states = [m.message.agents for m in messages["/sim/agent_states"]]
    assert states[60][1].energy.engine_work_j < states[59][1].energy.engine_work_j
    assert states[60][0].energy.engine_work_j > states[59][0].energy.engine_work_j


def test_a_vehicle_in_the_crop_stamps_and_changes_the_farm(tmp_path: Path) -> None:
    world = _world()
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    world.reset_agent(0, **IN_THE_CROP)
    log.on_episode(world)
    _run(world, log, 600)
    world.reset_session()  # the farm of the start again
    log.on_episode(world)
    world.reset_agent(0, **IN_THE_CROP)
    log.on_episode(world)
    _run(world, log, 600)
    log.close()
    messages = _read(tmp_path / "episode.mcap")
    stamps = [m.message for m in messages["/sim/farm_stamps"]]
    events = [m.message for m in messages["/sim/farm_events"]]
    assert stamps
    assert events
    for m in messages["/sim/farm_stamps"]:
        assert m.log_time == step_stamp_ns(m.message.step)
        assert m.message.header.frame_id == "world"
    parts = {s.part for message in stamps for s in message.stamps}
    assert {Part.FRONT_LEFT_TYRE, Part.REAR_RIGHT_TYRE, Part.BODY} <= parts
    tyre = next(s for message in stamps for s in message.stamps if s.part == Part.FRONT_LEFT_TYRE)
    assert tyre.agent == "polaris"
    assert tyre.normal_force_n > 0.0
    assert tyre.ground_pressure_pa == pytest.approx(tyre.normal_force_n / tyre.contact_area_m2)
    assert 0.0 < tyre.slip_ratio < 0.15
    flattened = [e for message in events for e in message.events if e.kind == EventKind.CROP_FLATTENED]
    assert flattened
    assert {(e.value_before, e.value_after, e.unit, e.agent) for e in flattened} == {
        (0.9, 0.1, "m", "polaris")
    }
    # The same drive in the restored farm flattens the same cells again.
    assert [m.log_time for m in messages["/sim/agents"]] == [0, 0, step_stamp_ns(600), step_stamp_ns(600)]
    before = sorted(
        (e.position.x, e.position.y)
        for m in messages["/sim/farm_events"]
        if m.message.step <= 600
        for e in m.message.events
        if e.kind == EventKind.CROP_FLATTENED
    )
    after = sorted(
        (e.position.x, e.position.y)
        for m in messages["/sim/farm_events"]
        if m.message.step > 600
        for e in m.message.events
        if e.kind == EventKind.CROP_FLATTENED
    )
    assert before == after
    # Driving in the soil costs energy: the rolling loss since the last reset exceeds the rolling
    # resistance of a track over the distance driven.
    speeds = [0.0] + [m.message.agents[0].speed_mps for m in messages["/sim/agent_states"][600:]]
    distance = sum(0.5 * abs(a + b) * PHYSICS_DT_S for a, b in itertools.pairwise(speeds))
    track = POLARIS_ENERGY.rolling_resistance * 900.0 * STANDARD_GRAVITY * distance
    energy = messages["/sim/agent_states"][-1].message.agents[0].energy
    assert distance > 5.0
    assert energy.rolling_loss_j > 1.05 * track


def test_an_acres_core_session_has_no_crop(tmp_path: Path) -> None:
    world = _world(source=Source.CORE)
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    world.reset_agent(0, **IN_THE_CROP)
    log.on_episode(world)
    _run(world, log, 240)
    log.close()
    messages = _read(tmp_path / "episode.mcap")
    assert "/sim/farm_stamps" not in messages
    assert messages["/sim/episode"][0].message.source == "core"


def test_a_change_of_the_rain_writes_the_conditions(tmp_path: Path) -> None:
    weather = Weather(seed=42, start_utc=START, latitude_deg=40.47, longitude_deg=-86.995)
    change = weather.next_change_ns(0)
    assert change is not None
    # Start 5.5 s before the change: it comes between two whole seconds.
    start = START + timedelta(microseconds=(change - 5_500_000_000) // 1000)
    world = _world(start=start)
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    _run(world, log, 1200)
    log.close()
    conditions = _read(tmp_path / "episode.mcap")["/sim/conditions"]
    assert [m.log_time for m in conditions] == sorted([k * NS_PER_S for k in range(11)] + [5_500_000_000])
    rain = [m.message.precipitation_mm_per_h for m in conditions]
    assert (rain[5] == 0.0) != (rain[6] == 0.0)  # it starts or stops at 5.5 s


def test_task_code_writes_the_task_status(logged: tuple[World, EpisodeLog]) -> None:
    world, log = logged
    _run(world, log, 30)
    log.task_status(
        TaskStatus(
            task="follow_row",
            agent="polaris",
            status=TaskState.RUNNING,
            progress=0.25,
            reward=1.5,
            reward_terms={"progress": 2.0, "damage": -0.5},
            message="on the row",
        )
    )
    log.task_status(TaskStatus(task="session", status=TaskState.SUCCEEDED), stamp_ns=step_stamp_ns(31))
    assert log.message_count("/sim/task") == 2
    log.close()
    tasks = _read(log.path)["/sim/task"]
    first = tasks[0].message
    assert tasks[0].log_time == step_stamp_ns(30)
    assert (first.task, first.agent, first.status, first.progress, first.reward) == (
        "follow_row",
        "polaris",
        1,
        0.25,
        1.5,
    )
    assert (first.reward_term_names, list(first.reward_terms), first.message) == (
        ["progress", "damage"],
        [2.0, -0.5],
        "on the row",
    )
    assert (tasks[1].log_time, tasks[1].message.agent, tasks[1].message.status) == (step_stamp_ns(31), "", 2)
    with pytest.raises(EpisodeLogError, match="task_status after close"):
        log.task_status(TaskStatus(task="late", status=TaskState.FAILED))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"task": ""}, "task: expected a non-empty task name"),
        ({"status": 9}, r"status: expected one of \[0, 1, 2, 3, 4\], got 9"),
        ({"progress": 1.5}, "progress: expected 0 .. 1, got 1.5"),
        ({"reward": math.nan}, "reward: expected a finite number"),
        ({"reward_terms": {"speed": math.inf}}, "reward_terms.speed: expected a finite number"),
        ({"reward_terms": {3: 1.0}}, "reward_terms: expected names as strings, got 3"),
    ],
)
def test_bad_task_statuses_are_refused(kwargs: dict[str, Any], match: str) -> None:
    fields: dict[str, Any] = {"task": "t", "status": TaskState.RUNNING, **kwargs}
    with pytest.raises(ParamsError, match=match):
        TaskStatus(**fields)


def test_a_task_of_an_unknown_agent_is_refused(logged: tuple[World, EpisodeLog]) -> None:
    _, log = logged
    with pytest.raises(ParamsError, match=r"TaskStatus.agent 'tractor': expected '' or one of \['polaris'\]"):
        log.task_status(TaskStatus(task="t", agent="tractor", status=TaskState.PENDING))
    with pytest.raises(ParamsError, match="stamp_ns: expected an integer >= 0"):
        log.task_status(TaskStatus(task="t", status=TaskState.PENDING), stamp_ns=-1)


def test_shifts_are_written_when_they_change(logged: tuple[World, EpisodeLog]) -> None:
    world, log = logged
    assert log.shifts == ()
    _run(world, log, 10)
    shift = VehicleShift(
        agent="polaris",
        mass_offset_kg=80.0,
        steering_offset_deg=1.5,
        tyre_radius_scale=0.98,
        lidar_mount_offset=MountOffset(translation=(0.0, 0.02, 0.0)),
    )
    log.set_shifts([shift])
    log.set_shifts([shift])  # no change: nothing written
    _run(world, log, 10)
    log.set_shifts([])
    log.close()
    shifts = _read(log.path)["/sim/shifts"]
    assert [m.log_time for m in shifts] == [0, step_stamp_ns(10), step_stamp_ns(20)]
    (written,) = shifts[1].message.shifts
    assert (written.agent, written.mass_offset_kg, written.steering_offset_deg) == ("polaris", 80.0, 1.5)
    assert (written.tyre_radius_scale, written.steering_ratio_scale) == (0.98, 1.0)
    assert written.lidar_mount_offset.translation.y == 0.02
    assert written.camera_mount_offset.rotation.w == 1.0
    assert shifts[2].message.shifts == []


def test_bad_shifts_are_refused(logged: tuple[World, EpisodeLog]) -> None:
    _, log = logged
    with pytest.raises(ParamsError, match=r"VehicleShift.agent \['tractor'\]: expected names of"):
        log.set_shifts([VehicleShift(agent="tractor")])
    with pytest.raises(ParamsError, match="at most one shift per agent"):
        log.set_shifts([VehicleShift(agent="polaris"), VehicleShift(agent="polaris", mass_offset_kg=1.0)])
    with pytest.raises(ParamsError, match="brake_gain_scale: expected a factor > 0"):
        VehicleShift(agent="polaris", brake_gain_scale=0.0)
    with pytest.raises(ParamsError, match="actuator_delay_s: expected >= 0 s"):
        VehicleShift(agent="polaris", actuator_delay_s=-0.1)
    with pytest.raises(ParamsError, match="mass_offset_kg: expected a finite number"):
        VehicleShift(agent="polaris", mass_offset_kg=math.nan)
    with pytest.raises(ParamsError, match="agent: expected an agent name"):
        VehicleShift(agent="")
    with pytest.raises(ParamsError, match="rotation: expected a unit quaternion"):
        MountOffset(rotation=(0.0, 0.0, 0.0, 2.0))
    with pytest.raises(ParamsError, match="expected a translation of 3 and a rotation of 4 numbers"):
        MountOffset(translation=(0.0, 0.0))  # type: ignore[arg-type]


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "episode.mcap"
    path.write_bytes(b"precious")
    with pytest.raises(EpisodeLogError, match="exists already"):
        EpisodeLog(_world(), path)
    assert path.read_bytes() == b"precious"
    with pytest.raises(EpisodeLogError, match="cannot create"):
        EpisodeLog(_world(), tmp_path / "missing" / "episode.mcap")


def test_a_failing_disk_ends_the_log_not_the_simulation(
    logged: tuple[World, EpisodeLog], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    world, log = logged
    _run(world, log, 5)

    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(BagWriter, "write", full)
    with caplog.at_level(logging.ERROR, logger="acres_sim.episode.log"):
        _run(world, log, 5)
    assert "No space left on device" in caplog.text
    assert caplog.text.count("writing failed") == 1
    log.on_episode(world)  # ignored from now on
    with pytest.raises(EpisodeLogError, match="set_shifts after close"):
        log.set_shifts([])


def test_an_unknown_channel_has_no_count(logged: tuple[World, EpisodeLog]) -> None:
    _, log = logged
    assert log.message_count("/sim/episode") == 1
    with pytest.raises(ParamsError, match="channel '/sim/clock': expected one of"):
        log.message_count("/sim/clock")


_TEXT = st.text(max_size=12)
_FLOAT = st.floats(allow_nan=False, width=64)
_STAMP = st.integers(min_value=0, max_value=2**40)
_STEP = st.integers(min_value=0, max_value=2**64 - 1)
_BYTE = st.integers(min_value=0, max_value=255)


def _check_cdr(type_name: str, packed: bytes, message: Any) -> None:
    """``packed`` is what rosbags serialises ``message`` to, and what mcap_ros2 decodes and encodes back."""
    store, (text,) = typestore((type_name,))
    assert packed == bytes(store.serialize_cdr(message, type_name, little_endian=True))
    schema = Schema(id=1, name=type_name, encoding=SchemaEncoding.ROS2, data=text.encode())
    decode = DecoderFactory().decoder_for(MessageEncoding.CDR, schema)
    assert decode is not None
    assert serialize_dynamic(type_name, text)[type_name](decode(packed)) == packed


def _header(t: Any, stamp: int) -> Any:
    sec, nanosec = divmod(stamp, NS_PER_S)
    return t["std_msgs/msg/Header"](
        stamp=t["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec), frame_id="world"
    )


def _point(t: Any, x: float, y: float, z: float) -> Any:
    return t["geometry_msgs/msg/Point"](x=x, y=y, z=z)


@settings(max_examples=60, deadline=None)
@given(
    stamp=_STAMP,
    step=_STEP,
    agents=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=12),
            st.lists(_FLOAT, min_size=32, max_size=32),
            _BYTE,
            st.booleans(),
            st.booleans(),
        ),
        max_size=4,
    ),
)
def test_agent_states_pack_as_rosbags_and_mcap_ros2_serialise(
    stamp: int, step: int, agents: list[tuple[str, list[float], int, bool, bool]]
) -> None:
    type_name = "acres_interfaces/msg/AgentStates"
    t = typestore((type_name,))[0].types
    items = []
    states = []
    for name, d, gear, dbw, safety in agents:
        raw = cdr_string(name)
        items.append(((len(raw),), (len(raw), raw, *d[:19], gear, d[19], d[20], dbw, safety, *d[21:])))
        vector = t["geometry_msgs/msg/Vector3"]
        states.append(
            t["acres_interfaces/msg/AgentState"](
                name=name,
                pose=t["geometry_msgs/msg/Pose"](
                    position=_point(t, *d[0:3]), orientation=t["geometry_msgs/msg/Quaternion"](*d[3:7])
                ),
                twist=t["geometry_msgs/msg/Twist"](linear=vector(*d[7:10]), angular=vector(*d[10:13])),
                linear_acceleration=vector(*d[13:16]),
                speed_mps=d[16],
                steering_angle_rad=d[17],
                engine_rpm=d[18],
                gear=gear,
                throttle_pct=d[19],
                brake_pct=d[20],
                dbw_enabled=dbw,
                safety_brake=safety,
                energy=t["acres_interfaces/msg/EnergyLedger"](*d[21:32]),
            )
        )
    message = t[type_name](header=_header(t, stamp), step=step, agents=states)
    _check_cdr(type_name, pack_stamped_sequence(stamp, step, AGENT_STATE_RECORD, items), message)


@settings(max_examples=60, deadline=None)
@given(
    stamp=_STAMP,
    step=_STEP,
    stamps=st.lists(st.tuples(_TEXT, _BYTE, st.lists(_FLOAT, min_size=9, max_size=9)), max_size=6),
)
def test_farm_stamps_pack_as_rosbags_and_mcap_ros2_serialise(
    stamp: int, step: int, stamps: list[tuple[str, int, list[float]]]
) -> None:
    type_name = "acres_interfaces/msg/FarmStamps"
    t = typestore((type_name,))[0].types
    items = [((len(cdr_string(a)),), (len(cdr_string(a)), cdr_string(a), part, *d)) for a, part, d in stamps]
    message = t[type_name](
        header=_header(t, stamp),
        step=step,
        stamps=[
            t["acres_interfaces/msg/FarmStamp"](a, part, _point(t, *d[:3]), *d[3:]) for a, part, d in stamps
        ],
    )
    _check_cdr(type_name, pack_stamped_sequence(stamp, step, FARM_STAMP_RECORD, items), message)


@settings(max_examples=60, deadline=None)
@given(
    stamp=_STAMP,
    step=_STEP,
    events=st.lists(st.tuples(_BYTE, _TEXT, st.lists(_FLOAT, min_size=6, max_size=6), _TEXT), max_size=6),
)
def test_farm_events_pack_as_rosbags_and_mcap_ros2_serialise(
    stamp: int, step: int, events: list[tuple[int, str, list[float], str]]
) -> None:
    type_name = "acres_interfaces/msg/FarmEvents"
    t = typestore((type_name,))[0].types
    items = []
    for kind, agent, d, unit in events:
        a, u = cdr_string(agent), cdr_string(unit)
        items.append(((len(a), len(u)), (kind, len(a), a, *d, len(u), u)))
    message = t[type_name](
        header=_header(t, stamp),
        step=step,
        events=[
            t["acres_interfaces/msg/FarmEvent"](kind, agent, _point(t, *d[:3]), *d[3:], unit)
            for kind, agent, d, unit in events
        ],
    )
    _check_cdr(type_name, pack_stamped_sequence(stamp, step, FARM_EVENT_RECORD, items), message)


def test_a_rosbags_reader_reads_every_channel(tmp_path: Path) -> None:
    world = _world()
    log = EpisodeLog(world, tmp_path / "episode.mcap")
    world.reset_agent(0, **IN_THE_CROP)
    log.on_episode(world)
    _run(world, log, 240)
    log.close()
    with AnyReader([tmp_path / "episode.mcap"]) as reader:
        counts: dict[str, int] = defaultdict(int)
        for connection, _, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            counts[connection.topic] += 1
            if connection.topic == "/sim/agent_states":
                assert message.agents[0].name == "polaris"
    assert counts["/sim/agent_states"] == 240
    assert counts["/sim/farm_stamps"] > 0
    assert counts["/sim/conditions"] == 3
