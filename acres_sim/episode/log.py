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
file holds, the three per-step channels by precompiled struct layouts (acres_sim.episode.step_channels
on acres_bridge.tools.cdr_records) that the tests hold byte for byte against rosbags and mcap_ros2.
Every stamp is simulation time (ns since the session start, the stamp of the physics step), and
log_time = publish_time = that stamp; nothing in the file reads a clock, so the same seed, start and
requests give the same bytes.

The state of an agent comes from the world (pose, motion, steering, the Polaris's drive-by-wire
report, the Maxxum's tractor model), its EnergyLedger from acres_sim.vehicles.energy, the farm from
acres_sim.world.farm and the conditions from acres_sim.world.weather. The ledger restarts with each episode
of the agent; the farm is restored at the start of each session episode. An ACRES Core session has
no crop (as ACRES Core), so no farm.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from acres_bridge.errors import ProfileError
from acres_bridge.tools.bag import BagWriter, Compression
from acres_bridge.tools.errors import BagError, DefinitionError
from acres_bridge.wire.vocabulary import Source, Vehicle
from acres_sim.clock import NS_PER_S, PHYSICS_DT_S
from acres_sim.episode.drive import AgentDrive, maxxum_drive, polaris_drive
from acres_sim.episode.messages import (
    AGENT_STATES,
    AGENTS,
    CHANNELS,
    CONDITIONS,
    EPISODE,
    FARM_EVENTS,
    FARM_STAMPS,
    SHIFTS,
    TASK,
    RosbagsMessages,
    channel_specs,
    offered_qos,
    typestore,
)
from acres_sim.episode.records import MountOffset, TaskState, TaskStatus, VehicleShift
from acres_sim.episode.step_channels import StepChannels
from acres_sim.errors import EpisodeLogError, ParamsError
from acres_sim.vehicles.energy import EnergyMeter, energy_params
from acres_sim.vehicles.implement import IMPLEMENTS
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY
from acres_sim.vehicles.tractor import TractorParams
from acres_sim.world.farm import Farm, FarmAgent, FarmParams, FarmStep, Heights
from acres_sim.world.model import AgentStatus, StepOutput, World
from acres_sim.world.weather import Conditions, Weather, WeatherParams

__all__ = [
    "CHANNELS",
    "EpisodeLog",
    "EpisodeLogError",
    "MountOffset",
    "TaskState",
    "TaskStatus",
    "VehicleShift",
]

_log = logging.getLogger("acres_sim.episode.log")

_WORLD_FRAME: Final = "world"
_HITCH_LINK_RADIUS_M: Final = TractorParams().hitch.link_radius_m


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
            specs = channel_specs()
            store, texts = typestore(tuple(type_name for _, type_name, _ in specs))
        except (ProfileError, DefinitionError) as error:
            raise EpisodeLogError(
                f"episode log: the channels' table or message definitions are missing: {error} "
                "(the acres_interfaces package must be installed)"
            ) from None
        self._msg = RosbagsMessages(store)
        try:
            self._bag = BagWriter(path, compression=compression)
        except BagError as error:
            raise EpisodeLogError(f"episode log: {error}") from None
        self.path = self._bag.path
        self._closed = False
        self._failed = False
        try:
            for (name, type_name, qos), text in zip(specs, texts, strict=True):
                self._bag.add_topic(name, type_name, offered_qos=[offered_qos(qos)], definition=text)
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
        self._channels = StepChannels([a.name for a in self._agents])
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
        snapshot = world.episode_snapshot()
        self._write(EPISODE, self._msg.episode_message(snapshot), snapshot.stamp_ns)

    def _write_agents(self, world: World, stamp: int) -> None:
        rows = [(a.name, a.index, a.vehicle, a.implement, world.agent(a.index).params) for a in self._agents]
        self._write(AGENTS, self._msg.agents_message(stamp, world.episode_id, rows), stamp)

    def _write_conditions(self, stamp: int) -> Conditions:
        c = self._weather.at(stamp)
        self._write(CONDITIONS, self._msg.conditions_message(stamp, c), stamp)
        self._soil_water_pct = c.soil_water_pct
        self._next_conditions_ns = (stamp // NS_PER_S + 1) * NS_PER_S
        self._next_change_ns = self._weather.next_change_ns(stamp)
        return c

    def _write_shifts(self, stamp: int) -> None:
        self._write(SHIFTS, self._msg.shifts_message(stamp, self._shifts), stamp)

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

    def _drive(self, world: World, output: StepOutput, a: _Agent, status: AgentStatus) -> AgentDrive:
        if a.vehicle == Vehicle.POLARIS:
            report = next((r for i, r in output.dbw if i == a.index), None)
            return polaris_drive(report if report is not None else world.dbw_report(a.index), status)
        obs = next((o for i, o in output.tractors if i == a.index), None)
        return maxxum_drive(obs if obs is not None else world.tractor_observation(a.index), status)

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
            states.append(self._channels.agent_state(a.index, a.meter, drive, state, motion))
        data = self._channels.agent_states(output.step, stamp, states)
        self._bag.write(AGENT_STATES, data, log_time_ns=stamp, publish_time_ns=stamp)
        if len(farm.stamps):
            slips = [a.meter.slip for a in self._agents]
            data = self._channels.farm_stamps(output.step, stamp, farm.stamps, slips)
            self._bag.write(FARM_STAMPS, data, log_time_ns=stamp, publish_time_ns=stamp)
        events = [farm.events] if len(farm.events) else []
        if stamp >= self._next_conditions_ns or (
            self._next_change_ns is not None and stamp >= self._next_change_ns
        ):
            conditions = self._write_conditions(stamp)
            wetted = self._farm.wet(conditions.soil_water_pct)
            if len(wetted):
                events.append(wetted)
        if events:
            data = self._channels.farm_events(output.step, stamp, events)
            self._bag.write(FARM_EVENTS, data, log_time_ns=stamp, publish_time_ns=stamp)
