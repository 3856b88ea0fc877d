"""The perception sensors of each agent: its vehicle's rig, and when each sensor fires.

``RIGS`` lists the sensors each vehicle carries. A sensor is a model with the interface of
acres_sim.sensors.sensor_model (acres_sim.sensors.lidar, acres_sim.sensors.camera): a new kind of
sensor is a module of its own and an entry here; the world, SENSOR_META (acres_sim.world.wire) and
the server take it as it is.
Each sensor fires at its own rate on the steps that acres_sim.clock spreads evenly (10 Hz: steps
12, 24, ... of the 120 Hz physics), after every vehicle has moved, so each agent sees the others
where they are at that step. An ACRES Core session (source core) has only the sensors an entry
marks for it (the LiDAR), and they do not see the crop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.clock import PHYSICS_RATE_HZ, is_due
from acres_sim.errors import ParamsError
from acres_sim.sensors.camera import (
    MAXXUM_CAMERA,
    OPTICAL_FRAMES,
    POLARIS_CAMERA,
    Camera,
    CameraParams,
    camera_mount,
)
from acres_sim.sensors.compiled_cast import Backend
from acres_sim.sensors.lidar import MAXXUM_LIDAR, POLARIS_LIDAR, Lidar, LidarParams
from acres_sim.sensors.scene import Box, Scene
from acres_sim.sensors.sensor_model import SensorFrame, SensorModel
from acres_sim.sensors.tile import vehicle_box
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import VehicleParams

__all__ = [
    "RIGS",
    "CaptureJob",
    "MountedSensor",
    "RigEntry",
    "RigOptions",
    "SensorRig",
    "camera_sensor",
    "capture_all",
    "lidar_sensor",
]


@dataclass(frozen=True, slots=True)
class RigOptions:
    """What every sensor of an agent is made with: the session's seed and the agent's noise stream,
    and the ray caster."""

    seed: int
    stream: int
    backend: Backend = Backend.COMPILED


SensorMaker = Callable[[VehicleParams, RigOptions], SensorModel]


@dataclass(frozen=True, slots=True)
class RigEntry:
    """One sensor of a vehicle's rig: how to make it, and whether an ACRES Core session has it."""

    make: SensorMaker
    in_core: bool = False


def lidar_sensor(params: LidarParams) -> SensorMaker:
    """A LiDAR of ``params`` on the vehicle's ``lidar`` mount."""

    def make(vehicle: VehicleParams, options: RigOptions) -> SensorModel:
        return Lidar(
            params, vehicle.mount("lidar"), seed=options.seed, stream=options.stream, backend=options.backend
        )

    return make


def camera_sensor(params: CameraParams) -> SensorMaker:
    """A camera of ``params`` looking along the vehicle's optical frame, listed under its body."""

    def make(vehicle: VehicleParams, options: RigOptions) -> SensorModel:
        body = vehicle.mount(OPTICAL_FRAMES[vehicle.vehicle]).parent
        return Camera(params, camera_mount(vehicle), body=body, backend=options.backend)

    return make


RIGS: Final[Mapping[Vehicle, tuple[RigEntry, ...]]] = {
    Vehicle.POLARIS: (
        RigEntry(lidar_sensor(POLARIS_LIDAR), in_core=True),
        RigEntry(camera_sensor(POLARIS_CAMERA)),
    ),
    Vehicle.MAXXUM: (
        RigEntry(lidar_sensor(MAXXUM_LIDAR), in_core=True),
        RigEntry(camera_sensor(MAXXUM_CAMERA)),
    ),
}


@dataclass(frozen=True, slots=True)
class MountedSensor:
    """A sensor of an agent and its position in the vehicle's mounts (the order of SENSOR_META)."""

    index: int
    model: SensorModel
    rate_hz: int


def _mount_index(params: VehicleParams, frame: str) -> int:
    for index, mount in enumerate(params.mounts):
        if mount.frame == frame:
            return index
    raise ParamsError(f"a sensor's mount {frame!r}: the {params.vehicle} has no such mount")


def _whole_rate(model: SensorModel) -> int:
    rate = model.rate_hz
    if not (rate == int(rate) and 1 <= rate <= PHYSICS_RATE_HZ):
        raise ParamsError(
            f"a {model.kind} sensor's rate_hz: expected a whole number 1..{PHYSICS_RATE_HZ}, got {rate!r}"
        )
    return int(rate)


