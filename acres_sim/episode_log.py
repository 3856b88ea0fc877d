"""The episode log: the channels of the spec's "Channels of the Episode Log" in one MCAP file.

``EpisodeLog`` is a StepObserver of the simulator's server (acres_sim.server): it sees every
physics step and every change of the episode, in the server's thread, and writes

========================  =======================================  =================================
channel                   type (acres_interfaces/msg/...)          when
========================  =======================================  =================================
/sim/episode              Episode                                  at the start, on each reset of
                                                                   any agent, on each change of the
                                                                   simulation state
/sim/agents               Agents                                   at the start of each episode
/sim/agent_states         AgentStates                              every physics step (120 Hz)
/sim/farm_stamps          FarmStamps                               steps with contacts
/sim/farm_events          FarmEvents                               steps with events
/sim/conditions           Conditions                               at the start, each whole second
                                                                   of simulation time and when the
                                                                   precipitation changes
/sim/shifts               VehicleShifts                            at the start (empty) and on
                                                                   ``set_shifts``
/sim/task                 TaskStatus                               on ``task_status`` (task code)
========================  =======================================  =================================

The file is what rosbag2's MCAP storage writes (acres_bridge.tools.bag.BagWriter): profile ros2,
the full ros2msg definitions, CDR, the offered QoS per channel (the spec's profiles: /sim/episode
latched, the others reliable, volatile, depth 10) and the rosbag2 metadata record, so
``ros2 bag play -s mcap``, Foxglove, mcap_ros2 and rosbags open it. No ROS middleware runs: the
channels of low rate are serialised by rosbags' CDR serialiser from the definition text that the
file holds, the three per-step channels by precompiled struct layouts (``_CdrRecord``) that the
tests hold byte for byte against rosbags and mcap_ros2. Every stamp is simulation time (ns since
the session start, the stamp of the physics step), and log_time = publish_time = that stamp;
nothing in the file reads a clock, so the same seed, start and requests give the same bytes.

The state of an agent comes from the world (pose, motion, steering, the Polaris's drive-by-wire
report, the Maxxum's tractor model), its EnergyLedger from acres_sim.energy, the farm from
acres_sim.farm and the conditions from acres_sim.weather. The ledger restarts with each episode
of the agent; the farm is restored at the start of each session episode. An ACRES Core session has
no crop (as ACRES Core), so no farm.
"""

from __future__ import annotations

import contextlib
import logging
import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import numpy as np
from numpy.typing import NDArray
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from acres_bridge.errors import ProfileError
from acres_bridge.geo.rotation import quaternion_from_rpy
from acres_bridge.msg_profiles import QosSpec, load_profiles
from acres_bridge.tools.bag import BagWriter, Compression
from acres_bridge.tools.errors import BagError, DefinitionError
from acres_bridge.tools.msgdef import definition_text
from acres_bridge.tools.qos import Durability, History, OfferedQos, Reliability
from acres_bridge.wire.dbw import DbwReport
from acres_bridge.wire.vocabulary import Source, Vehicle
from acres_sim.clock import NS_PER_S, PHYSICS_DT_S
from acres_sim.energy import EnergyMeter, energy_params
from acres_sim.errors import EpisodeLogError, ParamsError
from acres_sim.farm import (
    EVENT_UNITS,
    IMPLEMENT_FOOTPRINTS,
    Events,
    Farm,
    FarmAgent,
    FarmParams,
    FarmStep,
    Heights,
    ImplementAction,
    Part,
    Stamps,
)
from acres_sim.implement import IMPLEMENTS
from acres_sim.kinematics import STANDARD_GRAVITY, BodyMotion, VehicleState
from acres_sim.tractor import TractorObservation, TractorParams
from acres_sim.weather import Conditions, Weather, WeatherParams
from acres_sim.world import AgentStatus, StepOutput, World

__all__ = [
    "CHANNELS",
    "EpisodeLog",
    "EpisodeLogError",
    "MountOffset",
    "TaskState",
    "TaskStatus",
    "VehicleShift",
]

_log = logging.getLogger("acres_sim.episode_log")

EPISODE: Final = "/sim/episode"
AGENTS: Final = "/sim/agents"
AGENT_STATES: Final = "/sim/agent_states"
FARM_STAMPS: Final = "/sim/farm_stamps"
FARM_EVENTS: Final = "/sim/farm_events"
CONDITIONS: Final = "/sim/conditions"
SHIFTS: Final = "/sim/shifts"
TASK: Final = "/sim/task"
CHANNELS: Final = (EPISODE, AGENTS, AGENT_STATES, FARM_STAMPS, FARM_EVENTS, CONDITIONS, SHIFTS, TASK)
"""The channels of the log, in the order of the spec's table (and of the file)."""

