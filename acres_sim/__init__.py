"""acres_sim: the reference vehicle simulator of ACRES, its simulation core.

A deterministic simulator of the ACRE tile: kinematic vehicles (the Polaris utility vehicle and the
Maxxum tractor), the Polaris's drive-by-wire system (acres_sim.vehicles.dbw), a scripted route with a
pure-pursuit autopilot, and an INS error model, on a 120 Hz physics clock. This package has no
networking and no ROS imports (it uses the message types of ``acres_bridge.wire``); a server
speaks the wire protocol on top of ``World``.

    world = World(seed=42, start_utc=datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC))
    out = world.advance()          # step 1
    for sample in out.ins:         # one InsSample per agent on INS steps
        ...
"""

from acres_sim.clock import (
    INS_RATE_HZ,
    NS_PER_S,
    PHYSICS_DT_S,
    PHYSICS_RATE_HZ,
    ins_due,
    is_due,
    sample_index,
    step_stamp_ns,
)
from acres_sim.errors import AcresSimError, AgentError, DbwCommandError, ParamsError, WorldStateError
from acres_sim.vehicles.dbw import DbwParams, DbwSystem, report_due
from acres_sim.vehicles.ins import ErrorModel, InsModel, InsParams, InsSample
from acres_sim.vehicles.kinematics import (
    STANDARD_GRAVITY,
    BodyMotion,
    Terrain,
    VehicleState,
    at_rest,
    flat_terrain,
    place,
    step,
)
from acres_sim.vehicles.params import MAXXUM, POLARIS, MaxxumParams, MountPose, PolarisParams, VehicleParams
from acres_sim.vehicles.powertrain import Gear, Powertrain, PowertrainParams
from acres_sim.world.model import (
    DEFAULT_MAP,
    AgentSpec,
    AgentStatus,
    Pose2D,
    StepOutput,
    World,
)
from acres_sim.world.route import FollowerCommand, FollowerParams, RouteFollower

__all__ = [
    "DEFAULT_MAP",
    "INS_RATE_HZ",
    "MAXXUM",
    "NS_PER_S",
    "PHYSICS_DT_S",
    "PHYSICS_RATE_HZ",
    "POLARIS",
    "STANDARD_GRAVITY",
    "AcresSimError",
    "AgentError",
    "AgentSpec",
    "AgentStatus",
    "BodyMotion",
    "DbwCommandError",
    "DbwParams",
    "DbwSystem",
    "ErrorModel",
    "FollowerCommand",
    "FollowerParams",
    "Gear",
    "InsModel",
    "InsParams",
    "InsSample",
    "MaxxumParams",
    "MountPose",
    "ParamsError",
    "PolarisParams",
    "Pose2D",
    "Powertrain",
    "PowertrainParams",
    "RouteFollower",
    "StepOutput",
    "Terrain",
    "VehicleParams",
    "VehicleState",
    "World",
    "WorldStateError",
    "at_rest",
    "flat_terrain",
    "ins_due",
    "is_due",
    "place",
    "report_due",
    "sample_index",
    "step",
    "step_stamp_ns",
]

__version__ = "0.1.0"
