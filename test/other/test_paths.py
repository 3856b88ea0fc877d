"""Path building: the odometry trail relative to its first pose, bounded; the route as a path."""

from __future__ import annotations

import math

import pytest
from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry, Path
from rclpy.serialization import deserialize_message, serialize_message

from acres_bridge.geo.rotation import quaternion_from_rpy, yaw_from_quaternion
from acres_bridge.geo.route import acre_loop
from acres_bridge.other.paths import OdomTrail, origin_transform, route_path

UTM = (500438.1, 4479963.9, 181.8)


def odometry(
    x: float, y: float, z: float = UTM[2], *, yaw: float = 0.0, sec: int = 1, frame: str = "utm"
) -> Odometry:
    message = Odometry()
    message.header.stamp = Time(sec=sec)
    message.header.frame_id = frame
    p = message.pose.pose.position
    p.x, p.y, p.z = x, y, z
    q = message.pose.pose.orientation
    q.x, q.y, q.z, q.w = quaternion_from_rpy(0.0, 0.0, yaw)
    return message


def position(pose: object) -> tuple[float, float, float]:
    p = pose.pose.position  # type: ignore[attr-defined]
    return (p.x, p.y, p.z)


def test_poses_are_relative_to_the_first_and_keep_their_orientation() -> None:
    trail = OdomTrail(frame="odom_origin", max_poses=100)
    trail.add(odometry(UTM[0], UTM[1], yaw=0.3, sec=1))
    trail.add(odometry(UTM[0] + 2.5, UTM[1] - 1.0, UTM[2] + 0.2, yaw=1.2, sec=2))
    assert trail.origin == UTM
    assert trail.origin_frame == "utm"
    path = trail.path(Time(sec=2))
    assert path.header.frame_id == "odom_origin"
    assert path.header.stamp.sec == 2
    assert [pose.header.stamp.sec for pose in path.poses] == [1, 2]
    assert {pose.header.frame_id for pose in path.poses} == {"odom_origin"}
    assert position(path.poses[0]) == (0.0, 0.0, 0.0)
    assert position(path.poses[1]) == pytest.approx((2.5, -1.0, 0.2))
    q = path.poses[1].pose.orientation
    assert yaw_from_quaternion((q.x, q.y, q.z, q.w)) == pytest.approx(1.2)


def test_the_trail_keeps_the_newest_max_poses_and_its_origin() -> None:
    trail = OdomTrail(frame="odom_origin", max_poses=3)
    for k in range(5):
        trail.add(odometry(UTM[0] + k, UTM[1], sec=k))
    assert len(trail) == 3
    path = trail.path(Time(sec=4))
    assert [position(pose)[0] for pose in path.poses] == pytest.approx([2.0, 3.0, 4.0])
    assert [pose.header.stamp.sec for pose in path.poses] == [2, 3, 4]


def test_added_poses_do_not_change_with_the_odometry_message() -> None:
    trail = OdomTrail(frame="odom_origin", max_poses=10)
    message = odometry(UTM[0], UTM[1], yaw=0.5, sec=1)
    trail.add(message)
    message.header.stamp.sec = 9
    message.pose.pose.orientation.z = 0.9
    pose = trail.path(Time()).poses[0]
    assert pose.header.stamp.sec == 1
    q = pose.pose.orientation
    assert yaw_from_quaternion((q.x, q.y, q.z, q.w)) == pytest.approx(0.5)


# Every alignment of the poses in CDR: the frame name's length moves the first pose by 1 byte.
@pytest.mark.parametrize("frame", ["", "o", "utm", "odom_origin", "polaris2/odom_origin", "x" * 16])
@pytest.mark.parametrize("added", [0, 1, 2, 3, 8, 13])
def test_the_serialized_path_is_the_path_serialized(frame: str, added: int) -> None:
    trail = OdomTrail(frame=frame, max_poses=5)
    for k in range(added):
        trail.add(odometry(UTM[0] + 1.5 * k, UTM[1] - 0.25 * k, UTM[2] + 0.125 * k, yaw=0.1 * k, sec=k))
    stamp = Time(sec=3, nanosec=123456789)
    raw = trail.serialized_path(stamp)
    assert isinstance(raw, bytes)
    assert len(raw) == len(serialize_message(trail.path(stamp)))
    # The CDR padding bytes are left unset by the serializer: compare what they read back as.
    assert deserialize_message(raw, Path) == trail.path(stamp)
    assert len(deserialize_message(raw, Path).poses) == min(added, 5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_pose_is_refused_and_sets_no_origin(bad: float) -> None:
    trail = OdomTrail(frame="odom_origin", max_poses=10)
    assert trail.add(odometry(bad, UTM[1])) is None
    assert trail.origin is None
    assert trail.refused == 1
    assert trail.add(odometry(UTM[0], UTM[1])) is not None
    assert trail.origin == UTM
    assert len(trail) == 1


@pytest.mark.parametrize("max_poses", [0, -1, True, 1.5, "10"])
def test_max_poses_must_be_a_positive_integer(max_poses: object) -> None:
    with pytest.raises(ValueError, match="max_poses must be a positive integer"):
        OdomTrail(frame="odom_origin", max_poses=max_poses)  # type: ignore[arg-type]


def test_origin_transform_translates_without_rotation() -> None:
    transform = origin_transform(parent="utm", child="odom_origin", origin=UTM, stamp=Time(sec=7))
    assert (transform.header.frame_id, transform.child_frame_id) == ("utm", "odom_origin")
    assert transform.header.stamp.sec == 7
    t, q = transform.transform.translation, transform.transform.rotation
    assert (t.x, t.y, t.z) == UTM
    assert (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 1.0)


def test_the_route_path_starts_at_its_origin_with_the_route_headings() -> None:
    route = acre_loop()
    path = route_path(route, frame="demo_route_origin", stamp=Time(sec=3))
    assert path.header.frame_id == "demo_route_origin"
    assert len(path.poses) == route.size
    assert position(path.poses[0]) == (0.0, 0.0, 0.0)
    x0, y0 = route.xy[0]
    for k in (1, route.size // 3, route.size - 1):
        assert position(path.poses[k])[:2] == pytest.approx((route.xy[k][0] - x0, route.xy[k][1] - y0))
        q = path.poses[k].pose.orientation
        assert math.remainder(yaw_from_quaternion((q.x, q.y, q.z, q.w)) - route.yaw[k], math.tau) == (
            pytest.approx(0.0, abs=1e-12)
        )
    assert {pose.header.frame_id for pose in path.poses} == {"demo_route_origin"}
