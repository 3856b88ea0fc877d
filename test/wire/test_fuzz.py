"""Property tests of framing and decoders: only ProtocolError escapes, and garbage costs no frame."""

from __future__ import annotations

import json
import math
import struct
import zlib
from array import array
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acres_bridge.wire import (
    MAGIC,
    AgentEntry,
    AgentReset,
    ClientHello,
    Clock,
    EpisodeInfo,
    ErrorReply,
    Frame,
    FrameKind,
    FrameReader,
    Hello,
    InsSample,
    ProtocolError,
    SensorMeta,
    SensorMount,
    SetState,
    StepDone,
    StepRequest,
    StreamMark,
    binary_codecs,
    decode,
    encode,
    encode_frame,
    json_codecs,
)
from acres_bridge.wire.json_fields import MAX_STAMP_NS
from acres_bridge.wire.perception import CameraImage, ImageEncoding, LidarScan

FUZZ = settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# ---- good frames ---------------------------------------------------------------------------------

INS = InsSample(
    step=3089,
    stamp_ns=25_741_668_009,
    has_position=True,
    position=(500438.12, 4479963.95, 181.77),
    latitude_deg=40.47,
    longitude_deg=-86.99,
    orientation=(-0.0158, 0.0091, 0.7071, 0.7068),
    velocity=(1.5, 0.01, -0.002),
    angular_rate=(0.001, 0.0001, 0.0007),
    specific_force=(0.1, 0.0, 9.81),
    position_variance=(0.0004, 0.0004, 0.0009),
    velocity_variance=(0.0001, 0.0001, 0.0001),
    attitude_variance=(1e-6, 1e-6, 4e-6),
    true_position=(500438.1, 4479963.9, 181.7),
    true_orientation=(-0.0158, 0.0091, 0.7071, 0.7068),
    true_speed=1.49,
    angular_rate_variance=(2.5e-7, 2.5e-7, 4e-7),
    specific_force_variance=(1e-4, 1e-4, 2.5e-4),
)

EPISODE = EpisodeInfo(
    episode_id="20261002T072309-0003",
    episode=3,
    reset_epoch=2,
    step=1405,
    stamp_ns=11_708_333_333,
    episode_time_s=4.25,
    state=1,
    lockstep=False,
    seed=42,
    source="unreal",
    map="V03ACRE",
    agents=("polaris", "polaris2"),
)
HELLO = Hello(
    protocol_version=1,
    simulator="acres_sim 0.1.0",
    session_start_utc="20261002T072309",
    map="V03ACRE",
    source="core",
    lockstep=True,
    seed=42,
    physics_hz=120,
    agents=(AgentEntry(index=0, name="polaris", vehicle="polaris", sensor_port=47101, vehicle_port=47102),),
)

MESSAGES: list[object] = [
    Clock(step=3089, stamp_ns=25_741_668_009),
    StreamMark(last_step=3101),
    StepRequest(request_id=7, steps=12, command_seqs=(3, 0, 9)),
    StepDone(request_id=7, last_step=3101, status=0),
    INS,
    SetState(state=2),
    AgentReset(agent=1, x_m=-12.5, y_m=250.0, yaw_rad=1.5),
    ErrorReply(code="version", message="the bridge speaks protocol version 1"),
    EPISODE,
    HELLO,
    LidarScan(3101, 25_841_668_009, 0, 3, 2, array("B", struct.pack("<24f", *range(24)))),
    CameraImage(3101, 25_841_668_009, 1, ImageEncoding.BGR8, 3, 2, array("B", bytes(range(18)))),
]
GOOD = [encode(message) for message in MESSAGES]

good_indices = st.lists(st.integers(0, len(GOOD) - 1), min_size=1, max_size=8)
chunk_sizes = st.lists(st.integers(1, 80), min_size=1, max_size=20)


def feed_in_chunks(reader: FrameReader, data: bytes, sizes: list[int]) -> list[Frame]:
    """Feed data in pieces of the given sizes (cycled), collecting the frames after every piece."""
    frames: list[Frame] = []
    position = 0
    turn = 0
    while position < len(data):
        size = sizes[turn % len(sizes)]
        turn += 1
        reader.feed(data[position : position + size])
        position += size
        frames.extend(reader.frames())
    frames.extend(reader.frames())
    return frames


def decoded(frames: list[Frame]) -> list[object]:
    return [decode(frame) for frame in frames]


def same(a: list[object], b: list[object]) -> bool:
    """Equal messages; compared by their encoding, so that NaN fields compare equal."""
    return [encode(x) for x in a] == [encode(x) for x in b]


