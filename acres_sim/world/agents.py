"""What the world takes and gives: an agent's spec and start pose, its status and what one step
produced (acres_sim.world.model holds the session that uses them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from acres_bridge.wire.dbw import DbwReport
from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.errors import AgentError
from acres_sim.sensors.rig import CaptureJob
from acres_sim.sensors.sensor_model import SensorFrame
from acres_sim.vehicles.ins import InsParams, InsSample
from acres_sim.vehicles.kinematics import BodyMotion, VehicleState
from acres_sim.vehicles.params import VehicleParams
from acres_sim.vehicles.tractor import TractorObservation

__all__ = ["AgentSpec", "AgentStatus", "Pose2D", "StepOutput"]


@dataclass(frozen=True, slots=True)
class Pose2D:
    """A pose on the ground in the world frame: x, y in m, yaw in rad counter-clockwise from grid east."""

    x: float
    y: float
    yaw: float


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """An agent of the session, as the session is configured.

    ``params`` defaults to the vehicle kind's parameters (a Polaris needs ``PolarisParams``: its
    drive-by-wire uses the steering ratio); ``start`` to a pose on the built-in route (Polaris) or a
    parking place beside it (Maxxum); ``autopilot`` (the built-in route follower drives) to false: a
    Polaris then stands parked in P until its drive-by-wire drives it, a Maxxum until commanded.
    """

    name: str
    vehicle: Vehicle = Vehicle.POLARIS
    params: VehicleParams | None = None
    start: Pose2D | None = None
    ins: InsParams = field(default_factory=InsParams)
    autopilot: bool | None = None

    def __post_init__(self) -> None:
        """Accept the vehicle kind by name ("polaris", "maxxum"); reject an empty name or another kind."""
        if not self.name:
            raise AgentError("AgentSpec.name: expected a non-empty name")
        try:
            object.__setattr__(self, "vehicle", Vehicle(self.vehicle))
        except ValueError:
            kinds = [k.value for k in Vehicle]
            raise AgentError(f"AgentSpec.vehicle {self.vehicle!r}: expected one of {kinds}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentStatus:
    """What the world knows about one agent now.

    ``episode`` counts the episodes of this agent's vehicle (0 first); ``command`` is the last external
    (acceleration m/s^2, road-wheel angle rad) of ``set_command``, used while ``autopilot`` is false
    and no drive-by-wire drives; ``manual`` says that ``set_command`` drives (neither the autopilot
    nor the drive-by-wire does); ``dbw_enabled`` is true while a Polaris's drive-by-wire is enabled
    (it then drives the vehicle).
    """

    index: int
    name: str
    vehicle: Vehicle
    params: VehicleParams
    start: Pose2D
    state: VehicleState
    motion: BodyMotion
    episode: int
    autopilot: bool
    command: tuple[float, float]
    dbw_enabled: bool = False
    manual: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class StepOutput:
    """What one physics step produced.

    ``states`` and ``motions`` hold every agent's exact state and motion at the end of the step, by
    agent index. ``ins`` holds one INS sample per agent, by agent index, when the step is an INS step,
    and is empty otherwise. ``dbw`` holds the drive-by-wire report line of each Polaris as (agent
    index, report), in agent order, when the step is a report step (50 Hz), and is empty otherwise.
    ``frames`` holds the frames of the sensors due at the step (each agent's LiDAR cloud and camera
    image at 10 Hz), in agent order and each agent's in mount order, when the world makes them;
    ACRES Core makes no images. ``tractors`` holds each Maxxum's observation as (agent index,
    observation) on its 10 Hz steps. With deferred perception (``World.defer_perception``) a step
    with frames due leaves ``frames`` empty and gives the ``capture`` job that makes them instead.
    """

    step: int
    stamp_ns: int
    states: tuple[VehicleState, ...]
    motions: tuple[BodyMotion, ...]
    ins: tuple[InsSample, ...]
    dbw: tuple[tuple[int, DbwReport], ...] = ()
    frames: tuple[SensorFrame, ...] = ()
    tractors: tuple[tuple[int, TractorObservation], ...] = ()
    capture: CaptureJob | None = None
