"""The sensors' ray cast on either implementation: numpy (the reference) or compiled (the default).

``cast_fan(backend, scene, origin, rotation, fan, ...)`` is ``Scene.cast_fan`` on the chosen
implementation: the same arguments, the same ``Hits``. The compiled one packs the static scene into
arrays once per scene, the agents' boxes per call, and runs acres_sim.sensors.cast_kernels over the rays on
every core; both give the same hits (test/sim/test_compiled_cast.py, docs/sensors.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Final

import numba
import numpy as np
from numpy.typing import ArrayLike

from acres_sim.errors import ParamsError
from acres_sim.sensors import cast_kernels as k
from acres_sim.sensors import lidar_kernels, shade_kernels
from acres_sim.sensors import terrain_kernels as tk
from acres_sim.sensors._raycast import F32, F64, RayFan
from acres_sim.sensors.scene import Box, Hits, Scene, check_fan_pose
from acres_sim.sensors.terrain import HeightField

__all__ = ["Backend", "cast_fan", "in_world", "warm_up"]

# Angular margin (rad) around a box's bounding cone: float32 directions and rounding.
_CONE_MARGIN_RAD: Final = 2e-3
# Margins taken off a box's nearest distance, so that a float32 hit on it is never nearer than that.
_NEAR_MARGIN_M: Final = 0.01
_NEAR_MARGIN_REL: Final = 1e-4
_ALL_RAYS: Final = -3.0  # the cone slot of a box around the origin: every ray is tested


class Backend(StrEnum):
    """Which implementation casts a sensor's rays."""

    NUMPY = "numpy"  # the reference: acres_sim.sensors.scene on numpy arrays
    COMPILED = "compiled"  # acres_sim.sensors.cast_kernels, compiled by numba, parallel over the cores


@dataclass(frozen=True, eq=False)
class _PackedScene:
    """A scene's static part as the kernels take it."""

    terrain: F32
    coeffs: F32
    height_field: HeightField | None
    buildings: F32  # (m, BOX_SLOTS) with the cone slots to be filled per call
    building_radii: F64
    fields: F32
    z_max: float
    tallest: float


def _box_rows(boxes: Sequence[Box]) -> tuple[F32, F64]:
    rows = np.zeros((len(boxes), k.BOX_SLOTS), dtype=np.float32)
    for row, box in zip(rows, boxes, strict=True):
        row[k.B_CX], row[k.B_CY], row[k.B_CZ] = box.x, box.y, box.z
        row[k.B_HX], row[k.B_HY], row[k.B_HZ] = 0.5 * box.lx, 0.5 * box.ly, 0.5 * box.lz
        row[k.B_COS], row[k.B_SIN] = math.cos(box.yaw), math.sin(box.yaw)
    return rows, np.array([b.radius for b in boxes], dtype=np.float64)


@lru_cache(maxsize=8)
def _pack(scene: Scene) -> _PackedScene:
    terrain = np.zeros(tk.TERRAIN_SLOTS, dtype=np.float32)
    ground = scene.terrain
    z_min, z_max = ground.z_range
    terrain[tk.T_Z_MIN], terrain[tk.T_Z_MAX], terrain[tk.T_STEEPEST] = z_min, z_max, ground.max_slope
    if isinstance(ground, HeightField):
        ny, nx = ground.grid.shape
        terrain[tk.T_HEIGHT_FIELD] = 1.0
        terrain[tk.T_X0], terrain[tk.T_Y0] = ground.origin
        terrain[tk.T_INV_CELL] = 1.0 / ground.cell_m
        terrain[tk.T_NX], terrain[tk.T_NY] = nx, ny
        coeffs = np.ascontiguousarray(ground.cell_coefficients().T)
        height_field: HeightField | None = ground
    else:
        terrain[tk.T_FLAT_Z] = ground.height_m
        coeffs = np.zeros((1, 4), dtype=np.float32)
        height_field = None
    fields = np.zeros((len(scene.crop), k.FIELD_SLOTS), dtype=np.float32)
    for row, cf in zip(fields, scene.crop, strict=True):
        row[k.F_X], row[k.F_Y] = cf.x, cf.y
        row[k.F_COS], row[k.F_SIN] = math.cos(cf.yaw), math.sin(cf.yaw)
        row[k.F_LENGTH], row[k.F_ROWS], row[k.F_SPACING] = cf.length_m, cf.rows, cf.row_spacing_m
        row[k.F_WIDTH], row[k.F_HEIGHT] = cf.row_width_m, cf.height_m
        (row[k.F_BX0], row[k.F_BY0]), (row[k.F_BX1], row[k.F_BY1]) = cf.bounds()
        row[k.F_HALF_W] = 0.5 * cf.row_width_m
        row[k.F_U_MAX] = np.float32((cf.rows - 1) * cf.row_spacing_m) + np.float32(0.5 * cf.row_width_m)
    buildings, radii = _box_rows(scene.buildings)
    for array in (terrain, coeffs, buildings, fields):
        array.setflags(write=False)
    return _PackedScene(
        terrain=terrain,
        coeffs=coeffs,
        height_field=height_field,
        buildings=buildings,
        building_radii=radii,
        fields=fields,
        z_max=z_max,
        tallest=max((f.height_m for f in scene.crop), default=0.0),
    )


