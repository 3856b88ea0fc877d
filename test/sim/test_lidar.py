"""The LiDAR model: beam layout, the organised cloud, ranges, noise and what it sees."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from acres_sim.errors import ParamsError
from acres_sim.sensors._raycast import rotation_matrix
from acres_sim.sensors.lidar import (
    MAXXUM_LIDAR,
    POLARIS_LIDAR,
    REFLECTIVITY,
    Lidar,
    LidarParams,
    beam_directions,
)
from acres_sim.sensors.scene import Box, CropField, FlatGround, Scene, Surface
from acres_sim.sensors.tile import flat_scene, vehicle_box
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MAXXUM, POLARIS, MountPose

MOUNT = POLARIS.mount("lidar")
SMALL = dataclasses.replace(POLARIS_LIDAR, columns=360)


def _to_world(cloud: np.ndarray, state: VehicleState, mount: MountPose) -> np.ndarray:
    """The cloud's points (x, y, z) in the world, through the mount and the vehicle pose."""
    body = rotation_matrix(state.roll, state.pitch, state.yaw)
    sensor = rotation_matrix(mount.roll, mount.pitch, mount.yaw)
    p = cloud[..., :3].reshape(-1, 3).astype(np.float64)
    in_base = p @ sensor.T + np.array(mount.translation)
    return in_base @ body.T + np.array([state.x, state.y, state.z])


# Parameters and layout.


