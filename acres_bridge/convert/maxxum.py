"""Maxxum conversions, pure: no node, no I/O (spec: State and Commands of the Maxxum).

State: a MAXXUM_OBSERVATION becomes engine_rpm (r/min), steering_angle (rad, positive left) and
implement/state (JSON: the spec's 13 keys in its order); the sensor rig (SENSOR_META) becomes the
static transforms base_footprint -> lidar, camera, imu_link, gnss_link and camera -> camera_optical.

Commands: each command topic's message becomes a checked value, or CommandRefusedError naming the
topic, the field and the value (NaN, infinity, malformed JSON, an unknown implement key). Values
beyond a range are clamped to it: the speed to 0 .. max_speed_mps, the curvature to +-0.5 1/m,
the fractions to 0 .. 1. ``maxxum_command`` assembles the MAXXUM_COMMAND the bridge sends.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from std_msgs.msg import Float32, String

from acres_bridge.convert.frame_names import FrameNames
from acres_bridge.convert.rig import check_rig, mount_transforms
from acres_bridge.errors import CommandRefusedError
from acres_bridge.geo.scalar import clamp
from acres_bridge.wire import ProtocolError, SensorMount
from acres_bridge.wire.json_fields import json_object
from acres_bridge.wire.maxxum import (
    MAX_CURVATURE_1PM,
    Difflock,
    ImplementControls,
    MaxxumCommand,
    MaxxumObservation,
    decode_implement_controls,
)

__all__ = [
    "MAX_CURVATURE_1PM",
    "MIN_YAW_RATE_SPEED_MPS",
    "STATE_DECIMALS",
    "Guidance",
    "ObservationMessages",
    "Settings",
    "curvature",
    "fraction",
    "guidance_from_twist",
    "implement_controls",
    "implement_state_json",
    "maxxum_command",
    "observation_messages",
    "rig_transforms",
    "speed",
]

MIN_YAW_RATE_SPEED_MPS: Final = 0.1  # cmd_vel: the least speed the yaw rate is divided by

# implement/state rounds its numbers to the resolution of the spec's example (0.1 mm of depth,
# 0.01 deg of lift), which is finer than the CAN signals carry.
STATE_DECIMALS: Final = {
    "implement_depth_m": 4,
    "pto_kw": 2,
    "pto_rpm": 1,
    "hitch_lever": 3,
    "hitch_lift_deg": 2,
    "draft_n": 1,
    "rpm": 1,
}


# ---- state ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ObservationMessages:
    """The three topics of one observation."""

    engine_rpm: Float32
    steering_angle: Float32
    implement_state: String


def implement_state_json(observation: MaxxumObservation) -> str:
    """implement/state: the spec's 13 keys in its order, numbers rounded as STATE_DECIMALS says."""
    state: dict[str, Any] = observation.implement_state()
    for key, decimals in STATE_DECIMALS.items():
        state[key] = round(float(state[key]), decimals) + 0.0  # + 0.0: no "-0.0"
    return json.dumps(state)


def observation_messages(observation: MaxxumObservation) -> ObservationMessages:
    """engine_rpm (r/min), steering_angle (rad, positive left) and implement/state of an observation."""
    return ObservationMessages(
        engine_rpm=Float32(data=observation.engine_rpm),
        steering_angle=Float32(data=observation.steering_angle_rad),
        implement_state=String(data=implement_state_json(observation)),
    )


def rig_transforms(
    sensors: Sequence[SensorMount], *, frames: FrameNames, stamp: Time
) -> list[TransformStamped]:
    """A static transform parent -> frame for every mount of the rig, with the vehicle's frame prefix.

    Raises ValueError, naming the mount, for a rig that is not a tree below base_footprint.
    """
    check_rig(sensors)
    return mount_transforms(sensors, frames=frames, stamp=stamp)


# ---- commands ------------------------------------------------------------------------------------


