"""The codecs of the low-rate control messages: JSON objects (UTF-8), checked field by field on
decode. Every decode_* raises ProtocolError, naming the message and the bad field, for any payload
that does not match; nothing else escapes."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Final

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.frames import PROTOCOL_VERSION
from acres_bridge.wire.json_fields import (
    finite,
    get_field,
    json_object,
    non_negative,
    number,
    one_of,
    stamp_field,
    triple,
)
from acres_bridge.wire.messages import (
    MAX_SCENE_BOXES,
    MAX_SCENE_CROP_FIELDS,
    MAX_SCENE_GROUND_POINTS,
    RESET_REACH_M,
    AgentEntry,
    AgentReset,
    ClientHello,
    EpisodeInfo,
    ErrorReply,
    Hello,
    ResetSession,
    SceneBox,
    SceneCropField,
    SceneGround,
    SceneLayout,
    SensorDemand,
    SensorMeta,
    SensorMount,
    SetState,
)
from acres_bridge.wire.session_token import MAX_TOKEN_CHARS
from acres_bridge.wire.vocabulary import ClientRole, SensorKind, SimState, Source, Vehicle

__all__ = [
    "decode_agent_reset",
    "decode_client_hello",
    "decode_episode",
    "decode_error",
    "decode_hello",
    "decode_reset_session",
    "decode_sensor_meta",
    "decode_set_state",
    "encode_json",
]


_MAX_CAN_PORTS: Final = 256  # CLIENT_HELLO's can_ports: one per agent with a CAN bus


def encode_json(message: Any) -> bytes:
    """The payload of a JSON message: its fields as one compact object."""
    return json.dumps(asdict(message), separators=(",", ":")).encode()


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
        scene=_scene(what, data),
        features=_features(what, data),
    )


_MAX_FEATURES = 32
_MAX_FEATURE_CHARS = 64


def _features(what: str, data: dict[str, Any]) -> tuple[str, ...]:
    """HELLO's ``features``: names of at most _MAX_FEATURE_CHARS, at most _MAX_FEATURES; absent: none."""
    if "features" not in data:
        return ()
    raw = get_field(what, data, "features", list)
    if len(raw) > _MAX_FEATURES or not all(
        isinstance(name, str) and 0 < len(name) <= _MAX_FEATURE_CHARS for name in raw
    ):
        raise ProtocolError(
            f"{what}: features must be at most {_MAX_FEATURES} names of 1 to {_MAX_FEATURE_CHARS} "
            f"characters, found {raw!r:.200}"
        )
    return tuple(raw)


# A scene's coordinates: within the tile and its margin (RESET_REACH_M), sizes up to a few hundred m.
_SCENE_REACH_M = RESET_REACH_M
_SCENE_SIZE_M = 2 * RESET_REACH_M
_MAX_CROP_ROWS = 10_000


def _objects(what: str, data: dict[str, Any], key: str, most: int) -> list[dict[str, Any]]:
    """The list of JSON objects under `key` (absent: none), at most `most` of them."""
    items: list[dict[str, Any]] = get_field(what, data, key, list, [])
    if len(items) > most:
        raise ProtocolError(f"{what}: field {key!r} has {len(items)} items; at most {most} are taken")
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise ProtocolError(f"{what} {key} {position}: must be an object, found {item!r}")
    return items


def _within(what: str, data: dict[str, Any], key: str, low: float, high: float) -> float:
    value = number(what, data, key)
    if not low <= value <= high:
        raise ProtocolError(f"{what}: field {key!r} must be in {low} .. {high}, found {value}")
    return value


def _size(what: str, data: dict[str, Any], key: str) -> float:
    value = number(what, data, key)
    if not 0.0 < value <= _SCENE_SIZE_M:
        raise ProtocolError(
            f"{what}: field {key!r} must be a size in m in (0, {_SCENE_SIZE_M}], found {value}"
        )
    return value


