"""The Maxxum messages of the vehicle channel: the observation (10 Hz) and the tractor commands.

MAXXUM_OBSERVATION (simulator to bridge) carries what the bridge publishes as implement/state,
engine_rpm and steering_angle; the odometry comes from the INS stream. MAXXUM_COMMAND (bridge to
simulator) carries every control of the tractor at once, numbered on the vehicle channel like
DBW_COMMAND: the simulator applies every command up to STEP_REQUEST's ``command_seqs[i]`` before
it steps. Both are JSON objects; docs/protocol.md has the fields, units and ranges. A decoder
refuses, with ProtocolError naming the field, a missing or unknown field, a wrong type, a value
that is not finite or out of its range.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any, Final

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.json_fields import get_field, json_object, non_negative, number, one_of, stamp_field

__all__ = [
    "IMPLEMENT_CONTROL_KEYS",
    "IMPLEMENT_STATE_KEYS",
    "MAX_CURVATURE_1PM",
    "MAX_DEPTH_STOP_M",
    "OBSERVATION_RANGES",
    "Difflock",
    "HitchMode",
    "ImplementControls",
    "MaxxumCommand",
    "MaxxumObservation",
    "decode_implement_controls",
    "decode_maxxum_command",
    "decode_maxxum_observation",
    "encode_maxxum_command",
    "encode_maxxum_observation",
    "maxxum_command_from_fields",
]


class HitchMode(StrEnum):
    """How the three-point hitch holds the implement."""

    POSITION = "position"  # the lift follows the lever
    DRAFT = "draft"  # the lift holds the draft force the lever sets
    FLOAT = "float"  # the implement rides on its depth stop (gauge wheels)


class Difflock(IntEnum):
    """The differential locks: the spec's implement/state difflock values."""

    OPEN = 0
    REAR = 1
    REAR_AND_FRONT = 2


