"""Sample wire messages for the tests: one builder per message, with the fields a test changes."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from geometry_msgs.msg import PoseStamped

from acres_bridge.wire import (
    PROTOCOL_VERSION,
    AgentEntry,
    DbwReport,
    EpisodeInfo,
    Hello,
    InsSample,
    SensorMeta,
    SimState,
    Source,
    Vehicle,
)

__all__ = ["agent", "dbw_report", "episode", "hello", "ins_sample", "reset_pose", "sensor_meta"]

ORIGIN_UTM = (500400.0, 4479900.0, 181.5)  # the acre tile's world origin in UTM 16N


def agent(
    index: int,
    vehicle: Vehicle = Vehicle.POLARIS,
    *,
    name: str | None = None,
    sensor_port: int = 0,
    vehicle_port: int = 0,
    can_port: int = 0,
) -> AgentEntry:
    """An agent of a session; named after its vehicle unless given a name."""
    return AgentEntry(
        index=index,
        name=str(vehicle) if name is None else name,
        vehicle=vehicle,
        sensor_port=sensor_port,
        vehicle_port=vehicle_port,
        can_port=can_port,
    )


def hello(*agents: AgentEntry, **changes: Any) -> Hello:
    """The HELLO of a lockstep session of these agents on the acre tile (any field can be changed)."""
    base = Hello(
        protocol_version=PROTOCOL_VERSION,
        simulator="scripted",
        session_start_utc="20261002T072309",
        map="V03ACRE",
        source=Source.UNREAL,
        lockstep=True,
        seed=7,
        physics_hz=120,
        agents=agents,
    )
    return replace(base, **changes)


def ins_sample(step: int = 12, *, has_position: bool = True, **changes: Any) -> InsSample:
    """An INS sample of a vehicle at rest 38 m east and 64 m north of the tile centre, heading east.

    Without a fix (``has_position=False``) the fields that need one are NaN, as the simulator sends
    them (a Maxxum, or a Polaris in an outage)."""
    nan = math.nan
    no_fix = (
        {}
        if has_position
        else {
            "position": (nan, nan, nan),
            "latitude_deg": nan,
            "longitude_deg": nan,
            "position_variance": (nan, nan, nan),
        }
    )
    base = InsSample(
        step=step,
        stamp_ns=step * 1_000_000_000 // 120,
        has_position=has_position,
        position=(ORIGIN_UTM[0] + 38.1, ORIGIN_UTM[1] + 63.9, 181.8),
        latitude_deg=40.4699,
        longitude_deg=-86.9952,
        orientation=(0.0, 0.0, 0.0, 1.0),
        velocity=(0.0, 0.0, 0.0),
        angular_rate=(0.0, 0.0, 0.0),
        specific_force=(0.0, 0.0, 9.81),
        position_variance=(0.0004, 0.0009, 0.0025),
        velocity_variance=(0.0001, 0.0002, 0.0003),
        attitude_variance=(1e-6, 2e-6, 5e-6),
        true_position=(ORIGIN_UTM[0] + 38.1, ORIGIN_UTM[1] + 63.9, 181.8),
        true_orientation=(0.0, 0.0, 0.0, 1.0),
        true_speed=0.0,
    )
    return replace(base, **{**no_fix, **changes})


def dbw_report(step: int = 12, **changes: Any) -> DbwReport:
    """A report line of an enabled Polaris at rest in gear L."""
    base = DbwReport(
        step=step,
        stamp_ns=step * 1_000_000_000 // 120,
        flags=1,
        steering_wheel_angle_deg=0.0,
        steering_cmd=0.0,
        steering_cmd_type=0,
        throttle_input_pct=0.0,
        throttle_cmd_pct=0.0,
        throttle_output_pct=0.0,
        throttle_cmd_type=0,
        brake_input_bar=0.0,
        brake_cmd_bar=0.0,
        brake_output_bar=0.0,
        brake_input_pct=0.0,
        brake_cmd_pct=0.0,
        brake_output_pct=0.0,
        brake_cmd_type=0,
        gear=5,
        gear_cmd=5,
        gear_driver=1,
        ulc_cmd_type=0,
        vel_ref_mps=0.0,
        vel_meas_mps=0.0,
        accel_ref_mps2=0.0,
        accel_meas_mps2=0.0,
        speed_brake_mps=0.0,
        speed_propulsion_mps=0.0,
    )
    return replace(base, **changes)


def episode(step: int = 0, **changes: Any) -> EpisodeInfo:
    """The episode message of a paused lockstep session's first episode."""
    base = EpisodeInfo(
        episode_id="20261002T072309-0000",
        episode=0,
        reset_epoch=0,
        step=step,
        stamp_ns=step * 1_000_000_000 // 120,
        episode_time_s=step / 120,
        state=SimState.PAUSED,
        lockstep=True,
        seed=7,
        source=Source.UNREAL,
        map="V03ACRE",
        agents=("polaris",),
    )
    return replace(base, **changes)


def sensor_meta(agent_index: int = 0, vehicle: Vehicle = Vehicle.POLARIS) -> SensorMeta:
    """SENSOR_META of an agent with no sensors, on the acre tile."""
    return SensorMeta(
        agent=agent_index, vehicle=vehicle, utm_epsg=32616, world_origin_utm=ORIGIN_UTM, sensors=()
    )


def reset_pose(x: float, y: float, yaw: float = math.pi / 2, frame: str = "utm") -> PoseStamped:
    """A /sim/reset pose: a position in utm and a heading (counter-clockwise from grid east)."""
    message = PoseStamped()
    message.header.frame_id = frame
    message.pose.position.x, message.pose.position.y = x, y
    message.pose.orientation.z, message.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return message
