"""MAXXUM_OBSERVATION and MAXXUM_COMMAND: round trips, implement/state keys, every refusal, fuzz."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acres_bridge.wire import DECODERS, FrameKind, FrameReader, ProtocolError, decode, encode, encode_frame
from acres_bridge.wire.json_fields import MAX_STAMP_NS
from acres_bridge.wire.maxxum import (
    IMPLEMENT_STATE_KEYS,
    MAX_CURVATURE_1PM,
    MAX_DEPTH_STOP_M,
    OBSERVATION_RANGES,
    Difflock,
    HitchMode,
    ImplementControls,
    MaxxumCommand,
    MaxxumObservation,
    decode_implement_controls,
    decode_maxxum_command,
    decode_maxxum_observation,
)

FUZZ = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# The keys of implement/state in the spec's table, in its order.
SPEC_KEYS = (
    "implement",
    "implement_depth_m",
    "pto_kw",
    "pto_on",
    "pto_rpm",
    "hitch_lever",
    "hitch_lift_deg",
    "hitch_mode",
    "raised",
    "draft_n",
    "difflock",
    "rpm",
    "stale",
)

OBSERVATION = MaxxumObservation(
    step=4199,
    stamp_ns=34_991_666_666,
    implement="chisel_plow",
    implement_depth_m=0.1753,
    pto_kw=0.0,
    pto_on=False,
    pto_rpm=0.0,
    hitch_lever=0.235,
    hitch_lift_deg=3.71,
    hitch_mode=HitchMode.DRAFT,
    raised=False,
    draft_n=18_250.5,
    difflock=Difflock.REAR,
    engine_rpm=796.3,
    stale=False,
    steering_angle_rad=-0.12,
)
COMMAND = MaxxumCommand(
    seq=17,
    curvature_1pm=0.05,
    pedal=0.4,
    brake=0.0,
    hand_throttle=0.25,
    hitch_lever=0.3,
    hitch_raise=False,
    pto_on=True,
    difflock=Difflock.REAR_AND_FRONT,
    implement=ImplementControls(hitch_mode=HitchMode.FLOAT, depth_stop_m=0.18),
)


def payload(message: object) -> bytes:
    return encode(message)[16:]


def as_json(message: object) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(payload(message))
    return data


def dumps(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()


def read_one(data: bytes) -> object:
    reader = FrameReader()
    reader.feed(data)
    frames = list(reader.frames())
    assert len(frames) == 1
    return decode(frames[0])


# ---- round trips ----------------------------------------------------------------------------------


def test_registered_with_their_frame_kinds():
    assert DECODERS[FrameKind.MAXXUM_OBSERVATION] is decode_maxxum_observation
    assert DECODERS[FrameKind.MAXXUM_COMMAND] is decode_maxxum_command
    assert encode(OBSERVATION)[6:8] == (50).to_bytes(2, "little")
    assert encode(COMMAND)[6:8] == (51).to_bytes(2, "little")


@pytest.mark.parametrize("message", [OBSERVATION, COMMAND], ids=["observation", "command"])
def test_round_trip_through_a_frame(message):
    assert read_one(encode(message)) == message


@pytest.mark.parametrize("mode", list(HitchMode))
@pytest.mark.parametrize("difflock", list(Difflock))
def test_round_trip_every_mode_and_difflock(mode, difflock):
    observation = replace(OBSERVATION, hitch_mode=mode, difflock=difflock)
    command = replace(COMMAND, difflock=difflock, implement=ImplementControls(hitch_mode=mode))
    assert decode_maxxum_observation(payload(observation)) == observation
    assert decode_maxxum_command(payload(command)) == command


@pytest.mark.parametrize(
    "implement",
    [
        ImplementControls(),
        ImplementControls(depth_stop_m=0.0),
        ImplementControls(hitch_mode=HitchMode.POSITION),
    ],
)
def test_implement_controls_carry_only_what_is_set(implement):
    command = replace(COMMAND, implement=implement)
    sent = as_json(command)["implement"]
    assert sent == {
        k: v
        for k, v in {"hitch_mode": implement.hitch_mode, "depth_stop_m": implement.depth_stop_m}.items()
        if v is not None
    }
    assert decode_maxxum_command(payload(command)).implement == implement


def test_json_field_names():
    assert list(as_json(COMMAND)) == [
        "seq",
        "curvature_1pm",
        "pedal",
        "brake",
        "hand_throttle",
        "hitch_lever",
        "hitch_raise",
        "pto_on",
        "difflock",
        "implement",
    ]
    assert set(as_json(OBSERVATION)) == {"step", "stamp_ns", "engine_rpm", "steering_angle_rad"} | (
        set(SPEC_KEYS) - {"rpm"}
    )
    assert as_json(OBSERVATION)["hitch_mode"] == "draft"
    assert as_json(OBSERVATION)["difflock"] == 1


def test_implement_state_has_the_spec_keys_in_order():
    state = OBSERVATION.implement_state()
    assert tuple(state) == SPEC_KEYS == IMPLEMENT_STATE_KEYS
    assert state["rpm"] == 796.3
    assert state["hitch_mode"] == "draft"
    assert type(state["hitch_mode"]) is str
    assert type(state["difflock"]) is int
    assert json.loads(json.dumps(state)) == state


observations = st.builds(
    MaxxumObservation,
    step=st.integers(0, (1 << 64) - 1),
    stamp_ns=st.integers(0, MAX_STAMP_NS),
    implement=st.text(min_size=1, max_size=64),
    implement_depth_m=st.floats(*OBSERVATION_RANGES["implement_depth_m"]),
    pto_kw=st.floats(*OBSERVATION_RANGES["pto_kw"]),
    pto_on=st.booleans(),
    pto_rpm=st.floats(*OBSERVATION_RANGES["pto_rpm"]),
    hitch_lever=st.floats(0.0, 1.0),
    hitch_lift_deg=st.floats(*OBSERVATION_RANGES["hitch_lift_deg"]),
    hitch_mode=st.sampled_from(HitchMode),
    raised=st.booleans(),
    draft_n=st.floats(*OBSERVATION_RANGES["draft_n"]),
    difflock=st.sampled_from(Difflock),
    engine_rpm=st.floats(*OBSERVATION_RANGES["engine_rpm"]),
    stale=st.booleans(),
    steering_angle_rad=st.floats(*OBSERVATION_RANGES["steering_angle_rad"]),
)
commands = st.builds(
    MaxxumCommand,
    seq=st.integers(1, (1 << 64) - 1),
    curvature_1pm=st.floats(-MAX_CURVATURE_1PM, MAX_CURVATURE_1PM),
    pedal=st.floats(0.0, 1.0),
    brake=st.floats(0.0, 1.0),
    hand_throttle=st.floats(0.0, 1.0),
    hitch_lever=st.floats(0.0, 1.0),
    hitch_raise=st.booleans(),
    pto_on=st.booleans(),
    difflock=st.sampled_from(Difflock),
    implement=st.builds(
        ImplementControls,
        hitch_mode=st.none() | st.sampled_from(HitchMode),
        depth_stop_m=st.none() | st.floats(0.0, MAX_DEPTH_STOP_M),
    ),
)


@FUZZ
@given(message=observations | commands)
def test_round_trip_property(message):
    assert read_one(encode(message)) == message


# ---- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("decoder", [decode_maxxum_observation, decode_maxxum_command])
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\xff\xfe", r"payload is not a UTF-8 JSON object"),
        (b"{", r"payload is not a UTF-8 JSON object"),
        (b"[1, 2]", r"payload must be a JSON object, found list"),
        (b"9" * 5000, r"payload is not a UTF-8 JSON object \(Exceeds the limit"),  # Python's int digit limit
        (b"[" * 100_000, r"payload of 100000 bytes; at most 65536 are taken"),
        (b"[" * 60_000, r"payload is not a UTF-8 JSON object \(nested too deeply\)"),
        (b'{"a": "' + b"x" * 70_000 + b'"}', r"payload of 70009 bytes; at most 65536 are taken"),
    ],
    ids=["not-utf8", "truncated", "a-list", "huge-integer", "long-nesting", "deep-nesting", "too-long"],
)
def test_refuses_a_payload_that_is_no_json_object(decoder, raw, message):
    with pytest.raises(ProtocolError, match=message):
        decoder(raw)


@pytest.mark.parametrize(
    ("message", "what", "key"),
    [
        *((OBSERVATION, "MAXXUM_OBSERVATION", key) for key in as_json(OBSERVATION)),
        *((COMMAND, "MAXXUM_COMMAND", key) for key in as_json(COMMAND)),
    ],
)
def test_refuses_a_missing_field(message, what, key):
    data = as_json(message)
    del data[key]
    with pytest.raises(ProtocolError, match=rf"{what}: missing field '{key}'"):
        DECODERS[FrameKind[what]](dumps(data))


@pytest.mark.parametrize(
    ("message", "what"), [(OBSERVATION, "MAXXUM_OBSERVATION"), (COMMAND, "MAXXUM_COMMAND")]
)
def test_refuses_an_unknown_field(message, what):
    data = as_json(message) | {"speed_mps": 1.0, "gear": 3}
    with pytest.raises(ProtocolError, match=rf"{what}: unknown field\(s\) gear, speed_mps; known: "):
        DECODERS[FrameKind[what]](dumps(data))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("pedal", "0.5", r"field 'pedal' must be int/float, found '0.5'"),
        ("pedal", True, r"field 'pedal' must be int/float, found True"),
        ("pedal", None, r"field 'pedal' must be int/float, found None"),
        ("hitch_raise", 1, r"field 'hitch_raise' must be bool, found 1"),
        ("pto_on", "true", r"field 'pto_on' must be bool, found 'true'"),
        ("difflock", 1.0, r"field 'difflock' must be int, found 1.0"),
        ("difflock", 3, r"field 'difflock' must be 0 \(open\), 1 \(rear\) or 2 \(rear and front\), found 3"),
        ("difflock", -1, r"field 'difflock' must be 0 \(open\), 1 \(rear\) or 2"),
        ("seq", 0, r"seq starts at 1, found 0"),
        ("seq", -1, r"field 'seq' must be a 64-bit unsigned integer, found -1"),
        ("seq", 1 << 64, r"field 'seq' must be a 64-bit unsigned integer"),
        ("seq", 1.5, r"field 'seq' must be int, found 1.5"),
        ("curvature_1pm", 0.5001, r"field 'curvature_1pm' must be in -0.5 \.\. 0.5, found 0.5001"),
        ("curvature_1pm", -0.51, r"field 'curvature_1pm' must be in -0.5 \.\. 0.5, found -0.51"),
        ("brake", 1.01, r"field 'brake' must be in 0 \.\. 1, found 1.01"),
        ("hand_throttle", -0.01, r"field 'hand_throttle' must be in 0 \.\. 1, found -0.01"),
        ("hitch_lever", 2, r"field 'hitch_lever' must be in 0 \.\. 1, found 2"),
        ("pedal", 10**400, r"field 'pedal' is too large for a float"),
        ("implement", [], r"field 'implement' must be dict, found \[\]"),
        (
            "implement",
            {"mode": "draft"},
            r"MAXXUM_COMMAND implement: unknown field\(s\) mode; known: depth_stop_m",
        ),
        (
            "implement",
            {"hitch_mode": "auto"},
            r"field 'hitch_mode' must be one of position, draft, float, found 'auto'",
        ),
        ("implement", {"hitch_mode": 1}, r"field 'hitch_mode' must be str, found 1"),
        ("implement", {"depth_stop_m": 1.5}, r"field 'depth_stop_m' must be in 0 \.\. 1, found 1.5"),
        ("implement", {"depth_stop_m": -0.1}, r"field 'depth_stop_m' must be in 0 \.\. 1, found -0.1"),
    ],
)
def test_command_refuses_a_bad_value(key, value, message):
    data = as_json(COMMAND) | {key: value}
    with pytest.raises(ProtocolError, match=message):
        decode_maxxum_command(dumps(data))


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize(
    ("message", "key"), [(COMMAND, "pedal"), (COMMAND, "curvature_1pm"), (OBSERVATION, "draft_n")]
)
def test_refuses_a_number_that_is_not_finite(message, key, token):
    text = json.dumps(as_json(message) | {key: 12345.5}).replace("12345.5", token)
    with pytest.raises(ProtocolError, match=rf"field '{key}' must be finite"):
        DECODERS[FrameKind.MAXXUM_COMMAND if message is COMMAND else FrameKind.MAXXUM_OBSERVATION](
            text.encode()
        )


@pytest.mark.parametrize(("key", "bounds"), sorted(OBSERVATION_RANGES.items()))
@pytest.mark.parametrize("side", ["below", "above"])
def test_observation_refuses_a_number_out_of_its_range(key, bounds, side):
    low, high = bounds
    value = low - 0.001 - abs(low) * 1e-6 if side == "below" else high + 0.001 + abs(high) * 1e-6
    data = as_json(OBSERVATION) | {key: value}
    with pytest.raises(ProtocolError, match=rf"MAXXUM_OBSERVATION: field '{key}' must be in "):
        decode_maxxum_observation(dumps(data))


@pytest.mark.parametrize(("key", "bounds"), sorted(OBSERVATION_RANGES.items()))
def test_observation_accepts_the_ends_of_each_range(key, bounds):
    for value in bounds:
        data = as_json(OBSERVATION) | {key: value}
        assert getattr(decode_maxxum_observation(dumps(data)), key) == value


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("implement", "", r"field 'implement' must be 1 \.\. 64 characters, found ''"),
        ("implement", "x" * 65, r"field 'implement' must be 1 \.\. 64 characters"),
        ("implement", 3, r"field 'implement' must be str, found 3"),
        (
            "hitch_mode",
            "Position",
            r"field 'hitch_mode' must be one of position, draft, float, found 'Position'",
        ),
        ("raised", 0, r"field 'raised' must be bool, found 0"),
        ("stale", None, r"field 'stale' must be bool, found None"),
        ("difflock", 2.0, r"field 'difflock' must be int, found 2.0"),
        ("step", -5, r"field 'step' must be a 64-bit unsigned integer, found -5"),
        ("stamp_ns", -1, r"stamp_ns must be in 0 \.\. \d+ \(int32 seconds\), found -1"),
        ("stamp_ns", MAX_STAMP_NS + 1, r"stamp_ns must be in 0 \.\. \d+ \(int32 seconds\)"),
        ("stamp_ns", "1", r"field 'stamp_ns' must be int, found '1'"),
    ],
)
def test_observation_refuses_a_bad_value(key, value, message):
    data = as_json(OBSERVATION) | {key: value}
    with pytest.raises(ProtocolError, match=message):
        decode_maxxum_observation(dumps(data))


def test_decode_implement_controls_of_an_implement_cmd_object():
    assert decode_implement_controls({"hitch_mode": "float", "depth_stop_m": 0}) == ImplementControls(
        hitch_mode=HitchMode.FLOAT, depth_stop_m=0.0
    )
    assert decode_implement_controls({}) == ImplementControls()


@pytest.mark.parametrize("data", [[], "draft", 3, None])
def test_decode_implement_controls_refuses_anything_but_an_object(data):
    with pytest.raises(ProtocolError, match=r"implement controls: must be a JSON object, found "):
        decode_implement_controls(data)


# ---- fuzz: nothing but ProtocolError escapes ------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


def decode_or_refuse(kind: FrameKind, raw: bytes) -> object | None:
    try:
        return decode(read_frame(kind, raw))
    except ProtocolError:
        return None


def read_frame(kind: FrameKind, raw: bytes) -> Any:
    reader = FrameReader()
    reader.feed(encode_frame(kind, raw))
    return next(reader.frames())


kinds = st.sampled_from([FrameKind.MAXXUM_OBSERVATION, FrameKind.MAXXUM_COMMAND])


@FUZZ
@given(kind=kinds, raw=st.binary(max_size=300))
def test_random_payloads_only_raise_protocol_error(kind, raw):
    decode_or_refuse(kind, raw)


@FUZZ
@given(
    kind=kinds,
    changes=st.dictionaries(st.sampled_from([*SPEC_KEYS, "seq", "pedal", "implement", "step"]), json_values),
)
def test_valid_objects_with_random_fields_decode_or_are_refused(kind, changes):
    base = as_json(OBSERVATION if kind is FrameKind.MAXXUM_OBSERVATION else COMMAND)
    decoded = decode_or_refuse(kind, json.dumps(base | changes).encode())
    if decoded is not None:
        assert read_one(encode(decoded)) == decoded
        for value in vars(decoded).values():
            assert not (isinstance(value, float) and not math.isfinite(value))
