"""The messages of the wire protocol and their codecs; docs/protocol.md describes each field.

Low-rate control messages are JSON objects (UTF-8), checked field by field on decode.
High-rate messages (clock, INS, step requests, marks) are fixed-size little-endian structs.
Every decode_* raises ProtocolError, with the message kind and the bad field named, for any
payload that does not match; nothing else escapes.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.frames import PROTOCOL_VERSION
from acres_bridge.wire.json_fields import (
    check_stamp,
    get_field,
    json_object,
    non_negative,
    number,
    one_of,
    stamp_field,
    triple,
)
from acres_bridge.wire.vocabulary import ClientRole, SensorKind, SimState, Source, StepStatus, Vehicle

__all__ = [
    "AgentEntry",
    "AgentReset",
    "ClientHello",
    "Clock",
    "EpisodeInfo",
    "ErrorReply",
    "Hello",
    "InsSample",
    "ResetSession",
    "SensorMeta",
    "SensorMount",
    "SetState",
    "StepDone",
    "StepRequest",
    "StreamMark",
    "decode_agent_reset",
    "decode_client_hello",
    "decode_clock",
    "decode_episode",
    "decode_error",
    "decode_hello",
    "decode_ins",
    "decode_reset_session",
    "decode_sensor_meta",
    "decode_set_state",
    "decode_step_done",
    "decode_step_request",
    "decode_stream_mark",
    "encode_clock",
    "encode_ins",
    "encode_json",
    "encode_step_done",
    "encode_step_request",
    "encode_stream_mark",
]


# ---- JSON messages ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AgentEntry:
    """One agent of a session and the ports of its channels (0 = the channel does not exist)."""

    index: int
    name: str
    vehicle: Vehicle
    sensor_port: int
    vehicle_port: int
    can_port: int = 0


@dataclass(frozen=True, kw_only=True)
class Hello:
    """The first frame of the control channel: what the session is."""

    protocol_version: int
    simulator: str
    session_start_utc: str  # YYYYMMDDTHHMMSS
    map: str
    source: Source
    lockstep: bool
    seed: int
    physics_hz: int
    agents: tuple[AgentEntry, ...]


@dataclass(frozen=True, kw_only=True)
class ClientHello:
    """The first frame a bridge sends on any channel: its version and the channel's purpose."""

    protocol_version: int
    client: str
    role: ClientRole
    agent: int = 0  # the agent of a sensor or vehicle channel


@dataclass(frozen=True, kw_only=True)
class ErrorReply:
    """A refusal: the sender closes the channel after it."""

    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class EpisodeInfo:
    """The episode clock (the spec's /sim/episode), sent at the start, on resets, on state changes."""

    episode_id: str
    episode: int
    reset_epoch: int
    step: int
    stamp_ns: int
    episode_time_s: float
    state: SimState
    lockstep: bool
    seed: int
    source: Source
    map: str
    agents: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class SetState:
    """Ask the simulator to play, pause or stop."""

    state: SimState


@dataclass(frozen=True, kw_only=True)
class ResetSession:
    """Ask for a new episode of the whole session (vehicles back to their start poses)."""

    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class AgentReset:
    """Move one agent to a pose of the world frame and stop it."""

    agent: int
    x_m: float
    y_m: float
    yaw_rad: float


@dataclass(frozen=True, kw_only=True)
class SensorMount:
    """A sensor of the rig: its frame and its mount pose below base_footprint."""

    name: str
    kind: SensorKind
    frame: str
    xyz_m: tuple[float, float, float]
    rpy_rad: tuple[float, float, float]
    rate_hz: float  # 0 for a "frame"
    parent: str = "base_footprint"
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class SensorMeta:
    """The first frame of a sensor stream: the agent, its georeference and its sensor rig."""

    agent: int
    vehicle: Vehicle
    utm_epsg: int
    world_origin_utm: tuple[float, float, float]
    sensors: tuple[SensorMount, ...]


