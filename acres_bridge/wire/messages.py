"""The messages of the wire protocol, as frozen dataclasses; docs/protocol.md describes each field.

Their codecs: acres_bridge.wire.json_codecs (the low-rate control messages, JSON objects) and
acres_bridge.wire.binary_codecs (the high-rate ones, fixed-size little-endian structs);
acres_bridge.wire.registry pairs each with its frame kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from acres_bridge.wire.vocabulary import ClientRole, SensorKind, SimState, Source, StepStatus, Vehicle

__all__ = [
    "MAX_SCENE_BOXES",
    "MAX_SCENE_CROP_FIELDS",
    "MAX_SCENE_GROUND_POINTS",
    "RESET_REACH_M",
    "SENSOR_DEMAND_FEATURE",
    "AgentEntry",
    "AgentReset",
    "ClientHello",
    "Clock",
    "EpisodeInfo",
    "ErrorReply",
    "Hello",
    "InsSample",
    "ResetSession",
    "SceneBox",
    "SceneCropField",
    "SceneGround",
    "SceneLayout",
    "SensorDemand",
    "SensorMeta",
    "SensorMount",
    "SetState",
    "StepDone",
    "StepRequest",
    "StreamMark",
]

RESET_REACH_M: Final = 1_000.0
"""How far from the world origin (the tile's centre) a reset may put an agent, in x and in y: the
tile spans +-400 m; beyond a margin of 600 m there is no ground to stand on and the INS position
leaves what its numbers can carry."""


@dataclass(frozen=True, kw_only=True)
class AgentEntry:
    """One agent of a session and the ports of its channels (0 = the channel does not exist)."""

    index: int
    name: str
    vehicle: Vehicle
    sensor_port: int
    vehicle_port: int
    can_port: int = 0


MAX_SCENE_BOXES: Final = 256
MAX_SCENE_CROP_FIELDS: Final = 64
MAX_SCENE_GROUND_POINTS: Final = 2_500
"""The bounds of a HELLO's scene: its JSON stays well within MAX_JSON_BYTES."""

RGB = tuple[int, int, int]


@dataclass(frozen=True, kw_only=True)
class SceneBox:
    """A static box of the scene (a building) in world coordinates: its centre and size (m), its yaw
    (rad, about z) and its colour (red, green, blue, each 0..255)."""

    x: float
    y: float
    z: float
    lx: float
    ly: float
    lz: float
    yaw: float
    color: RGB


@dataclass(frozen=True, kw_only=True)
class SceneCropField:
    """A field of parallel crop rows on the ground: row 0 starts at world (x, y) and runs
    ``length_m`` along ``yaw``; the next rows follow ``row_spacing_m`` apart to its left."""

    x: float
    y: float
    yaw: float
    length_m: float
    rows: int
    row_spacing_m: float
    row_width_m: float
    height_m: float
    color: RGB


@dataclass(frozen=True, kw_only=True)
class SceneGround:
    """The ground's height (world z, m) on a regular grid: ``heights[j * nx + i]`` is at
    x = x0 + i * spacing_m, y = y0 + j * spacing_m."""

    x0: float
    y0: float
    spacing_m: float
    nx: int
    ny: int
    heights: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class SceneLayout:
    """The static scene of the session, for a viewer: a coarse ground, the buildings, the crop."""

    name: str
    ground: SceneGround | None = None
    boxes: tuple[SceneBox, ...] = ()
    crop_fields: tuple[SceneCropField, ...] = ()


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
    scene: SceneLayout | None = None  # absent from a simulator that does not describe its scene
    features: tuple[str, ...] = ()  # what the simulator takes beyond version 1, e.g. SENSOR_DEMAND_FEATURE


SENSOR_DEMAND_FEATURE = "sensor_demand"  # HELLO's feature: the simulator takes SENSOR_DEMAND


@dataclass(frozen=True, kw_only=True)
class ClientHello:
    """The first frame a bridge sends on any channel: its version and the channel's purpose."""

    protocol_version: int
    client: str
    role: ClientRole
    agent: int = 0  # the agent of a sensor or vehicle channel
    # Control channel: the UDP port of each CAN channel the bridge opened, as (agent, port), so the
    # simulator knows its controller before any datagram (absent from older bridges: empty).
    can_ports: tuple[tuple[int, int], ...] = ()
    # The session's token (wire.session_token), on every channel of a session's bridge; absent: "".
    token: str = ""


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
class SensorDemand:
    """The sensors of one agent whose frames someone wants (their indices in SENSOR_META's list):
    the simulator makes only those, from the next step it runs; before any, it makes them all."""

    agent: int
    sensors: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class AgentReset:
    """Move one agent to a pose of the world frame and stop it (within ``RESET_REACH_M`` of the
    world origin in x and y)."""

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
