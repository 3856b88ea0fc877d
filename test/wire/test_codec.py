"""The wire codec against docs/protocol.md: round trips, byte layouts, and every refusal of a decoder."""

from __future__ import annotations

import json
import math
import re
import struct
import zlib
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

import pytest
import samples

from acres_bridge.wire import (
    DECODERS,
    MAGIC,
    PROTOCOL_VERSION,
    AgentReset,
    ClientHello,
    Clock,
    DbwCommand,
    DbwReport,
    DbwTarget,
    EpisodeInfo,
    ErrorReply,
    Frame,
    FrameKind,
    FrameReader,
    Hello,
    InsSample,
    ProtocolError,
    ReportFlags,
    ResetSession,
    SensorDemand,
    SensorMeta,
    SensorMount,
    SetState,
    SimState,
    Source,
    StepDone,
    StepRequest,
    StepStatus,
    StreamMark,
    Vehicle,
    binary_codecs,
    decode,
    encode,
    encode_frame,
    json_codecs,
)
from acres_bridge.wire.frames import (
    BULK_KINDS,
    FROM_SIMULATOR_KINDS,
    MAX_PAYLOAD,
    MAX_PAYLOAD_OF,
    SMALL_PAYLOAD,
    TO_SIMULATOR_KINDS,
)
from acres_bridge.wire.json_fields import MAX_STAMP_NS
from acres_bridge.wire.maxxum import MaxxumCommand, MaxxumObservation
from acres_bridge.wire.perception import CameraImage, ImageEncoding, LidarScan
from wire.test_maxxum import COMMAND as MAXXUM_COMMAND
from wire.test_maxxum import OBSERVATION as MAXXUM_OBSERVATION

NAN = math.nan
INF = math.inf

# ---- samples: every message type with values other than the defaults --------------------------


def ins_sample(*, has_position: bool = True, **changes: Any) -> InsSample:
    """An INS sample whose 41 float64 values are all different (n + 0.25 for the n-th double)."""
    values = [n + 0.25 for n in range(41)]
    sample = InsSample(
        step=3089,
        stamp_ns=25_741_668_009,
        has_position=has_position,
        position=(values[0], values[1], values[2]),
        latitude_deg=values[3],
        longitude_deg=values[4],
        orientation=(values[5], values[6], values[7], values[8]),
        velocity=(values[9], values[10], values[11]),
        angular_rate=(values[12], values[13], values[14]),
        specific_force=(values[15], values[16], values[17]),
        position_variance=(values[18], values[19], values[20]),
        velocity_variance=(values[21], values[22], values[23]),
        attitude_variance=(values[24], values[25], values[26]),
        true_position=(values[27], values[28], values[29]),
        true_orientation=(values[30], values[31], values[32], values[33]),
        true_speed=values[34],
        angular_rate_variance=(values[35], values[36], values[37]),
        specific_force_variance=(values[38], values[39], values[40]),
    )
    return replace(sample, **changes)


def hello() -> Hello:
    return samples.hello(
        samples.agent(0, sensor_port=47101, vehicle_port=47102),
        samples.agent(1, Vehicle.MAXXUM, sensor_port=47103, vehicle_port=47104, can_port=47105),
        simulator="acres_sim 0.1.0",
        source=Source.CORE,
        seed=42,
    )


def episode_info() -> EpisodeInfo:
    return EpisodeInfo(
        episode_id="20261002T072309-0003",
        episode=3,
        reset_epoch=2,
        step=1405,
        stamp_ns=11_708_333_333,
        episode_time_s=4.25,
        state=SimState.PAUSED,
        lockstep=True,
        seed=42,
        source="unreal",
        map="V03ACRE",
        agents=("polaris", "polaris2"),
    )


def sensor_meta() -> SensorMeta:
    return SensorMeta(
        agent=1,
        vehicle="maxxum",
        utm_epsg=32616,
        world_origin_utm=(500438.5, 4479963.25, 181.75),
        sensors=(
            SensorMount(
                name="oxts",
                kind="ins",
                frame="imu_link",
                xyz_m=(0.5, 0.0, 1.25),
                rpy_rad=(0.0, 0.0, 0.0),
                rate_hz=100.0,
            ),
            SensorMount(
                name="front",
                kind="camera",
                frame="camera",
                xyz_m=(2.745, 0.606, 1.887),
                rpy_rad=(0.01, -0.2, 0.3),
                rate_hz=10.0,
                settings={"width": 896, "height": 512, "encoding": "bgr8", "k": [599.5, 0.0, 440.1]},
            ),
            SensorMount(
                name="front_optical",
                kind="frame",
                frame="camera_optical",
                parent="camera",
                xyz_m=(0.0, 0.0, 0.0),
                rpy_rad=(-math.pi / 2, 0.0, -math.pi / 2),
                rate_hz=0.0,
            ),
        ),
    )


SAMPLES: dict[str, object] = {
    "hello": hello(),
    "client_hello": ClientHello(
        protocol_version=PROTOCOL_VERSION, client="acres_bridge 0.1.0", role="sensor", agent=1
    ),
    "error": ErrorReply(code="version", message="the bridge speaks protocol version 2"),
    "episode": episode_info(),
    "clock": Clock(step=3089, stamp_ns=25_741_668_009),
    "step_request": StepRequest(request_id=7, steps=12, command_seqs=(3, 0, 9)),
    "step_done": StepDone(request_id=7, last_step=3101, status=StepStatus.NOT_PAUSED),
    "set_state": SetState(state=SimState.PAUSED),
    "reset_session": ResetSession(reason="operator asked"),
    "agent_reset": AgentReset(agent=1, x_m=-12.5, y_m=250.0, yaw_rad=1.5),
    "sensor_demand": SensorDemand(agent=1, sensors=(0, 2)),
    "sensor_meta": sensor_meta(),
    "ins": ins_sample(),
    "ins_without_position": ins_sample(
        has_position=False,
        position=(NAN, NAN, NAN),
        latitude_deg=NAN,
        longitude_deg=NAN,
        position_variance=(NAN, NAN, NAN),
    ),
    "stream_mark": StreamMark(last_step=3101),
    "dbw_command": DbwCommand(
        seq=17, target=DbwTarget.ULC, cmd_type=1, flags=1, cmd=1.5, limit_1=1.0, limit_2=math.inf
    ),
    "dbw_report": DbwReport(
        step=16490,
        stamp_ns=137_416_666_666,
        flags=int(ReportFlags.DBW_ENABLED | ReportFlags.ULC_ENABLED),
        steering_wheel_angle_deg=57.25,
        steering_cmd=0.03125,  # values a float32 holds exactly: the report line is float32
        steering_cmd_type=3,
        throttle_input_pct=0.0,
        throttle_cmd_pct=12.0,
        throttle_output_pct=11.5,
        throttle_cmd_type=14,
        brake_input_bar=0.0,
        brake_cmd_bar=0.0,
        brake_output_bar=0.5,
        brake_input_pct=0.0,
        brake_cmd_pct=0.0,
        brake_output_pct=0.25,
        brake_cmd_type=1,
        gear=5,
        gear_cmd=5,
        gear_driver=1,
        ulc_cmd_type=1,
        vel_ref_mps=1.5,
        vel_meas_mps=1.5,
        accel_ref_mps2=0.0,
        accel_meas_mps2=0.0,
        speed_brake_mps=1.5,
        speed_propulsion_mps=1.5,
    ),
    "lidar": LidarScan(12, 100_000_000, 0, 4, 2, array("B", struct.pack("<32f", *range(32)))),
    "maxxum_observation": MAXXUM_OBSERVATION,
    "maxxum_command": MAXXUM_COMMAND,
    "camera": CameraImage(12, 100_000_000, 1, ImageEncoding.BGR8, 2, 2, array("B", bytes(range(12)))),
}