# ---- binary messages -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Clock:
    """One physics step: the step number and its simulation time."""

    step: int
    stamp_ns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRequest:
    """Run `steps` physics steps; answered by StepDone with the same request_id.

    command_seqs[i] is the sequence number of the last command the bridge sent on agent i's
    vehicle channel before this request (0 = none): the simulator applies every command up to
    it before the first step, whichever connection delivers first.
    """

    request_id: int
    steps: int
    command_seqs: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StepDone:
    """The answer to a StepRequest: done through last_step, or refused (nothing ran)."""

    request_id: int
    last_step: int
    status: StepStatus = StepStatus.DONE


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamMark:
    """On a sensor or vehicle stream: all data made through last_step has been sent."""

    last_step: int


@dataclass(frozen=True, slots=True)
class InsSample:
    """One INS sample: the estimate with the error model, and the exact ground truth.

    Positions in UTM (EPSG of the session), easting/northing/ellipsoidal height in m;
    orientations as quaternions (x, y, z, w) of base_footprint in the grid ENU frame (yaw
    counter-clockwise from grid east); velocity, angular rate and specific force in the body
    frame of base_footprint (x forward, y left, z up) in m/s, rad/s, m/s^2. Variances are the
    covariance diagonals: position (east, north, up), velocity, angular rate and specific force
    (x, y, z), attitude (roll, pitch, yaw).
    """

    step: int
    stamp_ns: int
    has_position: bool
    position: tuple[float, float, float]
    latitude_deg: float
    longitude_deg: float
    orientation: tuple[float, float, float, float]
    velocity: tuple[float, float, float]
    angular_rate: tuple[float, float, float]
    specific_force: tuple[float, float, float]
    position_variance: tuple[float, float, float]
    velocity_variance: tuple[float, float, float]
    attitude_variance: tuple[float, float, float]
    true_position: tuple[float, float, float]
    true_orientation: tuple[float, float, float, float]
    true_speed: float
    angular_rate_variance: tuple[float, float, float] = (0.0, 0.0, 0.0)
    specific_force_variance: tuple[float, float, float] = (0.0, 0.0, 0.0)


_CLOCK = struct.Struct("<Qq")
_STEP_REQUEST = struct.Struct("<IIQ")  # request_id, agent count, steps; then count x uint64
_STEP_DONE = struct.Struct("<IIQ")  # request_id, status, last_step
_STREAM_MARK = struct.Struct("<Q")
_INS = struct.Struct("<QqIxxxx41d")
INS_FLAG_POSITION = 1
# The 41 numbers of an INS payload after step, stamp and flags, in order (names for error messages).
_INS_NUMBERS = (
    *(f"position[{i}]" for i in range(3)),
    "latitude_deg",
    "longitude_deg",
    *(f"orientation[{i}]" for i in range(4)),
    *(f"velocity[{i}]" for i in range(3)),
    *(f"angular_rate[{i}]" for i in range(3)),
    *(f"specific_force[{i}]" for i in range(3)),
    *(f"position_variance[{i}]" for i in range(3)),
    *(f"velocity_variance[{i}]" for i in range(3)),
    *(f"attitude_variance[{i}]" for i in range(3)),
    *(f"true_position[{i}]" for i in range(3)),
    *(f"true_orientation[{i}]" for i in range(4)),
    "true_speed",
    *(f"angular_rate_variance[{i}]" for i in range(3)),
    *(f"specific_force_variance[{i}]" for i in range(3)),
)
# Fields that carry no meaning without a fix: position, latitude, longitude, position variance.
_INS_FIX_ONLY = frozenset((0, 1, 2, 3, 4, 18, 19, 20))


# ---- encoding (payloads; wire.registry pairs each with its frame kind) -----------------------


def encode_json(message: Any) -> bytes:
    """The payload of a JSON message: its fields as one compact object."""
    return json.dumps(asdict(message), separators=(",", ":")).encode()