class SensorRig:
    """The sensors of one agent, in the order of the vehicle's mounts; ``crop`` whether they see
    the crop."""

    def __init__(self, params: VehicleParams, models: Sequence[SensorModel], *, crop: bool) -> None:
        """ParamsError for a sensor on a mount the vehicle lacks, two on one mount, or a rate that
        is no whole number of frames per second up to the physics rate."""
        mounted = sorted(
            (MountedSensor(_mount_index(params, m.mount_frame), m, _whole_rate(m)) for m in models),
            key=lambda s: s.index,
        )
        indices = [s.index for s in mounted]
        if len(set(indices)) != len(indices):
            raise ParamsError(f"the {params.vehicle}'s rig has two sensors on one mount: {indices}")
        self.sensors: tuple[MountedSensor, ...] = tuple(mounted)
        self.crop = crop
        # The mounts whose frames someone wants (SENSOR_DEMAND); None: every sensor's.
        self.wanted: frozenset[int] | None = None
        self.skipped = 0  # due frames not made because nobody wanted them

    @classmethod
    def of(
        cls,
        params: VehicleParams,
        options: RigOptions,
        *,
        core: bool = False,
        rigs: Mapping[Vehicle, Sequence[RigEntry]] = RIGS,
    ) -> SensorRig:
        """The rig of a vehicle from the table; ``core``: an ACRES Core session's (no crop, only the
        sensors marked for it)."""
        entries = [e for e in rigs.get(params.vehicle, ()) if e.in_core or not core]
        return cls(params, [e.make(params, options) for e in entries], crop=not core)

    def on_mount(self, index: int) -> MountedSensor | None:
        """The sensor on the vehicle's mount ``index``, if one is."""
        return next((s for s in self.sensors if s.index == index), None)

    def due(self, step: int) -> bool:
        """Whether any sensor makes a frame at physics step ``step``."""
        return any(is_due(step, s.rate_hz) for s in self.sensors)

    @property
    def rays_cast(self) -> int:
        """The rays its sensors have cast so far."""
        return sum(s.model.rays_cast for s in self.sensors)

    def capture(
        self, agent: int, step: int, scene: Scene, state: VehicleState, others: Sequence[Box]
    ) -> tuple[SensorFrame, ...]:
        """The frames of the wanted sensors due at ``step`` from ``state``, seeing ``others``, in
        mount order; a due sensor nobody wants skips its frame (``SensorModel.skip``)."""
        wanted = self.wanted
        frames = []
        for s in self.sensors:
            if not is_due(step, s.rate_hz):
                continue
            if wanted is not None and s.index not in wanted:
                s.model.skip()
                self.skipped += 1
                continue
            data = s.model.capture(scene, state, agents=others, crop=self.crop)
            frames.append(SensorFrame(agent, s.index, s.model, data))
        return tuple(frames)


def capture_all(
    rigs: Sequence[SensorRig | None],
    step: int,
    scene: Scene,
    states: Sequence[VehicleState],
    params: Sequence[VehicleParams],
) -> tuple[SensorFrame, ...]:
    """Every agent's frames of this step, in agent order, each agent's in mount order."""
    bodies = [vehicle_box(p, s) for p, s in zip(params, states, strict=True)]
    frames: list[SensorFrame] = []
    for agent, rig in enumerate(rigs):
        if rig is not None:
            others = bodies[:agent] + bodies[agent + 1 :]
            frames.extend(rig.capture(agent, step, scene, states[agent], others))
    return tuple(frames)


@dataclass(frozen=True, slots=True)
class CaptureJob:
    """The sensor frames of one step, to make now or in a render thread.

    The states are the snapshot of that step; the sensors keep their own state (the LiDAR's noise
    stream, the last ray cast), so the jobs of a world must run one at a time, in step order.
    """

    step: int
    stamp_ns: int
    rigs: tuple[SensorRig | None, ...]
    scene: Scene
    states: tuple[VehicleState, ...]
    params: tuple[VehicleParams, ...]

    def run(self) -> tuple[SensorFrame, ...]:
        """Every agent's frames of the step, in agent order."""
        return capture_all(self.rigs, self.step, self.scene, self.states, self.params)
