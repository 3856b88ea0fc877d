"""perception: the LiDAR cloud and the camera image of a vehicle (spec: LiDAR and Camera).

Polaris: /lidar/points, /camera/image_raw, /camera/camera_info; Maxxum: the same names relative
to the namespace. The sensor stream's SENSOR_META says which sensors the rig has, the LiDAR's
frame name and the camera's K and D; camera_info goes out with every image, with P made from K.

Clouds and images are handed from the ingest's I/O thread to a publishing thread through a
queue of `queue_depth` (4) frames per sensor, so a slow publish never delays the INS or the
clock. In free run a frame that finds its sensor's queue full is dropped and counted; in
lockstep the I/O thread waits for room and a step is acknowledged only once its frames are
published, so nothing is dropped. A frame whose size disagrees with its layout (possible only
from the internal topic of another process) is dropped and counted too.

A Core session has no camera: the simulator sends no images, the topics exist all the same.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from acres_bridge.convert import perception as convert
from acres_bridge.ingest.bus import BUS
from acres_bridge.ingest.channels import CAMERA, LIDAR, SESSION, Session
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.nodes.sensor_queue import SensorQueue
from acres_bridge.wire import ProtocolError
from acres_bridge.wire.perception import (
    LIDAR_POINT_STEP,
    CameraImage,
    CameraIntrinsics,
    LidarScan,
    camera_intrinsics,
)
from acres_bridge.wire.vocabulary import SensorKind, Vehicle

__all__ = ["Perception"]

_LOCKSTEP_WAIT_S = 10.0  # lockstep: how long the I/O thread waits for room before it drops
_LOG_THROTTLE_S = 5.0


@dataclass(frozen=True)
class _Rig:
    """What this agent's SENSOR_META says about its LiDAR and camera."""

    lidar: int | None = None
    lidar_frame: str = ""
    camera: int | None = None
    intrinsics: CameraIntrinsics | None = None
    lockstep: bool = False


class Perception(SubsystemNode):
    """Publishes the LiDAR and camera topics of one vehicle."""

    DEFAULT_NODE_NAME = "perception"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        depth = int(self.declare_parameter("queue_depth", 4).value)
        polaris = self.vehicle == Vehicle.POLARIS
        points = "/lidar/points" if polaris else "lidar/points"
        self._lidar_frame = self.frame(points)  # unless the rig names the LiDAR's frame
        self._camera_frame = self.frame("/camera/image_raw" if polaris else "camera/image_raw")
        self._points = self.publisher(points)
        self._image = self.publisher("/camera/image_raw" if polaris else "camera/image_raw")
        self._info = self.publisher("/camera/camera_info" if polaris else "camera/camera_info")
        self._rig = _Rig()
        self.queue: SensorQueue[LidarScan | CameraImage] = SensorQueue(depth)
        self.bad_frames: Counter[str] = Counter()
        self.published: Counter[str] = Counter()
        self._stopping = threading.Event()
        self._worker = threading.Thread(target=self._publish_loop, name="perception-publish", daemon=True)
        self._worker.start()
        self._remove_drain = BUS.add_drain(self.queue.join)  # an ingest in this process waits on it
        self.samples(SESSION, self._on_session, agent=0)
        # Frames nobody reads are not made (acres_bridge.ingest.frame_demand).
        self.samples(LIDAR, self._on_lidar, wants=self._points.wanted)
        self.samples(CAMERA, self._on_camera, wants=lambda: self._image.wanted() or self._info.wanted())

    # ---- the session -------------------------------------------------------------------------

    def _on_session(self, session: Session) -> None:
        meta = session.meta(self.agent)
        lockstep = bool(session.hello and session.hello.lockstep)
        if meta is None:
            self._rig = _Rig(lockstep=lockstep)
            return
        lidar = camera = None
        lidar_frame = self._lidar_frame
        intrinsics = None
        for index, mount in enumerate(meta.sensors):
            if mount.kind == SensorKind.LIDAR and lidar is None:
                lidar, lidar_frame = index, self.frames.apply(mount.frame)
            elif mount.kind == SensorKind.CAMERA and camera is None:
                try:
                    intrinsics = camera_intrinsics(mount)
                    camera = index
                except ProtocolError as error:
                    self.get_logger().error(f"camera {mount.name!r} is not published: {error}")
        self._rig = _Rig(lidar, lidar_frame, camera, intrinsics, lockstep)

    # ---- I/O thread: hand over -----------------------------------------------------------------

    def _on_lidar(self, scan: LidarScan) -> None:
        rig = self._rig
        if scan.sensor != rig.lidar:
            self._refuse("sensor", f"a cloud of sensor {scan.sensor}, which is not this rig's LiDAR")
        elif len(scan.points) != scan.columns * scan.rings * LIDAR_POINT_STEP:
            self._refuse(
                "size", f"a cloud of {len(scan.points)} bytes for {scan.columns} x {scan.rings} points"
            )
        else:
            self._hand_over("lidar", scan, rig.lockstep)

    def _on_camera(self, image: CameraImage) -> None:
        rig = self._rig
        intrinsics = rig.intrinsics
        if image.sensor != rig.camera or intrinsics is None:
            self._refuse("sensor", f"an image of sensor {image.sensor}, which is not this rig's camera")
        elif (image.width, image.height) != (intrinsics.width, intrinsics.height):
            self._refuse(
                "size",
                f"an image of {image.width} x {image.height}, but the camera's is "
                f"{intrinsics.width} x {intrinsics.height}",
            )
        elif len(image.pixels) != image.row_step * image.height:
            self._refuse("size", f"an image of {len(image.pixels)} bytes for {image.width} x {image.height}")
        else:
            self._hand_over("camera", image, rig.lockstep)

    def _hand_over(self, sensor: str, frame: LidarScan | CameraImage, lockstep: bool) -> None:
        if not self.queue.put(sensor, frame, wait_s=_LOCKSTEP_WAIT_S if lockstep else 0.0):
            self.get_logger().warning(
                f"dropped a {sensor} frame: {self.queue.capacity} are waiting to be published "
                f"({self.queue.dropped[sensor]} {sensor} frames dropped so far)",
                throttle_duration_sec=_LOG_THROTTLE_S,
            )

    def _refuse(self, reason: str, what: str) -> None:
        self.bad_frames[reason] += 1
        self.get_logger().warning(
            f"dropped {what} ({sum(self.bad_frames.values())} bad frames so far)",
            throttle_duration_sec=_LOG_THROTTLE_S,
        )

    # ---- the publishing thread -----------------------------------------------------------------

    def _publish_loop(self) -> None:
        while not self._stopping.is_set():
            taken = self.queue.get(timeout_s=0.5)
            if taken is None:
                continue
            key, frame = taken
            try:
                self._publish(frame)
                self.published[str(key)] += 1
            except Exception as error:  # a publish failing (shutdown) must not end the thread
                self.get_logger().error(f"publishing a {key} frame failed: {error}")
            finally:
                self.queue.done(key)

    def _publish(self, frame: LidarScan | CameraImage) -> None:
        if isinstance(frame, LidarScan):
            self._points.publish(convert.point_cloud(frame, self._rig.lidar_frame), frame.step)
            return
        intrinsics = self._rig.intrinsics
        frame_id = self._camera_frame
        self._image.publish(convert.image(frame, frame_id), frame.step)
        if intrinsics is not None:
            self._info.publish(convert.camera_info(intrinsics, frame_id, frame.stamp_ns), frame.step)

    def destroy_node(self) -> None:
        self._remove_drain()
        self._stopping.set()
        self.queue.close()
        self._worker.join(timeout=2.0)
        super().destroy_node()
