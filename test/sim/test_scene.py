"""The scene and its ray caster: ground, height field, boxes, crop rows, the V03ACRE tile."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from acres_bridge.geo.rotation import world_to_body
from acres_bridge.geo.route import acre_loop
from acres_sim.errors import ParamsError
from acres_sim.sensors._raycast import RayFan, Rays, box_hits, mount_in_base, rotation_matrix, sensor_in_world
from acres_sim.sensors.camera import POLARIS_CAMERA, Camera, camera_mount
from acres_sim.sensors.lidar import POLARIS_LIDAR, beam_directions
from acres_sim.sensors.scene import Box, CropField, FlatGround, HeightField, Scene, Surface
from acres_sim.sensors.terrain import HIT_TOLERANCE_M
from acres_sim.sensors.tile import ROUTE_CLEARANCE_M, acre_scene, flat_scene, vehicle_box
from acres_sim.vehicles.kinematics import VehicleState, place
from acres_sim.vehicles.params import MAXXUM, POLARIS, MountPose


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _random_directions(rng: np.random.Generator, n: int, *, down: bool = False) -> np.ndarray:
    d = _unit(rng.normal(size=(n, 3)))
    if down:
        d[:, 2] = -np.abs(d[:, 2])
    return d


# Surfaces and poses.


def test_surface_values_are_the_documented_numbers() -> None:
    assert [(s.name, int(s)) for s in Surface] == [
        ("NONE", 0),
        ("GROUND", 1),
        ("BUILDING", 2),
        ("CROP", 3),
        ("VEHICLE", 4),
    ]


@pytest.mark.parametrize(("roll", "pitch", "yaw"), [(0.0, 0.0, 0.0), (0.1, -0.2, 2.5), (-0.3, 0.05, -1.0)])
def test_rotation_matrix_follows_the_rotation_module(roll: float, pitch: float, yaw: float) -> None:
    r = rotation_matrix(roll, pitch, yaw)
    v = (0.3, -1.2, 2.0)
    assert r.T @ np.array(v) == pytest.approx(world_to_body(roll, pitch, yaw, v))
    assert r @ r.T == pytest.approx(np.eye(3))


def test_mount_chain_composes_to_base_footprint() -> None:
    translation, rotation = mount_in_base(POLARIS.mounts, "reolink_camera_optical")
    assert translation == pytest.approx([2.745, 0.606, 1.887])
    # Optical axes: z forward (body x), x right (body -y), y down (body -z).
    assert rotation @ [0.0, 0.0, 1.0] == pytest.approx([1.0, 0.0, 0.0])
    assert rotation @ [1.0, 0.0, 0.0] == pytest.approx([0.0, -1.0, 0.0])
    assert rotation @ [0.0, 1.0, 0.0] == pytest.approx([0.0, 0.0, -1.0])


def test_mount_chain_rejects_a_missing_frame_and_a_loop() -> None:
    with pytest.raises(ParamsError, match="'nowhere'"):
        mount_in_base(POLARIS.mounts, "nowhere")
    loop = (MountPose(frame="a", parent="b"), MountPose(frame="b", parent="a"))
    with pytest.raises(ParamsError, match="loops"):
        mount_in_base(loop, "a")


# Ground.


def test_flat_ground_is_a_terrain_and_has_upward_normals() -> None:
    ground = FlatGround(1.5)
    assert ground(3.0, -4.0) == 1.5
    assert ground.heights([0.0, 10.0], [5.0, -5.0]).tolist() == [1.5, 1.5]
    assert ground.normals(0.0, [1.0, 2.0]).tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    with pytest.raises(ParamsError, match=r"FlatGround.height_m.*nan"):
        FlatGround(math.nan)


def test_height_field_interpolates_bilinearly_and_continues_its_edges() -> None:
    grid = np.array([[0.0, 1.0, 2.0], [1.0, 3.0, 2.0]], dtype=np.float32)  # grid[j, i]
    hf = HeightField(grid=grid, origin=(10.0, 20.0), cell_m=2.0)
    assert hf(10.0, 20.0) == 0.0
    assert hf(12.0, 22.0) == 3.0
    assert hf(11.0, 21.0) == pytest.approx((0.0 + 1.0 + 1.0 + 3.0) / 4)
    assert hf(13.0, 20.0) == pytest.approx(1.5)
    # Outside the grid the edge heights continue.
    assert hf(0.0, 0.0) == 0.0
    assert hf(100.0, 100.0) == pytest.approx(2.0)
    assert hf(11.0, 100.0) == pytest.approx(2.0)
    xs = np.array([10.0, 12.0, 11.0, 13.0, 0.0, 100.0, 11.0])
    ys = np.array([20.0, 22.0, 21.0, 20.0, 0.0, 100.0, 100.0])
    assert hf.heights(xs, ys) == pytest.approx([hf(x, y) for x, y in zip(xs, ys, strict=True)], abs=1e-5)
    assert hf.z_range == (0.0, 3.0)
    assert not hf.grid.flags.writeable


def test_height_field_normals_are_unit_and_follow_the_slope() -> None:
    hf = HeightField.generate(seed=5, half_size_m=100.0, cell_m=4.0, max_slope=0.05)
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-90, 90, 200), rng.uniform(-90, 90, 200)
    n = hf.normals(x, y)
    assert n.shape == (200, 3)
    assert np.linalg.norm(n, axis=1) == pytest.approx(np.ones(200), abs=1e-6)
    e = 1e-2
    dhdx = (hf.heights(x + e, y) - hf.heights(x - e, y)) / (2 * e)
    dhdy = (hf.heights(x, y + e) - hf.heights(x, y - e)) / (2 * e)
    assert -n[:, 0] / n[:, 2] == pytest.approx(dhdx, abs=2e-3)
    assert -n[:, 1] / n[:, 2] == pytest.approx(dhdy, abs=2e-3)


def test_generated_terrain_is_gentle_deterministic_and_zero_at_the_origin() -> None:
    a = HeightField.generate(seed=3)
    b = HeightField.generate(seed=3)
    c = HeightField.generate(seed=4)
    assert np.array_equal(a.grid, b.grid)
    assert not np.array_equal(a.grid, c.grid)
    assert a(0.0, 0.0) == pytest.approx(0.0, abs=1e-6)
    assert a.max_slope <= 0.03 * 1.3  # the grid's cells are a little steeper than the waves
    low, high = a.z_range
    assert 0.5 < high - low < 20.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grid": np.zeros((1, 3)), "origin": (0.0, 0.0), "cell_m": 1.0}, "at least 2 x 2"),
        ({"grid": np.full((2, 2), np.nan), "origin": (0.0, 0.0), "cell_m": 1.0}, "finite heights"),
        ({"grid": np.zeros((2, 2)), "origin": (0.0, 0.0), "cell_m": 0.0}, "cell_m"),
        ({"grid": np.zeros((2, 2)), "origin": (math.inf, 0.0), "cell_m": 1.0}, "origin"),
        ({"grid": np.zeros((2, 2)), "origin": (0.0,), "cell_m": 1.0}, "origin"),
    ],
)
def test_height_field_rejects_bad_grids(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        HeightField(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": 1, "half_size_m": 0.0}, "half_size_m"),
        ({"seed": 1, "cell_m": math.nan}, "cell_m"),
        ({"seed": 1, "max_slope": -0.1}, "max_slope"),
        ({"seed": 1, "waves": 0}, "waves"),
    ],
)
def test_terrain_generation_rejects_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        HeightField.generate(**kwargs)  # type: ignore[arg-type]


# Boxes and crop fields.


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"lx": 0.0}, "lx"),
        ({"lz": math.inf}, "lz"),
        ({"x": math.nan}, "x"),
        ({"surface": Surface.GROUND}, "surface"),
        ({"surface": 9}, "surface"),
        ({"color": (0, 0, 256)}, "color"),
        ({"color": (0, 0)}, "color"),
    ],
)
def test_box_rejects_bad_values(change: dict[str, object], match: str) -> None:
    good = {"x": 0.0, "y": 0.0, "z": 1.0, "lx": 2.0, "ly": 2.0, "lz": 2.0}
    with pytest.raises(ParamsError, match=match):
        Box(**{**good, **change})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"rows": 0}, "rows"),
        ({"rows": 2.0}, "rows"),
        ({"length_m": -1.0}, "length_m"),
        ({"row_width_m": 0.8}, "row_width_m"),
        ({"height_m": 0.0}, "height_m"),
        ({"yaw": math.nan}, "yaw"),
        ({"color": (1, 2, 3, 4)}, "color"),
    ],
)
def test_crop_field_rejects_bad_values(change: dict[str, object], match: str) -> None:
    good = {"x": 0.0, "y": 0.0, "yaw": 0.0, "length_m": 10.0, "rows": 4}
    with pytest.raises(ParamsError, match=match):
        CropField(**{**good, **change})  # type: ignore[arg-type]


def test_scene_rejects_what_is_no_scene_part() -> None:
    with pytest.raises(ParamsError, match="terrain"):
        Scene(terrain=lambda x, y: 0.0)  # type: ignore[arg-type]
    with pytest.raises(ParamsError, match="buildings"):
        Scene(terrain=FlatGround(), buildings=("shed",))  # type: ignore[arg-type]
    with pytest.raises(ParamsError, match="crop"):
        Scene(terrain=FlatGround(), crop=(Box(x=0, y=0, z=0, lx=1, ly=1, lz=1),))  # type: ignore[arg-type]


# Casting.


def test_flat_ground_cast_is_exact() -> None:
    rng = np.random.default_rng(1)
    d = _random_directions(rng, 1000)
    origin = np.array([3.0, -2.0, 1.5])
    hits = flat_scene().cast(origin, d, max_range_m=50.0)
    expected = np.where(d[:, 2] < 0, 1.5 / -d[:, 2], np.inf)
    expected[expected > 50.0] = np.inf
    assert hits.range == pytest.approx(expected, rel=1e-5)
    ground = np.isfinite(expected)
    assert (hits.surface == np.where(ground, Surface.GROUND, Surface.NONE)).all()
    assert (hits.item == -1).all()
    assert hits.normal[ground] == pytest.approx(np.tile([0.0, 0.0, 1.0], (ground.sum(), 1)))
    assert (hits.normal[~ground] == 0).all()
    assert hits.range.dtype == np.float32
    assert hits.surface.dtype == np.uint8
    assert hits.normal.dtype == np.float32
    assert hits.normal.shape == (1000, 3)


def test_cast_accepts_one_origin_per_ray() -> None:
    rng = np.random.default_rng(2)
    scene = acre_scene()
    d = _random_directions(rng, 500)
    origin = np.array([-18.0, -40.0, 2.0])
    one = scene.cast(origin, d, max_range_m=80.0)
    many = scene.cast(np.tile(origin, (500, 1)), d, max_range_m=80.0)
    assert np.array_equal(one.range, many.range)
    assert np.array_equal(one.surface, many.surface)


@pytest.mark.parametrize(
    ("origins", "directions", "match"),
    [
        (np.zeros(3), np.zeros((4, 2)), "directions"),
        (np.zeros((3, 3)), np.ones((4, 3)), "origins"),
        (np.zeros(2), np.ones((4, 3)), "origins"),
        (np.zeros(3), np.full((4, 3), np.nan), "finite"),
        (np.zeros(3), np.array([[0.0, 0.0, -1.0], [0.0, 2.0, 0.0]]), "unit vectors"),
    ],
)
def test_cast_rejects_bad_rays(origins: np.ndarray, directions: np.ndarray, match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        flat_scene().cast(origins, directions, max_range_m=10.0)


def test_cast_rejects_agents_that_are_no_boxes() -> None:
    with pytest.raises(ParamsError, match=r"agents: expected Box values, got \['VehicleState'\]"):
        flat_scene().cast(
            np.zeros(3), np.array([[0.0, 0.0, -1.0]]), max_range_m=10.0, agents=[VehicleState()]
        )  # type: ignore[list-item]


@pytest.mark.parametrize("max_range_m", [0.0, -1.0, math.inf, math.nan])
def test_cast_rejects_a_bad_range(max_range_m: float) -> None:
    with pytest.raises(ParamsError, match="max_range_m"):
        flat_scene().cast(np.zeros(3), np.array([[0.0, 0.0, -1.0]]), max_range_m=max_range_m)


def test_a_box_is_hit_at_its_face_with_its_normal_and_index() -> None:
    shed = Box(x=10.0, y=0.0, z=2.0, lx=4.0, ly=6.0, lz=4.0, color=(1, 2, 3))
    other = Box(x=-30.0, y=0.0, z=2.0, lx=1.0, ly=1.0, lz=1.0)
    scene = Scene(terrain=FlatGround(), buildings=(other, shed))
    d = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.1, 0.0]])
    d = _unit(d)
    hits = scene.cast(np.array([0.0, 0.0, 1.0]), d, max_range_m=100.0)
    assert hits.range[0] == pytest.approx(8.0)
    assert hits.surface.tolist() == [Surface.BUILDING, Surface.NONE, Surface.BUILDING]
    assert hits.item.tolist() == [1, -1, 1]
    assert hits.normal[0] == pytest.approx([-1.0, 0.0, 0.0])
    assert hits.range[2] == pytest.approx(8.0 / d[2, 0])


def test_a_turned_box_faces_the_right_way() -> None:
    # A box turned by 90 deg: its long side (lx) now runs along world y.
    box = Box(x=0.0, y=0.0, z=0.0, lx=10.0, ly=2.0, lz=2.0, yaw=0.5 * math.pi)
    scene = Scene(terrain=FlatGround(-5.0), buildings=(box,))
    hits = scene.cast(
        np.array([[5.0, 0.0, 0.0], [0.0, 10.0, 0.0]]),
        np.array([[-1.0, 0, 0], [0, -1.0, 0]]),
        max_range_m=50.0,
    )
    assert hits.range == pytest.approx([4.0, 5.0])
    assert hits.normal == pytest.approx(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), abs=1e-6)


def test_a_ray_from_inside_a_box_does_not_hit_it() -> None:
    box = Box(x=0.0, y=0.0, z=1.0, lx=4.0, ly=2.0, lz=2.0, surface=Surface.VEHICLE)
    scene = Scene(terrain=FlatGround(), buildings=(box,))
    hits = scene.cast(
        np.array([0.0, 0.0, 1.0]), np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]), max_range_m=10.0
    )
    assert hits.surface.tolist() == [Surface.NONE, Surface.GROUND]


def test_culling_finds_every_box_hit_that_a_brute_force_test_finds() -> None:
    rng = np.random.default_rng(3)
    boxes = tuple(
        Box(
            x=float(rng.uniform(-40, 40)),
            y=float(rng.uniform(-40, 40)),
            z=float(rng.uniform(0, 5)),
            lx=float(rng.uniform(0.5, 8)),
            ly=float(rng.uniform(0.5, 8)),
            lz=float(rng.uniform(0.5, 8)),
            yaw=float(rng.uniform(-3, 3)),
        )
        for _ in range(12)
    )
    scene = Scene(terrain=FlatGround(-100.0), buildings=boxes)
    origin = np.array([1.0, 2.0, 3.0])
    fan = RayFan(_random_directions(rng, 20000).astype(np.float32))
    rotation = rotation_matrix(0.1, -0.2, 0.7)
    by_fan = scene.cast_fan(origin, rotation, fan, max_range_m=100.0)  # the ground is out of range
    world = fan.in_world(rotation).T  # the directions cast_fan casts
    by_sphere = scene.cast(origin, world, max_range_m=100.0)
    rays = Rays.of(origin.astype(np.float32), world)
    brute = np.full(world.shape[0], np.inf, dtype=np.float32)
    for box in boxes:
        found = box_hits(
            rays, centre=(box.x, box.y, box.z), half=(box.lx / 2, box.ly / 2, box.lz / 2), yaw=box.yaw
        )
        brute[found.rays] = np.minimum(brute[found.rays], found.t)
    assert np.isfinite(brute).sum() > 500
    assert np.array_equal(by_fan.range, brute)
    assert np.array_equal(by_sphere.range, brute)


def test_agents_are_cast_with_their_index() -> None:
    state = VehicleState(x=20.0, y=0.0, yaw=0.0)
    body = vehicle_box(MAXXUM, state)
    hits = flat_scene().cast(
        np.array([0.0, 0.0, 1.0]), np.array([[1.0, 0.0, 0.0]]), max_range_m=50.0, agents=[body]
    )
    assert hits.surface[0] == Surface.VEHICLE
    assert hits.item[0] == 0
    assert hits.range[0] == pytest.approx(body.x - 0.5 * body.lx)


# Crop rows.


def _crop_as_boxes(cf: CropField) -> tuple[Box, ...]:
    c, s = math.cos(cf.yaw), math.sin(cf.yaw)
    boxes = []
    for i in range(cf.rows):
        u, v = i * cf.row_spacing_m, 0.5 * cf.length_m
        boxes.append(
            Box(
                x=cf.x + c * v - s * u,
                y=cf.y + s * v + c * u,
                z=0.5 * cf.height_m,
                lx=cf.length_m,
                ly=cf.row_width_m,
                lz=cf.height_m,
                yaw=cf.yaw,
                surface=Surface.CROP,
            )
        )
    return tuple(boxes)


@pytest.mark.parametrize("yaw", [0.0, 0.5 * math.pi, 2.2])
def test_crop_rows_are_hit_exactly_as_rows_of_boxes(yaw: float) -> None:
    field = CropField(x=5.0, y=-3.0, yaw=yaw, length_m=30.0, rows=12)
    rows = Scene(terrain=FlatGround(), crop=(field,))
    boxes = Scene(terrain=FlatGround(), buildings=_crop_as_boxes(field))
    rng = np.random.default_rng(4)
    d = _random_directions(rng, 40000, down=True)
    origin = np.array([field.x - 3.0, field.y + 1.0, 2.5])
    a = rows.cast(origin, d, max_range_m=60.0)
    b = boxes.cast(origin, d, max_range_m=60.0)
    crop = a.surface == Surface.CROP
    assert crop.sum() > 2000
    assert np.array_equal(crop, b.surface == Surface.CROP)
    assert a.range == pytest.approx(b.range, rel=1e-4, abs=1e-4)
    assert a.normal[crop] == pytest.approx(b.normal[crop], abs=1e-5)


def test_the_gaps_between_rows_show_the_ground() -> None:
    field = CropField(
        x=0.0, y=0.0, yaw=0.0, length_m=10.0, rows=5, row_spacing_m=0.76, row_width_m=0.3, height_m=0.9
    )
    scene = Scene(terrain=FlatGround(), crop=(field,))
    # Straight down over row 2 (across-row offset 1.52 m, to the left: +y) and over the gap after it.
    origins = np.array([[5.0, 1.52, 3.0], [5.0, 1.52 + 0.38, 3.0]])
    hits = scene.cast(origins, np.array([[0.0, 0.0, -1.0], [0.0, 0.0, -1.0]]), max_range_m=10.0)
    assert hits.surface.tolist() == [Surface.CROP, Surface.GROUND]
    assert hits.range == pytest.approx([3.0 - 0.9, 3.0])
    assert hits.normal == pytest.approx(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))


def test_crop_false_leaves_the_crop_out() -> None:
    scene = acre_scene()
    rng = np.random.default_rng(5)
    d = _random_directions(rng, 20000, down=True)
    origin = np.array([-18.0, -30.0, scene.terrain(-18.0, -30.0) + 1.95])
    with_crop = scene.cast(origin, d, max_range_m=100.0)
    without = scene.cast(origin, d, max_range_m=100.0, crop=False)
    assert (with_crop.surface == Surface.CROP).sum() > 1000
    assert not (without.surface == Surface.CROP).any()
    crop = with_crop.surface == Surface.CROP
    # The crop stands on the ground: where it is left out, the ray goes on to the ground behind it.
    assert (without.range[crop] >= with_crop.range[crop]).all()


# The height field under rays.


def test_rays_land_on_the_height_field() -> None:
    hf = acre_scene().terrain
    assert isinstance(hf, HeightField)
    scene = Scene(terrain=hf)
    rng = np.random.default_rng(6)
    n = 20000
    xy = rng.uniform(-150, 150, (n, 2))
    origins = np.column_stack((xy, hf.heights(xy[:, 0], xy[:, 1]) + 2.0))
    d = _random_directions(rng, n, down=True)
    hits = scene.cast(origins, d, max_range_m=100.0)
    ground = hits.surface == Surface.GROUND
    # Every ray steeper than the ground's steepest slope that lands within range is found.
    steep = -d[:, 2] > 2.0 * hf.max_slope
    reachable = steep & (2.0 / -d[:, 2] < 60.0)
    assert ground[reachable].all()
    p = origins + d * hits.range[:, None]
    error = p[ground, 2] - hf.heights(p[ground, 0], p[ground, 1])
    assert np.abs(error).max() <= HIT_TOLERANCE_M
    assert np.percentile(np.abs(error), 99.9) < 1e-3
    normals = hf.normals(p[ground, 0], p[ground, 1])
    assert hits.normal[ground] == pytest.approx(normals, abs=1e-4)


# Where the rays of one origin are solved from their seed's ground instead of the tangent plane
# under the origin, only rays that graze the ground may change their hit: by more than this (m) ...
SEEDED_CHANGE_M = 0.01
# ... and only on rays at most this steep against the ground (|dz - grad . d|, the sine of the angle
# between ray and ground, about 3 deg) ...
GRAZING = 0.05
# ... on at most these shares of a frame's ground hits and of its rays (hit by one and not the other).
CHANGED_HITS = 0.01
HIT_OR_MISS_CHANGED = 0.001


def _sensor_rays(sensor: str, state: VehicleState) -> tuple[Rays, float]:
    """(the rays in the world, the range) of the Polaris's LiDAR or camera at ``state``."""
    if sensor == "lidar":
        mount = POLARIS.mount("lidar")
        fan = RayFan(beam_directions(POLARIS_LIDAR).reshape(-1, 3))
        translation = np.array(mount.translation)
        rotation = rotation_matrix(mount.roll, mount.pitch, mount.yaw)
        max_range_m = POLARIS_LIDAR.max_range_m
    else:
        camera = Camera(POLARIS_CAMERA, camera_mount(POLARIS))
        pixels = camera.pixel_rays.reshape(-1, 3)
        fan = RayFan(pixels[np.isfinite(pixels[:, 0])])
        translation, rotation = camera.mount
        max_range_m = POLARIS_CAMERA.max_range_m
    origin, world_rotation = sensor_in_world(state, translation, rotation)
    world = fan.in_world(world_rotation)
    o = origin.astype(np.float32)
    return Rays(o[0:1], o[1:2], o[2:3], world[0], world[1], world[2]), max_range_m


