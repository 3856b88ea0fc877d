"""What every perception sensor of the simulator is: the interface of the rig (acres_sim.sensors.rig).

A sensor model says what it is (``kind``, ``rate_hz``, the mount ``SENSOR_META`` lists it under and
its ``settings`` there), captures one frame of data from a vehicle's pose, and gives that frame's
wire form. ``MountedFan`` is the part the ray-cast sensors share: casting their fixed fan from the
vehicle's pose, and reusing the last product while nothing it depends on has moved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from acres_bridge.wire.vocabulary import SensorKind
from acres_sim.sensors._raycast import F32, F64, RayFan, sensor_in_world
from acres_sim.sensors.compiled_cast import Backend, cast_fan, in_world
from acres_sim.sensors.scene import Box, Hits, Scene
from acres_sim.vehicles.kinematics import VehicleState

__all__ = ["Cast", "FrameData", "MountedFan", "SensorFrame", "SensorModel"]

FrameData = NDArray[np.float32] | NDArray[np.uint8]
Product = TypeVar("Product")


class SensorModel(Protocol):
    """One perception sensor of a vehicle."""

    @property
    def kind(self) -> SensorKind:
        """What SENSOR_META calls it."""
        ...

    @property
    def rate_hz(self) -> float:
        """Frames per second of simulation time (the rig takes whole numbers up to the physics rate)."""
        ...

    @property
    def mount_frame(self) -> str:
        """The vehicle mount that SENSOR_META lists the sensor under."""
        ...

    def settings(self) -> dict[str, Any]:
        """Its settings in SENSOR_META (what a receiver needs to read its frames)."""
        ...

    def capture(self, scene: Scene, state: VehicleState, *, agents: Sequence[Box], crop: bool) -> FrameData:
        """One frame from a vehicle in ``state``, seeing ``agents`` (the other vehicles' bodies);
        ``crop=False`` leaves the crop out (ACRES Core)."""
        ...

    def wire_frame(self, *, step: int, stamp_ns: int, sensor: int, data: FrameData) -> bytes:
        """The frame on the simulator's wire, for the sensor at position ``sensor`` of SENSOR_META."""
        ...

    def skip(self) -> None:
        """A due frame that nobody wants: cast nothing, but move on whatever state a frame moves on
        (the LiDAR's noise), so that the frames made later are those of a sensor that made them all."""
        ...

    @property
    def rays_cast(self) -> int:
        """The rays cast so far (a frame from the pose of the one before casts none)."""
        ...


@dataclass(frozen=True, slots=True)
class SensorFrame:
    """One frame of an agent's sensor: ``sensor`` is its position in the agent's mounts (SENSOR_META),
    ``model`` the sensor that made it (and gives its wire form)."""

    agent: int
    sensor: int
    model: SensorModel
    data: FrameData

    @property
    def kind(self) -> SensorKind:
        return self.model.kind

    def wire(self, step: int, stamp_ns: int) -> bytes:
        """The frame on the simulator's wire."""
        return self.model.wire_frame(step=step, stamp_ns=stamp_ns, sensor=self.sensor, data=self.data)


@dataclass(frozen=True, slots=True)
class _Key:
    """What a cast depends on: the scene, the vehicle's pose, the other bodies and the crop flag."""

    scene: Scene
    pose: tuple[float, float, float, float, float, float]
    agents: tuple[Box, ...]
    crop: bool

    def same(self, other: _Key) -> bool:
        return (
            self.scene is other.scene
            and self.pose == other.pose
            and self.crop == other.crop
            and self.agents == other.agents
        )


@dataclass(frozen=True, slots=True)
class Cast:
    """One cast of a mounted fan: the hits of its rays, from ``origin`` along ``world`` (the fan's
    directions turned by ``rotation``, the sensor frame in the world), in ``scene`` with the other
    vehicles' bodies ``agents``."""

    hits: Hits
    origin: F64
    rotation: F64
    world: F32
    scene: Scene
    agents: tuple[Box, ...]


class MountedFan(Generic[Product]):
    """A fan of rays fixed to a vehicle (``translation``, ``rotation``: the sensor frame in
    base_footprint), cast up to ``max_range_m`` by ``backend``; ``make`` turns a cast into the
    sensor's product (a range image, a picture), kept for the next frame from the same pose."""

    def __init__(
        self,
        fan: RayFan,
        translation: F64,
        rotation: F64,
        *,
        max_range_m: float,
        backend: Backend,
        make: Callable[[Cast], Product],
    ) -> None:
        self.fan = fan
        self._translation = translation
        self._rotation = rotation
        self._max_range_m = max_range_m
        self._backend = backend
        self._make = make
        self._last: tuple[_Key, Product] | None = None
        self.rays_cast = 0

    def product(
        self, scene: Scene, state: VehicleState, agents: tuple[Box, ...], crop: bool
    ) -> tuple[Product, bool]:
        """The product of a cast from ``state``, and whether it is the last one again (nothing it
        depends on has moved: a parked vehicle)."""
        key = _Key(scene, (state.x, state.y, state.z, state.roll, state.pitch, state.yaw), agents, crop)
        if self._last is not None and self._last[0].same(key):
            return self._last[1], True
        origin, rotation = sensor_in_world(state, self._translation, self._rotation)
        world = in_world(self._backend, self.fan, rotation)
        hits = cast_fan(
            self._backend,
            scene,
            origin,
            rotation,
            self.fan,
            max_range_m=self._max_range_m,
            agents=agents,
            crop=crop,
            world=world,
        )
        self.rays_cast += len(self.fan.directions)
        made = self._make(Cast(hits, origin, rotation, world, scene, agents))
        self._last = (key, made)
        return made, False
