"""Observations from the vehicle's messages: the route-relative state, LiDAR ranges, camera pixels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Image, PointCloud2

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.gym.observation import RouteObserver, camera_image, lidar_ranges


def odometry(x: float, y: float, yaw: float, speed: float = 0.0, yaw_rate: float = 0.0) -> Odometry:
    message = Odometry()
    east, north, _ = ACRE_GEOREFERENCE.world_to_utm(x, y, 0.0)
    message.pose.pose.position.x, message.pose.pose.position.y = east, north
    message.pose.pose.orientation.z, message.pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    message.twist.twist.linear.x = speed
    message.twist.twist.angular.z = yaw_rate
    return message


def test_the_state_is_signed_cross_track_heading_speed_yaw_rate_and_curvature_ahead():
    observer = RouteObserver(lookahead_m=6.0)
    x, y, yaw = observer.route.pose_at(20.0)
    left = observer.state(odometry(x - 0.3 * math.sin(yaw), y + 0.3 * math.cos(yaw), yaw + 0.1, 2.5, 0.05))
    assert left.dtype == np.float32
    assert left.tolist() == pytest.approx([0.3, 0.1, 2.5, 0.05, 0.0], abs=1e-5)
    right = observer.state(odometry(x + 0.3 * math.sin(yaw), y - 0.3 * math.cos(yaw), yaw, -1.0))
    assert right[0] == pytest.approx(-0.3, abs=1e-5)
    assert right[2] == pytest.approx(-1.0)  # reversing


def test_progress_counts_forward_along_the_route_and_resets():
    observer = RouteObserver()
    for s in (10.0, 12.0, 15.5):
        observer.state(odometry(*observer.route.pose_at(s)))
    assert observer.travelled_m == pytest.approx(5.5, abs=1e-6)
    observer.reset()
    assert observer.travelled_m == 0.0
    assert observer.progress_m is None


def test_the_curvature_ahead_is_the_route_s_in_a_turn():
    observer = RouteObserver(lookahead_m=6.0)
    x, y, yaw = observer.route.pose_at(95.0)  # 6 m before the end of the first run: the U-turn ahead
    state = observer.state(odometry(x, y, yaw))
    assert abs(state[4]) == pytest.approx(1 / 6.0, rel=0.05)  # the U-turn's radius is 6 m


def cloud(columns: int, rings: int, points: np.ndarray) -> PointCloud2:
    message = PointCloud2()
    message.height, message.width, message.point_step = columns, rings, 16
    message.row_step = rings * 16
    message.data = points.astype(np.float32).tobytes()
    return message


def test_lidar_ranges_are_rings_by_columns_with_zero_for_no_return():
    points = np.zeros((4, 2, 4), np.float32)
    points[1, 0, :3] = (3.0, 4.0, 0.0)  # column 1, ring 0: 5 m
    points[2, 1, :3] = np.nan  # column 2, ring 1: no return
    points[3, 1, :3] = (0.0, 0.0, -2.0)
    ranges = lidar_ranges(cloud(4, 2, points), shape=(2, 4))
    assert ranges.dtype == np.float32
    assert ranges.tolist() == [[0.0, 5.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]]
    with pytest.raises(ValueError, match="expected an organised cloud of 4 x 2 points"):
        lidar_ranges(cloud(2, 4, points), shape=(2, 4))


def test_a_bgr8_image_becomes_rgb():
    image = Image(height=2, width=3, encoding="bgr8", step=12)  # 3 bytes of row padding
    rows = np.arange(24, dtype=np.uint8).reshape(2, 12)
    image.data = rows.tobytes()
    pixels = camera_image(image, shape=(2, 3, 3))
    assert pixels.tolist() == [[[2, 1, 0], [5, 4, 3], [8, 7, 6]], [[14, 13, 12], [17, 16, 15], [20, 19, 18]]]
    with pytest.raises(ValueError, match="expected a 3 x 2 bgr8 or rgb8 image, found 3 x 2 mono8"):
        camera_image(Image(height=2, width=3, encoding="mono8", step=3), shape=(2, 3, 3))
