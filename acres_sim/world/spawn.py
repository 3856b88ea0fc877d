"""The world's agents as it holds them, and where and how their vehicles are put on the tile.

``Agent`` is the mutable record of one agent inside the world (acres_sim.world.model): its vehicle
and what may drive it (drive-by-wire, tractor model, route follower, last command), its INS and its
sensor rig. ``Spawner`` makes one from an ``AgentSpec`` with the session's seed, source, route and
ground, at the spec's start pose or a default one (a Polaris on the route, a Maxxum in the parking
row beside it), and puts a vehicle back at rest at a pose for a reset. The choice of the parts and
of the start poses lives here, apart from the stepping, so that both spawn and reset put a
vehicle down the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from acres_bridge.geo.georef import Georeference
from acres_bridge.geo.route import Route
from acres_bridge.wire.vocabulary import Source, Vehicle
from acres_sim.errors import ParamsError
from acres_sim.sensors.compiled_cast import Backend
from acres_sim.sensors.rig import RigEntry, RigOptions, SensorRig
from acres_sim.vehicles.dbw import DbwSystem
from acres_sim.vehicles.ins import InsModel
from acres_sim.vehicles.kinematics import BodyMotion, Terrain, VehicleState, at_rest, place
from acres_sim.vehicles.params import MAXXUM, POLARIS, MaxxumParams, PolarisParams, VehicleParams
from acres_sim.vehicles.tractor import TractorModel, TractorParams
from acres_sim.world.agents import AgentSpec, Pose2D
from acres_sim.world.route import RouteFollower

__all__ = ["Agent", "Spawner"]

# Where the default start poses lie: each further Polaris this far behind the previous one on the
# route; the Maxxums parked in a row east of the route, this far apart.
_POLARIS_GAP_M: Final = 25.0
_MAXXUM_PARKING_OFFSET_M: Final = 12.0
_MAXXUM_GAP_M: Final = 6.0


@dataclass
class Agent:
    """The mutable record of one agent inside the world."""

    spec: AgentSpec
    params: VehicleParams
    start: Pose2D
    default_autopilot: bool
    ins: InsModel
    follower: RouteFollower
    state: VehicleState
    motion: BodyMotion
    autopilot: bool
    dbw: DbwSystem | None = None
    tractor: TractorModel | None = None
    sensors: SensorRig | None = None
    command: tuple[float, float] = (0.0, 0.0)
    manual: bool = False  # set_command drives while neither the drive-by-wire nor the autopilot does
    follower_live: bool = False  # the follower drove the last step (its progress is current)
    episode: int = 0


@dataclass(frozen=True, kw_only=True)
class Spawner:
    """Makes the agents of one session and puts their vehicles down: what the session shares.

    ``perception`` false gives no agent a sensor rig; ``ray_cast`` and ``rigs`` choose the rigs'
    ray caster and sensors (acres_sim.world.model.World takes them).
    """

    seed: int
    source: Source
    georef: Georeference
    route: Route
    terrain: Terrain
    perception: bool
    ray_cast: Backend
    rigs: Mapping[Vehicle, Sequence[RigEntry]]

    def spawn(self, index: int, spec: AgentSpec, specs: Sequence[AgentSpec]) -> Agent:
        """Resolve the defaults of ``spec`` and put its vehicle at its start pose."""
        vehicle = spec.vehicle
        params = spec.params or (POLARIS if vehicle == Vehicle.POLARIS else MAXXUM)
        start = spec.start or self.default_start(index, vehicle, specs)
        autopilot = bool(spec.autopilot)
        dbw = None
        if vehicle == Vehicle.POLARIS:
            if not isinstance(params, PolarisParams):
                raise ParamsError(
                    f"agent {spec.name!r}: a Polaris needs PolarisParams, got {type(params).__name__}"
                )
            dbw = DbwSystem(params)
        tractor = None
        if vehicle == Vehicle.MAXXUM:
            if not isinstance(params, MaxxumParams):
                raise ParamsError(
                    f"agent {spec.name!r}: a Maxxum needs MaxxumParams, got {type(params).__name__}"
                )
            tractor = TractorModel(params=TractorParams(vehicle=params))
        sensors = None
        if self.perception:
            options = RigOptions(seed=self.seed, stream=index, backend=self.ray_cast)
            sensors = SensorRig.of(params, options, core=self.source is Source.CORE, rigs=self.rigs)
        state = place(params, start.x, start.y, start.yaw, terrain=self.terrain)
        return Agent(
            spec=spec,
            params=params,
            start=start,
            default_autopilot=autopilot,
            ins=InsModel(params=spec.ins, georef=self.georef, seed=self.seed, stream=index),
            follower=RouteFollower(self.route, params),
            state=state,
            motion=at_rest(state, params),
            autopilot=autopilot,
            dbw=dbw,
            tractor=tractor,
            sensors=sensors,
        )

    def default_start(self, index: int, vehicle: Vehicle, specs: Sequence[AgentSpec]) -> Pose2D:
        """The k-th Polaris 25 m behind the (k-1)-th on the route; the k-th Maxxum parked east of it."""
        k = sum(1 for s in specs[:index] if s.vehicle is vehicle)
        if vehicle == Vehicle.POLARIS:
            x, y, yaw = self.route.pose_at(-_POLARIS_GAP_M * k)
            return Pose2D(x, y, yaw)
        east = float(self.route.xy[:, 0].max()) + _MAXXUM_PARKING_OFFSET_M + _MAXXUM_GAP_M * k
        ys = self.route.xy[:, 1]
        return Pose2D(east, 0.5 * float(ys.min() + ys.max()), 0.5 * math.pi)

    def teleport(self, a: Agent, x: float, y: float, yaw: float) -> None:
        """Put the vehicle of ``a`` at rest at (x, y, yaw) and start a new episode of it.

        A Polaris stands in P with its drive-by-wire disabled and without commands.
        """
        a.state = place(a.params, x, y, yaw, terrain=self.terrain)
        a.motion = at_rest(a.state, a.params)
        a.command = (0.0, 0.0)
        a.manual = False
        a.follower.reset()
        a.follower_live = False
        if a.dbw is not None:
            a.dbw.reset()
        if a.tractor is not None:
            a.tractor.reset()
        a.episode += 1