@pytest.mark.parametrize("sensor", ["lidar", "camera"])
def test_seeded_starts_change_only_the_hits_of_grazing_rays(sensor: str) -> None:
    hf = acre_scene().terrain
    assert isinstance(hf, HeightField)
    route = acre_loop()
    for distance in (0.0, 61.0, 122.0):
        state = place(POLARIS, *route.pose_at(distance), terrain=hf)
        rays, max_range_m = _sensor_rays(sensor, state)
        fan = np.arange(rays.size)
        seeded = hf.intersect(rays, reach=max_range_m, index=fan)
        plane = hf.intersect(rays, reach=max_range_m, index=fan, seed_every=1)
        assert not np.array_equal(seeded.t, plane.t)
        hit, plane_hit = np.isfinite(seeded.t), np.isfinite(plane.t)
        both = hit & plane_hit
        assert int(both.sum()) > rays.size // 4  # a frame with much ground in it
        assert int((hit != plane_hit).sum()) <= HIT_OR_MISS_CHANGED * rays.size
        changed = np.flatnonzero(both)[np.abs(seeded.t[both] - plane.t[both]) > SEEDED_CHANGE_M]
        assert changed.size <= CHANGED_HITS * int(both.sum())
        steepness = rays.dz - plane.grad_x * rays.dx - plane.grad_y * rays.dy
        assert float(np.abs(steepness[changed]).max(initial=0.0)) <= GRAZING


