"""The sensor rig: which sensors each vehicle carries, when each fires, and that a new kind of sensor
is a model and a table entry, which the world, SENSOR_META and the wire then take as they are."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from acres_bridge.wire import decode
from acres_bridge.wire.frames import FrameReader
from acres_bridge.wire.perception import CameraImage, encode_camera_frame
from acres_bridge.wire.vocabulary import SensorKind, Source, Vehicle
from acres_sim.errors import ParamsError
from acres_sim.sensors.compiled_cast import Backend
from acres_sim.sensors.rig import RIGS, RigEntry, RigOptions, SensorRig
from acres_sim.sensors.scene import Box, Scene
from acres_sim.sensors.sensor_model import FrameData, SensorModel
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MAXXUM, POLARIS, VehicleParams
from acres_sim.world.model import AgentSpec, World
from acres_sim.world.wire import sensor_frame, sensor_meta

START = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OPTIONS = RigOptions(seed=1, stream=0, backend=Backend.NUMPY)


class Thermal:
    """A sensor kind the simulator does not have: a 4 x 2 camera at 30 Hz on the optical frame."""

    kind = SensorKind.CAMERA
    mount_frame = "reolink_camera_optical"

    def __init__(self, rate_hz: float = 30.0) -> None:
        self.rate_hz = rate_hz
        self.captured: list[float] = []

    def settings(self) -> dict[str, Any]:
        return {"width": 4, "height": 2, "band": "lwir"}

    def capture(self, scene: Scene, state: VehicleState, *, agents: Sequence[Box], crop: bool) -> FrameData:
        self.captured.append(state.x)
        return np.full((2, 4, 3), len(agents), dtype=np.uint8)

    def wire_frame(self, *, step: int, stamp_ns: int, sensor: int, data: FrameData) -> bytes:
        return encode_camera_frame(
            step=step, stamp_ns=stamp_ns, sensor=sensor, width=4, height=2, pixels=data
        )

    def skip(self) -> None:
        """Nothing to move on."""

    @property
    def rays_cast(self) -> int:
        return 8 * len(self.captured)


def with_thermal(model: Thermal) -> dict[Vehicle, tuple[RigEntry, ...]]:
    def make(_vehicle: VehicleParams, _options: RigOptions) -> SensorModel:
        return model

    return {**RIGS, Vehicle.POLARIS: (*RIGS[Vehicle.POLARIS], RigEntry(make))}


@pytest.mark.parametrize("vehicle", [POLARIS, MAXXUM])
def test_each_vehicle_carries_its_lidar_and_camera_at_10_hz_on_their_mounts(vehicle: VehicleParams) -> None:
    rig = SensorRig.of(vehicle, OPTIONS)
    mounts = [vehicle.mounts[s.index].frame for s in rig.sensors]
    kinds = [s.model.kind for s in rig.sensors]
    camera_body = {Vehicle.POLARIS: "reolink_camera", Vehicle.MAXXUM: "camera"}[vehicle.vehicle]
    assert sorted(zip(kinds, mounts, strict=True)) == [("camera", camera_body), ("lidar", "lidar")]
    assert [s.rate_hz for s in rig.sensors] == [10, 10]
    assert rig.crop
    assert [step for step in range(1, 61) if rig.due(step)] == [12, 24, 36, 48, 60]


def test_an_acres_core_rig_has_the_lidar_alone_and_no_crop() -> None:
    rig = SensorRig.of(POLARIS, OPTIONS, core=True)
    assert [s.model.kind for s in rig.sensors] == ["lidar"]
    assert not rig.crop


def test_a_new_kind_of_sensor_is_a_table_entry_for_the_world_sensor_meta_and_the_wire() -> None:
    thermal = Thermal()
    world = World(
        seed=1,
        start_utc=START,
        lockstep=True,
        agents=[AgentSpec(name="polaris"), AgentSpec(name="other")],
        rigs=with_thermal(thermal),
        ray_cast=Backend.NUMPY,
    )
    meta = sensor_meta(world, 0).sensors
    optical = next(m for m in meta if m.name == "reolink_camera_optical")
    assert (optical.kind, optical.rate_hz, optical.settings) == ("camera", 30.0, thermal.settings())
    assert [(m.name, m.kind) for m in meta if m.kind in ("lidar", "camera")] == [
        ("lidar", "lidar"),
        ("reolink_camera", "camera"),
        ("reolink_camera_optical", "camera"),
    ]
    outputs = [world.advance() for _ in range(12)]
    made = [(o.step, f.agent, f.kind, f.sensor) for o in outputs for f in o.frames]
    # The thermal camera at 30 Hz (steps 4, 8, 12) on both agents (the same model object here),
    # the LiDAR and the camera at 10 Hz (step 12), each agent's in mount order.
    optical_index = next(i for i, m in enumerate(POLARIS.mounts) if m.frame == "reolink_camera_optical")
    lidar_index = next(i for i, m in enumerate(POLARIS.mounts) if m.frame == "lidar")
    camera_index = next(i for i, m in enumerate(POLARIS.mounts) if m.frame == "reolink_camera")
    by_mount = sorted([(lidar_index, "lidar"), (camera_index, "camera"), (optical_index, "camera")])
    assert made == [
        (4, 0, "camera", optical_index),
        (4, 1, "camera", optical_index),
        (8, 0, "camera", optical_index),
        (8, 1, "camera", optical_index),
        *[(12, agent, kind, index) for agent in (0, 1) for index, kind in by_mount],
    ]
    thermal_frame = outputs[3].frames[0]
    assert thermal_frame.data.tolist() == np.full((2, 4, 3), 1).tolist()  # it saw the other vehicle
    reader = FrameReader()
    reader.feed(sensor_frame(4, 33_333_333, thermal_frame))
    (wire,) = [decode(frame) for frame in reader.frames()]
    assert isinstance(wire, CameraImage)
    assert (wire.step, wire.sensor, wire.width, wire.height) == (4, optical_index, 4, 2)


def test_a_rig_refuses_a_sensor_it_cannot_mount_or_time() -> None:
    with pytest.raises(ParamsError, match=r"rate_hz: expected a whole number 1\.\.120, got 7\.5"):
        SensorRig(POLARIS, [Thermal(rate_hz=7.5)], crop=True)
    with pytest.raises(ParamsError, match=r"rate_hz: expected a whole number 1\.\.120, got 240"):
        SensorRig(POLARIS, [Thermal(rate_hz=240.0)], crop=True)
    with pytest.raises(ParamsError, match="two sensors on one mount"):
        SensorRig(POLARIS, [Thermal(), Thermal()], crop=True)
    elsewhere = Thermal()
    elsewhere.mount_frame = "mast"
    with pytest.raises(ParamsError, match="'mast': the polaris has no such mount"):
        SensorRig(POLARIS, [elsewhere], crop=True)


def test_a_world_without_perception_makes_no_rig_and_no_frames() -> None:
    world = World(seed=1, start_utc=START, lockstep=True, perception=False, source=Source.UNREAL)
    assert world.sensors(0) is None
    assert not [f for _ in range(24) for f in world.advance().frames]