KIND_OF_SAMPLE = {
    Hello: FrameKind.HELLO,
    ClientHello: FrameKind.CLIENT_HELLO,
    ErrorReply: FrameKind.ERROR,
    EpisodeInfo: FrameKind.EPISODE,
    Clock: FrameKind.CLOCK,
    StepRequest: FrameKind.STEP_REQUEST,
    StepDone: FrameKind.STEP_DONE,
    SetState: FrameKind.SET_STATE,
    ResetSession: FrameKind.RESET_SESSION,
    AgentReset: FrameKind.AGENT_RESET,
    SensorDemand: FrameKind.SENSOR_DEMAND,
    SensorMeta: FrameKind.SENSOR_META,
    InsSample: FrameKind.INS,
    StreamMark: FrameKind.STREAM_MARK,
    DbwCommand: FrameKind.DBW_COMMAND,
    DbwReport: FrameKind.DBW_REPORT,
    LidarScan: FrameKind.LIDAR,
    CameraImage: FrameKind.CAMERA,
    MaxxumObservation: FrameKind.MAXXUM_OBSERVATION,
    MaxxumCommand: FrameKind.MAXXUM_COMMAND,
}


def payload_of(message: object) -> bytes:
    return encode(message)[16:]


def read_one(data: bytes) -> Frame:
    reader = FrameReader()
    reader.feed(data)
    frames = list(reader.frames())
    assert len(frames) == 1
    assert not reader.dropped
    assert reader.buffered == 0
    return frames[0]


# ---- round trips ----------------------------------------------------------------------------------


def test_samples_cover_every_decodable_kind():
    assert {KIND_OF_SAMPLE[type(sample)] for sample in SAMPLES.values()} == set(DECODERS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_round_trip(name):
    message = SAMPLES[name]
    frame = read_one(encode(message))
    assert frame.kind is KIND_OF_SAMPLE[type(message)]
    decoded = decode(frame)
    assert type(decoded) is type(message)
    if name == "ins_without_position":
        assert decoded.has_position is False
        assert all(
            math.isnan(value)
            for value in (
                *decoded.position,
                decoded.latitude_deg,
                decoded.longitude_deg,
                *decoded.position_variance,
            )
        )
        # NaN != NaN: compare the bytes, which is the whole content of the sample.
        assert encode(decoded) == encode(message)
    else:
        assert decoded == message


@pytest.mark.parametrize("state", list(SimState))
def test_round_trip_every_state(state):
    for message in (SetState(state=state), replace(episode_info(), state=state)):
        assert decode(read_one(encode(message))) == message


@pytest.mark.parametrize("status", list(StepStatus))
def test_round_trip_every_step_status(status):
    message = StepDone(request_id=99, last_step=1234, status=status)
    assert decode(read_one(encode(message))) == message


@pytest.mark.parametrize("source", ["unreal", "core"])
def test_round_trip_every_source(source):
    for message in (replace(hello(), source=source), replace(episode_info(), source=source)):
        assert decode(read_one(encode(message))) == message


@pytest.mark.parametrize("role", ["control", "sensor", "vehicle"])
def test_round_trip_every_role(role):
    message = ClientHello(protocol_version=PROTOCOL_VERSION, client="acres_bridge 0.1.0", role=role, agent=2)
    assert decode(read_one(encode(message))) == message


@pytest.mark.parametrize(
    ("sensors", "error"),
    [
        ([0, 0], "names a sensor twice"),
        ([-1], "indices 0..65535"),
        ([65536], "indices 0..65535"),
        ([True], "indices 0..65535"),
        ([1.0], "indices 0..65535"),
        (list(range(257)), "at most 256"),
        ("0", "'sensors' must be list"),
    ],
)
def test_a_bad_sensor_demand_is_refused(sensors, error):
    payload = json.dumps({"agent": 0, "sensors": sensors}).encode()
    with pytest.raises(ProtocolError, match=re.escape(error)):
        json_codecs.decode_sensor_demand(payload)


def test_a_hello_s_features_round_trip_and_are_bounded():
    session = replace(hello(), features=("sensor_demand", "x" * 64))
    assert decode(read_one(encode(session))) == session
    data = json.loads(payload_of(hello()))
    for bad in (["x" * 65], [""], [1], ["a"] * 33, "sensor_demand"):
        data["features"] = bad
        with pytest.raises(ProtocolError, match="features"):
            json_codecs.decode_hello(json.dumps(data).encode())
    del data["features"]
    assert json_codecs.decode_hello(json.dumps(data).encode()).features == ()  # an older simulator


def test_round_trip_the_can_ports_of_a_control_hello():
    ports = ((0, 1), (3, 65535))
    message = ClientHello(protocol_version=PROTOCOL_VERSION, client="bridge", role="control", can_ports=ports)
    assert decode(read_one(encode(message))) == message


@pytest.mark.parametrize(
    ("can_ports", "role", "error"),
    [
        ([[0, 0]], "control", "must be [agent, UDP port]"),
        ([[0, 65536]], "control", "must be [agent, UDP port]"),
        ([[-1, 40000]], "control", "must be [agent, UDP port]"),
        ([[0, 40000, 1]], "control", "must be [agent, UDP port]"),
        ([[0, True]], "control", "must be [agent, UDP port]"),
        ([[0, 40000.0]], "control", "must be [agent, UDP port]"),
        ([{"agent": 0, "port": 40000}], "control", "must be [agent, UDP port]"),
        ([[0, 40000], [0, 40001]], "control", "names an agent twice"),
        ([[i, 40000] for i in range(257)], "control", "at most 256 can_ports"),
        ({"0": 40000}, "control", "can_ports"),
        ([[0, 40000]], "vehicle", "belong to the control channel"),
    ],
)
def test_a_bad_can_ports_list_is_refused(can_ports, role, error):
    payload = json.dumps({"protocol_version": 1, "client": "c", "role": role, "can_ports": can_ports})
    with pytest.raises(ProtocolError, match=re.escape(error)):
        decode(Frame(FrameKind.CLIENT_HELLO, payload.encode()))


@pytest.mark.parametrize("vehicle", ["polaris", "maxxum"])
def test_round_trip_every_vehicle(vehicle):
    meta = replace(sensor_meta(), vehicle=vehicle)
    agent = replace(hello().agents[0], vehicle=vehicle)
    session = replace(hello(), agents=(agent,))
    for message in (meta, session):
        assert decode(read_one(encode(message))) == message


@pytest.mark.parametrize("kind", ["ins", "lidar", "camera", "frame"])
def test_round_trip_every_sensor_kind(kind):
    mount = replace(sensor_meta().sensors[0], kind=kind, rate_hz=0.0 if kind == "frame" else 50.0)
    message = replace(sensor_meta(), sensors=(mount,))
    assert decode(read_one(encode(message))) == message


def test_round_trip_extremes_of_the_binary_fields():
    for message in (
        Clock(step=2**64 - 1, stamp_ns=MAX_STAMP_NS),
        StepRequest(request_id=2**32 - 1, steps=2**64 - 1, command_seqs=(2**64 - 1, 0)),
        StepDone(request_id=2**32 - 1, last_step=2**64 - 1, status=StepStatus.STOPPED),
        StreamMark(last_step=2**64 - 1),
        StreamMark(last_step=0),
        Clock(step=0, stamp_ns=0),
    ):
        assert decode(read_one(encode(message))) == message


def test_optional_fields_take_their_defaults():
    client = decode(Frame(FrameKind.CLIENT_HELLO, b'{"protocol_version":1,"client":"c","role":"control"}'))
    assert client == ClientHello(protocol_version=1, client="c", role="control", agent=0)
    assert decode(Frame(FrameKind.RESET_SESSION, b"{}")) == ResetSession(reason="")
    session = json_of("hello")
    del session["agents"][1]["can_port"]
    assert json_codecs.decode_hello(json.dumps(session).encode()).agents[1].can_port == 0
    meta = json_of("sensor_meta")
    del meta["sensors"][1]["settings"]
    del meta["sensors"][1]["parent"]
    mount = json_codecs.decode_sensor_meta(json.dumps(meta).encode()).sensors[1]
    assert mount.settings == {}
    assert mount.parent == "base_footprint"


def test_documented_error_reply_decodes():
    payload = json.dumps({"code": "version", "message": "protocol version 2"}).encode()
    assert decode(Frame(FrameKind.ERROR, payload)) == ErrorReply(code="version", message="protocol version 2")


# ---- header layout -------------------------------------------------------------------------------

DOC_KINDS = {
    "HELLO": 1,
    "CLIENT_HELLO": 2,
    "ERROR": 3,
    "EPISODE": 4,
    "CLOCK": 5,
    "STEP_REQUEST": 6,
    "STEP_DONE": 7,
    "SET_STATE": 8,
    "RESET_SESSION": 9,
    "AGENT_RESET": 10,
    "SENSOR_DEMAND": 11,
    "SENSOR_META": 20,
    "INS": 21,
    "LIDAR": 22,
    "CAMERA": 23,
    "STREAM_MARK": 39,
    "DBW_REPORT": 40,
    "DBW_COMMAND": 41,
    "MAXXUM_OBSERVATION": 50,
    "MAXXUM_COMMAND": 51,
}


def test_frame_kinds_are_the_documented_numbers():
    assert {kind.name: int(kind) for kind in FrameKind} == DOC_KINDS


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_header_layout(name):
    message = SAMPLES[name]
    frame = encode(message)
    magic, version, kind, length, check = struct.unpack_from("<4sHHII", frame)
    assert magic == MAGIC == b"ACRS"
    assert version == PROTOCOL_VERSION == 1
    assert kind == int(KIND_OF_SAMPLE[type(message)])
    assert length == len(frame) - 16
    assert check == zlib.crc32(frame[:12])


def test_header_of_an_empty_payload():
    frame = encode_frame(FrameKind.LIDAR)
    assert frame == b"ACRS" + struct.pack("<HHI", 1, 22, 0) + struct.pack("<I", zlib.crc32(frame[:12]))


def test_encode_frame_refuses_an_oversized_payload():
    with pytest.raises(ValueError, match="MAX_PAYLOAD"):
        encode_frame(FrameKind.CAMERA, bytes(MAX_PAYLOAD + 1))
    assert MAX_PAYLOAD == 64 * 1024 * 1024


@pytest.mark.parametrize(
    "message",
    [object(), {"state": 1}, 42, hello().agents[0], sensor_meta().sensors[0]],
    ids=["object", "dict", "int", "AgentEntry", "SensorMount"],
)
def test_encode_refuses_a_type_without_a_frame_kind(message):
    with pytest.raises(TypeError, match=type(message).__name__):
        encode(message)


def _header(
    *, magic: bytes = MAGIC, version: int = 1, kind: int = 5, length: int = 16, check: int | None = None
) -> bytes:
    head = struct.pack("<4sHHI", magic, version, kind, length)
    return head + struct.pack("<I", zlib.crc32(head) if check is None else check)


GOOD_CLOCK = encode(Clock(step=1, stamp_ns=8_333_333))
GOOD_STEP_REQUEST = encode(StepRequest(request_id=1, steps=2))


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (_header(magic=b"ACRT") + bytes(16), "bad magic"),
        (_header(check=0) + bytes(16), "bad header check"),
        (_header(version=2) + bytes(16), "protocol version"),
        (_header(kind=12) + bytes(16), "unknown kind"),
        (_header(kind=0) + bytes(16), "unknown kind"),
        (_header(kind=21, length=MAX_PAYLOAD + 1), "oversized"),
    ],
    ids=["magic", "check", "version", "kind_12", "kind_0", "oversized"],
)
def test_reader_drops_a_bad_header_counts_its_reason_and_keeps_the_next_frame(bad, reason):
    reader = FrameReader()
    reader.feed(GOOD_CLOCK + bad + GOOD_CLOCK)
    assert [decode(frame) for frame in reader.frames()] == [Clock(step=1, stamp_ns=8_333_333)] * 2
    assert reader.dropped == Counter({reason: 1})
    assert reader.version_mismatch == (2 if reason == "protocol version" else None)
    assert reader.buffered == 0