def _boxes_in_range(
    rows: F32, radii: F64, origin: F64, max_range_m: float
) -> tuple[F32, np.ndarray[tuple[int], np.dtype[np.intp]]]:
    """The boxes within range of ``origin``, with their bounding cones filled in, and their indices."""
    centres = rows[:, k.B_CX : k.B_CZ + 1].astype(np.float64)
    rel = centres - origin
    dist = np.linalg.norm(rel, axis=1) if len(rows) else np.zeros(0)
    keep = np.flatnonzero(dist - radii <= max_range_m)
    out = rows[keep].copy()
    for row, d, r, v in zip(out, dist[keep], radii[keep], rel[keep], strict=True):
        row[k.B_NEAR] = (d - r) * (1.0 - _NEAR_MARGIN_REL) - _NEAR_MARGIN_M
        if d <= r:
            row[k.B_CONE] = _ALL_RAYS
            continue
        half = math.asin(r / d) + _CONE_MARGIN_RAD
        row[k.B_AX : k.B_AZ + 1] = v / d
        row[k.B_CONE] = math.cos(half) if half < math.pi else _ALL_RAYS
    return out, keep


def in_world(backend: Backend, fan: RayFan, rotation: ArrayLike) -> F32:
    """``fan.in_world(rotation)`` on ``backend``: the same (3, N) float32 directions either way."""
    if backend is Backend.NUMPY:
        return fan.in_world(np.asarray(rotation, dtype=np.float64))
    world = np.empty((3, fan.size), dtype=np.float32)
    k.turn_rays(np.asarray(rotation, dtype=np.float32), fan.directions_t, world)
    return world


def _compiled_cast_fan(
    scene: Scene,
    origin: F64,
    rotation: F64,
    fan: RayFan,
    *,
    max_range_m: float,
    agents: Sequence[Box],
    crop: bool,
    world: F32 | None = None,
) -> Hits:
    if not all(isinstance(a, Box) for a in agents):
        raise ParamsError(f"Scene.cast agents: expected Box values, got {[type(a).__name__ for a in agents]}")
    packed = _pack(scene)
    if world is None:
        world = in_world(Backend.COMPILED, fan, rotation)
    elif world.shape != (3, fan.size) or world.dtype != np.float32 or not world.flags.c_contiguous:
        raise ParamsError(f"cast_fan world: expected a C-contiguous (3, {fan.size}) float32 array")
    o32 = origin.astype(np.float32)
    agent_rows, agent_radii = _box_rows(agents)
    rows = np.concatenate((packed.buildings, agent_rows))
    radii = np.concatenate((packed.building_radii, agent_radii))
    items = np.concatenate(
        (np.arange(len(scene.buildings), dtype=np.int16), np.arange(len(agents), dtype=np.int16))
    )
    surfaces = np.array([b.surface for b in (*scene.buildings, *agents)], dtype=np.uint8)
    boxes, keep = _boxes_in_range(rows, radii, origin, max_range_m)
    ground0 = np.zeros(4, dtype=np.float32)
    if packed.height_field is not None:
        h0, sx, sy = packed.height_field.sample_slopes(float(o32[0]), float(o32[1]))
        ground0[:3] = h0, sx, sy
        ground0[3] = 1.0 if o32[2] - np.float32(h0) > 0 else 0.0
    fields = packed.fields if crop else packed.fields[:0]
    tallest = packed.tallest if crop and len(fields) else 0.0
    n = fan.size
    hits = Hits(
        range=np.empty(n, dtype=np.float32),
        surface=np.empty(n, dtype=np.uint8),
        normal=np.empty((3, n), dtype=np.float32).T,
        item=np.empty(n, dtype=np.int16),
    )
    k.cast_rays(
        o32,
        world,
        np.float32(max_range_m),
        packed.terrain,
        packed.coeffs,
        ground0,
        boxes,
        surfaces[keep],
        items[keep],
        fields,
        np.float32(packed.z_max + tallest),
        np.float32(tallest),
        hits.range,
        hits.surface,
        hits.normal.T,
        hits.item,
        numba.get_num_threads(),
    )
    return hits


def cast_fan(
    backend: Backend,
    scene: Scene,
    origin: ArrayLike,
    rotation: ArrayLike,
    fan: RayFan,
    *,
    max_range_m: float,
    agents: Sequence[Box] = (),
    crop: bool = True,
    world: F32 | None = None,
) -> Hits:
    """``scene.cast_fan(origin, rotation, fan, ...)`` on ``backend``: the same hits either way.

    ``world``: ``in_world(backend, fan, rotation)`` when the caller has it already (the compiled
    caster takes it instead of turning the fan again; the reference turns its own)."""
    if backend is Backend.NUMPY:
        return scene.cast_fan(origin, rotation, fan, max_range_m=max_range_m, agents=agents, crop=crop)
    o, rot = check_fan_pose(origin, rotation, max_range_m)
    return _compiled_cast_fan(
        scene, o, rot, fan, max_range_m=max_range_m, agents=agents, crop=crop, world=world
    )


def warm_up() -> None:
    """Compile the kernels now (or load them from numba's cache on disk), not in a sensor's first frame:
    the ray cast's, the camera's shading (acres_sim.sensors.shade_kernels) and the LiDAR's intensity and
    cloud (acres_sim.sensors.lidar_kernels)."""
    from acres_sim.sensors.tile import flat_scene  # noqa: PLC0415

    shade_kernels.warm_up()
    lidar_kernels.warm_up()

    fan = RayFan(np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0]], dtype=np.float32))
    agent = Box(x=5.0, y=0.0, z=1.0, lx=2.0, ly=2.0, lz=2.0)
    _compiled_cast_fan(
        flat_scene(), np.array([0.0, 0.0, 1.0]), np.eye(3), fan, max_range_m=10.0, agents=(agent,), crop=True
    )