def decode_or_refuse(frame: Frame) -> object | None:
    try:
        return decode(frame)
    except ProtocolError:
        return None


# ---- (a) random bytes ----------------------------------------------------------------------------

kinds = st.sampled_from(list(FrameKind))
# Frames with a valid header around a random payload, so that the decoders see random payloads.
random_payload_frames = st.builds(encode_frame, kinds, st.binary(max_size=400))
# Valid payloads with a few random bytes overwritten.
near_payload_frames = st.builds(
    lambda index, spots: encode_frame(
        FrameKind(struct.unpack_from("<H", GOOD[index], 6)[0]),
        _overwrite(GOOD[index][16:], spots),
    ),
    st.integers(0, len(GOOD) - 1),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
)


def _overwrite(payload: bytes, spots: list[tuple[int, int]]) -> bytes:
    data = bytearray(payload)
    for position, value in spots:
        data[position % len(data)] = value
    return bytes(data)


@FUZZ
@given(data=st.binary(max_size=2000), sizes=chunk_sizes)
def test_random_bytes_never_raise(data, sizes):
    reader = FrameReader()
    frames = feed_in_chunks(reader, data, sizes)
    for frame in frames:
        decode_or_refuse(frame)
    assert reader.buffered <= max(len(data), 15)


@FUZZ
@given(
    pieces=st.lists(
        st.one_of(st.binary(max_size=64), random_payload_frames, near_payload_frames), max_size=12
    ),
    sizes=chunk_sizes,
)
def test_random_streams_yield_frames_that_decode_or_refuse(pieces, sizes):
    reader = FrameReader()
    frames = feed_in_chunks(reader, b"".join(pieces), sizes)
    for frame in frames:
        assert isinstance(frame.kind, FrameKind)
        decode_or_refuse(frame)


# ---- (b) garbage between good frames -------------------------------------------------------------

partial_headers = st.builds(
    lambda index, size: GOOD[index][:size], st.integers(0, len(GOOD) - 1), st.integers(1, 15)
)
with_magic = st.builds(
    lambda before, after: before + MAGIC + after, st.binary(max_size=24), st.binary(max_size=24)
)
garbage_piece = st.one_of(
    st.binary(min_size=1, max_size=48),
    with_magic,
    partial_headers,
    st.just(MAGIC),
    st.just(MAGIC * 3),
    st.just(MAGIC[:3]),
)
garbage = st.lists(garbage_piece, max_size=3).map(b"".join)


@FUZZ
@given(
    layout=st.lists(st.tuples(garbage, st.integers(0, len(GOOD) - 1)), min_size=1, max_size=8),
    sizes=chunk_sizes,
)
def test_garbage_between_frames_costs_no_frame(layout, sizes):
    stream = b"".join(junk + GOOD[index] for junk, index in layout)
    reader = FrameReader()
    frames = feed_in_chunks(reader, stream, sizes)
    assert same(decoded(frames), [MESSAGES[index] for _, index in layout])
    assert [frame.kind for frame in frames] == [
        FrameKind(struct.unpack_from("<H", GOOD[i], 6)[0]) for _, i in layout
    ]
    assert reader.frames_read == len(layout)
    assert reader.buffered == 0
    # Every stretch of garbage is dropped and counted at least once; garbage is never a version.
    assert sum(reader.dropped.values()) >= sum(1 for junk, _ in layout if junk)
    assert set(reader.dropped) <= {
        "bad magic",
        "bad header check",
        "protocol version",
        "unknown kind",
        "oversized",
    }
    assert reader.version_mismatch is None
    if not any(junk for junk, _ in layout):
        assert not reader.dropped


def test_garbage_is_counted_by_reason():
    reader = FrameReader()
    reader.feed(b"x" * 20 + GOOD[0] + MAGIC + b"\x00" * 12 + GOOD[1])
    assert decoded(list(reader.frames())) == MESSAGES[:2]
    assert reader.dropped == Counter({"bad magic": 1, "bad header check": 1})


# ---- (c) mutated frames --------------------------------------------------------------------------