def test_reader_limit_on_the_payload_size():
    reader = FrameReader(max_payload=15)
    reader.feed(GOOD_CLOCK + encode(StreamMark(last_step=5)))
    assert [decode(frame) for frame in reader.frames()] == [StreamMark(last_step=5)]
    assert reader.dropped == Counter({"oversized": 1})


def test_a_corrupted_length_cannot_swallow_the_frames_after_it():
    corrupted = bytearray(GOOD_CLOCK)
    struct.pack_into("<I", corrupted, 8, 10_000)  # the check no longer matches
    reader = FrameReader()
    reader.feed(bytes(corrupted) + GOOD_CLOCK + encode(StreamMark(last_step=5)))
    assert [decode(frame) for frame in reader.frames()] == [
        Clock(step=1, stamp_ns=8_333_333),
        StreamMark(last_step=5),
    ]
    assert reader.dropped == Counter({"bad header check": 1})


def test_the_check_covers_each_of_the_first_12_bytes():
    for position in range(12):
        damaged = bytearray(GOOD_CLOCK)
        damaged[position] ^= 0x01
        reader = FrameReader()
        reader.feed(bytes(damaged) + GOOD_CLOCK)
        assert [decode(frame) for frame in reader.frames()] == [Clock(step=1, stamp_ns=8_333_333)], position
        assert sum(reader.dropped.values()) >= 1, position


# ---- binary layouts ------------------------------------------------------------------------------


def test_clock_layout():
    payload = payload_of(Clock(step=3089, stamp_ns=25_741_668_009))
    assert len(payload) == 16
    assert struct.unpack_from("<Q", payload, 0) == (3089,)
    assert struct.unpack_from("<q", payload, 8) == (25_741_668_009,)


@pytest.mark.parametrize("count", [0, 1, 3])
def test_step_request_layout(count):
    seqs = tuple(100 + i for i in range(count))
    payload = payload_of(StepRequest(request_id=77, steps=5, command_seqs=seqs))
    assert len(payload) == 16 + 8 * count
    assert struct.unpack_from("<IIQ", payload, 0) == (77, count, 5)
    for i, seq in enumerate(seqs):
        assert struct.unpack_from("<Q", payload, 16 + 8 * i) == (seq,)


def test_step_request_decodes_the_documented_bytes():
    payload = struct.pack("<IIQ", 9, 2, 4) + struct.pack("<QQ", 11, 0)
    assert binary_codecs.decode_step_request(payload) == StepRequest(
        request_id=9, steps=4, command_seqs=(11, 0)
    )


def test_step_done_layout():
    payload = payload_of(StepDone(request_id=77, last_step=4242, status=StepStatus.STOPPED))
    assert len(payload) == 16
    assert struct.unpack_from("<IIQ", payload, 0) == (77, 2, 4242)
    assert binary_codecs.decode_step_done(struct.pack("<IIQ", 5, 1, 88)) == StepDone(
        request_id=5, last_step=88, status=StepStatus.NOT_PAUSED
    )


def test_stream_mark_layout():
    payload = payload_of(StreamMark(last_step=4242))
    assert payload == struct.pack("<Q", 4242)