_PROFILE_TABLE: Final = "episode_log"
_DEFAULT_QOS: Final = "vehicle"  # the spec's profile of every channel without one (reliable, volatile, 10)
_WORLD_FRAME: Final = "world"
_HITCH_LINK_RADIUS_M: Final = TractorParams().hitch.link_radius_m


class TaskState(IntEnum):
    """The STATUS_* values of the TaskStatus message."""

    PENDING = 0
    RUNNING = 1
    SUCCEEDED = 2
    FAILED = 3
    ABORTED = 4


def _finite(owner: str, **values: float) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ParamsError(f"{owner}.{name}: expected a finite number, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TaskStatus:
    """What task code reports on /sim/task: the task (and the agent it is for, empty for a session
    task), its status, its progress (0 .. 1), the total reward of the last step and its terms by
    name (in the order given), and a human-readable message."""

    task: str
    status: TaskState
    agent: str = ""
    progress: float = 0.0
    reward: float = 0.0
    reward_terms: Mapping[str, float] = field(default_factory=dict)
    message: str = ""

    def __post_init__(self) -> None:
        """A named task, a known status, a progress of 0 .. 1, finite rewards."""
        if not self.task:
            raise ParamsError("TaskStatus.task: expected a non-empty task name")
        try:
            object.__setattr__(self, "status", TaskState(self.status))
        except ValueError:
            raise ParamsError(
                f"TaskStatus.status: expected one of {[int(s) for s in TaskState]}, got {self.status!r}"
            ) from None
        _finite("TaskStatus", progress=self.progress, reward=self.reward)
        if not 0.0 <= self.progress <= 1.0:
            raise ParamsError(f"TaskStatus.progress: expected 0 .. 1, got {self.progress!r}")
        terms = dict(self.reward_terms)
        for name, value in terms.items():
            if not isinstance(name, str):
                raise ParamsError(f"TaskStatus.reward_terms: expected names as strings, got {name!r}")
            _finite("TaskStatus.reward_terms", **{name: value})
        object.__setattr__(self, "reward_terms", MappingProxyType(terms))


@dataclass(frozen=True, kw_only=True)
class MountOffset:
    """A change of a sensor mount in base_footprint: a translation (m) and a rotation (x, y, z, w)."""

    translation: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)

    def __post_init__(self) -> None:
        """Three finite coordinates and a unit quaternion."""
        if len(self.translation) != 3 or len(self.rotation) != 4:
            raise ParamsError(
                "MountOffset: expected a translation of 3 and a rotation of 4 numbers, got "
                f"{self.translation!r} and {self.rotation!r}"
            )
        _finite("MountOffset", **{f"translation[{i}]": v for i, v in enumerate(self.translation)})
        _finite("MountOffset", **{f"rotation[{i}]": v for i, v in enumerate(self.rotation)})
        norm = math.sqrt(sum(v * v for v in self.rotation))
        if abs(norm - 1.0) > 1e-6:
            raise ParamsError(f"MountOffset.rotation: expected a unit quaternion, got norm {norm:.6f}")


@dataclass(frozen=True, kw_only=True)
class VehicleShift:
    """How one agent's hardware differs from its nominal vehicle (the VehicleShift message): offsets
    and scales from nominal (a scale of 1 and an offset of 0 change nothing)."""

    agent: str
    mass_offset_kg: float = 0.0
    steering_offset_deg: float = 0.0
    steering_ratio_scale: float = 1.0
    throttle_gain_scale: float = 1.0
    brake_gain_scale: float = 1.0
    tyre_radius_scale: float = 1.0
    actuator_delay_s: float = 0.0
    lidar_mount_offset: MountOffset = field(default_factory=MountOffset)
    camera_mount_offset: MountOffset = field(default_factory=MountOffset)

    def __post_init__(self) -> None:
        """A named agent, finite offsets, positive scales, a delay >= 0."""
        if not self.agent:
            raise ParamsError("VehicleShift.agent: expected an agent name")
        _finite(
            "VehicleShift",
            mass_offset_kg=self.mass_offset_kg,
            steering_offset_deg=self.steering_offset_deg,
            actuator_delay_s=self.actuator_delay_s,
        )
        for name in ("steering_ratio_scale", "throttle_gain_scale", "brake_gain_scale", "tyre_radius_scale"):
            value = getattr(self, name)
            _finite("VehicleShift", **{name: value})
            if value <= 0.0:
                raise ParamsError(f"VehicleShift.{name}: expected a factor > 0, got {value!r}")
        if self.actuator_delay_s < 0.0:
            raise ParamsError(
                f"VehicleShift.actuator_delay_s: expected >= 0 s, got {self.actuator_delay_s!r}"
            )


# ---- messages (rosbags' generated classes of the definitions in the file) ------------------------


