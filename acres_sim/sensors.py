"""The perception sensors of each agent in the world: its LiDAR and its camera, and when they fire.

Both run at 10 Hz of simulation time (steps 12, 24, ... of the 120 Hz physics, acres_sim.clock),
after every vehicle has moved, so each agent sees the others where they are at that step. An
ACRES Core session (source core) has no camera, and its LiDAR does not see the crop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.camera import MAXXUM_CAMERA, OPTICAL_FRAMES, POLARIS_CAMERA, Camera, CameraParams, camera_mount
from acres_sim.clock import is_due
from acres_sim.compiled_cast import Backend
from acres_sim.kinematics import VehicleState
from acres_sim.lidar import MAXXUM_LIDAR, POLARIS_LIDAR, Lidar, LidarParams
from acres_sim.scene import Box, Scene, vehicle_box
from acres_sim.vehicles import VehicleParams

__all__ = ["PERCEPTION_RATE_HZ", "AgentSensors", "CaptureJob", "SensorFrame", "capture_all", "perception_due"]

PERCEPTION_RATE_HZ: Final = 10
_LIDARS: Final = {Vehicle.POLARIS: POLARIS_LIDAR, Vehicle.MAXXUM: MAXXUM_LIDAR}
_CAMERAS: Final = {Vehicle.POLARIS: POLARIS_CAMERA, Vehicle.MAXXUM: MAXXUM_CAMERA}


def perception_due(step: int) -> bool:
    """True when physics step ``step`` makes a cloud and an image (10 of every 120 steps)."""
    return is_due(step, PERCEPTION_RATE_HZ)


@dataclass(frozen=True, slots=True)
class SensorFrame:
    """One cloud or image of an agent: ``sensor`` is its index in the agent's mounts (SENSOR_META)."""

    agent: int
    sensor: int
    data: NDArray[np.float32] | NDArray[np.uint8]


def _mount_index(params: VehicleParams, frame: str) -> int:
    for index, mount in enumerate(params.mounts):
        if mount.frame == frame:
            return index
    raise KeyError(f"{params.vehicle} has no mount {frame!r}")


class AgentSensors:
    """The LiDAR and (outside ACRES Core) the camera of one agent.

    ``lidar_index`` and ``camera_index`` are the sensors' positions in the vehicle's mounts, which
    is the order of SENSOR_META's sensors; the camera's mount is the camera body, its image is in
    the optical frame below it.
    """

    def __init__(
        self,
        *,
        params: VehicleParams,
        seed: int,
        stream: int,
        camera: bool,
        crop: bool,
        backend: Backend = Backend.COMPILED,
    ) -> None:
        self.lidar_params: LidarParams = _LIDARS[params.vehicle]
        self.lidar = Lidar(
            self.lidar_params, params.mount("lidar"), seed=seed, stream=stream, backend=backend
        )
        self.lidar_index = _mount_index(params, "lidar")
        optical = OPTICAL_FRAMES[params.vehicle]
        self.camera_params: CameraParams = _CAMERAS[params.vehicle]
        self.camera_index = _mount_index(params, params.mount(optical).parent)
        self.camera = Camera(self.camera_params, camera_mount(params), backend=backend) if camera else None
        self.crop = crop

    def capture(
        self, agent: int, scene: Scene, state: VehicleState, others: Sequence[Box]
    ) -> tuple[SensorFrame, SensorFrame | None]:
        """A cloud and (when the agent has a camera) an image from ``state``, seeing ``others``."""
        cloud = self.lidar.scan(scene, state, agents=others, crop=self.crop)
        image = None
        if self.camera is not None:
            image = SensorFrame(agent, self.camera_index, self.camera.render(scene, state, agents=others))
        return SensorFrame(agent, self.lidar_index, cloud), image


def capture_all(
    sensors: Sequence[AgentSensors | None],
    scene: Scene,
    states: Sequence[VehicleState],
    params: Sequence[VehicleParams],
) -> tuple[tuple[SensorFrame, ...], tuple[SensorFrame, ...]]:
    """Every agent's cloud and image at this step: (clouds, images), in agent order."""
    bodies = [vehicle_box(p, s) for p, s in zip(params, states, strict=True)]
    clouds: list[SensorFrame] = []
    images: list[SensorFrame] = []
    for agent, rig in enumerate(sensors):
        if rig is None:
            continue
        others = bodies[:agent] + bodies[agent + 1 :]
        cloud, image = rig.capture(agent, scene, states[agent], others)
        clouds.append(cloud)
        if image is not None:
            images.append(image)
    return tuple(clouds), tuple(images)


@dataclass(frozen=True, slots=True)
class CaptureJob:
    """The clouds and images of one perception step, to make now or in a render thread.

    The states are the snapshot of that step; the sensors keep their own state (the LiDAR's noise
    stream, the last ray cast), so the jobs of a world must run one at a time, in step order.
    """

    step: int
    stamp_ns: int
    sensors: tuple[AgentSensors | None, ...]
    scene: Scene
    states: tuple[VehicleState, ...]
    params: tuple[VehicleParams, ...]

    def run(self) -> tuple[tuple[SensorFrame, ...], tuple[SensorFrame, ...]]:
        """(clouds, images) of every agent, in agent order."""
        return capture_all(self.sensors, self.scene, self.states, self.params)