# (offset, field, the values of the sample) for each field of the INS table.
INS_TABLE: list[tuple[int, str, Callable[[InsSample], tuple[float, ...]]]] = [
    (24, "position", lambda s: s.position),
    (48, "latitude, longitude", lambda s: (s.latitude_deg, s.longitude_deg)),
    (64, "orientation", lambda s: s.orientation),
    (96, "velocity", lambda s: s.velocity),
    (120, "angular_rate", lambda s: s.angular_rate),
    (144, "specific_force", lambda s: s.specific_force),
    (168, "position_variance", lambda s: s.position_variance),
    (192, "velocity_variance", lambda s: s.velocity_variance),
    (216, "attitude_variance", lambda s: s.attitude_variance),
    (240, "true_position", lambda s: s.true_position),
    (264, "true_orientation", lambda s: s.true_orientation),
    (296, "true_speed", lambda s: (s.true_speed,)),
    (304, "angular_rate_variance", lambda s: s.angular_rate_variance),
    (328, "specific_force_variance", lambda s: s.specific_force_variance),
]
INS_SIZE = 352


def test_ins_table_fills_the_payload_without_gaps():
    sample = ins_sample()
    offset = 24
    for start, field, values in INS_TABLE:
        assert start == offset, field
        offset += 8 * len(values(sample))
    assert offset == INS_SIZE == len(payload_of(sample))


@pytest.mark.parametrize(("offset", "field", "values"), INS_TABLE, ids=[row[1] for row in INS_TABLE])
def test_ins_field_offsets(offset, field, values):
    sample = ins_sample()
    payload = payload_of(sample)
    expected = values(sample)
    assert struct.unpack_from(f"<{len(expected)}d", payload, offset) == expected, field


@pytest.mark.parametrize("has_position", [True, False])
def test_ins_header_fields(has_position):
    payload = payload_of(ins_sample(has_position=has_position))
    assert len(payload) == INS_SIZE
    assert struct.unpack_from("<Q", payload, 0) == (3089,)
    assert struct.unpack_from("<q", payload, 8) == (25_741_668_009,)
    assert struct.unpack_from("<I", payload, 16) == (1 if has_position else 0,)
    assert payload[20:24] == bytes(4)
    assert struct.unpack_from("<d", payload, 344) == (40.25,)  # the last of the 41 doubles
    assert len(payload) == 344 + 8


def test_ins_decodes_a_payload_built_from_the_table():
    sample = ins_sample()
    payload = bytearray(INS_SIZE)
    struct.pack_into("<QqI", payload, 0, sample.step, sample.stamp_ns, 1)
    for offset, _, values in INS_TABLE:
        numbers = values(sample)
        struct.pack_into(f"<{len(numbers)}d", payload, offset, *numbers)
    assert binary_codecs.decode_ins(bytes(payload)) == sample


def test_ins_variances_of_rate_and_force_default_to_zero():
    full = ins_sample()
    given = {
        f.name: getattr(full, f.name)
        for f in fields(InsSample)
        if f.name not in ("angular_rate_variance", "specific_force_variance")
    }
    sample = InsSample(**given)
    assert sample.angular_rate_variance == sample.specific_force_variance == (0.0, 0.0, 0.0)
    payload = payload_of(sample)
    assert struct.unpack_from("<6d", payload, 304) == (0.0,) * 6
    assert binary_codecs.decode_ins(payload) == sample


@pytest.mark.parametrize("name", ["hello", "client_hello", "error", "episode", "set_state", "reset_session",
                                  "agent_reset", "sensor_demand", "sensor_meta"])  # fmt: skip
def test_json_payloads_are_utf8_objects(name):
    payload = payload_of(SAMPLES[name])
    assert isinstance(json.loads(payload.decode("utf-8")), dict)


DOC_JSON_FIELDS = {
    "hello": {"protocol_version", "simulator", "session_start_utc", "map", "source", "lockstep", "seed",
              "physics_hz", "agents", "scene", "features"},
    "client_hello": {"protocol_version", "client", "role", "agent", "can_ports"},
    "error": {"code", "message"},
    "episode": {"episode_id", "episode", "reset_epoch", "step", "stamp_ns", "episode_time_s", "state",
                "lockstep", "seed", "source", "map", "agents"},
    "set_state": {"state"},
    "reset_session": {"reason"},
    "agent_reset": {"agent", "x_m", "y_m", "yaw_rad"},
    "sensor_demand": {"agent", "sensors"},
    "sensor_meta": {"agent", "vehicle", "utm_epsg", "world_origin_utm", "sensors"},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DOC_JSON_FIELDS))
def test_json_field_names_are_the_documented_ones(name):
    assert set(json.loads(payload_of(SAMPLES[name]))) == DOC_JSON_FIELDS[name]


def test_json_nested_field_names_are_the_documented_ones():
    session = json.loads(payload_of(hello()))
    for agent in session["agents"]:
        assert set(agent) == {"index", "name", "vehicle", "sensor_port", "vehicle_port", "can_port"}
    meta = json.loads(payload_of(sensor_meta()))
    for sensor in meta["sensors"]:
        assert set(sensor) == {"name", "kind", "frame", "parent", "xyz_m", "rpy_rad", "rate_hz", "settings"}
    assert json.loads(payload_of(episode_info()))["agents"] == ["polaris", "polaris2"]


# ---- refusals: sizes -----------------------------------------------------------------------------

BINARY_SIZES = [
    (binary_codecs.decode_clock, "CLOCK", 16),
    (binary_codecs.decode_step_done, "STEP_DONE", 16),
    (binary_codecs.decode_stream_mark, "STREAM_MARK", 8),
    (binary_codecs.decode_ins, "INS", INS_SIZE),
]


@pytest.mark.parametrize(("decoder", "what", "size"), BINARY_SIZES, ids=[row[1] for row in BINARY_SIZES])
@pytest.mark.parametrize("delta", [-1, +1, "empty"])
def test_binary_decoders_refuse_a_wrong_size(decoder, what, size, delta):
    length = 0 if delta == "empty" else size + delta
    with pytest.raises(ProtocolError, match=rf"{what}: expected {size} payload bytes, found {length}"):
        decoder(bytes(length))


def test_ins_refuses_a_payload_of_the_earlier_304_byte_layout():
    payload = payload_of(ins_sample())[:304]
    with pytest.raises(ProtocolError, match=rf"INS: expected {INS_SIZE} payload bytes, found 304"):
        binary_codecs.decode_ins(payload)


@pytest.mark.parametrize("length", [0, 8, 15])
def test_step_request_refuses_a_short_payload(length):
    with pytest.raises(ProtocolError, match=rf"STEP_REQUEST: expected at least 16 bytes, found {length}"):
        binary_codecs.decode_step_request(bytes(length))


@pytest.mark.parametrize(("count", "seqs"), [(2, 1), (0, 1), (1, 0), (3, 4)])
def test_step_request_refuses_a_count_that_does_not_match_the_size(count, seqs):
    payload = struct.pack("<IIQ", 1, count, 1) + bytes(8 * seqs)
    with pytest.raises(
        ProtocolError, match=rf"STEP_REQUEST: {count} command sequence numbers need {16 + 8 * count}"
    ):
        binary_codecs.decode_step_request(payload)


# ---- refusals: stamps ----------------------------------------------------------------------------

STAMP_RANGE = re.escape(f"stamp_ns must be in 0 .. {MAX_STAMP_NS} (int32 seconds)")


def _clock_stamped(stamp_ns: int) -> bytes:
    return struct.pack("<Qq", 1, stamp_ns)


def _ins_stamped(stamp_ns: int) -> bytes:
    payload = bytearray(payload_of(ins_sample()))
    struct.pack_into("<q", payload, 8, stamp_ns)
    return bytes(payload)


def _episode_stamped(stamp_ns: int) -> bytes:
    data = json.loads(payload_of(episode_info()))
    data["stamp_ns"] = stamp_ns
    return json.dumps(data).encode()