@cache
def _channel_specs() -> tuple[tuple[str, str, QosSpec], ...]:
    """(name, type, QoS) of each channel, from msg_profiles' episode_log table."""
    profiles = load_profiles(check_types=False)
    default = profiles.qos(_DEFAULT_QOS)
    rows = {row.name: row for row in profiles.table(_PROFILE_TABLE)}
    missing = [name for name in CHANNELS if name not in rows]
    if missing:
        raise EpisodeLogError(f"msg_profiles table {_PROFILE_TABLE!r} lacks the channels {missing}")
    return tuple((name, rows[name].type_name, rows[name].qos or default) for name in CHANNELS)


def _offered(spec: QosSpec) -> OfferedQos:
    return OfferedQos(
        reliability=Reliability[spec.reliability.upper()],
        durability=Durability[spec.durability.upper()],
        history=History[spec.history.upper()],
        depth=spec.depth,
    )


@cache
def _typestore(types: tuple[str, ...]) -> tuple[Typestore, tuple[str, ...]]:
    """A type store of the installed definitions of ``types``, and their full definition texts."""
    store = get_typestore(Stores.EMPTY)
    texts = []
    for name in types:
        text = definition_text(name)
        store.register(get_types_from_msg(text, name))
        texts.append(text)
    return store, tuple(texts)


class _Messages:
    """Builds the messages of the log's channels of low rate as rosbags objects and serialises them
    (CDR, little endian); the per-step channels go through ``_CdrRecord``."""

    def __init__(self, store: Typestore) -> None:
        self._store = store
        t = store.types
        self.time = t["builtin_interfaces/msg/Time"]
        self.header = t["std_msgs/msg/Header"]
        self.quaternion = t["geometry_msgs/msg/Quaternion"]
        self.vector = t["geometry_msgs/msg/Vector3"]
        self.transform = t["geometry_msgs/msg/Transform"]
        self.episode = t["acres_interfaces/msg/Episode"]
        self.agents = t["acres_interfaces/msg/Agents"]
        self.agent_info = t["acres_interfaces/msg/AgentInfo"]
        self.conditions = t["acres_interfaces/msg/Conditions"]
        self.shifts = t["acres_interfaces/msg/VehicleShifts"]
        self.shift = t["acres_interfaces/msg/VehicleShift"]
        self.task = t["acres_interfaces/msg/TaskStatus"]

    def serialize(self, message: Any) -> bytes:
        return bytes(self._store.serialize_cdr(message, message.__msgtype__, little_endian=True))

    def stamp(self, ns: int, frame: str = "") -> Any:
        sec, nanosec = divmod(ns, NS_PER_S)
        return self.header(stamp=self.time(sec=sec, nanosec=nanosec), frame_id=frame)

    def mount(self, offset: MountOffset) -> Any:
        x, y, z = offset.translation
        qx, qy, qz, qw = offset.rotation
        return self.transform(
            translation=self.vector(x=x, y=y, z=z), rotation=self.quaternion(x=qx, y=qy, z=qz, w=qw)
        )


_CDR_LE: Final = b"\x00\x01\x00\x00"  # the encapsulation header of little-endian plain CDR
_ALIGNMENT: Final = {"?": 1, "B": 1, "I": 4, "i": 4, "Q": 8, "d": 8}


class _CdrRecord:
    """The plain CDR (little endian) of a run of fields, packed by one struct.

    ``codes`` are struct codes of primitives and "s" for a string (its length with the NUL as a
    uint32, then its UTF-8 bytes and the NUL). Each primitive aligns to its size, counted from the
    end of the encapsulation header, so the layout depends on where the run starts (modulo 8) and
    on its strings' lengths: each layout met is compiled once. The log's hot channels go through
    this rather than building message objects; the tests check it byte for byte against rosbags'
    and mcap_ros2's serialisers.
    """

    def __init__(self, codes: str) -> None:
        self._codes = codes
        self._layouts: dict[tuple[int, tuple[int, ...]], tuple[struct.Struct, int]] = {}

    def _layout(self, start: int, lengths: tuple[int, ...]) -> tuple[struct.Struct, int]:
        key = (start % 8, lengths)
        layout = self._layouts.get(key)
        if layout is None:
            position = start % 8
            codes = ["<"]
            strings = iter(lengths)
            for code in self._codes:
                if code == "s":
                    size = next(strings)
                    pad = -position % 4
                    codes.append(f"{pad}xI{size}s")
                    position += pad + 4 + size
                else:
                    size = _ALIGNMENT[code]
                    pad = -position % size
                    codes.append(f"{pad}x{code}")
                    position += pad + size
            layout = (struct.Struct("".join(codes)), position - start % 8)
            self._layouts[key] = layout
        return layout

    def pack(self, start: int, lengths: tuple[int, ...], values: Sequence[object]) -> tuple[bytes, int]:
        """The bytes of the run starting at offset ``start``, and the offset after it. ``values`` hold
        each string as its length and its bytes (with the NUL); ``lengths`` those lengths."""
        layout, size = self._layout(start, lengths)
        return layout.pack(*values), start + size