def _finite(topic: str, field: str, value: float) -> float:
    if not math.isfinite(value):
        raise CommandRefusedError(f"{topic}: {field} must be finite, found {value}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Guidance:
    """A guidance command: the speed set point (m/s) and the path curvature (1/m, positive left)."""

    speed_mps: float
    curvature_1pm: float


def guidance_from_twist(message: Any, *, max_speed_mps: float) -> Guidance:
    """The guidance of a cmd_vel Twist: linear.x the speed, angular.z / speed the curvature.

    A negative speed is a stop: zero curvature and the full brake (set point 0). The speed is capped
    at max_speed_mps; the yaw rate is divided by at least MIN_YAW_RATE_SPEED_MPS; the curvature is
    clamped to +-MAX_CURVATURE_1PM. CommandRefusedError for a NaN or infinite linear.x or angular.z.
    """
    speed_mps = _finite("cmd_vel", "linear.x", message.linear.x)
    yaw_rate = _finite("cmd_vel", "angular.z", message.angular.z)
    if speed_mps < 0.0:
        return Guidance(speed_mps=0.0, curvature_1pm=0.0)
    speed_mps = min(speed_mps, max_speed_mps)
    curvature_1pm = yaw_rate / max(speed_mps, MIN_YAW_RATE_SPEED_MPS)
    return Guidance(speed_mps, clamp(curvature_1pm, -MAX_CURVATURE_1PM, MAX_CURVATURE_1PM))


def curvature(message: Any) -> float:
    """guidance/curvature_cmd in 1/m, clamped to +-MAX_CURVATURE_1PM; CommandRefusedError if not finite."""
    value = _finite("guidance/curvature_cmd", "data", message.data)
    return clamp(value, -MAX_CURVATURE_1PM, MAX_CURVATURE_1PM)


def speed(message: Any, *, max_speed_mps: float) -> float:
    """speed_cmd in m/s, clamped to 0 .. max_speed_mps; CommandRefusedError if not finite."""
    return clamp(_finite("speed_cmd", "data", message.data), 0.0, max_speed_mps)


def fraction(topic: str, message: Any) -> float:
    """A Float32 command of 0 .. 1 (hitch/lever_cmd, hand_throttle_cmd), clamped; refused if not finite."""
    return clamp(_finite(topic, "data", message.data), 0.0, 1.0)


def implement_controls(message: Any, current: ImplementControls) -> ImplementControls:
    """``current`` with the controls that an implement/cmd JSON object sets (a missing key keeps its value).

    CommandRefusedError for text that is not a JSON object, an unknown key, or a bad value.
    """
    try:
        controls = decode_implement_controls(json_object("implement/cmd", message.data), what="implement/cmd")
    except ProtocolError as error:
        raise CommandRefusedError(str(error)) from None
    if controls.hitch_mode is not None:
        current = replace(current, hitch_mode=controls.hitch_mode)
    if controls.depth_stop_m is not None:
        current = replace(current, depth_stop_m=controls.depth_stop_m)
    return current


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The controls besides the drive and the steering, as the command topics last set them.

    None means that no topic has set the control: hitch_lever and pto_on then follow the tractor's
    last observation (so frames on can/tx can set them), hitch_raise and hand_throttle keep the
    parked tractor's values (raised, 0); the differential locks always follow the tractor.
    """

    hand_throttle: float | None = None
    hitch_lever: float | None = None
    hitch_raise: bool | None = None
    pto_on: bool | None = None
    implement: ImplementControls = field(default_factory=ImplementControls)


def maxxum_command(
    *,
    curvature_1pm: float,
    pedal: float,
    brake: float,
    settings: Settings,
    observed: MaxxumObservation | None,
) -> MaxxumCommand:
    """The MAXXUM_COMMAND of the controls (seq 0: the ingest numbers commands when it sends them).

    ``pedal`` and ``brake`` (0 .. 1) come from the speed controller; ``observed`` is the tractor's
    last observation (None before the first), which the controls that no topic has set follow.
    """
    lever = settings.hitch_lever
    if lever is None:
        lever = observed.hitch_lever if observed is not None else 0.0
    pto_on = settings.pto_on
    if pto_on is None:
        pto_on = observed.pto_on if observed is not None else False
    return MaxxumCommand(
        seq=0,
        curvature_1pm=clamp(curvature_1pm, -MAX_CURVATURE_1PM, MAX_CURVATURE_1PM),
        pedal=clamp(pedal, 0.0, 1.0),
        brake=clamp(brake, 0.0, 1.0),
        hand_throttle=settings.hand_throttle if settings.hand_throttle is not None else 0.0,
        hitch_lever=lever,
        hitch_raise=settings.hitch_raise if settings.hitch_raise is not None else True,
        pto_on=pto_on,
        difflock=observed.difflock if observed is not None else Difflock.OPEN,
        implement=settings.implement,
    )