STAMPED = {
    "CLOCK": (binary_codecs.decode_clock, _clock_stamped),
    "INS": (binary_codecs.decode_ins, _ins_stamped),
    "EPISODE": (json_codecs.decode_episode, _episode_stamped),
}


def test_the_largest_stamp_is_the_last_nanosecond_of_an_int32_second():
    assert MAX_STAMP_NS == 2**31 * 1_000_000_000 - 1
    assert divmod(MAX_STAMP_NS, 1_000_000_000) == (2**31 - 1, 999_999_999)


@pytest.mark.parametrize("what", sorted(STAMPED))
@pytest.mark.parametrize("stamp_ns", [0, 1, MAX_STAMP_NS], ids=["zero", "one", "max"])
def test_decoders_accept_a_stamp_in_range(what, stamp_ns):
    decoder, stamped = STAMPED[what]
    assert decoder(stamped(stamp_ns)).stamp_ns == stamp_ns


@pytest.mark.parametrize("what", sorted(STAMPED))
@pytest.mark.parametrize(
    "stamp_ns",
    [-1, -(2**63), MAX_STAMP_NS + 1, 2**63 - 1],
    ids=["minus_one", "int64_min", "max_plus_one", "int64_max"],
)
def test_decoders_refuse_a_stamp_out_of_range(what, stamp_ns):
    decoder, stamped = STAMPED[what]
    with pytest.raises(ProtocolError, match=rf"^{what}: {STAMP_RANGE}, found {stamp_ns}$"):
        decoder(stamped(stamp_ns))


# ---- refusals: binary values ---------------------------------------------------------------------


def test_step_request_refuses_zero_steps():
    with pytest.raises(ProtocolError, match="STEP_REQUEST: steps must be at least 1, found 0"):
        binary_codecs.decode_step_request(struct.pack("<IIQ", 1, 0, 0))


@pytest.mark.parametrize("status", [4, 5, 2**32 - 1])
def test_step_done_refuses_an_unknown_status(status):
    with pytest.raises(ProtocolError, match=rf"STEP_DONE: unknown status {status}"):
        binary_codecs.decode_step_done(struct.pack("<IIQ", 1, status, 5))


@pytest.mark.parametrize("flags", [2, 3, 0x80000001])
def test_ins_refuses_unknown_flags(flags):
    payload = bytearray(payload_of(ins_sample()))
    struct.pack_into("<I", payload, 16, flags)
    with pytest.raises(ProtocolError, match=rf"INS: unknown flags {flags:#x}"):
        binary_codecs.decode_ins(bytes(payload))


# The fields of the INS payload after the pad, in order, with their number of float64. Without a
# fix the position, latitude/longitude and position variance may be NaN; all others must be finite.
INS_FIELD_SIZES = [
    ("position", 3),
    ("latitude_deg", 1),
    ("longitude_deg", 1),
    ("orientation", 4),
    ("velocity", 3),
    ("angular_rate", 3),
    ("specific_force", 3),
    ("position_variance", 3),
    ("velocity_variance", 3),
    ("attitude_variance", 3),
    ("true_position", 3),
    ("true_orientation", 4),
    ("true_speed", 1),
    ("angular_rate_variance", 3),
    ("specific_force_variance", 3),
]
INS_FIX_ONLY = {"position", "latitude_deg", "longitude_deg", "position_variance"}
# (name in an error message, offset, fix only) of each of the 41 float64, the first at offset 24.
INS_DOUBLES_AT = [
    (name, 24 + 8 * index, fix_only)
    for index, (name, fix_only) in enumerate(
        (field if count == 1 else f"{field}[{i}]", field in INS_FIX_ONLY)
        for field, count in INS_FIELD_SIZES
        for i in range(count)
    )
]
INS_ALWAYS_FINITE = [(name, offset) for name, offset, fix_only in INS_DOUBLES_AT if not fix_only]
INS_FIX_ONLY_DOUBLES = [(name, offset) for name, offset, fix_only in INS_DOUBLES_AT if fix_only]


def _value_of(sample: InsSample, name: str) -> float:
    field, _, index = name.partition("[")
    value = getattr(sample, field)
    return value[int(index[:-1])] if index else value


def test_ins_double_names_are_the_fields_at_their_offsets():
    sample = ins_sample()
    payload = payload_of(sample)
    assert len(INS_DOUBLES_AT) == (INS_SIZE - 24) // 8 == 41
    assert len(INS_FIX_ONLY_DOUBLES) == 8
    for name, offset, _ in INS_DOUBLES_AT:
        assert struct.unpack_from("<d", payload, offset) == (_value_of(sample, name),), name


def _ins_with(offset: int, value: float, *, has_position: bool) -> bytes:
    payload = bytearray(payload_of(ins_sample(has_position=has_position)))
    struct.pack_into("<d", payload, offset, value)
    return bytes(payload)


@pytest.mark.parametrize(("field", "offset"), INS_ALWAYS_FINITE, ids=[row[0] for row in INS_ALWAYS_FINITE])
@pytest.mark.parametrize("value", [NAN, INF, -INF], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("has_position", [True, False], ids=["fix", "no_fix"])
def test_ins_refuses_a_non_finite_field(field, offset, value, has_position):
    with pytest.raises(
        ProtocolError, match=rf"^INS: field {re.escape(field)} must be finite, found {value}$"
    ):
        binary_codecs.decode_ins(_ins_with(offset, value, has_position=has_position))


@pytest.mark.parametrize(
    ("field", "offset"), INS_FIX_ONLY_DOUBLES, ids=[row[0] for row in INS_FIX_ONLY_DOUBLES]
)
@pytest.mark.parametrize("value", [NAN, INF], ids=["nan", "inf"])
def test_ins_position_must_be_finite_with_a_fix(field, offset, value):
    with pytest.raises(
        ProtocolError, match=rf"^INS: field {re.escape(field)} must be finite, found {value}$"
    ):
        binary_codecs.decode_ins(_ins_with(offset, value, has_position=True))


@pytest.mark.parametrize(
    ("field", "offset"), INS_FIX_ONLY_DOUBLES, ids=[row[0] for row in INS_FIX_ONLY_DOUBLES]
)
def test_ins_position_may_be_nan_without_a_fix(field, offset):
    payload = _ins_with(offset, NAN, has_position=False)
    sample = binary_codecs.decode_ins(payload)
    assert sample.has_position is False
    assert math.isnan(_value_of(sample, field))
    assert payload_of(sample) == payload


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (296, "INS: field true_speed must be finite, found nan"),
        (96, "INS: field velocity[0] must be finite, found nan"),
        (48, "INS: field latitude_deg must be finite, found nan"),
        (176, "INS: field position_variance[1] must be finite, found nan"),
        (344, "INS: field specific_force_variance[2] must be finite, found nan"),
    ],
)
def test_ins_non_finite_error_names_the_field(offset, message):
    with pytest.raises(ProtocolError) as refused:
        binary_codecs.decode_ins(_ins_with(offset, NAN, has_position=True))
    assert str(refused.value) == message


# ---- refusals: JSON ------------------------------------------------------------------------------

JSON_DECODERS = {
    "HELLO": (json_codecs.decode_hello, "hello"),
    "CLIENT_HELLO": (json_codecs.decode_client_hello, "client_hello"),
    "ERROR": (json_codecs.decode_error, "error"),
    "EPISODE": (json_codecs.decode_episode, "episode"),
    "SET_STATE": (json_codecs.decode_set_state, "set_state"),
    "RESET_SESSION": (json_codecs.decode_reset_session, "reset_session"),
    "AGENT_RESET": (json_codecs.decode_agent_reset, "agent_reset"),
    "SENSOR_DEMAND": (json_codecs.decode_sensor_demand, "sensor_demand"),
    "SENSOR_META": (json_codecs.decode_sensor_meta, "sensor_meta"),
}