def encode_clock(message: Clock) -> bytes:
    return _CLOCK.pack(message.step, message.stamp_ns)


def encode_step_request(message: StepRequest) -> bytes:
    seqs = message.command_seqs
    return _STEP_REQUEST.pack(message.request_id, len(seqs), message.steps) + struct.pack(
        f"<{len(seqs)}Q", *seqs
    )


def encode_step_done(message: StepDone) -> bytes:
    return _STEP_DONE.pack(message.request_id, message.status, message.last_step)


def encode_stream_mark(message: StreamMark) -> bytes:
    return _STREAM_MARK.pack(message.last_step)


def encode_ins(message: InsSample) -> bytes:
    return _INS.pack(
        message.step,
        message.stamp_ns,
        INS_FLAG_POSITION if message.has_position else 0,
        *message.position,
        message.latitude_deg,
        message.longitude_deg,
        *message.orientation,
        *message.velocity,
        *message.angular_rate,
        *message.specific_force,
        *message.position_variance,
        *message.velocity_variance,
        *message.attitude_variance,
        *message.true_position,
        *message.true_orientation,
        message.true_speed,
        *message.angular_rate_variance,
        *message.specific_force_variance,
    )


# ---- decoding --------------------------------------------------------------------------------


def _unpack(what: str, layout: struct.Struct, payload: bytes) -> tuple[Any, ...]:
    if len(payload) != layout.size:
        raise ProtocolError(f"{what}: expected {layout.size} payload bytes, found {len(payload)}")
    return layout.unpack(payload)


def decode_clock(payload: bytes) -> Clock:
    step, stamp_ns = _unpack("CLOCK", _CLOCK, payload)
    check_stamp("CLOCK", stamp_ns)
    return Clock(step=step, stamp_ns=stamp_ns)


def decode_step_request(payload: bytes) -> StepRequest:
    if len(payload) < _STEP_REQUEST.size:
        raise ProtocolError(
            f"STEP_REQUEST: expected at least {_STEP_REQUEST.size} bytes, found {len(payload)}"
        )
    request_id, count, steps = _STEP_REQUEST.unpack_from(payload)
    if len(payload) != _STEP_REQUEST.size + 8 * count:
        raise ProtocolError(
            f"STEP_REQUEST: {count} command sequence numbers need {_STEP_REQUEST.size + 8 * count} bytes, "
            f"found {len(payload)}"
        )
    if steps < 1:
        raise ProtocolError(f"STEP_REQUEST: steps must be at least 1, found {steps}")
    seqs = struct.unpack_from(f"<{count}Q", payload, _STEP_REQUEST.size)
    return StepRequest(request_id=request_id, steps=steps, command_seqs=tuple(seqs))


def decode_step_done(payload: bytes) -> StepDone:
    request_id, status, last_step = _unpack("STEP_DONE", _STEP_DONE, payload)
    if status not in tuple(StepStatus):
        raise ProtocolError(f"STEP_DONE: unknown status {status}")
    return StepDone(request_id=request_id, last_step=last_step, status=StepStatus(status))


def decode_stream_mark(payload: bytes) -> StreamMark:
    (last_step,) = _unpack("STREAM_MARK", _STREAM_MARK, payload)
    return StreamMark(last_step=last_step)


