"""The episode log's channels: their names, types and QoS (msg_profiles' episode_log table), the
messages of the channels of low rate as rosbags objects, and the CDR layouts of the per-step ones."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Final

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from acres_bridge.msg_profiles import QosSpec, load_profiles
from acres_bridge.tools.cdr_records import CdrRecord, cdr_string
from acres_bridge.tools.msgdef import definition_text
from acres_bridge.tools.qos import Durability, History, OfferedQos, Reliability
from acres_bridge.wire import EpisodeInfo
from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.clock import NS_PER_S
from acres_sim.episode.records import MountOffset, VehicleShift
from acres_sim.errors import EpisodeLogError
from acres_sim.vehicles.params import VehicleParams
from acres_sim.world.farm import EVENT_UNITS
from acres_sim.world.weather import Conditions

__all__ = [
    "AGENTS",
    "AGENT_STATES",
    "AGENT_STATE_RECORD",
    "CHANNELS",
    "CONDITIONS",
    "EPISODE",
    "EVENT_UNIT_TEXT",
    "FARM_EVENTS",
    "FARM_EVENT_RECORD",
    "FARM_STAMPS",
    "FARM_STAMP_RECORD",
    "NO_AGENT_TEXT",
    "SHIFTS",
    "TASK",
    "RosbagsMessages",
    "channel_specs",
    "offered_qos",
    "typestore",
]

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

# The CDR layouts of the per-step channels' elements (acres_interfaces AgentState, FarmStamp,
# FarmEvent), each string as its length and bytes.
AGENT_STATE_RECORD: Final = CdrRecord("s" + "d" * 19 + "B" + "dd" + "??" + "d" * 11)
FARM_STAMP_RECORD: Final = CdrRecord("sB" + "d" * 9)
FARM_EVENT_RECORD: Final = CdrRecord("Bs" + "d" * 6 + "s")
NO_AGENT_TEXT: Final = cdr_string("")  # a FarmEvent of the weather has no agent
EVENT_UNIT_TEXT: Final = {int(kind): cdr_string(unit) for kind, unit in EVENT_UNITS.items()}


@cache
def channel_specs() -> tuple[tuple[str, str, QosSpec], ...]:
    """(name, type, QoS) of each channel, from msg_profiles' episode_log table."""
    profiles = load_profiles(check_types=False)
    default = profiles.qos(_DEFAULT_QOS)
    rows = {row.name: row for row in profiles.table(_PROFILE_TABLE)}
    missing = [name for name in CHANNELS if name not in rows]
    if missing:
        raise EpisodeLogError(f"msg_profiles table {_PROFILE_TABLE!r} lacks the channels {missing}")
    return tuple((name, rows[name].type_name, rows[name].qos or default) for name in CHANNELS)


def offered_qos(spec: QosSpec) -> OfferedQos:
    return OfferedQos(
        reliability=Reliability[spec.reliability.upper()],
        durability=Durability[spec.durability.upper()],
        history=History[spec.history.upper()],
        depth=spec.depth,
    )


@cache
def typestore(types: tuple[str, ...]) -> tuple[Typestore, tuple[str, ...]]:
    """A type store of the installed definitions of ``types``, and their full definition texts."""
    store = get_typestore(Stores.EMPTY)
    texts = []
    for name in types:
        text = definition_text(name)
        store.register(get_types_from_msg(text, name))
        texts.append(text)
    return store, tuple(texts)


class RosbagsMessages:
    """Builds the messages of the log's channels of low rate as rosbags objects and serialises them
    (CDR, little endian); the per-step channels go through the CDR records."""

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

    def episode_message(self, s: EpisodeInfo) -> Any:
        """/sim/episode of an episode snapshot."""
        return self.episode(
            header=self.stamp(s.stamp_ns),
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

    def agents_message(
        self, stamp_ns: int, episode_id: str, agents: Sequence[tuple[str, int, Vehicle, str, VehicleParams]]
    ) -> Any:
        """/sim/agents of (name, index, vehicle, implement, parameters) of each agent."""
        infos = [
            self.agent_info(
                name=name,
                index=index,
                vehicle=str(vehicle),
                implement=implement,
                mass_kg=p.mass_kg,
                wheelbase_m=p.wheelbase_m,
                track_width_m=p.track_m,
                front_tyre_radius_m=p.tyre_radius_front_m,
                rear_tyre_radius_m=p.tyre_radius_rear_m,
                max_steer_angle_rad=p.max_steer_rad,
                max_speed_mps=p.max_speed_mps,
            )
            for name, index, vehicle, implement, p in agents
        ]
        return self.agents(header=self.stamp(stamp_ns), episode_id=episode_id, agents=infos)

    def conditions_message(self, stamp_ns: int, c: Conditions) -> Any:
        """/sim/conditions of the weather's conditions at a stamp."""
        sec, nanosec = divmod(c.local_time_ns, NS_PER_S)
        return self.conditions(
            header=self.stamp(stamp_ns),
            local_time=self.time(sec=sec, nanosec=nanosec),
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

    def shifts_message(self, stamp_ns: int, shifts: Sequence[VehicleShift]) -> Any:
        """/sim/shifts of the agents' hardware shifts."""
        items = [
            self.shift(
                agent=s.agent,
                mass_offset_kg=s.mass_offset_kg,
                steering_offset_deg=s.steering_offset_deg,
                steering_ratio_scale=s.steering_ratio_scale,
                throttle_gain_scale=s.throttle_gain_scale,
                brake_gain_scale=s.brake_gain_scale,
                tyre_radius_scale=s.tyre_radius_scale,
                actuator_delay_s=s.actuator_delay_s,
                lidar_mount_offset=self.mount(s.lidar_mount_offset),
                camera_mount_offset=self.mount(s.camera_mount_offset),
            )
            for s in shifts
        ]
        return self.shifts(header=self.stamp(stamp_ns), shifts=items)