def json_of(name: str) -> dict[str, Any]:
    """The JSON object of a sample as it travels, to be spoilt by a test."""
    return json.loads(payload_of(SAMPLES[name]))


def _encoded(data: object) -> bytes:
    return json.dumps(data).encode()


@pytest.mark.parametrize("what", sorted(JSON_DECODERS))
def test_every_json_decoder_gives_back_its_own_sample(what):
    decoder, name = JSON_DECODERS[what]
    assert decoder(_encoded(json_of(name))) == SAMPLES[name]


@pytest.mark.parametrize("what", sorted(JSON_DECODERS))
@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (b"", "not a UTF-8 JSON object"),
        (b"{", "not a UTF-8 JSON object"),
        (b"\xff\xfe{}", "not a UTF-8 JSON object"),
        (b"[1, 2]", "must be a JSON object, found list"),
        (b'"text"', "must be a JSON object, found str"),
        (b"3", "must be a JSON object, found int"),
        (b"null", "must be a JSON object, found NoneType"),
        (b"[" * 60_000, r"not a UTF-8 JSON object \(nested too deeply\)"),
        (b"[" * 100_000, "payload of 100000 bytes; at most 65536 are taken"),
    ],
    ids=["empty", "truncated", "not_utf8", "list", "string", "number", "null", "deep", "long"],
)
def test_json_decoders_refuse_a_payload_that_is_not_an_object(what, payload, match):
    decoder, _ = JSON_DECODERS[what]
    with pytest.raises(ProtocolError, match=rf"{what}: .*{match}"):
        decoder(payload)


REQUIRED_FIELDS = [
    ("HELLO", (), "protocol_version"),
    ("HELLO", (), "simulator"),
    ("HELLO", (), "session_start_utc"),
    ("HELLO", (), "map"),
    ("HELLO", (), "source"),
    ("HELLO", (), "lockstep"),
    ("HELLO", (), "seed"),
    ("HELLO", (), "physics_hz"),
    ("HELLO", (), "agents"),
    ("HELLO", ("agents", 0), "index"),
    ("HELLO", ("agents", 0), "name"),
    ("HELLO", ("agents", 1), "vehicle"),
    ("HELLO", ("agents", 0), "sensor_port"),
    ("HELLO", ("agents", 1), "vehicle_port"),
    ("CLIENT_HELLO", (), "protocol_version"),
    ("CLIENT_HELLO", (), "client"),
    ("CLIENT_HELLO", (), "role"),
    ("ERROR", (), "code"),
    ("ERROR", (), "message"),
    *(("EPISODE", (), name) for name in sorted(DOC_JSON_FIELDS["episode"])),
    ("SET_STATE", (), "state"),
    *(("AGENT_RESET", (), name) for name in sorted(DOC_JSON_FIELDS["agent_reset"])),
    *(("SENSOR_DEMAND", (), name) for name in sorted(DOC_JSON_FIELDS["sensor_demand"])),
    *(("SENSOR_META", (), name) for name in sorted(DOC_JSON_FIELDS["sensor_meta"])),
    *(
        ("SENSOR_META", ("sensors", 1), name)
        for name in ["name", "kind", "frame", "xyz_m", "rpy_rad", "rate_hz"]
    ),
]


def _at(data: dict[str, Any], path: tuple[object, ...]) -> dict[str, Any]:
    for step in path:
        data = data[step]
    return data


@pytest.mark.parametrize(
    ("what", "path", "field"), REQUIRED_FIELDS, ids=[f"{w}-{f}" for w, _, f in REQUIRED_FIELDS]
)
def test_json_decoders_refuse_a_missing_field(what, path, field):
    decoder, name = JSON_DECODERS[what]
    data = json_of(name)
    del _at(data, path)[field]
    with pytest.raises(ProtocolError, match=rf"{what}.*: missing field '{field}'"):
        decoder(_encoded(data))


@pytest.mark.parametrize("agent", [0, 1])
@pytest.mark.parametrize("field", ["sensor_port", "vehicle_port"])
def test_hello_refuses_an_agent_without_a_port(agent, field):
    data = json_of("hello")
    del data["agents"][agent][field]
    with pytest.raises(ProtocolError, match=rf"^HELLO agent {agent}: missing field '{field}'$"):
        json_codecs.decode_hello(_encoded(data))


@pytest.mark.parametrize("agent", [0, 1])
def test_hello_takes_a_missing_can_port_as_none(agent):
    data = json_of("hello")
    data["agents"][agent].pop("can_port")
    session = json_codecs.decode_hello(_encoded(data))
    assert session.agents[agent].can_port == 0
    assert (session.agents[agent].sensor_port, session.agents[agent].vehicle_port) == (
        hello().agents[agent].sensor_port,
        hello().agents[agent].vehicle_port,
    )


THREE = "must be 3 finite numbers, found"