def decode_ins(payload: bytes) -> InsSample:
    values = _unpack("INS", _INS, payload)
    step, stamp_ns, flags = values[:3]
    numbers = values[3:]
    check_stamp("INS", stamp_ns)
    if flags & ~INS_FLAG_POSITION:
        raise ProtocolError(f"INS: unknown flags {flags:#x}")
    has_position = bool(flags & INS_FLAG_POSITION)
    # Without a fix the position fields carry no meaning (NaN is allowed there); all else must be finite.
    for index, value in enumerate(numbers):
        if not math.isfinite(value) and (has_position or index not in _INS_FIX_ONLY):
            raise ProtocolError(f"INS: field {_INS_NUMBERS[index]} must be finite, found {value}")
    n = numbers
    return InsSample(
        step=step,
        stamp_ns=stamp_ns,
        has_position=has_position,
        position=(n[0], n[1], n[2]),
        latitude_deg=n[3],
        longitude_deg=n[4],
        orientation=(n[5], n[6], n[7], n[8]),
        velocity=(n[9], n[10], n[11]),
        angular_rate=(n[12], n[13], n[14]),
        specific_force=(n[15], n[16], n[17]),
        position_variance=(n[18], n[19], n[20]),
        velocity_variance=(n[21], n[22], n[23]),
        attitude_variance=(n[24], n[25], n[26]),
        true_position=(n[27], n[28], n[29]),
        true_orientation=(n[30], n[31], n[32], n[33]),
        true_speed=n[34],
        angular_rate_variance=(n[35], n[36], n[37]),
        specific_force_variance=(n[38], n[39], n[40]),
    )


def _port(what: str, data: dict[str, Any], key: str, *, required: bool = True) -> int:
    value = non_negative(what, data, key) if required or key in data else 0
    if value > 65535:
        raise ProtocolError(f"{what}: field {key!r} is not a port, found {value}")
    return value


def _version(what: str, data: dict[str, Any]) -> int:
    version: int = get_field(what, data, "protocol_version", int)
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            f"{what}: the peer speaks protocol version {version}, this side speaks {PROTOCOL_VERSION}",
            version_mismatch=version,
        )
    return version


def _state(what: str, data: dict[str, Any]) -> SimState:
    state: int = get_field(what, data, "state", int)
    if state not in tuple(SimState):
        raise ProtocolError(f"{what}: field 'state' must be 0, 1 or 2, found {state}")
    return SimState(state)


def decode_hello(payload: bytes) -> Hello:
    what = "HELLO"
    data = json_object(what, payload)
    version = _version(what, data)
    raw_agents = get_field(what, data, "agents", list)
    if not raw_agents:
        raise ProtocolError(f"{what}: a session has at least one agent")
    agents = []
    for position, raw in enumerate(raw_agents):
        where = f"{what} agent {position}"
        if not isinstance(raw, dict):
            raise ProtocolError(f"{where}: must be an object, found {raw!r}")
        index = non_negative(where, raw, "index")
        if index != position:
            raise ProtocolError(f"{where}: index must be {position} (agents in order), found {index}")
        name = get_field(where, raw, "name", str)
        if not name:
            raise ProtocolError(f"{where}: name must not be empty")
        agents.append(
            AgentEntry(
                index=index,
                name=name,
                vehicle=one_of(where, raw, "vehicle", Vehicle),
                sensor_port=_port(where, raw, "sensor_port"),
                vehicle_port=_port(where, raw, "vehicle_port"),
                can_port=_port(where, raw, "can_port", required=False),
            )
        )
    names = [agent.name for agent in agents]
    if len(set(names)) != len(names):
        raise ProtocolError(f"{what}: agent names must be unique, found {names}")
    physics_hz = non_negative(what, data, "physics_hz")
    if physics_hz == 0:
        raise ProtocolError(f"{what}: physics_hz must be positive")
    return Hello(
        protocol_version=version,
        simulator=get_field(what, data, "simulator", str),
        session_start_utc=get_field(what, data, "session_start_utc", str),
        map=get_field(what, data, "map", str),
        source=one_of(what, data, "source", Source),
        lockstep=get_field(what, data, "lockstep", bool),
        seed=non_negative(what, data, "seed", bits=32),
        physics_hz=physics_hz,
        agents=tuple(agents),
    )


def decode_client_hello(payload: bytes) -> ClientHello:
    what = "CLIENT_HELLO"
    data = json_object(what, payload)
    return ClientHello(
        protocol_version=_version(what, data),
        client=get_field(what, data, "client", str),
        role=one_of(what, data, "role", ClientRole),
        agent=non_negative(what, data, "agent") if "agent" in data else 0,
    )


