"""The episode log's per-step channels as CDR bytes: /sim/agent_states, /sim/farm_stamps and
/sim/farm_events.

They are written at up to 120 Hz, so they skip rosbags' message objects: ``StepChannels`` packs
each step's rows by the precompiled layouts of acres_sim.episode.messages (AGENT_STATE_RECORD,
FARM_STAMP_RECORD, FARM_EVENT_RECORD) straight from the world's states and the farm's arrays, with
the agents' names encoded once per log. The episode log (acres_sim.episode.log) writes the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from acres_bridge.geo.rotation import quaternion_from_rpy
from acres_bridge.tools.cdr_records import cdr_string, pack_stamped_sequence
from acres_sim.episode.drive import AgentDrive
from acres_sim.episode.messages import (
    AGENT_STATE_RECORD,
    EVENT_UNIT_TEXT,
    FARM_EVENT_RECORD,
    FARM_STAMP_RECORD,
    NO_AGENT_TEXT,
)
from acres_sim.vehicles.energy import EnergyMeter
from acres_sim.vehicles.kinematics import BodyMotion, VehicleState
from acres_sim.world.farm import Events, Part, Stamps

__all__ = ["Row", "StepChannels"]

Row = tuple[tuple[int, ...], Sequence[object]]  # an element of a message: its string lengths, its values


class StepChannels:
    """Packs the per-step messages of one log's agents (by agent index, as the world numbers them)."""

    def __init__(self, names: Sequence[str]) -> None:
        """``names``: the agents' names, agent 0 first."""
        self._names = [cdr_string(name) for name in names]

    def agent_state(
        self, index: int, meter: EnergyMeter, drive: AgentDrive, state: VehicleState, motion: BodyMotion
    ) -> Row:
        """An AgentState as the string lengths and the values of ``AGENT_STATE_RECORD``."""
        qx, qy, qz, qw = quaternion_from_rpy(state.roll, state.pitch, state.yaw)
        vx, vy, vz = motion.velocity
        wx, wy, wz = motion.angular_rate
        name = self._names[index]
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
            meter.engine_rpm,
            drive.gear,
            drive.throttle_pct,
            drive.brake_pct,
            drive.dbw_enabled,
            drive.safety_brake,
            *meter.ledger_values(),
        )

    def agent_states(self, step: int, stamp: int, states: Sequence[Row]) -> bytes:
        """The AgentStates message of a step: one ``agent_state`` per agent, agent 0 first."""
        return pack_stamped_sequence(stamp, step, AGENT_STATE_RECORD, states)

    def farm_stamps(self, step: int, stamp: int, stamps: Stamps, slips: Sequence[float]) -> bytes:
        """The FarmStamps message of a step; ``slips``: each agent's wheel slip, by agent index."""
        names = self._names
        items: list[Row] = []
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
        return pack_stamped_sequence(stamp, step, FARM_STAMP_RECORD, items)

    def farm_events(self, step: int, stamp: int, groups: Sequence[Events]) -> bytes:
        """The FarmEvents message of a step: the events of ``groups`` in their order."""
        names = self._names
        items: list[Row] = []
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
                name = names[agent] if agent >= 0 else NO_AGENT_TEXT
                unit = EVENT_UNIT_TEXT[kind]
                items.append(
                    (
                        (len(name), len(unit)),
                        (kind, len(name), name, x, y, z, area, before, after, len(unit), unit),
                    )
                )
        return pack_stamped_sequence(stamp, step, FARM_EVENT_RECORD, items)
