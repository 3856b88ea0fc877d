"""The world's samples as wire messages (docs/protocol.md): an INS sample, an agent's SENSOR_META,
a cloud's LIDAR frame and an image's CAMERA frame. Pure: the server sends what these return."""

from __future__ import annotations

from acres_bridge.geo.georef import UTM16N_EPSG
from acres_bridge.wire import InsSample as WireIns
from acres_bridge.wire import SensorMeta, SensorMount
from acres_bridge.wire.perception import (
    CameraIntrinsics,
    LidarLayout,
    encode_camera_frame,
    encode_lidar_frame,
)
from acres_bridge.wire.vocabulary import SensorKind
from acres_sim.ins import InsSample
from acres_sim.sensors import PERCEPTION_RATE_HZ, SensorFrame
from acres_sim.vehicles import VehicleParams
from acres_sim.world import World

__all__ = ["camera_frame", "lidar_frame", "sensor_meta", "wire_ins"]


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
    """SENSOR_META of one agent: its georeference and its rig, with the LiDAR's layout and the
    camera's intrinsics. Without a camera (ACRES Core) the camera's mount is a plain frame."""
    agent = world.agent(index)
    params: VehicleParams = agent.params
    georef = world.georef
    rig = world.sensors(index)
    mounts = []
    for position, mount in enumerate(params.mounts):
        kind, rate, settings = SensorKind.FRAME, 0.0, {}
        if mount.frame == "imu_link":
            kind, rate = SensorKind.INS, 100.0
        elif rig is not None and position == rig.lidar_index:
            lidar = rig.lidar_params
            kind, rate = SensorKind.LIDAR, float(PERCEPTION_RATE_HZ)
            settings = {
                **LidarLayout(lidar.columns, lidar.rings).settings(),
                "vertical_fov_deg": [lidar.lower_fov_deg, lidar.upper_fov_deg],
                "range_m": [lidar.min_range_m, lidar.max_range_m],
            }
        elif rig is not None and rig.camera is not None and position == rig.camera_index:
            camera = rig.camera_params
            kind, rate = SensorKind.CAMERA, float(PERCEPTION_RATE_HZ)
            settings = CameraIntrinsics(camera.width, camera.height, camera.k, camera.d).settings()
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


def lidar_frame(step: int, stamp_ns: int, frame: SensorFrame) -> bytes:
    """The LIDAR frame of a cloud of the world."""
    columns, rings, _ = frame.data.shape
    return encode_lidar_frame(
        step=step, stamp_ns=stamp_ns, sensor=frame.sensor, columns=columns, rings=rings, points=frame.data
    )


def camera_frame(step: int, stamp_ns: int, frame: SensorFrame) -> bytes:
    """The CAMERA frame of an image of the world."""
    height, width, _ = frame.data.shape
    return encode_camera_frame(
        step=step, stamp_ns=stamp_ns, sensor=frame.sensor, width=width, height=height, pixels=frame.data
    )