# (decoder, path to the object, field, bad value, what the message says)
BAD_VALUES = [
    # wrong JSON types
    ("HELLO", (), "protocol_version", "1", "'protocol_version' must be int"),
    ("HELLO", (), "protocol_version", 1.0, "'protocol_version' must be int"),
    ("HELLO", (), "protocol_version", True, "'protocol_version' must be int"),
    ("HELLO", (), "simulator", 3, "'simulator' must be str"),
    ("HELLO", (), "lockstep", 1, "'lockstep' must be bool"),
    ("HELLO", (), "seed", True, "'seed' must be int"),
    ("HELLO", (), "physics_hz", 120.0, "'physics_hz' must be int"),
    ("HELLO", (), "agents", {"0": {}}, "'agents' must be list"),
    ("HELLO", ("agents",), 0, "polaris", "agent 0: must be an object"),
    ("HELLO", ("agents", 0), "name", 5, "'name' must be str"),
    ("HELLO", ("agents", 0), "sensor_port", "47101", "'sensor_port' must be int"),
    ("CLIENT_HELLO", (), "client", None, "'client' must be str"),
    ("CLIENT_HELLO", (), "role", 1, "'role' must be str"),
    ("CLIENT_HELLO", (), "agent", "1", "'agent' must be int"),
    ("ERROR", (), "code", None, "'code' must be str"),
    ("ERROR", (), "message", ["x"], "'message' must be str"),
    ("EPISODE", (), "episode_id", 3, "'episode_id' must be str"),
    ("EPISODE", (), "episode_time_s", "1.5", "'episode_time_s' must be int/float"),
    ("EPISODE", (), "episode_time_s", False, "'episode_time_s' must be int/float"),
    ("EPISODE", (), "lockstep", "true", "'lockstep' must be bool"),
    ("EPISODE", (), "agents", "polaris", "'agents' must be list"),
    ("EPISODE", (), "agents", ["polaris", 1], "'agents' must be a list of strings"),
    ("EPISODE", (), "map", None, "'map' must be str"),
    ("SET_STATE", (), "state", 1.0, "'state' must be int"),
    ("SET_STATE", (), "state", "playing", "'state' must be int"),
    ("RESET_SESSION", (), "reason", 1, "'reason' must be str"),
    ("AGENT_RESET", (), "agent", 1.0, "'agent' must be int"),
    ("AGENT_RESET", (), "x_m", "1", "'x_m' must be int/float"),
    ("AGENT_RESET", (), "yaw_rad", None, "'yaw_rad' must be int/float"),
    ("SENSOR_META", (), "world_origin_utm", [1.0, 2.0], f"'world_origin_utm' {THREE} 2 values"),
    ("SENSOR_META", (), "world_origin_utm", [], f"'world_origin_utm' {THREE} 0 values"),
    ("SENSOR_META", ("sensors", 1), "xyz_m", [0.0, 1.0, 2.0, 3.0], f"'xyz_m' {THREE} 4 values"),
    ("SENSOR_META", (), "world_origin_utm", {"x": 1}, "'world_origin_utm' must be list"),
    ("SENSOR_META", (), "sensors", {}, "'sensors' must be list"),
    ("SENSOR_META", ("sensors",), 1, "camera", "sensor 1: must be an object"),
    ("SENSOR_META", ("sensors", 1), "settings", [], "'settings' must be dict"),
    ("SENSOR_META", ("sensors", 1), "rate_hz", "10", "'rate_hz' must be int/float"),
    ("SENSOR_META", ("sensors", 1), "rpy_rad", [0.0, True, 0.0], "'rpy_rad' must be a number, found True"),
    ("SENSOR_META", ("sensors", 1), "xyz_m", [0.0, "1", 0.0], "'xyz_m' must be a number, found '1'"),
    ("SENSOR_META", ("sensors", 1), "xyz_m", [None, 0.0, 0.0], "'xyz_m' must be a number, found None"),
    ("SENSOR_META", (), "world_origin_utm", [0, 0, [1]], r"'world_origin_utm' must be a number, found \[1\]"),
    # negative, out of range, not finite
    ("HELLO", (), "seed", -1, "'seed' must be a 32-bit unsigned integer"),
    ("HELLO", (), "seed", 2**32, "'seed' must be a 32-bit unsigned integer"),
    ("HELLO", (), "physics_hz", 0, "physics_hz must be positive"),
    ("HELLO", (), "physics_hz", -120, "'physics_hz' must be a 64-bit unsigned integer"),
    ("HELLO", (), "agents", [], "at least one agent"),
    ("HELLO", ("agents", 0), "index", 1, "index must be 0"),
    ("HELLO", ("agents", 1), "index", -1, "'index' must be a 64-bit unsigned integer"),
    ("HELLO", ("agents", 0), "name", "", "name must not be empty"),
    ("HELLO", ("agents", 0), "sensor_port", 65536, "'sensor_port' is not a port"),
    ("HELLO", ("agents", 0), "vehicle_port", -1, "'vehicle_port' must be a 64-bit unsigned integer"),
    ("HELLO", ("agents", 1), "can_port", 70000, "'can_port' is not a port"),
    ("CLIENT_HELLO", (), "agent", -1, "'agent' must be a 64-bit unsigned integer"),
    ("EPISODE", (), "episode", -1, "'episode' must be a 32-bit unsigned integer"),
    ("EPISODE", (), "episode", 2**32, "'episode' must be a 32-bit unsigned integer"),
    ("EPISODE", (), "reset_epoch", -1, "'reset_epoch' must be a 32-bit unsigned integer"),
    ("EPISODE", (), "step", -1, "'step' must be a 64-bit unsigned integer"),
    ("EPISODE", (), "step", 2**64, "'step' must be a 64-bit unsigned integer"),
    ("EPISODE", (), "stamp_ns", -1, rf"{STAMP_RANGE}, found -1$"),
    ("EPISODE", (), "stamp_ns", MAX_STAMP_NS + 1, rf"{STAMP_RANGE}, found {MAX_STAMP_NS + 1}$"),
    ("EPISODE", (), "stamp_ns", 2**63, rf"{STAMP_RANGE}, found {2**63}$"),
    ("EPISODE", (), "stamp_ns", 1.5, "'stamp_ns' must be int"),
    ("EPISODE", (), "stamp_ns", True, "'stamp_ns' must be int"),
    ("EPISODE", (), "seed", 2**32, "'seed' must be a 32-bit unsigned integer"),
    ("EPISODE", (), "episode_time_s", -0.5, "'episode_time_s' must not be negative"),
    ("EPISODE", (), "episode_time_s", NAN, "'episode_time_s' must be finite"),
    ("EPISODE", (), "episode_time_s", INF, "'episode_time_s' must be finite"),
    ("AGENT_RESET", (), "agent", -1, "'agent' must be a 64-bit unsigned integer"),
    ("AGENT_RESET", (), "x_m", INF, "'x_m' must be finite"),
    ("AGENT_RESET", (), "y_m", -INF, "'y_m' must be finite"),
    ("AGENT_RESET", (), "yaw_rad", NAN, "'yaw_rad' must be finite"),
    ("SENSOR_META", (), "agent", -1, "'agent' must be a 64-bit unsigned integer"),
    ("SENSOR_META", (), "utm_epsg", -32616, "'utm_epsg' must be a 64-bit unsigned integer"),
    ("SENSOR_META", (), "world_origin_utm", [NAN, 0.0, 0.0], "'world_origin_utm' must be finite, found nan"),
    ("SENSOR_META", ("sensors", 0), "rate_hz", 0, "rate_hz must be positive for a sensor, 0 for a frame"),
    ("SENSOR_META", ("sensors", 0), "rate_hz", -10.0, "rate_hz must be positive for a sensor"),
    ("SENSOR_META", ("sensors", 2), "rate_hz", 10.0, "rate_hz must be positive for a sensor, 0 for a frame"),
    ("SENSOR_META", ("sensors", 2), "rate_hz", -1, "rate_hz must be positive for a sensor, 0 for a frame"),
    ("SENSOR_META", ("sensors", 0), "rate_hz", NAN, "'rate_hz' must be finite"),
    ("SENSOR_META", ("sensors", 0), "xyz_m", [0.0, INF, 0.0], "'xyz_m' must be finite, found inf"),
    ("SENSOR_META", ("sensors", 2), "rpy_rad", [0.0, 0.0, -INF], "'rpy_rad' must be finite, found -inf"),
    ("SENSOR_META", ("sensors", 0), "frame", "", "frame and parent must not be empty"),
    ("SENSOR_META", ("sensors", 2), "parent", "", "frame and parent must not be empty"),
    ("SENSOR_META", ("sensors", 2), "parent", 3, "'parent' must be str"),
    # unknown enum values
    ("HELLO", (), "source", "game", "'source' must be one of unreal, core, found 'game'"),
    (
        "HELLO",
        ("agents", 1),
        "vehicle",
        "tractor",
        "'vehicle' must be one of polaris, maxxum, found 'tractor'",
    ),
    ("CLIENT_HELLO", (), "role", "lidar", "'role' must be one of control, sensor, vehicle, found 'lidar'"),
    ("EPISODE", (), "state", 3, "'state' must be 0, 1 or 2, found 3"),
    ("EPISODE", (), "state", -1, "'state' must be 0, 1 or 2, found -1"),
    ("EPISODE", (), "source", "Unreal", "'source' must be one of unreal, core"),
    ("SET_STATE", (), "state", 3, "'state' must be 0, 1 or 2, found 3"),
    ("SENSOR_META", (), "vehicle", "car", "'vehicle' must be one of polaris, maxxum, found 'car'"),
    (
        "SENSOR_META",
        ("sensors", 0),
        "kind",
        "radar",
        "'kind' must be one of ins, lidar, camera, frame, found 'radar'",
    ),
]


@pytest.mark.parametrize(
    ("what", "path", "field", "value", "match"),
    BAD_VALUES,
    ids=[f"{w}-{f}-{v!r}" for w, _, f, v, _ in BAD_VALUES],
)
def test_json_decoders_refuse_a_bad_value(what, path, field, value, match):
    decoder, name = JSON_DECODERS[what]
    data = json_of(name)
    _at(data, path)[field] = value
    with pytest.raises(ProtocolError, match=match) as refused:
        decoder(_encoded(data))
    assert str(refused.value).startswith(what)
    assert refused.value.version_mismatch is None


def test_hello_refuses_duplicate_agent_names():
    data = json_of("hello")
    data["agents"][1]["name"] = "polaris"
    with pytest.raises(
        ProtocolError, match=r"HELLO: agent names must be unique, found \['polaris', 'polaris'\]"
    ):
        json_codecs.decode_hello(_encoded(data))


