"""The camera model: parameters, the plumb_bob rays and projection, and the rendered image."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from acres_sim.errors import ParamsError
from acres_sim.sensors._raycast import rotation_matrix
from acres_sim.sensors.camera import (
    MAXXUM_CAMERA,
    OPTICAL_FRAMES,
    POLARIS_CAMERA,
    Camera,
    camera_mount,
    projection_matrix,
)
from acres_sim.sensors.tile import acre_scene, flat_scene, vehicle_box
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MAXXUM, POLARIS


@pytest.fixture(scope="module")
def polaris() -> Camera:
    return Camera(POLARIS_CAMERA, camera_mount(POLARIS))


@pytest.fixture(scope="module")
def maxxum() -> Camera:
    return Camera(MAXXUM_CAMERA, camera_mount(MAXXUM))


def _green(image: np.ndarray) -> int:
    """The number of crop-green pixels: green well above both blue and red."""
    b, g, r = (image[..., k].astype(int) for k in range(3))
    return int(((g > b + 30) & (g > r + 30)).sum())


def _is_sky(image: np.ndarray) -> np.ndarray:
    """Sky pixels are blue: blue well above red. Ground, crop, haze and the vehicles here are not."""
    return image[..., 0].astype(int) - image[..., 2].astype(int) > 20


# Parameters.


def test_the_polaris_camera_is_the_spec_calibration() -> None:
    assert (POLARIS_CAMERA.width, POLARIS_CAMERA.height) == (896, 512)
    assert POLARIS_CAMERA.k == (
        599.5261980366653,
        0.0,
        440.1304622044219,
        0.0,
        592.3778194293697,
        270.80532448208777,
        0.0,
        0.0,
        1.0,
    )
    assert POLARIS_CAMERA.d == (
        -0.5538868812746999,
        0.40841873696727643,
        -0.009978535293476691,
        0.004423926017374143,
        -0.16673270849069252,
    )
    assert POLARIS_CAMERA.rate_hz == MAXXUM_CAMERA.rate_hz == 10.0


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"width": 0}, "width"),
        ({"height": 20000}, "height"),
        ({"width": 640.0}, "width"),
        ({"k": (1.0,) * 8}, "9 finite"),
        ({"k": (0.0, 0, 1, 0, 1, 1, 0, 0, 1)}, "camera matrix"),
        ({"k": (1.0, 0, 1, 0, 1, 1, 0, 0, 2)}, "camera matrix"),
        ({"k": (math.nan, 0, 1, 0, 1, 1, 0, 0, 1)}, "9 finite"),
        ({"d": (0.0,) * 4}, "5 finite"),
        ({"d": (0.0, 0.0, 0.0, 0.0, math.inf)}, "5 finite"),
        ({"rate_hz": -1.0}, "rate_hz"),
        ({"max_range_m": 0.0}, "max_range_m"),
    ],
)
def test_bad_parameters_are_rejected(change: dict[str, object], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        dataclasses.replace(POLARIS_CAMERA, **change)


def test_the_projection_matrix_is_k_with_a_zero_column() -> None:
    p = projection_matrix(POLARIS_CAMERA.k)
    k = POLARIS_CAMERA.k
    assert p == (k[0], k[1], k[2], 0.0, k[3], k[4], k[5], 0.0, 0.0, 0.0, 1.0, 0.0)
    with pytest.raises(ParamsError, match="9 numbers"):
        projection_matrix((1.0, 2.0))


def test_camera_mounts_compose_the_optical_frame_on_the_body() -> None:
    translation, rotation = camera_mount(POLARIS)
    assert translation == pytest.approx([2.745, 0.606, 1.887])
    assert rotation == pytest.approx(rotation_matrix(-0.5 * math.pi, 0.0, -0.5 * math.pi))
    translation, rotation = camera_mount(MAXXUM)
    assert translation == pytest.approx([1.2, 0.0, 2.9])
    assert rotation @ [0.0, 0.0, 1.0] == pytest.approx([1.0, 0.0, 0.0])  # looking ahead
    assert OPTICAL_FRAMES == {"polaris": "reolink_camera_optical", "maxxum": "camera_optical"}
    with pytest.raises(ParamsError, match="no known camera"):
        camera_mount(dataclasses.replace(MAXXUM, vehicle="sprayer"))
    with pytest.raises(ParamsError, match="'camera_optical'"):
        camera_mount(POLARIS, "camera_optical")


def test_a_camera_rejects_a_bad_mount() -> None:
    with pytest.raises(ParamsError, match="translation"):
        Camera(MAXXUM_CAMERA, (np.array([0.0, math.nan, 0.0]), np.eye(3)))
    with pytest.raises(ParamsError, match="rotation"):
        Camera(MAXXUM_CAMERA, (np.zeros(3), 2.0 * np.eye(3)))


# Rays and projection.


@pytest.mark.parametrize("which", ["polaris", "maxxum"])
def test_every_pixel_ray_projects_back_onto_its_pixel(which: str, request: pytest.FixtureRequest) -> None:
    camera: Camera = request.getfixturevalue(which)
    p = camera.params
    rays = camera.pixel_rays
    assert rays.shape == (p.height, p.width, 3)
    assert not np.isnan(rays).any()
    assert np.linalg.norm(rays, axis=-1) == pytest.approx(np.ones((p.height, p.width)), abs=1e-6)
    u, v = camera.project(rays.reshape(-1, 3))
    rows, cols = np.mgrid[0 : p.height, 0 : p.width]
    assert np.abs(u - cols.ravel()).max() < 0.01
    assert np.abs(v - rows.ravel()).max() < 0.01


def test_projection_is_plumb_bob(polaris: Camera) -> None:
    # The OpenCV / image_geometry formula, written out, at a few points near the axis.
    fx, _, cx, _, fy, cy = POLARIS_CAMERA.k[:6]
    k1, k2, p1, p2, k3 = POLARIS_CAMERA.d
    points = np.array([[0.0, 0.0, 5.0], [1.0, -0.5, 4.0], [-2.0, 1.0, 6.0], [0.3, 0.2, 1.0]])
    x, y = points[:, 0] / points[:, 2], points[:, 1] / points[:, 2]
    r2 = x * x + y * y
    radial = 1 + k1 * r2 + k2 * r2**2 + k3 * r2**3
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    u, v = polaris.project(points)
    assert u == pytest.approx(fx * xd + cx)
    assert v == pytest.approx(fy * yd + cy)
    assert (u[0], v[0]) == pytest.approx((cx, cy))


def test_points_behind_the_camera_do_not_project(polaris: Camera) -> None:
    u, v = polaris.project(np.array([[0.0, 0.0, -1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    assert np.isnan(u[:2]).all()
    assert np.isnan(v[:2]).all()
    assert not np.isnan(u[2])
    with pytest.raises(ParamsError, match=r"\(N, 3\)"):
        polaris.project(np.zeros((4, 2)))


# The image.


def test_the_image_is_a_bgr8_frame_with_a_view(polaris: Camera) -> None:
    image = polaris.render(acre_scene(), VehicleState(x=-18.0, y=-45.0, yaw=0.5 * math.pi))
    assert image.shape == (512, 896, 3)
    assert image.dtype == np.uint8
    assert image.flags.c_contiguous
    assert len(image.tobytes()) == 512 * 896 * 3
    # Sky above, and many colours below it: ground, crop rows, buildings.
    assert _is_sky(image[:100]).mean() > 0.95
    assert not _is_sky(image[-100:]).any()
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 500


@pytest.mark.parametrize("which", ["polaris", "maxxum"])
def test_with_a_level_camera_the_horizon_crosses_the_principal_point(
    which: str, request: pytest.FixtureRequest
) -> None:
    camera: Camera = request.getfixturevalue(which)
    cx, cy = camera.params.k[2], camera.params.k[5]
    image = camera.render(flat_scene(), VehicleState(x=3.0, y=4.0, yaw=0.7))
    column = _is_sky(image[:, round(cx)])
    assert column[: math.floor(cy)].all()
    assert not column[math.ceil(cy) :].any()


@pytest.mark.parametrize("pitch", [-0.06, 0.04])
def test_a_pitched_vehicle_moves_the_horizon_where_the_model_says(polaris: Camera, pitch: float) -> None:
    state = VehicleState(yaw=0.3, pitch=pitch)
    image = polaris.render(flat_scene(), state)
    # Where a far point straight ahead on the horizontal plane lands, through the mount and the pose.
    _, rotation = camera_mount(POLARIS)
    world_from_optical = rotation_matrix(state.roll, state.pitch, state.yaw) @ rotation
    ahead = np.array([math.cos(state.yaw), math.sin(state.yaw), 0.0]) * 1e7
    u, v = polaris.project((world_from_optical.T @ ahead)[None, :])
    column = _is_sky(image[:, round(float(u[0]))])
    horizon = float(v[0])
    assert column[: math.floor(horizon - 1)].all()
    assert not column[math.ceil(horizon + 1) :].any()
    # Nose down (pitch > 0) puts the horizon higher in the image.
    assert (horizon < POLARIS_CAMERA.k[5]) == (pitch > 0)


def test_other_vehicles_appear_in_the_image(polaris: Camera) -> None:
    state = VehicleState()
    other = vehicle_box(MAXXUM, VehicleState(x=15.0, y=0.6, yaw=0.0))
    empty = polaris.render(flat_scene(), state)
    seen = polaris.render(flat_scene(), state, agents=[other])
    # The middle of the tractor's rear face, seen through the model.
    translation, rotation = camera_mount(POLARIS)
    face = np.array([other.x - 0.5 * other.lx, other.y, 1.5])
    u, v = polaris.project((rotation.T @ (face - translation))[None, :])
    pixel = seen[round(float(v[0])), round(float(u[0]))].astype(int)
    assert pixel[2] > pixel[0] + 60  # red (B, G, R)
    assert not np.array_equal(
        empty[round(float(v[0])), round(float(u[0]))], seen[round(float(v[0])), round(float(u[0]))]
    )
    changed = np.any(empty != seen, axis=-1)
    assert 500 < changed.sum() < 0.2 * changed.size


def test_the_crop_can_be_left_out(maxxum: Camera) -> None:
    scene = acre_scene()
    state = VehicleState(x=-18.0, y=-45.0, z=scene.terrain(-18.0, -45.0), yaw=0.5 * math.pi)
    with_crop = maxxum.render(scene, state)
    without = maxxum.render(scene, state, crop=False)
    assert _green(with_crop) > 10000
    assert _green(without) == 0


def test_a_parked_vehicle_gets_the_same_image_again(maxxum: Camera) -> None:
    scene = acre_scene()
    state = VehicleState(x=30.0, y=0.0, z=scene.terrain(30.0, 0.0), yaw=0.5 * math.pi)
    first = maxxum.render(scene, state)
    again = maxxum.render(scene, state)
    assert np.array_equal(first, again)
    assert first is not again
    again[...] = 0  # a copy: the next frame is not spoilt
    assert np.array_equal(maxxum.render(scene, state), first)
    turned = maxxum.render(scene, dataclasses.replace(state, yaw=0.0))
    assert not np.array_equal(turned, first)