# The tile.


def _footprint_distance(box: Box, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    u = c * (x - box.x) + s * (y - box.y)
    v = -s * (x - box.x) + c * (y - box.y)
    du = np.maximum(np.abs(u) - 0.5 * box.lx, 0.0)
    dv = np.maximum(np.abs(v) - 0.5 * box.ly, 0.0)
    return np.hypot(du, dv)


def test_the_tile_keeps_its_buildings_and_crop_off_the_route() -> None:
    scene = acre_scene()
    route = acre_loop()
    x, y = route.xy[:, 0], route.xy[:, 1]
    for box in scene.buildings:
        assert _footprint_distance(box, x, y).min() >= ROUTE_CLEARANCE_M
    for cf in scene.crop:
        assert not cf.contains(x, y, margin_m=ROUTE_CLEARANCE_M).any()
    # Nor on the row where the Maxxums park (east of the route at its middle, every 6 m).
    parked = [vehicle_box(MAXXUM, VehicleState(x=30.0 + 6.0 * k, y=0.0, yaw=0.5 * math.pi)) for k in range(5)]
    for body in parked:
        corners_x = body.x + np.array([-1, 1, -1, 1]) * 0.5 * body.ly
        corners_y = body.y + np.array([-1, -1, 1, 1]) * 0.5 * body.lx
        for box in scene.buildings:
            assert _footprint_distance(box, corners_x, corners_y).min() > 1.0
        for cf in scene.crop:
            assert not cf.contains(corners_x, corners_y, margin_m=1.0).any()


def test_the_tile_is_deterministic_and_its_buildings_stand_on_the_ground() -> None:
    scene = acre_scene()
    assert acre_scene() is scene
    assert isinstance(scene.terrain, HeightField)
    assert np.array_equal(scene.terrain.grid, HeightField.generate(seed=3).grid)
    assert len(scene.buildings) >= 4
    assert len(scene.crop) >= 3
    for box in scene.buildings:
        c, s = math.cos(box.yaw), math.sin(box.yaw)
        for a in (-0.5, 0.5):
            for b in (-0.5, 0.5):
                ground = scene.terrain(
                    box.x + c * a * box.lx - s * b * box.ly, box.y + s * a * box.lx + c * b * box.ly
                )
                assert box.z - 0.5 * box.lz < ground < box.z + 0.5 * box.lz - 3.0


def test_a_vehicle_body_sits_on_its_wheels() -> None:
    state = place(POLARIS, 5.0, 6.0, 0.5)
    body = vehicle_box(POLARIS, state)
    assert body.surface == Surface.VEHICLE
    assert body.lx == pytest.approx(POLARIS.wheelbase_m + 2 * POLARIS.tyre_radius_front_m + 0.4)
    assert body.ly == pytest.approx(POLARIS.track_m + 0.3)
    assert body.lz == pytest.approx(1.9)
    assert body.z == pytest.approx(0.95)
    assert body.yaw == 0.5
    # Centred between the rear overhang and the front bumper, ahead of base_footprint.
    ahead = math.hypot(body.x - 5.0, body.y - 6.0)
    assert ahead == pytest.approx(0.5 * POLARIS.wheelbase_m)
    assert math.atan2(body.y - 6.0, body.x - 5.0) == pytest.approx(0.5)
    assert vehicle_box(MAXXUM, state).lz == pytest.approx(2.95)
    other = dataclasses.replace(MAXXUM, vehicle="sprayer")
    assert vehicle_box(other, state).lz == pytest.approx(2.0)


def test_a_ray_fan_rejects_what_is_no_fan() -> None:
    with pytest.raises(ParamsError, match=r"\(N, 3\)"):
        RayFan(np.zeros((0, 3), dtype=np.float32))
    with pytest.raises(ParamsError, match="unit"):
        RayFan(np.ones((4, 3), dtype=np.float32))
    with pytest.raises(ParamsError, match="right angles"):
        RayFan(np.eye(3, dtype=np.float32), up=(0.0, 0.0, 1.0), forward=(0.0, 0.6, 0.8))


def test_cast_fan_rejects_a_bad_pose() -> None:
    fan = RayFan(np.eye(3, dtype=np.float32))
    with pytest.raises(ParamsError, match="rotation"):
        flat_scene().cast_fan(np.zeros(3), np.ones((3, 3)), fan, max_range_m=10.0)
    with pytest.raises(ParamsError, match="origin"):
        flat_scene().cast_fan(np.zeros(4), np.eye(3), fan, max_range_m=10.0)