def test_the_rigs_sensors() -> None:
    assert (POLARIS_LIDAR.columns, POLARIS_LIDAR.rings) == (1800, 32)
    assert (POLARIS_LIDAR.lower_fov_deg, POLARIS_LIDAR.upper_fov_deg) == (-30.67, 10.67)  # HDL-32E
    assert (MAXXUM_LIDAR.columns, MAXXUM_LIDAR.rings) == (180, 8)
    for params in (POLARIS_LIDAR, MAXXUM_LIDAR):
        assert params.rate_hz == 10.0
        assert params.points == params.columns * params.rings


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"columns": 0}, "columns"),
        ({"rings": True}, "rings"),
        ({"columns": 3.0}, "columns"),
        ({"lower_fov_deg": 20.0}, "lower <= upper"),
        ({"upper_fov_deg": 95.0}, "lower <= upper"),
        ({"lower_fov_deg": math.nan}, "lower_fov_deg"),
        ({"rings": 1}, "one"),
        ({"min_range_m": 200.0}, "min_range_m"),
        ({"min_range_m": -1.0}, "min_range_m"),
        ({"max_range_m": math.inf}, "max_range_m"),
        ({"rate_hz": 0.0}, "rate_hz"),
        ({"range_noise_m": -0.1}, "range_noise_m"),
    ],
)
def test_bad_parameters_are_rejected(change: dict[str, object], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        dataclasses.replace(POLARIS_LIDAR, **change)


def test_a_single_ring_lidar_is_a_planar_scanner() -> None:
    planar = LidarParams(
        columns=4, rings=1, lower_fov_deg=0.0, upper_fov_deg=0.0, min_range_m=0.1, max_range_m=30.0
    )
    d = beam_directions(planar)
    assert d.shape == (4, 1, 3)
    assert d[:, 0] == pytest.approx(np.array([[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]]), abs=1e-7)


def test_beam_layout_columns_counter_clockwise_from_ahead_rings_from_the_lowest() -> None:
    d = beam_directions(POLARIS_LIDAR)
    assert d.shape == (1800, 32, 3)
    assert d.dtype == np.float32
    assert np.linalg.norm(d, axis=-1) == pytest.approx(np.ones((1800, 32)), abs=1e-6)
    azimuth = np.degrees(np.arctan2(d[..., 1], d[..., 0]))
    elevation = np.degrees(np.arcsin(d[..., 2]))
    assert azimuth[0] == pytest.approx(np.zeros(32), abs=1e-5)  # column 0 straight ahead
    assert azimuth[450] == pytest.approx(np.full(32, 90.0), abs=1e-4)  # a quarter turn: to the left
    assert azimuth[1] == pytest.approx(np.full(32, 0.2), abs=1e-4)
    assert elevation[0, 0] == pytest.approx(-30.67, abs=1e-4)
    assert elevation[0, -1] == pytest.approx(10.67, abs=1e-4)
    assert np.diff(elevation[0]) == pytest.approx(np.full(31, 41.34 / 31), abs=1e-4)
    lidar = Lidar(POLARIS_LIDAR, MOUNT, seed=0, stream=0)
    assert np.array_equal(lidar.beam_directions(), d)


def test_a_lidar_rejects_a_bad_mount_or_seed() -> None:
    with pytest.raises(ParamsError, match="parent"):
        Lidar(POLARIS_LIDAR, MountPose(frame="lidar", parent="roof"), seed=0, stream=0)
    with pytest.raises(ParamsError, match="seed"):
        Lidar(POLARIS_LIDAR, MOUNT, seed=-1, stream=0)
    with pytest.raises(ParamsError, match="stream"):
        Lidar(POLARIS_LIDAR, MOUNT, seed=0, stream=True)


# The cloud.


def test_the_cloud_is_an_organised_point_cloud2_payload() -> None:
    lidar = Lidar(POLARIS_LIDAR, MOUNT, seed=1, stream=0)
    cloud = lidar.scan(flat_scene(), VehicleState())
    assert cloud.shape == (1800, 32, 4)
    assert cloud.dtype == np.float32
    assert cloud.flags.c_contiguous
    data = cloud.tobytes()
    assert len(data) == 1800 * 32 * 16  # height = columns, width = rings, point_step 16
    # Point (column c, ring r) at byte (c * rings + r) * 16: x, y, z, intensity, little-endian float32.
    c, r = 7, 3
    offset = (c * 32 + r) * 16
    assert np.frombuffer(data[offset : offset + 16], dtype="<f4").tolist() == cloud[c, r].tolist()


@pytest.mark.parametrize(
    "state",
    [
        VehicleState(),
        VehicleState(x=12.0, y=-7.0, yaw=2.3),
        VehicleState(x=-3.0, y=4.0, z=0.2, roll=0.04, pitch=-0.03, yaw=-1.1),
    ],
)
def test_every_return_of_a_flat_scene_lies_on_the_ground(state: VehicleState) -> None:
    lidar = Lidar(SMALL, MOUNT, seed=2, stream=0)
    cloud = lidar.scan(flat_scene(), state)
    returns = ~np.isnan(cloud[..., 0])
    assert returns.sum() > 0.6 * returns.size
    world = _to_world(cloud, state, MOUNT)[returns.ravel()]
    # Within 5 sigma of the range noise, projected on the vertical.
    assert np.abs(world[:, 2]).max() < 5 * SMALL.range_noise_m


def test_beams_towards_the_sky_have_no_return() -> None:
    params = dataclasses.replace(SMALL, max_range_m=50.0)
    lidar = Lidar(params, MOUNT, seed=3, stream=0)
    cloud = lidar.scan(flat_scene(), VehicleState())
    elevation = np.degrees(np.arcsin(lidar.beam_directions()[..., 2]))
    up = elevation >= 0.0
    assert up.any()
    assert np.isnan(cloud[up][:, :3]).all()
    assert (cloud[up][:, 3] == 0.0).all()
    # Nor does a beam that would meet the ground beyond the maximum range.
    far = (elevation < 0) & (MOUNT.z / np.tan(np.radians(-elevation)) > params.max_range_m + 1.0)
    assert far.any()
    assert np.isnan(cloud[far][:, 0]).all()


def test_returns_lie_within_the_range_limits() -> None:
    params = dataclasses.replace(SMALL, min_range_m=3.0, max_range_m=20.0, range_noise_m=0.05)
    lidar = Lidar(params, MOUNT, seed=4, stream=0)
    near = Box(x=2.0, y=0.0, z=1.0, lx=0.5, ly=0.5, lz=4.0)  # 0.8 m ahead of the sensor
    cloud = lidar.scan(Scene(terrain=FlatGround(), buildings=(near,)), VehicleState())
    r = np.linalg.norm(cloud[..., :3], axis=-1)
    finite = ~np.isnan(r)
    assert finite.any()
    assert (r[finite] >= 3.0).all()
    assert (r[finite] <= 20.0).all()
    assert np.isnan(cloud[0, :, 0]).all()  # straight ahead: the box, nearer than the minimum
    assert (cloud[~finite][:, 3] == 0).all()


def test_a_box_ahead_is_seen_at_its_range() -> None:
    params = dataclasses.replace(POLARIS_LIDAR, range_noise_m=0.0)
    lidar = Lidar(params, MOUNT, seed=5, stream=0)
    wall = Box(x=15.0, y=0.0, z=2.0, lx=1.0, ly=8.0, lz=4.0)  # its face at x = 14.5
    cloud = lidar.scan(Scene(terrain=FlatGround(), buildings=(wall,)), VehicleState())
    level = int(np.argmin(np.abs(np.degrees(np.arcsin(lidar.beam_directions()[0, :, 2])))))
    point = cloud[0, level]
    elevation = math.asin(float(lidar.beam_directions()[0, level, 2]))
    assert point[0] == pytest.approx(14.5 - MOUNT.x, abs=1e-4)
    assert np.linalg.norm(point[:3]) == pytest.approx((14.5 - MOUNT.x) / math.cos(elevation), abs=1e-4)
    assert point[3] > 0.0


def test_other_vehicles_appear_in_the_cloud() -> None:
    params = dataclasses.replace(POLARIS_LIDAR, range_noise_m=0.0)
    lidar = Lidar(params, MOUNT, seed=6, stream=0)
    other = vehicle_box(MAXXUM, VehicleState(x=0.0, y=12.0, yaw=0.0))  # to the left
    empty = lidar.scan(flat_scene(), VehicleState())
    seen = lidar.scan(flat_scene(), VehicleState(), agents=[other])
    same = (empty == seen) | (np.isnan(empty) & np.isnan(seen))
    changed = ~same.all(axis=-1)
    azimuth = np.degrees(np.arctan2(lidar.beam_directions()[..., 1], lidar.beam_directions()[..., 0]))
    assert changed.sum() > 100
    assert (np.abs(azimuth[changed] - 90.0) < 20.0).all()
    points = seen[changed]
    assert (points[:, 1] > 12.0 - 0.5 * other.ly - 1e-3).all()


def test_the_crop_can_be_left_out() -> None:
    params = dataclasses.replace(SMALL, range_noise_m=0.0)
    field = CropField(x=-20.0, y=3.0, yaw=0.0, length_m=40.0, rows=10)  # beside the vehicle, to the left
    scene = Scene(terrain=FlatGround(), crop=(field,))
    state = VehicleState(x=1.0, y=-2.0, yaw=0.1)
    with_crop = Lidar(params, MOUNT, seed=7, stream=0).scan(scene, state)
    without = Lidar(params, MOUNT, seed=7, stream=0).scan(scene, state, crop=False)
    z_with = _to_world(with_crop, state, MOUNT)[:, 2]
    z_without = _to_world(without, state, MOUNT)[:, 2]
    assert (z_with > 0.5).sum() > 50  # the canopy, 0.9 m tall
    assert np.nanmax(np.abs(z_without)) < 1e-3  # only the ground


def test_intensity_follows_reflectivity_incidence_and_range() -> None:
    params = dataclasses.replace(POLARIS_LIDAR, range_noise_m=0.0)
    lidar = Lidar(params, MOUNT, seed=8, stream=0)
    other = vehicle_box(POLARIS, VehicleState(x=10.0, y=0.0))
    cloud = lidar.scan(flat_scene(), VehicleState(), agents=[other])
    intensity = cloud[..., 3]
    returns = ~np.isnan(cloud[..., 0])
    assert (intensity[returns] > 0).all()
    assert (intensity <= 255.0).all()
    r = np.linalg.norm(cloud[..., :3], axis=-1)
    ground = returns & (np.abs(_to_world(cloud, VehicleState(), MOUNT)[:, 2].reshape(r.shape)) < 1e-3)
    # On the ground, nearer and steeper returns are brighter.
    near, far = ground & (r < 5.0), ground & (r > 20.0)
    assert intensity[near].min() > intensity[far].max()
    # The vehicle (reflectivity 0.8, facing the beam) outshines the ground (0.25) around it.
    assert intensity[0][returns[0]].max() > 2 * intensity[near].max()


# Noise and determinism.


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes() -> None:
    state = VehicleState(x=1.0, y=2.0, yaw=0.3)
    a = Lidar(SMALL, MOUNT, seed=9, stream=0)
    b = Lidar(SMALL, MOUNT, seed=9, stream=0)
    first = [a.scan(flat_scene(), state).tobytes() for _ in range(2)]
    assert first == [b.scan(flat_scene(), state).tobytes() for _ in range(2)]
    assert first[0] != first[1]  # fresh noise on every scan
    other_seed = Lidar(SMALL, MOUNT, seed=10, stream=0).scan(flat_scene(), state).tobytes()
    other_stream = Lidar(SMALL, MOUNT, seed=9, stream=1).scan(flat_scene(), state).tobytes()
    assert other_seed != first[0]
    assert other_stream != first[0]


def test_the_noise_has_the_configured_spread() -> None:
    params = dataclasses.replace(SMALL, range_noise_m=0.05)
    quiet = dataclasses.replace(SMALL, range_noise_m=0.0)
    scene = flat_scene()
    noisy = Lidar(params, MOUNT, seed=11, stream=0).scan(scene, VehicleState())
    exact = Lidar(quiet, MOUNT, seed=11, stream=0).scan(scene, VehicleState())
    both = ~np.isnan(noisy[..., 0]) & ~np.isnan(exact[..., 0])
    error = np.linalg.norm(noisy[..., :3], axis=-1)[both] - np.linalg.norm(exact[..., :3], axis=-1)[both]
    assert abs(float(error.mean())) < 0.005
    assert float(error.std()) == pytest.approx(0.05, rel=0.1)


def test_a_parked_vehicle_reuses_the_cast_but_not_the_noise() -> None:
    quiet = Lidar(dataclasses.replace(SMALL, range_noise_m=0.0), MOUNT, seed=12, stream=0)
    noisy = Lidar(SMALL, MOUNT, seed=12, stream=0)
    scene = Scene(terrain=FlatGround(), buildings=(Box(x=0.0, y=20.0, z=2.0, lx=10.0, ly=4.0, lz=4.0),))
    state = VehicleState(x=5.0, yaw=1.0, speed=0.0)
    assert quiet.scan(scene, state).tobytes() == quiet.scan(scene, state).tobytes()
    assert noisy.scan(scene, state).tobytes() != noisy.scan(scene, state).tobytes()
    # A change of pose, agents or flags casts again.
    other = vehicle_box(POLARIS, VehicleState(x=15.0, yaw=1.0))
    parked = quiet.scan(scene, state)
    assert quiet.scan(scene, state, agents=[other]).tobytes() != parked.tobytes()
    moved = dataclasses.replace(state, x=5.5)
    assert quiet.scan(scene, moved).tobytes() != parked.tobytes()


def test_surfaces_have_a_reflectivity() -> None:
    assert set(REFLECTIVITY) == set(Surface) - {Surface.NONE}
    assert all(0.0 < rho <= 1.0 for rho in REFLECTIVITY.values())