def _position(what: str, data: dict[str, Any], key: str) -> float:
    return _within(what, data, key, -_SCENE_REACH_M, _SCENE_REACH_M)


def _colour(what: str, data: dict[str, Any]) -> tuple[int, int, int]:
    value = get_field(what, data, "color", list)
    if len(value) != 3 or not all(type(v) is int and 0 <= v <= 255 for v in value):
        raise ProtocolError(f"{what}: field 'color' must be 3 integers 0..255 (r, g, b), found {value!r}")
    return (value[0], value[1], value[2])


def _scene(what: str, data: dict[str, Any]) -> SceneLayout | None:
    """A HELLO's optional scene, every number bounded: a viewer draws it as it comes."""
    raw = get_field(what, data, "scene", (dict, type(None)), None)
    if raw is None:
        return None
    where = f"{what} scene"
    boxes = [
        SceneBox(
            x=_position(w, box, "x"),
            y=_position(w, box, "y"),
            z=_position(w, box, "z"),
            lx=_size(w, box, "lx"),
            ly=_size(w, box, "ly"),
            lz=_size(w, box, "lz"),
            yaw=_within(w, box, "yaw", -7.0, 7.0),
            color=_colour(w, box),
        )
        for position, box in enumerate(_objects(where, raw, "boxes", MAX_SCENE_BOXES))
        for w in (f"{where} box {position}",)
    ]
    fields = []
    for position, crop in enumerate(_objects(where, raw, "crop_fields", MAX_SCENE_CROP_FIELDS)):
        w = f"{where} crop field {position}"
        rows: int = get_field(w, crop, "rows", int)
        if not 1 <= rows <= _MAX_CROP_ROWS:
            raise ProtocolError(f"{w}: field 'rows' must be in 1 .. {_MAX_CROP_ROWS}, found {rows}")
        fields.append(
            SceneCropField(
                x=_position(w, crop, "x"),
                y=_position(w, crop, "y"),
                yaw=_within(w, crop, "yaw", -7.0, 7.0),
                length_m=_size(w, crop, "length_m"),
                rows=rows,
                row_spacing_m=_size(w, crop, "row_spacing_m"),
                row_width_m=_size(w, crop, "row_width_m"),
                height_m=_size(w, crop, "height_m"),
                color=_colour(w, crop),
            )
        )
    return SceneLayout(
        name=get_field(where, raw, "name", str),
        ground=_ground(f"{where} ground", get_field(where, raw, "ground", (dict, type(None)), None)),
        boxes=tuple(boxes),
        crop_fields=tuple(fields),
    )


def _ground(what: str, raw: dict[str, Any] | None) -> SceneGround | None:
    if raw is None:
        return None
    nx = non_negative(what, raw, "nx", bits=16)
    ny = non_negative(what, raw, "ny", bits=16)
    if nx < 2 or ny < 2 or nx * ny > MAX_SCENE_GROUND_POINTS:
        raise ProtocolError(
            f"{what}: nx and ny must be >= 2 with nx * ny <= {MAX_SCENE_GROUND_POINTS}, found {nx} x {ny}"
        )
    heights = get_field(what, raw, "heights", list)
    if len(heights) != nx * ny:
        raise ProtocolError(
            f"{what}: field 'heights' must have nx * ny = {nx * ny} values, found {len(heights)}"
        )
    values = tuple(finite(what, "heights", h) for h in heights)
    if any(abs(h) > _SCENE_REACH_M for h in values):
        raise ProtocolError(f"{what}: field 'heights' must be within +-{_SCENE_REACH_M} m")
    spacing = _size(what, raw, "spacing_m")
    x0, y0 = _position(what, raw, "x0"), _position(what, raw, "y0")
    if max(abs(x0), abs(x0 + (nx - 1) * spacing), abs(y0), abs(y0 + (ny - 1) * spacing)) > _SCENE_REACH_M:
        raise ProtocolError(f"{what}: the grid must lie within +-{_SCENE_REACH_M} m of the origin")
    return SceneGround(x0=x0, y0=y0, spacing_m=spacing, nx=nx, ny=ny, heights=values)