# The keys of the spec's implement/state JSON, in its order; "rpm" is the engine speed.
IMPLEMENT_STATE_KEYS: Final = (
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
IMPLEMENT_CONTROL_KEYS: Final = ("hitch_mode", "depth_stop_m")
MAX_CURVATURE_1PM: Final = 0.5  # the spec's range of guidance/curvature_cmd
MAX_DEPTH_STOP_M: Final = 1.0
MAX_IMPLEMENT_NAME: Final = 64

# The (lowest, highest) value of each number of an observation.
OBSERVATION_RANGES: Final[Mapping[str, tuple[float, float]]] = {
    "implement_depth_m": (0.0, 2.0),
    "pto_kw": (0.0, 1000.0),
    "pto_rpm": (0.0, 2000.0),
    "hitch_lever": (0.0, 1.0),
    "hitch_lift_deg": (-90.0, 90.0),
    "draft_n": (-320_000.0, 322_550.0),  # the range of the ISO 11783-7 rear draft
    "engine_rpm": (0.0, 4000.0),
    "steering_angle_rad": (-0.5 * math.pi, 0.5 * math.pi),
}


@dataclass(frozen=True, kw_only=True)
class ImplementControls:
    """The controls of the implement/cmd JSON object; None (a missing key) keeps the current value.

    ``hitch_mode`` selects position, draft or float control of the hitch; ``depth_stop_m`` is the
    working depth at which the implement's depth stop (gauge wheels) carries it, 0 .. 1 m.
    """

    hitch_mode: HitchMode | None = None
    depth_stop_m: float | None = None

    def as_json_object(self) -> dict[str, Any]:
        """The JSON object: only the controls that are set."""
        data: dict[str, Any] = {}
        if self.hitch_mode is not None:
            data["hitch_mode"] = str(self.hitch_mode)
        if self.depth_stop_m is not None:
            data["depth_stop_m"] = self.depth_stop_m
        return data


@dataclass(frozen=True, kw_only=True)
class MaxxumCommand:
    """Every control of the tractor, numbered on its vehicle channel from 1 (``seq``).

    ``curvature_1pm`` the path curvature in 1/m, positive left, -0.5 .. 0.5; ``pedal``, ``brake``,
    ``hand_throttle`` and ``hitch_lever`` fractions 0 .. 1; ``hitch_raise`` true lifts the implement
    to transport, false lowers it to the lever's position; ``pto_on`` engages the rear PTO;
    ``difflock`` the differential locks; ``implement`` the implement controls (missing ones keep
    their value).
    """

    seq: int
    curvature_1pm: float
    pedal: float
    brake: float
    hand_throttle: float
    hitch_lever: float
    hitch_raise: bool
    pto_on: bool
    difflock: Difflock
    implement: ImplementControls = field(default_factory=ImplementControls)


@dataclass(frozen=True, kw_only=True)
class MaxxumObservation:
    """What the tractor shows each 0.1 s of simulation time, made by physics step ``step``.

    The fields of the spec's implement/state (``engine_rpm`` is its "rpm") plus the steering angle
    of the front wheels (rad, positive left). Units are in the names; ``hitch_lift_deg`` is the
    lift-arm angle, ``draft_n`` the draft force of the implement, ``stale`` true while the safety
    brake of the vehicle bridge holds the vehicle.
    """

    step: int
    stamp_ns: int
    implement: str
    implement_depth_m: float
    pto_kw: float
    pto_on: bool
    pto_rpm: float
    hitch_lever: float
    hitch_lift_deg: float
    hitch_mode: HitchMode
    raised: bool
    draft_n: float
    difflock: Difflock
    engine_rpm: float
    stale: bool
    steering_angle_rad: float

    def implement_state(self) -> dict[str, Any]:
        """The spec's implement/state object: its 13 keys in its order, plain JSON values."""
        return {
            "implement": self.implement,
            "implement_depth_m": self.implement_depth_m,
            "pto_kw": self.pto_kw,
            "pto_on": self.pto_on,
            "pto_rpm": self.pto_rpm,
            "hitch_lever": self.hitch_lever,
            "hitch_lift_deg": self.hitch_lift_deg,
            "hitch_mode": str(self.hitch_mode),
            "raised": self.raised,
            "draft_n": self.draft_n,
            "difflock": int(self.difflock),
            "rpm": self.engine_rpm,
            "stale": self.stale,
        }


_COMMAND_KEYS: Final = frozenset(MaxxumCommand.__dataclass_fields__)
_OBSERVATION_KEYS: Final = frozenset(MaxxumObservation.__dataclass_fields__)
_FRACTIONS: Final = ("pedal", "brake", "hand_throttle", "hitch_lever")


def _dumps(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def encode_maxxum_command(message: MaxxumCommand) -> bytes:
    return _dumps(
        {
            "seq": message.seq,
            "curvature_1pm": message.curvature_1pm,
            "pedal": message.pedal,
            "brake": message.brake,
            "hand_throttle": message.hand_throttle,
            "hitch_lever": message.hitch_lever,
            "hitch_raise": message.hitch_raise,
            "pto_on": message.pto_on,
            "difflock": int(message.difflock),
            "implement": message.implement.as_json_object(),
        }
    )


def encode_maxxum_observation(message: MaxxumObservation) -> bytes:
    state = message.implement_state()
    del state["rpm"]
    return _dumps(
        {
            "step": message.step,
            "stamp_ns": message.stamp_ns,
            **state,
            "engine_rpm": message.engine_rpm,
            "steering_angle_rad": message.steering_angle_rad,
        }
    )


def _known_keys(what: str, data: dict[str, Any], known: frozenset[str] | tuple[str, ...]) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ProtocolError(
            f"{what}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )


def _within(what: str, key: str, value: float, low: float, high: float) -> float:
    if not low <= value <= high:
        raise ProtocolError(f"{what}: field {key!r} must be in {low:g} .. {high:g}, found {value!r}")
    return value


def _bounded(what: str, data: dict[str, Any], key: str, low: float, high: float) -> float:
    return _within(what, key, number(what, data, key), low, high)


def _difflock(what: str, data: dict[str, Any]) -> Difflock:
    value: int = get_field(what, data, "difflock", int)
    if value not in tuple(Difflock):
        raise ProtocolError(
            f"{what}: field 'difflock' must be 0 (open), 1 (rear) or 2 (rear and front), found {value}"
        )
    return Difflock(value)


def _hitch_mode(what: str, data: dict[str, Any]) -> HitchMode:
    return one_of(what, data, "hitch_mode", HitchMode)


def decode_implement_controls(data: object, *, what: str = "implement controls") -> ImplementControls:
    """The controls of a decoded JSON object (implement/cmd); ProtocolError names a bad or unknown key."""
    if not isinstance(data, Mapping):
        raise ProtocolError(f"{what}: must be a JSON object, found {type(data).__name__}")
    values: dict[str, Any] = dict(data)
    _known_keys(what, values, IMPLEMENT_CONTROL_KEYS)
    return ImplementControls(
        hitch_mode=_hitch_mode(what, values) if "hitch_mode" in values else None,
        depth_stop_m=(
            _bounded(what, values, "depth_stop_m", 0.0, MAX_DEPTH_STOP_M)
            if "depth_stop_m" in values
            else None
        ),
    )


def decode_maxxum_command(payload: bytes) -> MaxxumCommand:
    what = "MAXXUM_COMMAND"
    data = json_object(what, payload)
    _known_keys(what, data, _COMMAND_KEYS)
    seq = non_negative(what, data, "seq")
    if seq < 1:
        raise ProtocolError(f"{what}: seq starts at 1, found 0")
    return maxxum_command_from_fields(what, data, seq=seq)


def maxxum_command_from_fields(what: str, data: dict[str, Any], *, seq: int) -> MaxxumCommand:
    """The command of a parsed MAXXUM_COMMAND object (its seq given apart: the internal topic's
    object has none); ProtocolError naming `what` and the field for a missing, unknown or bad one."""
    _known_keys(what, data, _COMMAND_KEYS)
    fractions = {key: _bounded(what, data, key, 0.0, 1.0) for key in _FRACTIONS}
    return MaxxumCommand(
        seq=seq,
        curvature_1pm=_bounded(what, data, "curvature_1pm", -MAX_CURVATURE_1PM, MAX_CURVATURE_1PM),
        pedal=fractions["pedal"],
        brake=fractions["brake"],
        hand_throttle=fractions["hand_throttle"],
        hitch_lever=fractions["hitch_lever"],
        hitch_raise=get_field(what, data, "hitch_raise", bool),
        pto_on=get_field(what, data, "pto_on", bool),
        difflock=_difflock(what, data),
        implement=decode_implement_controls(
            get_field(what, data, "implement", dict), what=f"{what} implement"
        ),
    )


def decode_maxxum_observation(payload: bytes) -> MaxxumObservation:
    what = "MAXXUM_OBSERVATION"
    data = json_object(what, payload)
    _known_keys(what, data, _OBSERVATION_KEYS)
    implement: str = get_field(what, data, "implement", str)
    if not 0 < len(implement) <= MAX_IMPLEMENT_NAME:
        raise ProtocolError(
            f"{what}: field 'implement' must be 1 .. {MAX_IMPLEMENT_NAME} characters, found {implement!r}"
        )
    numbers = {key: _bounded(what, data, key, low, high) for key, (low, high) in OBSERVATION_RANGES.items()}
    return MaxxumObservation(
        step=non_negative(what, data, "step"),
        stamp_ns=stamp_field(what, data),
        implement=implement,
        implement_depth_m=numbers["implement_depth_m"],
        pto_kw=numbers["pto_kw"],
        pto_on=get_field(what, data, "pto_on", bool),
        pto_rpm=numbers["pto_rpm"],
        hitch_lever=numbers["hitch_lever"],
        hitch_lift_deg=numbers["hitch_lift_deg"],
        hitch_mode=_hitch_mode(what, data),
        raised=get_field(what, data, "raised", bool),
        draft_n=numbers["draft_n"],
        difflock=_difflock(what, data),
        engine_rpm=numbers["engine_rpm"],
        stale=get_field(what, data, "stale", bool),
        steering_angle_rad=numbers["steering_angle_rad"],
    )