@FUZZ
@given(
    target=st.integers(0, len(GOOD) - 1),
    follower=st.integers(0, len(GOOD) - 1),
    flips=st.lists(
        st.tuples(st.integers(0, 15), st.integers(1, 255)), min_size=1, max_size=4, unique_by=lambda f: f[0]
    ),
    sizes=chunk_sizes,
)
def test_a_damaged_header_drops_its_frame_only(target, follower, flips, sizes):
    damaged = bytearray(GOOD[target])
    for position, mask in flips:
        damaged[position] ^= mask
    stream = GOOD[follower] + bytes(damaged) + GOOD[follower]
    reader = FrameReader()
    frames = feed_in_chunks(reader, stream, sizes)
    assert same(decoded(frames), [MESSAGES[follower], MESSAGES[follower]])
    assert sum(reader.dropped.values()) >= 1
    assert reader.version_mismatch is None
    assert reader.buffered == 0


@FUZZ
@given(
    target=st.integers(0, len(GOOD) - 1),
    follower=st.integers(0, len(GOOD) - 1),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), min_size=1, max_size=6),
    sizes=chunk_sizes,
)
def test_a_damaged_payload_decodes_or_is_refused(target, follower, flips, sizes):
    damaged = bytearray(GOOD[target])
    payload_size = len(damaged) - 16
    for position, mask in flips:
        damaged[16 + position % payload_size] ^= mask
    stream = bytes(damaged) + GOOD[follower]
    reader = FrameReader()
    frames = feed_in_chunks(reader, stream, sizes)
    assert len(frames) == 2
    assert frames[0].kind == FrameKind(struct.unpack_from("<H", GOOD[target], 6)[0])
    result = decode_or_refuse(frames[0])
    assert result is None or type(result) is type(MESSAGES[target])
    assert same([decode(frames[1])], [MESSAGES[follower]])
    assert not reader.dropped


# ---- (d) truncation ------------------------------------------------------------------------------


@FUZZ
@given(indices=good_indices, data=st.data())
def test_a_truncated_frame_waits_for_the_rest(indices, data):
    frames_before = [GOOD[index] for index in indices[:-1]]
    last = GOOD[indices[-1]]
    cut = data.draw(st.integers(1, len(last) - 1), label="cut")
    reader = FrameReader()
    reader.feed(b"".join(frames_before) + last[:cut])
    first = list(reader.frames())
    assert same(decoded(first), [MESSAGES[index] for index in indices[:-1]])
    assert not reader.dropped
    assert reader.buffered == cut
    assert list(reader.frames()) == []  # asking again changes nothing
    assert reader.buffered == cut
    rest = last[cut:]
    split = data.draw(st.integers(0, len(rest)), label="split")
    reader.feed(rest[:split])
    early = list(reader.frames())
    reader.feed(rest[split:])
    late = list(reader.frames())
    assert same(decoded(early + late), [MESSAGES[indices[-1]]])
    assert not reader.dropped
    assert reader.buffered == 0


# ---- (e) random JSON to every JSON decoder -------------------------------------------------------

JSON_DECODERS = {
    "HELLO": json_codecs.decode_hello,
    "CLIENT_HELLO": json_codecs.decode_client_hello,
    "ERROR": json_codecs.decode_error,
    "EPISODE": json_codecs.decode_episode,
    "SET_STATE": json_codecs.decode_set_state,
    "RESET_SESSION": json_codecs.decode_reset_session,
    "AGENT_RESET": json_codecs.decode_agent_reset,
    "SENSOR_DEMAND": json_codecs.decode_sensor_demand,
    "SENSOR_META": json_codecs.decode_sensor_meta,
}

VALID_JSON: dict[str, dict[str, Any]] = {
    "HELLO": json.loads(encode(HELLO)[16:]),
    "CLIENT_HELLO": json.loads(
        encode(ClientHello(protocol_version=1, client="acres_bridge", role="vehicle", agent=1))[16:]
    ),
    "ERROR": json.loads(encode(ErrorReply(code="version", message="no"))[16:]),
    "EPISODE": json.loads(encode(EPISODE)[16:]),
    "SET_STATE": {"state": 1},
    "RESET_SESSION": {"reason": "test"},
    "AGENT_RESET": {"agent": 0, "x_m": 1.0, "y_m": 2.0, "yaw_rad": 0.5},
    "SENSOR_DEMAND": {"agent": 0, "sensors": [0, 2]},
    "SENSOR_META": json.loads(
        encode(
            SensorMeta(
                agent=0,
                vehicle="polaris",
                utm_epsg=32616,
                world_origin_utm=(500000.0, 4480000.0, 180.0),
                sensors=(
                    SensorMount(
                        name="lidar",
                        kind="lidar",
                        frame="lidar",
                        xyz_m=(1.0, 0.0, 2.0),
                        rpy_rad=(0.0, 0.0, 0.0),
                        rate_hz=10.0,
                        settings={"columns": 1800, "rings": 32},
                    ),
                ),
            )
        )[16:]
    ),
}