def decode_client_hello(payload: bytes) -> ClientHello:
    what = "CLIENT_HELLO"
    data = json_object(what, payload)
    version = _version(what, data)
    role = one_of(what, data, "role", ClientRole)
    can_ports = _can_ports(what, data) if "can_ports" in data else ()
    if can_ports and role != ClientRole.CONTROL:
        raise ProtocolError(f"{what}: can_ports belong to the control channel, not a {role} channel")
    token = get_field(what, data, "token", str) if "token" in data else ""
    if len(token) > MAX_TOKEN_CHARS:
        raise ProtocolError(f"{what}: field 'token' has at most {MAX_TOKEN_CHARS} characters")
    return ClientHello(
        protocol_version=version,
        client=get_field(what, data, "client", str),
        role=role,
        agent=non_negative(what, data, "agent") if "agent" in data else 0,
        can_ports=can_ports,
        token=token,
    )


def encode_client_hello(message: ClientHello) -> bytes:
    """CLIENT_HELLO's payload; ``token`` only where there is one (a bridge outside a session sends
    what it always sent)."""
    data = asdict(message)
    if not message.token:
        del data["token"]
    return json.dumps(data, separators=(",", ":")).encode()


def _can_ports(what: str, data: dict[str, Any]) -> tuple[tuple[int, int], ...]:
    """CLIENT_HELLO's ``can_ports``: [agent, port] pairs, one per agent, at most _MAX_CAN_PORTS."""
    raw = get_field(what, data, "can_ports", list)
    if len(raw) > _MAX_CAN_PORTS:
        raise ProtocolError(f"{what}: at most {_MAX_CAN_PORTS} can_ports, found {len(raw)}")
    pairs = []
    for pair in raw:
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            and 0 <= pair[0] <= 65535
            and 0 < pair[1] <= 65535
        ):
            raise ProtocolError(f"{what}: each of can_ports must be [agent, UDP port], found {pair!r}")
        pairs.append((pair[0], pair[1]))
    if len({agent for agent, _ in pairs}) != len(pairs):
        raise ProtocolError(f"{what}: can_ports names an agent twice: {raw}")
    return tuple(pairs)


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


_MAX_DEMANDED = 256  # SENSOR_DEMAND: sensors of one agent


def decode_sensor_demand(payload: bytes) -> SensorDemand:
    what = "SENSOR_DEMAND"
    data = json_object(what, payload)
    sensors = get_field(what, data, "sensors", list)
    if len(sensors) > _MAX_DEMANDED or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= 65535 for i in sensors
    ):
        raise ProtocolError(
            f"{what}: sensors must be at most {_MAX_DEMANDED} indices 0..65535, found {sensors!r:.200}"
        )
    if len(set(sensors)) != len(sensors):
        raise ProtocolError(f"{what}: sensors names a sensor twice: {sensors!r:.200}")
    return SensorDemand(agent=non_negative(what, data, "agent", bits=16), sensors=tuple(sensors))


def decode_agent_reset(payload: bytes) -> AgentReset:
    what = "AGENT_RESET"
    data = json_object(what, payload)
    reset = AgentReset(
        agent=non_negative(what, data, "agent"),
        x_m=number(what, data, "x_m"),
        y_m=number(what, data, "y_m"),
        yaw_rad=number(what, data, "yaw_rad"),
    )
    for key, value in (("x_m", reset.x_m), ("y_m", reset.y_m)):
        if abs(value) > RESET_REACH_M:
            raise ProtocolError(
                f"{what}: field {key!r} must be within +-{RESET_REACH_M:.0f} m of the world origin, "
                f"found {value!r}"
            )
    return reset


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