@pytest.mark.parametrize(
    "agents", [["polaris", "polaris"], ["polaris", "maxxum", "polaris"]], ids=["pair", "apart"]
)
def test_episode_refuses_duplicate_agent_names(agents):
    data = json_of("episode")
    data["agents"] = agents
    with pytest.raises(
        ProtocolError, match=rf"^EPISODE: agent names must be unique, found {re.escape(str(agents))}$"
    ):
        json_codecs.decode_episode(_encoded(data))


@pytest.mark.parametrize("what", ["HELLO", "CLIENT_HELLO"])
@pytest.mark.parametrize("version", [0, 2, 65535])
def test_a_peer_of_another_version_is_refused(what, version):
    decoder, name = JSON_DECODERS[what]
    data = json_of(name)
    data["protocol_version"] = version
    pattern = rf"{what}: the peer speaks protocol version {version}, this side speaks {PROTOCOL_VERSION}"
    with pytest.raises(ProtocolError, match=pattern) as refused:
        decoder(_encoded(data))
    assert refused.value.version_mismatch == version


@pytest.mark.parametrize("what", ["HELLO", "CLIENT_HELLO"])
def test_the_version_is_checked_before_the_rest(what):
    decoder, _ = JSON_DECODERS[what]
    with pytest.raises(ProtocolError, match="protocol version 2") as refused:
        decoder(b'{"protocol_version": 2}')
    assert refused.value.version_mismatch == 2


# Integers beyond the range of a float64 (a JSON integer with more than 308 digits) in a float field.
HUGE = 10**400
HUGE_NUMBERS = [
    ("AGENT_RESET", (), "x_m", HUGE),
    ("EPISODE", (), "episode_time_s", HUGE),
    ("SENSOR_META", (), "world_origin_utm", [HUGE, 0, 0]),
    ("SENSOR_META", ("sensors", 0), "rate_hz", HUGE),
    ("SENSOR_META", ("sensors", 0), "rpy_rad", [0, 0, -HUGE]),
]


@pytest.mark.parametrize(
    ("what", "path", "field", "value"), HUGE_NUMBERS, ids=[f"{r[0]}-{r[2]}" for r in HUGE_NUMBERS]
)
def test_json_decoders_refuse_an_integer_beyond_float_range(what, path, field, value):
    decoder, name = JSON_DECODERS[what]
    data = json_of(name)
    _at(data, path)[field] = value
    with pytest.raises(ProtocolError, match=rf"^{what}.*: field '{field}' is too large for a float$"):
        decoder(_encoded(data))


# Integers beyond the float64 range in integer fields are refused by their range checks.
HUGE_INTEGERS = [
    ("HELLO", (), "seed", HUGE, "'seed' must be a 32-bit unsigned integer"),
    ("HELLO", ("agents", 0), "sensor_port", HUGE, "'sensor_port' must be a 64-bit unsigned integer"),
    ("EPISODE", (), "step", HUGE, "'step' must be a 64-bit unsigned integer"),
    ("EPISODE", (), "stamp_ns", HUGE, r"stamp_ns must be in 0 \.\. \d+ \(int32 seconds\), found 1000"),
    ("EPISODE", (), "stamp_ns", -HUGE, r"stamp_ns must be in 0 \.\. \d+ \(int32 seconds\), found -1000"),
    ("SET_STATE", (), "state", HUGE, "'state' must be 0, 1 or 2"),
]


@pytest.mark.parametrize(
    ("what", "path", "field", "value", "match"),
    HUGE_INTEGERS,
    ids=[f"{r[0]}-{r[2]}-{'minus' if r[3] < 0 else 'plus'}" for r in HUGE_INTEGERS],
)
def test_json_decoders_refuse_a_huge_integer_in_an_integer_field(what, path, field, value, match):
    decoder, name = JSON_DECODERS[what]
    data = json_of(name)
    _at(data, path)[field] = value
    with pytest.raises(ProtocolError, match=rf"^{what}.*: .*{match}"):
        decoder(_encoded(data))


@pytest.mark.parametrize("what", sorted(JSON_DECODERS))
@pytest.mark.parametrize("sign", ["", "-"])
def test_json_decoders_refuse_an_integer_literal_too_long_to_parse(what, sign):
    decoder, _ = JSON_DECODERS[what]
    payload = b'{"x": ' + sign.encode() + b"1" + b"0" * 5000 + b"}"
    with pytest.raises(ProtocolError, match=rf"^{what}: payload is not a UTF-8 JSON object \(") as refused:
        decoder(payload)
    assert refused.value.version_mismatch is None


# ---- decode() ------------------------------------------------------------------------------------


def test_every_frame_kind_has_a_decoder():
    assert set(DECODERS) == set(FrameKind)


def test_decode_refuses_a_kind_without_a_decoder(monkeypatch):
    monkeypatch.delitem(DECODERS, FrameKind.CAMERA)
    with pytest.raises(ProtocolError, match=r"CAMERA: no decoder"):
        decode(Frame(FrameKind.CAMERA, b"{}"))


@pytest.mark.parametrize("kind", sorted(DECODERS), ids=[kind.name for kind in sorted(DECODERS)])
def test_decode_passes_a_bad_payload_on_as_protocol_error(kind):
    with pytest.raises(ProtocolError, match=kind.name):
        decode(Frame(kind, b"\x00" * 3))


@pytest.mark.parametrize(("key", "value"), [("x_m", 1e15), ("y_m", -1000.001), ("x_m", -2e3)])
def test_agent_reset_refuses_a_position_off_the_tile(key, value):
    # A raw AGENT_RESET with x = 1e15 put the vehicle where its INS numbers overflow.
    data = {"agent": 0, "x_m": 1.0, "y_m": 2.0, "yaw_rad": 0.0, key: value}
    with pytest.raises(ProtocolError, match=rf"AGENT_RESET: field '{key}' must be within \+-1000 m"):
        json_codecs.decode_agent_reset(json.dumps(data).encode())


def test_a_kind_the_channel_does_not_carry_is_dropped_before_anything_is_allocated():
    # Once: headers announcing 64 MiB clouds, sent to the simulator, each allocated 64 MiB at once.
    reader = FrameReader(kinds=TO_SIMULATOR_KINDS)
    reader.feed(_header(kind=int(FrameKind.LIDAR), length=MAX_PAYLOAD - 1) + GOOD_STEP_REQUEST)
    assert [decode(frame) for frame in reader.frames()] == [StepRequest(request_id=1, steps=2)]
    assert reader.dropped == Counter({"unexpected kind": 1})
    assert reader.buffered == 0
    assert reader.bulk_space() is None


@pytest.mark.parametrize("kind", sorted(set(FrameKind) - BULK_KINDS))
def test_only_clouds_and_images_may_announce_a_large_payload(kind):
    # Once: a header announcing a 64 MiB frame on the control channel held /clock until it came.
    assert MAX_PAYLOAD_OF[kind] == SMALL_PAYLOAD
    reader = FrameReader()
    reader.feed(_header(kind=int(kind), length=SMALL_PAYLOAD + 1) + GOOD_CLOCK)
    assert [decode(frame) for frame in reader.frames()] == [Clock(step=1, stamp_ns=8_333_333)]
    assert reader.dropped == Counter({"oversized": 1})


def test_each_channel_of_the_bridge_takes_what_the_simulator_sends_there():
    assert FROM_SIMULATOR_KINDS["control"] >= {FrameKind.HELLO, FrameKind.CLOCK, FrameKind.STEP_DONE}
    assert FrameKind.LIDAR not in FROM_SIMULATOR_KINDS["control"]
    assert FrameKind.LIDAR in FROM_SIMULATOR_KINDS["sensor"]
    assert not TO_SIMULATOR_KINDS & (BULK_KINDS | {FrameKind.HELLO, FrameKind.CLOCK})
