"""The world's samples as wire messages (docs/protocol.md): an INS sample, an agent's SENSOR_META,
a sensor frame (a cloud's LIDAR frame, an image's CAMERA frame: each sensor model gives its own
wire form) and the scene a HELLO describes. Pure: the server sends what these return."""

from __future__ import annotations

from typing import Final

import numpy as np

from acres_bridge.geo.georef import UTM16N_EPSG
from acres_bridge.wire import InsSample as WireIns
from acres_bridge.wire import SensorMeta, SensorMount
from acres_bridge.wire.messages import SceneBox, SceneCropField, SceneGround, SceneLayout
from acres_bridge.wire.vocabulary import SensorKind
from acres_sim.sensors.scene import BGR, Scene
from acres_sim.sensors.sensor_model import SensorFrame
from acres_sim.vehicles.ins import InsSample
from acres_sim.vehicles.params import VehicleParams
from acres_sim.world.model import World

__all__ = ["scene_layout", "sensor_frame", "sensor_meta", "wire_ins"]

# The ground a viewer draws: 41 x 41 heights 8 m apart around the tile's centre, which hold the
# route, the farmstead and the crop (a viewer's ground, not the physics').
GROUND_SPACING_M: Final = 8.0
GROUND_POINTS: Final = 41


def _rgb(colour: BGR) -> tuple[int, int, int]:
    blue, green, red = colour
    return (red, green, blue)


def scene_layout(scene: Scene, name: str) -> SceneLayout:
    """The static scene as a HELLO describes it: the ground on a coarse grid (heights to the cm),
    the buildings and the crop fields."""
    half = 0.5 * GROUND_SPACING_M * (GROUND_POINTS - 1)
    axis = np.linspace(-half, half, GROUND_POINTS)
    xs, ys = np.meshgrid(axis, axis)  # row j is y = axis[j]
    heights = np.round(scene.terrain.heights(xs.ravel(), ys.ravel()).astype(np.float64), 2)
    ground = SceneGround(
        x0=-half,
        y0=-half,
        spacing_m=GROUND_SPACING_M,
        nx=GROUND_POINTS,
        ny=GROUND_POINTS,
        heights=tuple(heights.tolist()),
    )
    boxes = tuple(
        SceneBox(x=b.x, y=b.y, z=b.z, lx=b.lx, ly=b.ly, lz=b.lz, yaw=b.yaw, color=_rgb(b.color))
        for b in scene.buildings
    )
    fields = tuple(
        SceneCropField(
            x=f.x,
            y=f.y,
            yaw=f.yaw,
            length_m=f.length_m,
            rows=f.rows,
            row_spacing_m=f.row_spacing_m,
            row_width_m=f.row_width_m,
            height_m=f.height_m,
            color=_rgb(f.color),
        )
        for f in scene.crop
    )
    return SceneLayout(name=name, ground=ground, boxes=boxes, crop_fields=fields)


def wire_ins(sample: InsSample) -> WireIns:
    """The wire form of an INS sample of the world."""
    return WireIns(
        step=sample.step,
        stamp_ns=sample.stamp_ns,
        has_position=sample.has_position,
        position=sample.position_utm,
        latitude_deg=sample.latitude_deg,
        longitude_deg=sample.longitude_deg,
        orientation=sample.orientation,
        velocity=sample.velocity,
        angular_rate=sample.angular_rate,
        specific_force=sample.specific_force,
        position_variance=sample.position_cov,
        velocity_variance=sample.velocity_cov,
        attitude_variance=sample.attitude_cov,
        true_position=sample.true_position_utm,
        true_orientation=sample.true_orientation,
        true_speed=sample.true_speed,
        angular_rate_variance=sample.angular_rate_cov,
        specific_force_variance=sample.specific_force_cov,
    )


def sensor_meta(world: World, index: int) -> SensorMeta:
    """SENSOR_META of one agent: its georeference and its mounts, each sensor's with its kind, rate
    and settings (the LiDAR's layout, the camera's intrinsics). A mount without a sensor (the camera
    body in ACRES Core) is a plain frame."""
    agent = world.agent(index)
    params: VehicleParams = agent.params
    georef = world.georef
    rig = world.sensors(index)
    mounts = []
    for position, mount in enumerate(params.mounts):
        kind, rate, settings = SensorKind.FRAME, 0.0, {}
        sensor = rig.on_mount(position) if rig is not None else None
        if mount.frame == "imu_link":
            kind, rate = SensorKind.INS, 100.0
        elif sensor is not None:
            kind, rate, settings = sensor.model.kind, float(sensor.rate_hz), sensor.model.settings()
        mounts.append(
            SensorMount(
                name=mount.frame,
                kind=kind,
                frame=mount.frame,
                parent=mount.parent,
                xyz_m=mount.translation,
                rpy_rad=(mount.roll, mount.pitch, mount.yaw),
                rate_hz=rate,
                settings=settings,
            )
        )
    return SensorMeta(
        agent=index,
        vehicle=agent.vehicle,
        utm_epsg=UTM16N_EPSG,
        world_origin_utm=(georef.origin_easting, georef.origin_northing, georef.origin_height),
        sensors=tuple(mounts),
    )


def sensor_frame(step: int, stamp_ns: int, frame: SensorFrame) -> bytes:
    """The wire frame of a sensor frame of the world (its model's LIDAR, CAMERA, ... frame)."""
    return frame.wire(step, stamp_ns)