WORDS = [
    "polaris",
    "maxxum",
    "unreal",
    "core",
    "control",
    "sensor",
    "vehicle",
    "ins",
    "lidar",
    "camera",
    "frame",
]
# Integers beyond the float64 range (10**400) and around the largest stamp are among the leaves too.
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-1, 0, 1, 2, 3, 65535, 65536, 2**32, 2**63, 2**64]),
    st.sampled_from([MAX_STAMP_NS, MAX_STAMP_NS + 1, 10**400, -(10**400)]),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(WORDS),
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=16,
)


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every place inside a JSON value that a test can replace or remove."""
    found: list[tuple[object, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*prefix, key))
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((*prefix, index))
            found.extend(_paths(item, (*prefix, index)))
    return found


def check_decoder(what: str, payload: bytes) -> None:
    """The decoder returns a message or raises ProtocolError; what it accepts survives a round trip."""
    message: object | None = None
    refusal = ""
    try:
        message = JSON_DECODERS[what](payload)
    except ProtocolError as error:
        refusal = str(error)
    if message is None:
        assert refusal.startswith(what)
        return
    again = encode(message)
    assert same([decode(Frame(FrameKind(struct.unpack_from("<H", again, 6)[0]), again[16:]))], [message])


@FUZZ
@given(what=st.sampled_from(sorted(JSON_DECODERS)), value=json_values)
def test_json_decoders_take_any_json_value(what, value):
    check_decoder(what, json.dumps(value).encode())


@FUZZ
@given(what=st.sampled_from(sorted(JSON_DECODERS)), data=st.data())
def test_json_decoders_take_any_object_of_their_field_names(what, data):
    names = sorted({str(path[-1]) for path in _paths(VALID_JSON[what]) if isinstance(path[-1], str)})
    keys = st.sampled_from(names) | st.text(max_size=8)
    value = data.draw(st.dictionaries(keys, json_values, max_size=len(names) + 2), label="object")
    check_decoder(what, json.dumps(value).encode())


@FUZZ
@given(what=st.sampled_from(sorted(JSON_DECODERS)), data=st.data())
def test_json_decoders_take_a_valid_object_with_one_field_spoilt(what, data):
    value = json.loads(json.dumps(VALID_JSON[what]))
    path = data.draw(st.sampled_from(_paths(value)), label="path")
    parent: Any = value
    for step in path[:-1]:
        parent = parent[step]
    if data.draw(st.booleans(), label="remove"):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(json_values, label="value")
    check_decoder(what, json.dumps(value).encode())


@FUZZ
@given(what=st.sampled_from(sorted(JSON_DECODERS)), payload=st.binary(max_size=200))
def test_json_decoders_take_any_bytes(what, payload):
    check_decoder(what, payload)


INS_SIZE = 352


@FUZZ
@given(
    payload=st.binary(min_size=INS_SIZE, max_size=INS_SIZE)
    | st.builds(
        lambda spots: _overwrite(encode(INS)[16:], spots),
        st.lists(st.tuples(st.integers(0, INS_SIZE - 1), st.integers(0, 255)), min_size=1, max_size=8),
    )
)
def test_ins_decoder_takes_any_352_bytes(payload):
    sample: InsSample | None = None
    refusal = ""
    try:
        sample = binary_codecs.decode_ins(payload)
    except ProtocolError as error:
        refusal = str(error)
    if sample is None:
        assert refusal.startswith("INS: ")
        return
    checked = [
        *sample.orientation,
        *sample.velocity,
        *sample.angular_rate,
        *sample.specific_force,
        *sample.velocity_variance,
        *sample.attitude_variance,
        *sample.true_position,
        *sample.true_orientation,
        sample.true_speed,
        *sample.angular_rate_variance,
        *sample.specific_force_variance,
    ]
    if sample.has_position:
        checked += [*sample.position, sample.latitude_deg, sample.longitude_deg, *sample.position_variance]
    assert len(checked) == (41 if sample.has_position else 33)
    assert all(math.isfinite(value) for value in checked)
    assert 0 <= sample.stamp_ns <= MAX_STAMP_NS
    again = encode(sample)[16:]
    assert again[:20] + again[24:] == payload[:20] + payload[24:]  # all but the pad, which is not read


# ---- (f) another protocol version ----------------------------------------------------------------


def frame_of_version(version: int, kind: int, payload: bytes) -> bytes:
    head = struct.pack("<4sHHI", MAGIC, version, kind, len(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload


@FUZZ
@given(
    version=st.integers(0, 65535).filter(lambda v: v != 1),
    kind=st.integers(0, 65535),
    payload=st.binary(max_size=100).filter(lambda b: MAGIC[:1] not in b),
    follower=st.integers(0, len(GOOD) - 1),
    sizes=chunk_sizes,
)
def test_a_frame_of_another_version_is_dropped_and_reported(version, kind, payload, follower, sizes):
    foreign = frame_of_version(version, kind, payload)
    reader = FrameReader()
    frames = feed_in_chunks(reader, foreign + GOOD[follower], sizes)
    assert same(decoded(frames), [MESSAGES[follower]])
    assert reader.dropped["protocol version"] == 1
    assert reader.dropped == Counter({"protocol version": 1})
    assert reader.version_mismatch == version


def test_a_frame_of_version_2_is_reported_with_its_version():
    reader = FrameReader()
    reader.feed(frame_of_version(2, int(FrameKind.HELLO), b'{"protocol_version": 2}') + GOOD[0])
    assert decoded(list(reader.frames())) == [MESSAGES[0]]
    assert reader.dropped == Counter({"protocol version": 1})
    assert reader.version_mismatch == 2


@pytest.mark.parametrize(
    ("dropped", "reason"),
    [
        (frame_of_version(2, int(FrameKind.HELLO), b'{"protocol_version": 2}'), "protocol version"),
        (b"x" * 20, "bad magic"),
        (b"x" * 20 + MAGIC[:3] + b"x", "bad magic"),
        (b"x" * 20 + MAGIC[:1] + MAGIC[2:], "bad magic"),
    ],
    ids=["version", "garbage", "garbage_with_most_of_a_magic", "garbage_ending_like_a_magic"],
)
def test_a_dropped_stretch_is_counted_once_when_the_stream_is_split_after_it(dropped, reason):
    whole = FrameReader()
    whole.feed(dropped + GOOD[0])
    assert decoded(list(whole.frames())) == [MESSAGES[0]]
    assert whole.dropped == Counter({reason: 1})
    split = FrameReader()
    split.feed(dropped)
    assert list(split.frames()) == []
    split.feed(GOOD[0])
    assert decoded(list(split.frames())) == [MESSAGES[0]]
    assert split.dropped == Counter({reason: 1})


@pytest.mark.parametrize(
    ("tail", "kept"),
    [
        (b"", 0),
        (b"xyz", 0),
        (MAGIC[:1], 1),
        (MAGIC[:2], 2),
        (MAGIC[:3], 3),
        (MAGIC[:3] + b"x", 0),
        (MAGIC[:2] + MAGIC[:1], 1),
        (MAGIC[1:], 0),
    ],
    ids=["none", "garbage", "A", "AC", "ACR", "ACRx", "ACA", "CRS"],
)
def test_after_dropping_garbage_the_reader_keeps_only_a_partial_magic_at_the_end(tail, kept):
    reader = FrameReader()
    reader.feed(b"x" * 20 + tail)
    assert list(reader.frames()) == []
    assert reader.dropped == Counter({"bad magic": 1})
    assert reader.buffered == kept
    reader.feed(MAGIC[kept:] + GOOD[0][4:] if kept else GOOD[0])
    assert decoded(list(reader.frames())) == [MESSAGES[0]]
    assert reader.dropped == Counter({"bad magic": 1})
    assert reader.buffered == 0


@pytest.mark.parametrize(
    ("dropped", "cut", "reason"),
    [
        (b"x" * 40, 20, "bad magic"),
        (b"x" * 20 + MAGIC[:3], 23, "bad magic"),
        (b"x" * 20 + MAGIC[:1] + b"x" * 20, 21, "bad magic"),
        (frame_of_version(2, int(FrameKind.HELLO), b'{"protocol_version": 2}'), 21, "protocol version"),
    ],
    ids=["garbage", "garbage_ending_in_a_partial_magic", "partial_magic_inside", "version_payload"],
)
def test_a_dropped_stretch_split_inside_is_counted_once(dropped, cut, reason):
    whole = FrameReader()
    whole.feed(dropped + GOOD[0])
    assert decoded(list(whole.frames())) == [MESSAGES[0]]
    assert whole.dropped == Counter({reason: 1})
    split = FrameReader()
    split.feed(dropped[:cut])
    assert list(split.frames()) == []
    split.feed(dropped[cut:] + GOOD[0])
    assert decoded(list(split.frames())) == [MESSAGES[0]]
    assert split.dropped == Counter({reason: 1})
