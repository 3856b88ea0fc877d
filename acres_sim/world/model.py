"""The world: one simulation session of agents on the tile, advanced one physics step at a time.

The world holds the session (seed, start time, map, source, lockstep flag), the agents and their
vehicles, the step counter and the episode counters. It does not pace itself and does no I/O: a
server calls ``advance()`` as fast as real time or lockstep requests allow and sends what each step
produced. Given the same construction arguments and the same calls, two worlds produce identical data.

Who drives a vehicle, in this order: a Polaris's drive-by-wire while it is enabled
(``apply_dbw_command``, acres_sim.vehicles.dbw); the built-in route follower while the agent's autopilot is
on (``set_autopilot``, off by default); the last ``set_command``. Otherwise the vehicle stands:
a Polaris parked in P (its drive-by-wire model with passive outputs). A Maxxum is driven by its
tractor model (acres_sim.vehicles.tractor: ``apply_tractor_command``, from the vehicle bridge or the CAN
bus) unless the autopilot or ``set_command`` drives it; without commands its safety brake holds it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

from acres_bridge.geo.georef import ACRE_GEOREFERENCE, Georeference
from acres_bridge.geo.route import Route, acre_loop
from acres_bridge.wire import EpisodeInfo
from acres_bridge.wire.dbw import DbwCommand, DbwReport, DbwTarget
from acres_bridge.wire.vocabulary import SimState, Source, Vehicle
from acres_sim.clock import PHYSICS_DT_S, ins_due, step_stamp_ns
from acres_sim.errors import AgentError, DbwCommandError, ParamsError, WorldStateError
from acres_sim.sensors.compiled_cast import Backend
from acres_sim.sensors.rig import RIGS, CaptureJob, RigEntry, SensorRig
from acres_sim.sensors.scene import Scene
from acres_sim.sensors.sensor_model import SensorFrame
from acres_sim.sensors.tile import acre_scene
from acres_sim.vehicles import kinematics
from acres_sim.vehicles.dbw import DbwSystem, report_due
from acres_sim.vehicles.ins import InsSample
from acres_sim.vehicles.kinematics import Terrain
from acres_sim.vehicles.tractor import TractorCommand, TractorModel, TractorObservation, observation_due
from acres_sim.world.agents import AgentSpec, AgentStatus, Pose2D, StepOutput
from acres_sim.world.spawn import Agent, Spawner

__all__ = [
    "DEFAULT_MAP",
    "AgentSpec",
    "AgentStatus",
    "Pose2D",
    "StepOutput",
    "World",
]

DEFAULT_MAP: Final = "V03ACRE"


def _require_finite(**values: float) -> None:
    for name, value in values.items():
        if not math.isfinite(value):
            raise ParamsError(f"{name}: expected a finite number, got {value!r}")


class World:
    """A simulation session: agents on the tile, a physics step counter and the episode clock.

    Step 0 is the session start; ``advance()`` runs one physics step of 1/120 s for every agent.
    Episodes: ``episode`` starts at 0 and increases on every ``reset_session()`` and on every reset of
    agent 0; ``reset_epoch`` counts the resets of agent 0 (``reset_agent(0, ...)``) only.
    """

    def __init__(
        self,
        *,
        seed: int,
        start_utc: datetime,
        agents: Sequence[AgentSpec] = (AgentSpec(name="polaris"),),
        lockstep: bool = False,
        map_name: str = DEFAULT_MAP,
        source: Source = Source.UNREAL,
        georef: Georeference = ACRE_GEOREFERENCE,
        route: Route | None = None,
        scene: Scene | None = None,
        terrain: Terrain | None = None,
        perception: bool = True,
        ray_cast: Backend = Backend.COMPILED,
        rigs: Mapping[Vehicle, Sequence[RigEntry]] = RIGS,
    ) -> None:
        """Create the session at step 0; the state is PAUSED in lockstep and PLAYING otherwise.

        ``start_utc`` must be timezone-aware (it is injected so that the episode ids are
        reproducible); ``seed`` (>= 0) seeds the sensor noise of every agent, each on its own stream.
        ``scene`` is what the LiDARs and cameras see (default: the tile's,
        acres_sim.sensors.tile.acre_scene); the vehicles drive on its ground unless ``terrain`` says
        otherwise. ``perception`` false
        makes no clouds and images (a session that needs only the vehicles and the INS); ``ray_cast``
        chooses the sensors' ray caster (acres_sim.sensors.compiled_cast; the same frames either way);
        ``rigs`` the sensors of each kind of vehicle (acres_sim.sensors.RIGS).
        """
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ParamsError(f"World seed: expected an integer >= 0, got {seed!r}")
        if start_utc.tzinfo is None or start_utc.utcoffset() is None:
            raise ParamsError(f"World start_utc: expected a timezone-aware datetime, got {start_utc!r}")
        if not map_name:
            raise ParamsError("World map_name: expected a non-empty name")
        if not agents:
            raise AgentError("World agents: expected at least one agent")
        names = [a.name for a in agents]
        if len(set(names)) != len(names):
            raise AgentError(f"World agents: expected unique names, got {names}")

        self._seed = seed
        self._start_utc = start_utc.astimezone(UTC)
        self._lockstep = bool(lockstep)
        self._map_name = map_name
        try:
            self._source = Source(source)
        except ValueError:
            raise ParamsError(f"World source {source!r}: expected 'unreal' or 'core'") from None
        if self._source is Source.CORE:
            maxxums = [a.name for a in agents if Vehicle(a.vehicle) == Vehicle.MAXXUM]
            if maxxums:
                raise AgentError(
                    f"ACRES Core has only the Polaris; the session lists Maxxum agents {maxxums}"
                )
        self._georef = georef
        self._route = route if route is not None else acre_loop()
        self._scene = scene if scene is not None else acre_scene()
        self._terrain: Terrain = terrain if terrain is not None else self._scene.terrain
        self._perception = bool(perception)
        self.defer_perception = False  # True: advance() hands out capture jobs instead of rendering
        self._state = SimState.PAUSED if lockstep else SimState.PLAYING
        self._step = 0
        self._episode = 0
        self._reset_epoch = 0
        self._episode_start_step = 0
        self._spawner = Spawner(
            seed=seed,
            source=self._source,
            georef=georef,
            route=self._route,
            terrain=self._terrain,
            perception=self._perception,
            ray_cast=Backend(ray_cast),
            rigs=rigs,
        )
        self._agents = [self._spawner.spawn(i, spec, agents) for i, spec in enumerate(agents)]

    def _agent(self, index: int) -> Agent:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self._agents):
            raise AgentError(f"agent index {index!r}: expected 0..{len(self._agents) - 1}")
        return self._agents[index]

    # The session.

    @property
    def seed(self) -> int:
        """The seed of the sensor noise."""
        return self._seed

    @property
    def start_utc(self) -> datetime:
        """The session start, in UTC."""
        return self._start_utc

    @property
    def lockstep(self) -> bool:
        """True when the session advances only on step requests (stored for the server; not acted on)."""
        return self._lockstep

    @property
    def map_name(self) -> str:
        """The map, for example V03ACRE."""
        return self._map_name

    @property
    def source(self) -> Source:
        """Which simulator this session claims to be."""
        return self._source

    @property
    def georef(self) -> Georeference:
        """Where the world frame sits in UTM."""
        return self._georef

    @property
    def route(self) -> Route:
        """The route the autopilot drives."""
        return self._route

    @property
    def terrain(self) -> Terrain:
        """The ground height function of the world frame."""
        return self._terrain

    @property
    def scene(self) -> Scene:
        """What the LiDARs and cameras see."""
        return self._scene

    @property
    def perception(self) -> bool:
        """True when the world makes clouds and images."""
        return self._perception

    def sensors(self, index: int) -> SensorRig | None:
        """The sensor rig of agent ``index``; None when the world makes no sensor frames."""
        return self._agent(index).sensors

    def want_frames(self, index: int, sensors: Iterable[int] | None) -> None:
        """Make only these sensors' frames of agent ``index`` (mount indices; None: every sensor's),
        from the next step."""
        rig = self._agent(index).sensors
        if rig is not None:
            rig.wanted = None if sensors is None else frozenset(sensors)

    @property
    def state(self) -> SimState:
        """The simulation state (stored; the world does not pace itself)."""
        return self._state

    def set_state(self, state: SimState | int) -> None:
        """Set the simulation state; ``advance()`` refuses to run while it is STOPPED."""
        try:
            self._state = SimState(state)
        except ValueError:
            raise ParamsError(
                f"simulation state {state!r}: expected 0 (stopped), 1 (playing) or 2 (paused)"
            ) from None

    # The clock and the episodes.

    @property
    def step(self) -> int:
        """The physics steps since the session start."""
        return self._step

    @property
    def stamp_ns(self) -> int:
        """The simulation time of the current step, in ns since the session start."""
        return step_stamp_ns(self._step)

    @property
    def episode(self) -> int:
        """The number of episodes since the session start (0 in the first)."""
        return self._episode

    @property
    def reset_epoch(self) -> int:
        """The number of resets of agent 0."""
        return self._reset_epoch

    @property
    def episode_id(self) -> str:
        """The session start in UTC and the episode number, for example 20261002T072309-0000."""
        return f"{self._start_utc:%Y%m%dT%H%M%S}-{self._episode:04d}"

    @property
    def episode_time_s(self) -> float:
        """The simulation time since the start of the current episode, in s."""
        return (step_stamp_ns(self._step) - step_stamp_ns(self._episode_start_step)) / 1e9

    def episode_snapshot(self) -> EpisodeInfo:
        """The episode clock now: the EPISODE message of the protocol (and /sim/episode)."""
        return EpisodeInfo(
            episode_id=self.episode_id,
            episode=self._episode,
            reset_epoch=self._reset_epoch,
            step=self._step,
            stamp_ns=self.stamp_ns,
            episode_time_s=self.episode_time_s,
            state=self._state,
            lockstep=self._lockstep,
            seed=self._seed,
            source=self._source,
            map=self._map_name,
            agents=self.agent_names,
        )

    # The agents.

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The agent names; agent 0 first."""
        return tuple(a.spec.name for a in self._agents)

    def index_of(self, name: str) -> int:
        """The index of the agent called ``name``."""
        for i, a in enumerate(self._agents):
            if a.spec.name == name:
                return i
        raise AgentError(f"agent {name!r}: no such agent; known: {list(self.agent_names)}")

    def agent(self, index: int) -> AgentStatus:
        """The current status of agent ``index``."""
        a = self._agent(index)
        return AgentStatus(
            index=index,
            name=a.spec.name,
            vehicle=a.spec.vehicle,
            params=a.params,
            start=a.start,
            state=a.state,
            motion=a.motion,
            episode=a.episode,
            autopilot=a.autopilot,
            command=a.command,
            dbw_enabled=a.dbw is not None and a.dbw.enabled,
            manual=a.manual and not a.autopilot and not (a.dbw is not None and a.dbw.enabled),
        )

    def set_command(self, index: int, *, accel_mps2: float, steer_rad: float) -> None:
        """Drive agent ``index`` with an acceleration and a road-wheel angle from the next step on.

        This turns its autopilot off; an enabled drive-by-wire still comes first. The vehicle model
        clips the values to its limits.
        """
        _require_finite(accel_mps2=accel_mps2, steer_rad=steer_rad)
        a = self._agent(index)
        a.command = (float(accel_mps2), float(steer_rad))
        a.manual = True
        a.autopilot = False

    def set_autopilot(self, index: int, enabled: bool) -> None:
        """Let the built-in route follower drive agent ``index`` (true) or not (false).

        Without it the last ``set_command`` drives; a Polaris without one rolls on under its
        drive-by-wire's passive outputs (no throttle, no brake: it coasts to a stop, and P holds it).
        An enabled drive-by-wire comes first; the follower drives again when it is disabled.
        """
        a = self._agent(index)
        if enabled and not a.autopilot:
            a.follower.reset()
        a.autopilot = bool(enabled)

    # The drive-by-wire of a Polaris.

    def _dbw(self, index: int) -> tuple[Agent, DbwSystem]:
        a = self._agent(index)
        if a.dbw is None:
            raise DbwCommandError(
                f"agent {index} ({a.spec.name}) is a {a.spec.vehicle}: it has no drive-by-wire"
            )
        return a, a.dbw

    def apply_dbw_command(self, index: int, command: DbwCommand) -> None:
        """Give the drive-by-wire of Polaris ``index`` a command; it applies from the next step on.

        DbwCommandError, and nothing applies, when the agent has no drive-by-wire or the command is
        invalid (acres_sim.vehicles.dbw.check_command); AgentError for an unknown agent.
        """
        _, dbw = self._dbw(index)
        dbw.submit(command)

    def set_driver_override(
        self, index: int, subsystem: DbwTarget | int, active: bool, *, value: float | None = None
    ) -> None:
        """A driver of Polaris ``index`` takes over (or lets go of) a subsystem, from the next step on.

        ``subsystem``: STEERING, THROTTLE, BRAKE or GEAR; ``value`` the driver's input
        (acres_sim.vehicles.dbw.DbwSystem.set_driver_override). An override disables the drive-by-wire.
        """
        _, dbw = self._dbw(index)
        dbw.set_driver_override(subsystem, active, value=value)

    def dbw_report(self, index: int) -> DbwReport:
        """The drive-by-wire report line of Polaris ``index`` now (at the current step), due or not."""
        a, dbw = self._dbw(index)
        return dbw.report(step=self._step, speed_mps=a.state.speed, accel_mps2=a.motion.accel)

    # The tractor of a Maxxum.

    def _tractor(self, index: int) -> TractorModel:
        a = self._agent(index)
        if a.tractor is None:
            raise AgentError(f"agent {index} ({a.spec.name}) is a {a.spec.vehicle}: it has no tractor model")
        return a.tractor

    def apply_tractor_command(self, index: int, command: TractorCommand) -> None:
        """Give Maxxum ``index`` the controls that ``command`` sets; they apply from the next step.

        A command that sets the pedal or the brake also releases the safety brake
        (acres_sim.vehicles.tractor).
        AgentError for an agent that is no Maxxum.
        """
        self._tractor(index).command(command)

    def tractor_observation(self, index: int) -> TractorObservation:
        """What Maxxum ``index`` shows now (at the current step), due or not."""
        a = self._agent(index)
        return self._tractor(index).observation(step=self._step, speed_mps=a.state.speed)

    # Stepping and resets.

    def advance(self) -> StepOutput:
        """Run one physics step of 1/120 s for every agent and return what it produced."""
        if self._state is SimState.STOPPED:
            raise WorldStateError("advance: the simulation is stopped")
        self._step += 1
        step = self._step
        due = ins_due(step)
        reporting = report_due(step)
        samples: list[InsSample] = []
        reports: list[tuple[int, DbwReport]] = []
        tractors: list[tuple[int, TractorObservation]] = []
        for index, a in enumerate(self._agents):
            dbw = a.dbw
            by_wire = dbw is not None and dbw.begin_step(step, a.state.speed)
            if dbw is not None and (by_wire or not (a.autopilot or a.manual)):
                accel, steer = dbw.actuate(a.state.speed)
                a.follower_live = False
            elif a.autopilot:
                if not a.follower_live:
                    a.follower.reset()
                    a.follower_live = True
                c = a.follower.command(a.state)
                accel, steer = c.accel, c.steer
            elif a.tractor is not None and not a.manual:
                accel, steer = a.tractor.step(a.state.speed)
            else:
                accel, steer = a.command
            a.state, a.motion = kinematics.step(
                a.state, a.params, accel, steer, PHYSICS_DT_S, terrain=self._terrain
            )
            if dbw is not None:
                if not by_wire and (a.autopilot or a.manual):
                    dbw.follow(
                        speed_mps=a.state.speed, accel_mps2=a.motion.accel, road_wheel_rad=a.state.steer
                    )
                if reporting:
                    reports.append(
                        (index, dbw.report(step=step, speed_mps=a.state.speed, accel_mps2=a.motion.accel))
                    )
            if due:
                samples.append(a.ins.sample(step=step, state=a.state, motion=a.motion))
            if a.tractor is not None and observation_due(step):
                tractors.append((index, a.tractor.observation(step=step, speed_mps=a.state.speed)))
        frames: tuple[SensorFrame, ...] = ()
        capture = None
        if any(a.sensors is not None and a.sensors.due(step) for a in self._agents):
            capture = CaptureJob(
                step=step,
                stamp_ns=step_stamp_ns(step),
                rigs=tuple(a.sensors for a in self._agents),
                scene=self._scene,
                states=tuple(a.state for a in self._agents),
                params=tuple(a.params for a in self._agents),
            )
            if not self.defer_perception:
                frames = capture.run()
                capture = None
        return StepOutput(
            step=step,
            stamp_ns=step_stamp_ns(step),
            states=tuple(a.state for a in self._agents),
            motions=tuple(a.motion for a in self._agents),
            ins=tuple(samples),
            dbw=tuple(reports),
            frames=frames,
            tractors=tuple(tractors),
            capture=capture,
        )

    def _new_episode(self) -> None:
        self._episode += 1
        self._episode_start_step = self._step

    def reset_session(self) -> None:
        """Start a new episode: every vehicle back at its start pose, at rest, with its default driver.

        The step counter and the clock go on (simulation time never goes back); ``reset_epoch`` stays.
        The INS error states go on too: they belong to the hardware, not to the episode.
        """
        for a in self._agents:
            self._spawner.teleport(a, a.start.x, a.start.y, a.start.yaw)
            a.autopilot = a.default_autopilot
        self._new_episode()

    def reset_agent(self, index: int, *, x: float, y: float, yaw: float) -> None:
        """Teleport agent ``index`` to world (x, y) with heading ``yaw``, at rest: a new episode of it.

        For agent 0 this also counts a reset (``reset_epoch``) and starts a new session episode.
        """
        _require_finite(x=x, y=y, yaw=yaw)
        a = self._agent(index)
        self._spawner.teleport(a, float(x), float(y), float(yaw))
        if index == 0:
            self._reset_epoch += 1
            self._new_episode()
