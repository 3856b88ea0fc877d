"""The compiled ray caster against the numpy reference: the same hits, clouds and images.

Fixed scenes and poses (the tile along its route, with other vehicles in view; a flat scene; boxes
around the sensor), then random ones (hypothesis). Where both hit, the ranges agree within 1 mm and
what was hit is the same; a ray without a return has none in both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from acres_bridge.geo.route import acre_loop
from acres_sim.errors import ParamsError
from acres_sim.sensors import cast_kernels as k
from acres_sim.sensors._raycast import RayFan, rotation_matrix, sensor_in_world
from acres_sim.sensors.camera import MAXXUM_CAMERA, POLARIS_CAMERA, Camera, CameraParams, camera_mount
from acres_sim.sensors.compiled_cast import Backend, _box_rows, _boxes_in_range, cast_fan, in_world
from acres_sim.sensors.lidar import MAXXUM_LIDAR, POLARIS_LIDAR, Lidar, LidarParams, beam_directions
from acres_sim.sensors.scene import Box, Hits, Scene
from acres_sim.sensors.tile import acre_scene, flat_scene, vehicle_box
from acres_sim.vehicles.kinematics import VehicleState, place
from acres_sim.vehicles.params import MAXXUM, POLARIS, VehicleParams

RANGE_TOLERANCE_M = 1e-3
NORMAL_TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def acre() -> Scene:
    return acre_scene()


def route_poses(scene: Scene, params: VehicleParams, count: int, spacing_m: float) -> list[VehicleState]:
    route = acre_loop()
    return [place(params, *route.pose_at(k * spacing_m), terrain=scene.terrain) for k in range(count)]


def others(scene: Scene) -> tuple[Box, ...]:
    """A Polaris 25 m behind on the route and a Maxxum parked beside it."""
    x, y, yaw = acre_loop().pose_at(-25.0)
    behind = vehicle_box(POLARIS, place(POLARIS, x, y, yaw, terrain=scene.terrain))
    parked = vehicle_box(MAXXUM, place(MAXXUM, 30.0, 0.0, 1.5708, terrain=scene.terrain))
    return behind, parked


def assert_same_hits(reference: Hits, compiled: Hits) -> None:
    ref_hit = np.isfinite(reference.range)
    np.testing.assert_array_equal(np.isfinite(compiled.range), ref_hit, "a return in one only")
    both = ref_hit
    error = np.abs(compiled.range[both] - reference.range[both])
    assert float(error.max(initial=0.0)) <= RANGE_TOLERANCE_M
    np.testing.assert_array_equal(compiled.surface, reference.surface)
    np.testing.assert_array_equal(compiled.item[both], reference.item[both])
    np.testing.assert_allclose(compiled.normal[both], reference.normal[both], atol=NORMAL_TOLERANCE)


def both_casts(
    scene: Scene,
    origin: np.ndarray,
    rotation: np.ndarray,
    fan: RayFan,
    *,
    max_range_m: float,
    agents: tuple[Box, ...] = (),
    crop: bool = True,
) -> tuple[Hits, Hits]:
    """(reference, compiled) hits of the same cast."""
    reference, compiled = (
        cast_fan(backend, scene, origin, rotation, fan, max_range_m=max_range_m, agents=agents, crop=crop)
        for backend in (Backend.NUMPY, Backend.COMPILED)
    )
    return reference, compiled


@pytest.mark.parametrize(("params", "lidar"), [(POLARIS, POLARIS_LIDAR), (MAXXUM, MAXXUM_LIDAR)])
@pytest.mark.parametrize("crop", [True, False])
def test_lidar_beams_along_the_route_hit_the_same(
    acre: Scene, params: VehicleParams, lidar: LidarParams, crop: bool
) -> None:
    mount = params.mount("lidar")
    fan = RayFan(beam_directions(lidar).reshape(-1, 3))
    translation = np.array(mount.translation)
    mount_rotation = rotation_matrix(mount.roll, mount.pitch, mount.yaw)
    seen = others(acre)
    for state in route_poses(acre, params, 6, 37.0):
        origin, rotation = sensor_in_world(state, translation, mount_rotation)
        reference, compiled = both_casts(
            acre, origin, rotation, fan, max_range_m=lidar.max_range_m, agents=seen, crop=crop
        )
        assert_same_hits(reference, compiled)
        assert int(np.isfinite(reference.range).sum()) > 0


@pytest.mark.parametrize(("params", "camera"), [(POLARIS, POLARIS_CAMERA), (MAXXUM, MAXXUM_CAMERA)])
def test_camera_rays_along_the_route_hit_the_same(
    acre: Scene, params: VehicleParams, camera: CameraParams
) -> None:
    sensor = Camera(camera, camera_mount(params), backend=Backend.NUMPY)
    rays = sensor.pixel_rays.reshape(-1, 3)
    fan = RayFan(rays[np.isfinite(rays[:, 0])])
    translation, rotation = sensor.mount
    seen = others(acre)
    for state in route_poses(acre, params, 3, 61.0):
        origin, world_rotation = sensor_in_world(state, translation, rotation)
        reference, compiled = both_casts(
            acre, origin, world_rotation, fan, max_range_m=camera.max_range_m, agents=seen
        )
        assert_same_hits(reference, compiled)


@pytest.mark.parametrize(("params", "lidar"), [(POLARIS, POLARIS_LIDAR), (MAXXUM, MAXXUM_LIDAR)])
def test_scans_are_the_same_bytes_on_either_caster(
    acre: Scene, params: VehicleParams, lidar: LidarParams
) -> None:
    """Cast, intensity, noise and cloud: byte for byte, along the route and parked (a scan from the
    same pose again: the last cast, fresh noise)."""
    states = route_poses(acre, params, 3, 60.0)
    states.append(states[-1])

    def scans(backend: Backend) -> list[np.ndarray]:
        sensor = Lidar(lidar, params.mount("lidar"), seed=7, stream=2, backend=backend)
        return [sensor.scan(acre, state, agents=others(acre)) for state in states]

    for reference, compiled in zip(scans(Backend.NUMPY), scans(Backend.COMPILED), strict=True):
        assert np.isnan(reference).any()  # beams without a return are in the comparison
        assert compiled.tobytes() == reference.tobytes()


@pytest.mark.parametrize(("params", "camera"), [(POLARIS, POLARIS_CAMERA), (MAXXUM, MAXXUM_CAMERA)])
def test_an_image_is_the_same_on_either_caster_and_shading(
    acre: Scene, params: VehicleParams, camera: CameraParams
) -> None:
    cameras = [Camera(camera, camera_mount(params), backend=b) for b in (Backend.NUMPY, Backend.COMPILED)]
    for state in route_poses(acre, params, 4, 90.0):
        for crop in (True, False):
            reference, compiled = (c.render(acre, state, agents=others(acre), crop=crop) for c in cameras)
            np.testing.assert_array_equal(compiled, reference)  # cast and shading alike, to the byte


def test_boxes_around_and_beside_the_sensor_hit_the_same() -> None:
    scene = flat_scene()
    directions = np.random.default_rng(3).normal(size=(20_000, 3))
    fan = RayFan((directions / np.linalg.norm(directions, axis=1, keepdims=True)).astype(np.float32))
    origin = np.array([0.0, 0.0, 1.5])
    boxes = (
        Box(x=0.0, y=0.0, z=1.0, lx=4.0, ly=2.0, lz=2.0),  # the sensor inside its bounding sphere
        Box(x=6.0, y=1.0, z=1.0, lx=3.0, ly=1.5, lz=2.0, yaw=0.7),
        Box(x=-20.0, y=-5.0, z=2.0, lx=8.0, ly=8.0, lz=4.0, yaw=-1.2),
        Box(x=500.0, y=0.0, z=1.0, lx=2.0, ly=2.0, lz=2.0),  # out of range
    )
    reference, compiled = both_casts(scene, origin, np.eye(3), fan, max_range_m=120.0, agents=boxes)
    assert_same_hits(reference, compiled)


@settings(max_examples=30, deadline=None)
@given(
    window=st.tuples(st.floats(-math.pi, math.pi), st.floats(-1.2, 1.2), st.floats(0.01, 1.5)),
    boxes=st.lists(
        st.tuples(st.floats(-60.0, 60.0), st.floats(-60.0, 60.0), st.floats(0.0, 4.0), st.floats(0.05, 6.0)),
        min_size=1,
        max_size=6,
    ),
)
def test_groups_of_neighbouring_rays_see_the_same_boxes(
    window: tuple[float, float, float], boxes: list[tuple[float, float, float, float]]
) -> None:
    """A camera-like grid of rays (neighbours in groups, the groups' lists of boxes in view), boxes
    small and large, near and far, along the groups' edges: the same hits as testing every box."""
    azimuth, elevation, width = window
    az, el = np.meshgrid(
        azimuth + np.linspace(-width, width, 200), elevation + np.linspace(-width, width, 70) / 2
    )
    directions = np.stack((np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)), axis=-1)
    fan = RayFan(directions.reshape(-1, 3).astype(np.float32))
    agents = tuple(Box(x=x, y=y, z=z, lx=size, ly=size, lz=size) for x, y, z, size in boxes)
    reference, compiled = both_casts(
        flat_scene(), np.array([0.0, 0.0, 1.5]), np.eye(3), fan, max_range_m=120.0, agents=agents
    )
    assert_same_hits(reference, compiled)


