"""Maxxum conversions: the observation to its three topics, the rig to /tf_static, each command
topic to a checked value (every refusal), and the MAXXUM_COMMAND the bridge assembles."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Twist
from std_msgs.msg import Float32, String
from wire.test_maxxum import SPEC_KEYS

from acres_bridge.convert.frame_names import frame_names
from acres_bridge.convert.maxxum import (
    MAX_CURVATURE_1PM,
    Guidance,
    Settings,
    curvature,
    fraction,
    guidance_from_twist,
    implement_controls,
    implement_state_json,
    maxxum_command,
    observation_messages,
    rig_transforms,
    speed,
)
from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire import FrameReader, SensorMount, decode, encode
from acres_bridge.wire.maxxum import (
    Difflock,
    HitchMode,
    ImplementControls,
    MaxxumCommand,
    MaxxumObservation,
)

OBSERVATION = MaxxumObservation(
    step=4199,
    stamp_ns=34_991_666_666,
    implement="chisel_plow",
    implement_depth_m=0.175349,
    pto_kw=1.23456,
    pto_on=True,
    pto_rpm=489.96,
    hitch_lever=0.2351,
    hitch_lift_deg=3.7149,
    hitch_mode=HitchMode.DRAFT,
    raised=False,
    draft_n=18_250.549,
    difflock=Difflock.REAR,
    engine_rpm=796.3,
    stale=False,
    steering_angle_rad=-0.12,
)
MAX_SPEED = 11.0


def twist(x: float, z: float) -> Twist:
    message = Twist()
    message.linear.x, message.angular.z = x, z
    return message


# ---- state ---------------------------------------------------------------------------------------


def test_implement_state_has_the_spec_keys_in_order_with_the_rounded_values() -> None:
    text = implement_state_json(OBSERVATION)
    state = json.loads(text)
    assert tuple(state) == SPEC_KEYS
    assert state == {
        "implement": "chisel_plow",
        "implement_depth_m": 0.1753,
        "pto_kw": 1.23,
        "pto_on": True,
        "pto_rpm": 490.0,
        "hitch_lever": 0.235,
        "hitch_lift_deg": 3.71,
        "hitch_mode": "draft",
        "raised": False,
        "draft_n": 18250.5,
        "difflock": 1,
        "rpm": 796.3,
        "stale": False,
    }
    assert text.startswith('{"implement": "chisel_plow", "implement_depth_m": 0.1753, "pto_kw": 1.23')


def test_a_negative_zero_is_written_as_zero() -> None:
    state = json.loads(implement_state_json(replace(OBSERVATION, hitch_lift_deg=-0.001)))
    assert str(state["hitch_lift_deg"]) == "0.0"


def test_the_observation_gives_engine_rpm_steering_angle_and_implement_state() -> None:
    m = observation_messages(OBSERVATION)
    assert isinstance(m.engine_rpm, Float32)
    assert m.engine_rpm.data == pytest.approx(796.3)
    assert m.steering_angle.data == pytest.approx(-0.12)  # rad, right of straight
    assert isinstance(m.implement_state, String)
    assert json.loads(m.implement_state.data)["rpm"] == 796.3


def mount(frame: str, xyz: tuple[float, float, float], *, parent: str = "base_footprint", kind: str = "frame",
          rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> SensorMount:  # fmt: skip
    return SensorMount(
        name=frame, kind=kind, frame=frame, parent=parent, xyz_m=xyz, rpy_rad=rpy, rate_hz=0.0, settings={}
    )


HALF_PI = 0.5 * math.pi
RIG = (
    mount("lidar", (1.0, 0.0, 3.0), kind="lidar"),
    mount("camera", (1.2, 0.0, 2.9), kind="camera"),
    mount("camera_optical", (0.0, 0.0, 0.0), parent="camera", rpy=(-HALF_PI, 0.0, -HALF_PI)),
    mount("imu_link", (0.5, 0.0, 1.2), kind="ins"),
    mount("gnss_link", (0.5, 0.0, 3.1)),
)


@pytest.mark.parametrize(("prefix", "p"), [("", ""), ("maxxum2/", "maxxum2/")])
def test_the_rig_gives_every_mount_with_the_frame_prefix(prefix: str, p: str) -> None:
    transforms = rig_transforms(
        RIG, frames=frame_names(vehicle="maxxum", frame_prefix=prefix), stamp=Time(sec=3)
    )
    pairs = [(t.header.frame_id, t.child_frame_id) for t in transforms]
    assert pairs == [
        (f"{p}base_footprint", f"{p}lidar"),
        (f"{p}base_footprint", f"{p}camera"),
        (f"{p}camera", f"{p}camera_optical"),
        (f"{p}base_footprint", f"{p}imu_link"),
        (f"{p}base_footprint", f"{p}gnss_link"),
    ]
    assert all(t.header.stamp.sec == 3 for t in transforms)
    gnss = transforms[4].transform
    assert (gnss.translation.x, gnss.translation.y, gnss.translation.z) == (0.5, 0.0, 3.1)
    assert (gnss.rotation.x, gnss.rotation.y, gnss.rotation.z, gnss.rotation.w) == (0.0, 0.0, 0.0, 1.0)
    # The optical frame: z forward, x right, y down; its quaternion is (-0.5, 0.5, -0.5, 0.5).
    q = transforms[2].transform.rotation
    assert (q.x, q.y, q.z, q.w) == pytest.approx((-0.5, 0.5, -0.5, 0.5))


@pytest.mark.parametrize(
    ("rig", "match"),
    [
        (
            (*RIG, mount("lidar", (0.0, 0.0, 0.0))),
            r"rig mount 'lidar': frame 'lidar' is empty, the root or repeated",
        ),
        ((mount("x", (0.0, 0.0, 0.0), parent="nowhere"),), r"parent 'nowhere' is neither base_footprint"),
        ((mount("x", (math.nan, 0.0, 0.0)),), r"rig mount 'x': pose \(nan, 0.0, 0.0\)"),
    ],
    ids=["repeated-frame", "unknown-parent", "nan-pose"],
)
def test_a_rig_that_is_no_tree_is_refused(rig: tuple[SensorMount, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rig_transforms(rig, frames=frame_names(vehicle="maxxum"), stamp=Time())


# ---- command topics ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "z", "expected"),
    [
        (2.0, 0.1, Guidance(2.0, 0.05)),  # the spec's example: 0.1 rad/s at 2 m/s
        (2.0, -0.1, Guidance(2.0, -0.05)),  # right
        (-1.0, 0.3, Guidance(0.0, 0.0)),  # negative speed: straight and the full brake
        (0.0, 0.02, Guidance(0.0, 0.2)),  # yaw rate at 0 m/s: divided by 0.1 m/s
        (0.05, 0.01, Guidance(0.05, 0.1)),  # below 0.1 m/s too
        (50.0, 0.0, Guidance(MAX_SPEED, 0.0)),  # the speed capped at max_speed_mps
        (1.0, 2.0, Guidance(1.0, MAX_CURVATURE_1PM)),  # the curvature clamped to 0.5 1/m
        (1.0, -2.0, Guidance(1.0, -MAX_CURVATURE_1PM)),
    ],
    ids=["spec", "right", "negative", "zero-speed", "slow", "speed-cap", "left-clamp", "right-clamp"],
)
def test_cmd_vel_gives_the_speed_and_the_curvature(x: float, z: float, expected: Guidance) -> None:
    got = guidance_from_twist(twist(x, z), max_speed_mps=MAX_SPEED)
    assert got.speed_mps == pytest.approx(expected.speed_mps)
    assert got.curvature_1pm == pytest.approx(expected.curvature_1pm)


@pytest.mark.parametrize(
    ("x", "z", "match"),
    [
        (math.nan, 0.0, r"cmd_vel: linear.x must be finite, found nan"),
        (math.inf, 0.0, r"cmd_vel: linear.x must be finite, found inf"),
        (1.0, -math.inf, r"cmd_vel: angular.z must be finite, found -inf"),
    ],
)
def test_cmd_vel_with_nan_or_inf_is_refused(x: float, z: float, match: str) -> None:
    with pytest.raises(CommandRefusedError, match=match):
        guidance_from_twist(twist(x, z), max_speed_mps=MAX_SPEED)


@pytest.mark.parametrize(("value", "expected"), [(0.05, 0.05), (-0.2, -0.2), (3.0, 0.5), (-0.6, -0.5)])
def test_the_curvature_is_clamped_to_0_5(value: float, expected: float) -> None:
    assert curvature(Float32(data=value)) == pytest.approx(expected)


@pytest.mark.parametrize(("value", "expected"), [(2.0, 2.0), (-1.0, 0.0), (99.0, MAX_SPEED), (0.0, 0.0)])
def test_the_speed_is_clamped_to_0_and_max_speed(value: float, expected: float) -> None:
    assert speed(Float32(data=value), max_speed_mps=MAX_SPEED) == pytest.approx(expected)


@pytest.mark.parametrize(("value", "expected"), [(0.25, 0.25), (-0.5, 0.0), (1.5, 1.0)])
def test_a_fraction_is_clamped_to_0_1(value: float, expected: float) -> None:
    assert fraction("hitch/lever_cmd", Float32(data=value)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("convert", "topic"),
    [
        (curvature, "guidance/curvature_cmd"),
        (lambda m: speed(m, max_speed_mps=MAX_SPEED), "speed_cmd"),
        (lambda m: fraction("hitch/lever_cmd", m), "hitch/lever_cmd"),
        (lambda m: fraction("hand_throttle_cmd", m), "hand_throttle_cmd"),
    ],
    ids=["curvature", "speed", "lever", "hand-throttle"],
)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_float_command_with_nan_or_inf_is_refused_naming_the_topic(
    convert: Any, topic: str, value: float
) -> None:
    with pytest.raises(CommandRefusedError, match=f"^{topic}: data must be finite, found"):
        convert(Float32(data=value))


def test_implement_cmd_sets_its_keys_and_keeps_the_others() -> None:
    current = ImplementControls(hitch_mode=HitchMode.POSITION, depth_stop_m=0.2)
    mode = implement_controls(String(data='{"hitch_mode": "float"}'), current)
    assert mode == ImplementControls(hitch_mode=HitchMode.FLOAT, depth_stop_m=0.2)
    both = implement_controls(String(data='{"hitch_mode": "draft", "depth_stop_m": 0.15}'), mode)
    assert both == ImplementControls(hitch_mode=HitchMode.DRAFT, depth_stop_m=0.15)
    assert implement_controls(String(data="{}"), both) == both


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "{hitch_mode: float",
            r"implement/cmd: payload is not a UTF-8 JSON object \(Expecting property name",
        ),
        ("", r"implement/cmd: payload is not a UTF-8 JSON object"),
        ('["float"]', r"implement/cmd: payload must be a JSON object, found list"),
        ('{"hitch": "float"}', r"implement/cmd: unknown field\(s\) hitch; known: depth_stop_m, hitch_mode"),
        ('{"hitch_mode": "auto"}', r"implement/cmd: field 'hitch_mode' must be one of"),
        ('{"depth_stop_m": 1.5}', r"implement/cmd: field 'depth_stop_m' must be in 0 .. 1, found 1.5"),
        ('{"depth_stop_m": true}', r"implement/cmd: field 'depth_stop_m'"),
        ('{"depth_stop_m": NaN}', r"implement/cmd: field 'depth_stop_m'"),
    ],
    ids=["broken", "empty", "array", "unknown-key", "bad-mode", "too-deep", "bool", "nan"],
)
def test_a_bad_implement_cmd_is_refused_with_the_reason(text: str, match: str) -> None:
    with pytest.raises(CommandRefusedError, match=match):
        implement_controls(String(data=text), ImplementControls())


# ---- the command ---------------------------------------------------------------------------------


def test_controls_that_no_topic_set_follow_the_tractor_and_the_parked_values() -> None:
    command = maxxum_command(
        curvature_1pm=0.05, pedal=0.4, brake=0.0, settings=Settings(), observed=OBSERVATION
    )
    assert command == MaxxumCommand(
        seq=0,
        curvature_1pm=0.05,
        pedal=0.4,
        brake=0.0,
        hand_throttle=0.0,
        hitch_lever=OBSERVATION.hitch_lever,  # as the tractor has it (set over CAN, say)
        hitch_raise=True,  # the parked tractor's: raised
        pto_on=True,
        difflock=Difflock.REAR,  # always the tractor's: no topic sets it
        implement=ImplementControls(),
    )


def test_before_any_observation_the_command_carries_the_parked_tractor() -> None:
    command = maxxum_command(curvature_1pm=0.0, pedal=0.0, brake=1.0, settings=Settings(), observed=None)
    assert (command.hitch_lever, command.hitch_raise, command.pto_on, command.difflock) == (
        0.0,
        True,
        False,
        Difflock.OPEN,
    )


def test_the_topics_settings_win_and_the_command_goes_through_the_wire() -> None:
    settings = Settings(
        hand_throttle=0.3,
        hitch_lever=0.6,
        hitch_raise=False,
        pto_on=False,
        implement=ImplementControls(hitch_mode=HitchMode.FLOAT),
    )
    command = maxxum_command(
        curvature_1pm=0.9, pedal=1.2, brake=-0.1, settings=settings, observed=OBSERVATION
    )
    assert (command.curvature_1pm, command.pedal, command.brake) == (0.5, 1.0, 0.0)  # clamped
    assert (command.hand_throttle, command.hitch_lever, command.hitch_raise, command.pto_on) == (
        0.3,
        0.6,
        False,
        False,
    )
    sent = replace(command, seq=1)
    assert decode_frame(encode(sent)) == sent


def decode_frame(data: bytes) -> object:
    reader = FrameReader()
    reader.feed(data)
    (frame,) = reader.frames()
    return decode(frame)