def decode_error(payload: bytes) -> ErrorReply:
    what = "ERROR"
    data = json_object(what, payload)
    return ErrorReply(code=get_field(what, data, "code", str), message=get_field(what, data, "message", str))


def decode_episode(payload: bytes) -> EpisodeInfo:
    what = "EPISODE"
    data = json_object(what, payload)
    agents = get_field(what, data, "agents", list)
    if not all(isinstance(name, str) for name in agents):
        raise ProtocolError(f"{what}: field 'agents' must be a list of strings, found {agents!r}")
    if len(set(agents)) != len(agents):
        raise ProtocolError(f"{what}: agent names must be unique, found {agents}")
    episode_time_s = number(what, data, "episode_time_s")
    if episode_time_s < 0:
        raise ProtocolError(f"{what}: field 'episode_time_s' must not be negative, found {episode_time_s}")
    return EpisodeInfo(
        episode_id=get_field(what, data, "episode_id", str),
        episode=non_negative(what, data, "episode", bits=32),
        reset_epoch=non_negative(what, data, "reset_epoch", bits=32),
        step=non_negative(what, data, "step"),
        stamp_ns=stamp_field(what, data),
        episode_time_s=episode_time_s,
        state=_state(what, data),
        lockstep=get_field(what, data, "lockstep", bool),
        seed=non_negative(what, data, "seed", bits=32),
        source=one_of(what, data, "source", Source),
        map=get_field(what, data, "map", str),
        agents=tuple(agents),
    )


def decode_set_state(payload: bytes) -> SetState:
    what = "SET_STATE"
    return SetState(state=_state(what, json_object(what, payload)))


def decode_reset_session(payload: bytes) -> ResetSession:
    what = "RESET_SESSION"
    data = json_object(what, payload)
    return ResetSession(reason=get_field(what, data, "reason", str, ""))


def decode_agent_reset(payload: bytes) -> AgentReset:
    what = "AGENT_RESET"
    data = json_object(what, payload)
    return AgentReset(
        agent=non_negative(what, data, "agent"),
        x_m=number(what, data, "x_m"),
        y_m=number(what, data, "y_m"),
        yaw_rad=number(what, data, "yaw_rad"),
    )


def decode_sensor_meta(payload: bytes) -> SensorMeta:
    what = "SENSOR_META"
    data = json_object(what, payload)
    raw_sensors = get_field(what, data, "sensors", list)
    sensors = []
    for position, raw in enumerate(raw_sensors):
        where = f"{what} sensor {position}"
        if not isinstance(raw, dict):
            raise ProtocolError(f"{where}: must be an object, found {raw!r}")
        kind = one_of(where, raw, "kind", SensorKind)
        rate_hz = number(where, raw, "rate_hz")
        if rate_hz < 0 or (rate_hz == 0) != (kind == SensorKind.FRAME):
            raise ProtocolError(
                f"{where}: rate_hz must be positive for a sensor, 0 for a frame; found {rate_hz}"
            )
        frame = get_field(where, raw, "frame", str)
        parent = get_field(where, raw, "parent", str, "base_footprint")
        if not frame or not parent:
            raise ProtocolError(f"{where}: frame and parent must not be empty")
        sensors.append(
            SensorMount(
                name=get_field(where, raw, "name", str),
                kind=kind,
                frame=frame,
                parent=parent,
                xyz_m=triple(where, raw, "xyz_m"),
                rpy_rad=triple(where, raw, "rpy_rad"),
                rate_hz=rate_hz,
                settings=get_field(where, raw, "settings", dict, {}),
            )
        )
    return SensorMeta(
        agent=non_negative(what, data, "agent"),
        vehicle=one_of(what, data, "vehicle", Vehicle),
        utm_epsg=non_negative(what, data, "utm_epsg"),
        world_origin_utm=triple(what, data, "world_origin_utm"),
        sensors=tuple(sensors),
    )