def test_a_group_of_rays_leaves_out_only_the_boxes_behind_it() -> None:
    """The early-out is taken: rays along +x keep the box ahead and drop the one behind."""
    ahead = Box(x=30.0, y=0.0, z=1.5, lx=2.0, ly=2.0, lz=2.0)
    behind = Box(x=-30.0, y=0.0, z=1.5, lx=2.0, ly=2.0, lz=2.0)
    around = Box(x=0.0, y=0.0, z=1.5, lx=2.0, ly=2.0, lz=2.0)  # the origin inside: always in view
    rows, radii = _box_rows((ahead, behind, around))
    boxes, _ = _boxes_in_range(rows, radii, np.array([0.0, 0.0, 1.5]), 100.0)
    angles = np.linspace(-0.1, 0.1, 64)
    world = np.ascontiguousarray(np.stack((np.cos(angles), np.sin(angles), np.zeros(64))).astype(np.float32))
    out = np.empty(3, dtype=np.int32)
    count = k._boxes_in_view(boxes, k._cone_reach(boxes), world, 0, 64, out)
    assert sorted(out[:count].tolist()) == [0, 2]


def test_the_compiled_caster_refuses_what_the_reference_refuses(acre: Scene) -> None:
    fan = RayFan(np.array([[1.0, 0.0, 0.0]], dtype=np.float32))
    bad = [
        ({"origin": [0.0, math.nan, 1.0]}, "origin"),
        ({"rotation": np.ones((3, 3))}, "rotation"),
        ({"max_range_m": 0.0}, "max_range_m"),
        ({"agents": ("box",)}, "agents"),
    ]
    for change, match in bad:
        call: dict[str, object] = {"origin": [0.0, 0.0, 2.0], "rotation": np.eye(3), "max_range_m": 50.0}
        call.update(change)
        for backend in (Backend.NUMPY, Backend.COMPILED):
            with pytest.raises(ParamsError, match=match):
                cast_fan(backend, acre, fan=fan, **call)  # type: ignore[arg-type]