_NO_AGENT: Final = b"\x00"  # the empty string: a FarmEvent of the weather
_UNITS: Final = {int(kind): unit.encode() + b"\x00" for kind, unit in EVENT_UNITS.items()}
_SEQUENCE_HEADER: Final = _CdrRecord("iIsQI")  # header (stamp, frame_id), step, the sequence's count
_AGENT_STATE: Final = _CdrRecord("s" + "d" * 19 + "B" + "dd" + "??" + "d" * 11)
_FARM_STAMP: Final = _CdrRecord("sB" + "d" * 9)
_FARM_EVENT: Final = _CdrRecord("Bs" + "d" * 6 + "s")


def _text(value: str) -> bytes:
    """A string's CDR bytes: UTF-8 and the NUL."""
    return value.encode() + b"\x00"


def _pack_step_message(
    stamp_ns: int,
    step: int,
    record: _CdrRecord,
    items: Sequence[tuple[tuple[int, ...], Sequence[object]]],
    frame: bytes = _text("world"),
) -> bytes:
    """An AgentStates, FarmStamps or FarmEvents message: header, step, then ``items`` as
    (string lengths, values) of ``record``."""
    sec, nanosec = divmod(stamp_ns, NS_PER_S)
    head, position = _SEQUENCE_HEADER.pack(
        0, (len(frame),), (sec, nanosec, len(frame), frame, step, len(items))
    )
    parts = [_CDR_LE, head]
    for lengths, values in items:
        data, position = record.pack(position, lengths, values)
        parts.append(data)
    return b"".join(parts)


class _Drive(NamedTuple):
    """What an agent's drive did in one step, as the AgentState and the ledger take it (a tuple:
    one is made per agent and step)."""

    engine_rpm: float | None
    gear: int
    throttle_pct: float
    brake_pct: float
    dbw_enabled: bool
    safety_brake: bool
    drawbar_n: float = 0.0
    pto_w: float = 0.0
    slip: float | None = None
    lift_deg: float | None = None
    implement: ImplementAction | None = None


def _polaris_drive(report: DbwReport, status: AgentStatus) -> _Drive:
    return _Drive(
        engine_rpm=None,
        gear=report.gear,
        throttle_pct=report.throttle_output_pct,
        brake_pct=report.brake_output_pct,
        dbw_enabled=status.dbw_enabled,
        safety_brake=False,
    )


def _maxxum_drive(obs: TractorObservation, status: AgentStatus) -> _Drive:
    """The tractor model's controls and loads; none while the route follower or set_command drives."""
    if status.autopilot or status.manual:
        return _Drive(
            engine_rpm=None, gear=0, throttle_pct=0.0, brake_pct=0.0, dbw_enabled=False, safety_brake=False
        )
    implement = IMPLEMENTS.get(obs.implement)
    footprint = IMPLEMENT_FOOTPRINTS.get(obs.implement)
    action = None
    if implement is not None and footprint is not None:
        tills = implement.tillage and obs.implement_depth_m > 0.0
        cuts = not implement.tillage and obs.pto_on and not obs.raised
        if tills or cuts:
            action = ImplementAction(
                footprint=footprint, depth_m=obs.implement_depth_m, tills=tills, cuts=cuts
            )
    return _Drive(
        engine_rpm=obs.engine_rpm,
        gear=0,
        throttle_pct=100.0 * obs.pedal,
        brake_pct=100.0 * obs.brake,
        dbw_enabled=not obs.stale,
        safety_brake=obs.stale,
        drawbar_n=obs.draft_n,
        pto_w=1000.0 * obs.pto_kw,
        slip=obs.wheel_slip,
        lift_deg=obs.hitch_lift_deg,
        implement=action,
    )


def _heights(world: World) -> Heights:
    """The world's ground heights, vectorised: the scene's ground, or its own terrain function."""
    ground = world.scene.terrain
    if world.terrain is ground:
        return ground.heights
    vectorised = np.vectorize(world.terrain, otypes=[np.float64])

    def heights(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.floating]:
        return np.asarray(vectorised(x, y), dtype=np.float64)

    return heights


def _episode_key(world: World, statuses: Sequence[AgentStatus]) -> tuple[int, ...]:
    """What changes with a reset or a state change: the session's and each agent's episode, the
    resets of agent 0 and the simulation state."""
    return (world.episode, world.reset_epoch, int(world.state), *(s.episode for s in statuses))