unit = st.floats(-1.0, 1.0, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(
    position=st.tuples(st.floats(-150.0, 150.0), st.floats(-150.0, 150.0), st.floats(-0.5, 30.0)),
    attitude=st.tuples(st.floats(-0.5, 0.5), st.floats(-0.5, 0.5), st.floats(-math.pi, math.pi)),
    box=st.tuples(st.floats(-20.0, 20.0), st.floats(-20.0, 20.0), st.floats(0.5, 6.0), st.floats(-3.0, 3.0)),
    crop=st.booleans(),
)
# A pitch of the smallest normal float32: the axis rays fall so slowly that t overflowed to inf and
# the ground lookup took x = inf, y = inf * 0 = NaN (an IndexError in the reference).
@example(
    position=(0.0, 148.0, 2.0), attitude=(0.0, 1.175494351e-38, 0.0), box=(0.0, 0.0, 1.0, 0.0), crop=True
)
# The same pitch turned by a yaw over the crop: the rays meet the rows' slabs at 1 / tiny, which
# overflows in the reference (a RuntimeWarning, an error in the suite, until it said it means inf).
@example(position=(0.0, 0.0, 0.0), attitude=(0.0, 1.175494351e-38, 1.5), box=(0.0, 0.0, 1.0, 0.0), crop=True)
def test_random_poses_hit_the_same(
    acre: Scene,
    position: tuple[float, float, float],
    attitude: tuple[float, float, float],
    box: tuple[float, float, float, float],
    crop: bool,
) -> None:
    """From anywhere over the tile (even a little under its ground), any way up, with a box near."""
    x, y, height = position
    origin = np.array([x, y, acre.terrain(x, y) + height])
    rotation = rotation_matrix(*attitude)
    random = np.random.default_rng(11).normal(size=(4_000, 3))
    directions = np.vstack((np.eye(3), -np.eye(3), random))  # the axes: components of exactly 0
    fan = RayFan((directions / np.linalg.norm(directions, axis=1, keepdims=True)).astype(np.float32))
    bx, by, size, byaw = box
    agent = Box(x=x + bx, y=y + by, z=origin[2], lx=size, ly=size / 2, lz=size / 3, yaw=byaw)
    reference, compiled = both_casts(
        acre, origin, rotation, fan, max_range_m=100.0, agents=(agent,), crop=crop
    )
    assert_same_hits(reference, compiled)


@settings(max_examples=25, deadline=None)
@given(st.tuples(*(st.floats(-math.pi, math.pi) for _ in range(3))))
def test_a_fan_turns_into_the_world_the_same_on_either_backend(attitude: tuple[float, float, float]) -> None:
    fan = RayFan(beam_directions(POLARIS_LIDAR).reshape(-1, 3))
    rotation = rotation_matrix(*attitude)
    compiled = in_world(Backend.COMPILED, fan, rotation)
    np.testing.assert_array_equal(compiled, fan.in_world(rotation))
    np.testing.assert_array_equal(in_world(Backend.NUMPY, fan, rotation), compiled)


def test_the_compiled_caster_refuses_directions_that_are_not_the_fans() -> None:
    fan = RayFan(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0]], dtype=np.float32))
    with pytest.raises(ParamsError, match=r"world: expected a C-contiguous \(3, 2\) float32 array"):
        cast_fan(
            Backend.COMPILED,
            flat_scene(),
            np.array([0.0, 0.0, 1.0]),
            np.eye(3),
            fan,
            max_range_m=10.0,
            world=np.zeros((3, 3), dtype=np.float32),
        )