@dataclass
class _Agent:
    """What the log keeps of one agent between steps."""

    index: int
    name: str
    vehicle: Vehicle
    meter: EnergyMeter
    implement: str  # the implement's name, empty when none
    implement_mass_kg: float
    speed: float  # the signed speed at the end of the last step
    episode: int  # the agent's episode counter the ledger belongs to
    lift_deg: float | None = None
    settled: bool = False  # it has made a step of this episode (the first one puts it down)


class EpisodeLog:
    """Writes the episode log of one World into an MCAP file; a StepObserver of the server.

    Use it from the server's thread (the observer calls come from there; task code that writes
    /sim/task runs there too, e.g. as another observer): it is not thread-safe. The file is
    complete after ``close`` (the server closes its observers when it stops). A write that fails
    (a full disk) is logged, ends the log and leaves the simulator running.
    """

    def __init__(
        self,
        world: World,
        path: Path | str,
        *,
        farm: FarmParams | None = None,
        weather: WeatherParams | None = None,
        compression: Compression = Compression.NONE,
    ) -> None:
        """Create ``path`` (it must not exist) and write the channels' state at the world's current
        step: the episode, the agents, the conditions and the (empty) shifts."""
        self._world = world
        try:
            specs = _channel_specs()
            store, texts = _typestore(tuple(type_name for _, type_name, _ in specs))
        except (ProfileError, DefinitionError) as error:
            raise EpisodeLogError(
                f"episode log: the channels' table or message definitions are missing: {error} "
                "(the acres_interfaces package must be installed)"
            ) from None
        self._msg = _Messages(store)
        try:
            self._bag = BagWriter(path, compression=compression)
        except BagError as error:
            raise EpisodeLogError(f"episode log: {error}") from None
        self.path = self._bag.path
        self._closed = False
        self._failed = False
        try:
            for (name, type_name, qos), text in zip(specs, texts, strict=True):
                self._bag.add_topic(name, type_name, offered_qos=[_offered(qos)], definition=text)
            self._setup(world, farm, weather)
            self._write_start(world)
        except BaseException:
            self._bag.close()
            self.path.unlink(missing_ok=True)  # a log that could not start leaves no file
            raise

    def _setup(self, world: World, farm: FarmParams | None, weather: WeatherParams | None) -> None:
        statuses = [world.agent(i) for i in range(len(world.agent_names))]
        self._agents: list[_Agent] = []
        for status in statuses:
            implement, implement_mass = "", 0.0
            if status.vehicle == Vehicle.MAXXUM:
                implement = world.tractor_observation(status.index).implement
                params = IMPLEMENTS.get(implement)
                implement_mass = params.mass_kg if params is not None else 0.0
            self._agents.append(
                _Agent(
                    index=status.index,
                    name=status.name,
                    vehicle=status.vehicle,
                    meter=EnergyMeter(
                        energy_params(status.params), mass_kg=status.params.mass_kg + implement_mass
                    ),
                    implement=implement,
                    implement_mass_kg=implement_mass,
                    speed=status.state.speed,
                    episode=status.episode,
                )
            )
        scene = world.scene
        crop = () if world.source is Source.CORE else scene.crop
        self._farm = Farm(crop, [s.params for s in statuses], params=farm, heights=_heights(world))
        lat, lon, _ = world.georef.world_to_geodetic(0.0, 0.0, 0.0)
        self._weather = Weather(
            seed=world.seed, start_utc=world.start_utc, latitude_deg=lat, longitude_deg=lon, params=weather
        )
        self._episode_key: tuple[int, ...] = ()
        self._session_episode = world.episode
        self._stamp_ns = world.stamp_ns
        self._next_conditions_ns = 0
        self._next_change_ns: int | None = None
        self._soil_water_pct = 0.0
        self._shifts: tuple[VehicleShift, ...] = ()
        self._name_bytes = [_text(a.name) for a in self._agents]
        self._no_farm = FarmStep.nothing(len(self._agents))

    def _write_start(self, world: World) -> None:
        stamp = world.stamp_ns
        self._episode_key = _episode_key(world, [world.agent(a.index) for a in self._agents])
        self._write_episode(world)
        self._write_agents(world, stamp)
        conditions = self._write_conditions(stamp)
        self._farm.wet(conditions.soil_water_pct)  # the level that rain raises
        self._write_shifts(stamp)

    # ---- the observer -------------------------------------------------------------------------

    def on_episode(self, world: World) -> None:
        """A reset or a change of the simulation state: the episode, and at a new episode the agents."""
        if self._closed or self._failed:
            return
        try:
            self._sync_episode(world, [world.agent(i) for i in range(len(self._agents))])
        except OSError as error:
            self._fail(error)

    def on_step(self, world: World, output: StepOutput) -> None:
        """One physics step: the agents' states, the farm's contacts and changes, the conditions."""
        if self._closed or self._failed:
            return
        try:
            self._step(world, output)
        except OSError as error:
            self._fail(error)

    def close(self) -> None:
        """Finish the file (its summary and the rosbag2 metadata record); later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self._bag.close()
        except OSError as error:
            _log.error("episode log %s: closing failed: %s", self.path, error)
            return
        counts = {name: self._bag.message_count(name) for name in CHANNELS}
        _log.info("episode log %s: %d messages %s", self.path, sum(counts.values()), counts)

    def _fail(self, error: OSError) -> None:
        _log.error(
            "episode log %s: writing failed (%s); the log ends here, the simulation goes on", self.path, error
        )
        self._failed = True
        self._closed = True
        with contextlib.suppress(OSError):
            self._bag.close()

    def message_count(self, channel: str) -> int:
        """The messages written on one channel so far."""
        if channel not in CHANNELS:
            raise ParamsError(f"episode log channel {channel!r}: expected one of {list(CHANNELS)}")
        return self._bag.message_count(channel)

    # ---- task code and shifts ---------------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise EpisodeLogError(f"episode log {self.path}: {what} after close")

    def task_status(self, status: TaskStatus, *, stamp_ns: int | None = None) -> None:
        """Write the status of a task on /sim/task, stamped with the current step (or ``stamp_ns``)."""
        self._check_open("task_status")
        if status.agent and status.agent not in self._world.agent_names:
            raise ParamsError(
                f"TaskStatus.agent {status.agent!r}: expected '' or one of {list(self._world.agent_names)}"
            )
        stamp = self._stamp(stamp_ns)
        m = self._msg
        message = m.task(
            header=m.stamp(stamp),
            task=status.task,
            agent=status.agent,
            status=int(status.status),
            progress=float(status.progress),
            reward=float(status.reward),
            reward_term_names=list(status.reward_terms),
            reward_terms=np.array(list(status.reward_terms.values()), dtype=np.float64),
            message=status.message,
        )
        self._write(TASK, message, stamp)

    @property
    def shifts(self) -> tuple[VehicleShift, ...]:
        """The hardware shifts in force (the last ``set_shifts``); empty: every vehicle is nominal."""
        return self._shifts

    def set_shifts(self, shifts: Sequence[VehicleShift], *, stamp_ns: int | None = None) -> None:
        """Record the agents' hardware shifts (at most one per agent) on /sim/shifts when they change.

        The reference simulator's vehicles are nominal; a simulator that shifts its hardware reports
        it here. An agent without a shift is nominal.
        """
        self._check_open("set_shifts")
        names = [s.agent for s in shifts]
        unknown = [n for n in names if n not in self._world.agent_names]
        if unknown:
            raise ParamsError(
                f"VehicleShift.agent {unknown}: expected names of {list(self._world.agent_names)}"
            )
        if len(set(names)) != len(names):
            raise ParamsError(f"set_shifts: expected at most one shift per agent, got {names}")
        shifts = tuple(shifts)
        if shifts == self._shifts:
            return
        self._shifts = shifts
        self._write_shifts(self._stamp(stamp_ns))

    def _stamp(self, stamp_ns: int | None) -> int:
        if stamp_ns is None:
            return self._stamp_ns
        if isinstance(stamp_ns, bool) or not isinstance(stamp_ns, int) or stamp_ns < 0:
            raise ParamsError(f"stamp_ns: expected an integer >= 0 (ns of simulation time), got {stamp_ns!r}")
        return stamp_ns

    # ---- writing ------------------------------------------------------------------------------

    def _write(self, channel: str, message: Any, stamp_ns: int) -> None:
        self._bag.write(channel, self._msg.serialize(message), log_time_ns=stamp_ns, publish_time_ns=stamp_ns)

    def _write_episode(self, world: World) -> None:
        s = world.episode_snapshot()
        m = self._msg
        message = m.episode(
            header=m.stamp(s.stamp_ns),
            episode_id=s.episode_id,
            episode=s.episode,
            reset_epoch=s.reset_epoch,
            step=s.step,
            episode_time_s=s.episode_time_s,
            state=int(s.state),
            lockstep=s.lockstep,
            seed=s.seed,
            source=str(s.source),
            map=s.map,
            agents=list(s.agents),
        )
        self._write(EPISODE, message, s.stamp_ns)

    def _write_agents(self, world: World, stamp: int) -> None:
        m = self._msg
        infos = []
        for a in self._agents:
            p = world.agent(a.index).params
            infos.append(
                m.agent_info(
                    name=a.name,
                    index=a.index,
                    vehicle=str(a.vehicle),
                    implement=a.implement,
                    mass_kg=p.mass_kg,
                    wheelbase_m=p.wheelbase_m,
                    track_width_m=p.track_m,
                    front_tyre_radius_m=p.tyre_radius_front_m,
                    rear_tyre_radius_m=p.tyre_radius_rear_m,
                    max_steer_angle_rad=p.max_steer_rad,
                    max_speed_mps=p.max_speed_mps,
                )
            )
        self._write(AGENTS, m.agents(header=m.stamp(stamp), episode_id=world.episode_id, agents=infos), stamp)

    def _write_conditions(self, stamp: int) -> Conditions:
        c = self._weather.at(stamp)
        m = self._msg
        sec, nanosec = divmod(c.local_time_ns, NS_PER_S)
        message = m.conditions(
            header=m.stamp(stamp),
            local_time=m.time(sec=sec, nanosec=nanosec),
            air_temperature_c=c.air_temperature_c,
            relative_humidity_pct=c.relative_humidity_pct,
            wind_speed_mps=c.wind_speed_mps,
            wind_from_deg=c.wind_from_deg,
            precipitation_mm_per_h=c.precipitation_mm_per_h,
            cloud_cover_pct=c.cloud_cover_pct,
            solar_irradiance_w_per_m2=c.solar_irradiance_w_per_m2,
            soil_water_pct=c.soil_water_pct,
            soil_temperature_c=c.soil_temperature_c,
        )
        self._write(CONDITIONS, message, stamp)
        self._soil_water_pct = c.soil_water_pct
        self._next_conditions_ns = (stamp // NS_PER_S + 1) * NS_PER_S
        self._next_change_ns = self._weather.next_change_ns(stamp)
        return c

    def _write_shifts(self, stamp: int) -> None:
        m = self._msg
        shifts = [
            m.shift(
                agent=s.agent,
                mass_offset_kg=s.mass_offset_kg,
                steering_offset_deg=s.steering_offset_deg,
                steering_ratio_scale=s.steering_ratio_scale,
                throttle_gain_scale=s.throttle_gain_scale,
                brake_gain_scale=s.brake_gain_scale,
                tyre_radius_scale=s.tyre_radius_scale,
                actuator_delay_s=s.actuator_delay_s,
                lidar_mount_offset=m.mount(s.lidar_mount_offset),
                camera_mount_offset=m.mount(s.camera_mount_offset),
            )
            for s in self._shifts
        ]
        self._write(SHIFTS, m.shifts(header=m.stamp(stamp), shifts=shifts), stamp)

    # ---- episodes -----------------------------------------------------------------------------

    def _sync_episode(self, world: World, statuses: Sequence[AgentStatus]) -> None:
        """Write what an episode change changed: /sim/episode on any reset or state change, /sim/agents
        and a restored farm at a new session episode, and a new ledger per agent reset."""
        key = _episode_key(world, statuses)
        if key == self._episode_key:
            return
        self._episode_key = key
        self._write_episode(world)
        for a, status in zip(self._agents, statuses, strict=True):
            if status.episode != a.episode:
                a.episode = status.episode
                a.meter.reset()
                a.speed = status.state.speed
                a.lift_deg = None
                a.settled = False
        if world.episode != self._session_episode:
            self._session_episode = world.episode
            self._farm.reset()
            self._write_agents(world, world.stamp_ns)

    # ---- steps --------------------------------------------------------------------------------

    def _drive(self, world: World, output: StepOutput, a: _Agent, status: AgentStatus) -> _Drive:
        if a.vehicle == Vehicle.POLARIS:
            report = next((r for i, r in output.dbw if i == a.index), None)
            return _polaris_drive(report if report is not None else world.dbw_report(a.index), status)
        obs = next((o for i, o in output.tractors if i == a.index), None)
        return _maxxum_drive(obs if obs is not None else world.tractor_observation(a.index), status)

    def _step(self, world: World, output: StepOutput) -> None:
        stamp = output.stamp_ns
        self._stamp_ns = stamp
        statuses = [world.agent(a.index) for a in self._agents]
        self._sync_episode(world, statuses)
        drives = [self._drive(world, output, a, s) for a, s in zip(self._agents, statuses, strict=True)]

        if self._farm.reaches(output.states):
            farm_agents = [
                FarmAgent(
                    state=state,
                    accel_mps2=motion.accel,
                    lateral_accel_mps2=state.speed * motion.yaw_rate,
                    mass_kg=a.meter.mass_kg,
                    implement_mass_kg=a.implement_mass_kg,
                    implement=drive.implement,
                )
                for a, state, motion, drive in zip(
                    self._agents, output.states, output.motions, drives, strict=True
                )
            ]
            farm = self._farm.step(farm_agents, soil_water_pct=self._soil_water_pct)
        else:
            farm = self._no_farm

        states = []
        for a, drive, state, motion, soil in zip(
            self._agents, drives, output.states, output.motions, farm.soil_work_j, strict=True
        ):
            hitch = 0.0
            if drive.lift_deg is not None:
                if a.lift_deg is not None:
                    rise = _HITCH_LINK_RADIUS_M * (
                        math.sin(math.radians(drive.lift_deg)) - math.sin(math.radians(a.lift_deg))
                    )
                    hitch = a.implement_mass_kg * STANDARD_GRAVITY * max(rise, 0.0)
                a.lift_deg = drive.lift_deg
            a.meter.step(
                speed_before_mps=a.speed,
                speed_after_mps=state.speed,
                dt_s=PHYSICS_DT_S,
                brake=drive.brake_pct / 100.0,
                soil_work_j=soil if a.settled else 0.0,  # a vehicle put down on soil settles
                drawbar_force_n=drive.drawbar_n,
                pto_power_w=drive.pto_w,
                hitch_work_j=hitch,
                slip=drive.slip,
                engine_rpm=drive.engine_rpm,
            )
            a.speed = state.speed
            a.settled = True
            states.append(self._agent_state(a, drive, state, motion))
        data = _pack_step_message(stamp, output.step, _AGENT_STATE, states)
        self._bag.write(AGENT_STATES, data, log_time_ns=stamp, publish_time_ns=stamp)
        if len(farm.stamps):
            self._write_stamps(output.step, stamp, farm.stamps)
        events = [farm.events] if len(farm.events) else []
        if stamp >= self._next_conditions_ns or (
            self._next_change_ns is not None and stamp >= self._next_change_ns
        ):
            conditions = self._write_conditions(stamp)
            wetted = self._farm.wet(conditions.soil_water_pct)
            if len(wetted):
                events.append(wetted)
        if events:
            self._write_events(output.step, stamp, events)

    def _agent_state(
        self, a: _Agent, drive: _Drive, state: VehicleState, motion: BodyMotion
    ) -> tuple[tuple[int, ...], Sequence[object]]:
        """An AgentState as the string lengths and the values of ``_AGENT_STATE``."""
        qx, qy, qz, qw = quaternion_from_rpy(state.roll, state.pitch, state.yaw)
        vx, vy, vz = motion.velocity
        wx, wy, wz = motion.angular_rate
        name = self._name_bytes[a.index]
        return (len(name),), (
            len(name),
            name,
            state.x,
            state.y,
            state.z,
            qx,
            qy,
            qz,
            qw,
            vx,
            vy,
            vz,
            wx,
            wy,
            wz,
            motion.accel,
            state.speed * motion.yaw_rate,
            0.0,
            state.speed,
            state.steer,
            a.meter.engine_rpm,
            drive.gear,
            drive.throttle_pct,
            drive.brake_pct,
            drive.dbw_enabled,
            drive.safety_brake,
            *a.meter.ledger_values(),
        )

    def _write_stamps(self, step: int, stamp: int, stamps: Stamps) -> None:
        slips = [a.meter.slip for a in self._agents]
        names = self._name_bytes
        items: list[tuple[tuple[int, ...], Sequence[object]]] = []
        for agent, part, x, y, z, area, force, pressure, sinkage, crop in zip(
            stamps.agent.tolist(),
            stamps.part.tolist(),
            stamps.x.tolist(),
            stamps.y.tolist(),
            stamps.z.tolist(),
            stamps.area_m2.tolist(),
            stamps.force_n.tolist(),
            stamps.pressure_pa.tolist(),
            stamps.sinkage_m.tolist(),
            stamps.crop_height_m.tolist(),
            strict=True,
        ):
            name = names[agent]
            slip = slips[agent] if part < Part.BODY else 0.0  # the tyres slip
            items.append(
                ((len(name),), (len(name), name, part, x, y, z, area, force, pressure, sinkage, slip, crop))
            )
        data = _pack_step_message(stamp, step, _FARM_STAMP, items)
        self._bag.write(FARM_STAMPS, data, log_time_ns=stamp, publish_time_ns=stamp)

    def _write_events(self, step: int, stamp: int, groups: Sequence[Events]) -> None:
        names = self._name_bytes
        items: list[tuple[tuple[int, ...], Sequence[object]]] = []
        for events in groups:
            for kind, agent, x, y, z, area, before, after in zip(
                events.kind.tolist(),
                events.agent.tolist(),
                events.x.tolist(),
                events.y.tolist(),
                events.z.tolist(),
                events.area_m2.tolist(),
                events.before.tolist(),
                events.after.tolist(),
                strict=True,
            ):
                name = names[agent] if agent >= 0 else _NO_AGENT
                unit = _UNITS[kind]
                items.append(
                    (
                        (len(name), len(unit)),
                        (kind, len(name), name, x, y, z, area, before, after, len(unit), unit),
                    )
                )
        data = _pack_step_message(stamp, step, _FARM_EVENT, items)
        self._bag.write(FARM_EVENTS, data, log_time_ns=stamp, publish_time_ns=stamp)
