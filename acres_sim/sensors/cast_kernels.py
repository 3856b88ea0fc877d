"""Compiled ray kernels: the scene's ray cast, one ray at a time, in parallel over the rays.

The same arithmetic as the numpy ray caster (acres_sim.sensors.scene, acres_sim.sensors.terrain,
acres_sim.sensors._raycast), step for step in float32, so that both give the same hits: the numpy
one stays the reference that tests and `make bench` compare against. Compiled by numba on first
use (``nogil``: a render thread leaves the interpreter to the physics; ``cache``: later processes
load the machine code from disk).

The scene comes packed into arrays (acres_sim.sensors.compiled_cast builds them):

- ground: ``terrain`` and ``coeffs``, see acres_sim.sensors.terrain_kernels, which solves the
  height field for each block of rays before the boxes and the crop here;
- boxes (buildings, then agents): ``boxes`` (m, 13) float32, see the ``B_*`` slots;
- crop fields: ``fields`` (k, 16) float32, see the ``F_*`` slots.
"""

from __future__ import annotations

import math
import os
from typing import Final

# The kernels' worker threads sleep between frames instead of spinning: a spinning worker would take
# the core the physics, the INS and the bridge need. Read when the first parallel kernel starts.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba
import numpy as np

from acres_sim.sensors.minmax_kernels import fmax, fmin, maximum, minimum
from acres_sim.sensors.terrain import HIT_TOLERANCE_M, SEED_EVERY
from acres_sim.sensors.terrain_kernels import (
    T_FLAT_Z,
    T_HEIGHT_FIELD,
    T_INV_CELL,
    T_STEEPEST,
    height_field_block,
)

__all__ = [
    "BOX_SLOTS",
    "FIELD_SLOTS",
    "cast_rays",
    "turn_rays",
]

_JIT: Final = {"nogil": True, "cache": True, "error_model": "numpy"}

# Box slots: centre, half sizes, cos and sin of the yaw, the world axis of the bounding cone seen
# from the origin (unit; 0 0 0: the origin is inside the sphere, test every ray), the cone's cosine
# and a distance from the origin that no point of the box is nearer than (a ray whose nearest hit so
# far is nearer skips the box).
B_CX, B_CY, B_CZ, B_HX, B_HY, B_HZ, B_COS, B_SIN, B_AX, B_AY, B_AZ, B_CONE, B_NEAR = range(13)
BOX_SLOTS: Final = 13
# Crop field slots: the row layout, its cos and sin, its axis-aligned bounds, half a row's width and
# the far edge of the last row across (as crop_hits rounds them: from float64).
(
    F_X,
    F_Y,
    F_COS,
    F_SIN,
    F_LENGTH,
    F_ROWS,
    F_SPACING,
    F_WIDTH,
    F_HEIGHT,
    F_BX0,
    F_BY0,
    F_BX1,
    F_BY1,
    F_HALF_W,
    F_U_MAX,
) = range(15)
FIELD_SLOTS: Final = 16

_ZERO: Final = np.float32(0.0)
_ONE: Final = np.float32(1.0)
_MINUS_ONE: Final = np.float32(-1.0)
_INF: Final = np.float32(np.inf)
_HIT_TOLERANCE: Final = np.float32(HIT_TOLERANCE_M)

# Surfaces (acres_sim.sensors.scene.Surface), as the kernels write them.
_GROUND: Final = np.uint8(1)
_CROP: Final = np.uint8(3)


@numba.njit(inline="always", **_JIT)
def _box(
    boxes: np.ndarray, b: int, ox: float, oy: float, oz: float, dx: float, dy: float, dz: float
) -> tuple[float, float, float, float]:
    """box_hits of one ray and box ``b``: (t, normal x, y, z); t = inf where the ray does not enter it."""
    c = boxes[b, B_COS]
    s = boxes[b, B_SIN]
    rx = ox - boxes[b, B_CX]
    ry = oy - boxes[b, B_CY]
    p0 = c * rx + s * ry
    q0 = c * dx + s * dy
    p1 = c * ry - s * rx
    q1 = c * dy - s * dx
    p2 = oz - boxes[b, B_CZ]
    q2 = dz
    t_in = -_INF
    t_out = _INF
    near0 = _ZERO
    near1 = _ZERO
    near2 = _ZERO
    for k in range(3):
        if k == 0:
            p, q, h = p0, q0, boxes[b, B_HX]
        elif k == 1:
            p, q, h = p1, q1, boxes[b, B_HY]
        else:
            p, q, h = p2, q2, boxes[b, B_HZ]
        inv = _ONE / q
        t1 = (-h - p) * inv
        t2 = (h - p) * inv
        near = fmin(t1, t2)
        if k == 0:
            near0 = near
        elif k == 1:
            near1 = near
        else:
            near2 = near
        t_in = maximum(t_in, near)
        t_out = fmin(t_out, fmax(t1, t2))
    if not (t_in <= t_out and t_in > 0):
        return _INF, _ZERO, _ZERO, _ZERO
    s0 = _ZERO
    s1 = _ZERO
    s2 = _ZERO
    if near0 == t_in:
        s0 = _MINUS_ONE if q0 > 0 else _ONE
    elif near1 == t_in:
        s1 = _MINUS_ONE if q1 > 0 else _ONE
    elif near2 == t_in:
        s2 = _MINUS_ONE if q2 > 0 else _ONE
    return t_in, c * s0 - s * s1, s * s0 + c * s1, s2


@numba.njit(inline="always", **_JIT)
def _crop_field(
    fields: np.ndarray,
    k: int,
    ox: float,
    oy: float,
    dx: float,
    dy: float,
    ground_t: float,
    sink: float,
    gnx: float,
    gny: float,
    gnz: float,
    limit: float,
) -> tuple[float, float, float, float]:
    """crop_hits of one ray that met the ground at ``ground_t`` and field ``k``: (t, normal x, y, z);
    t = inf: no hit."""
    c = fields[k, F_COS]
    s = fields[k, F_SIN]
    rx = ox - fields[k, F_X]
    ry = oy - fields[k, F_Y]
    uo = c * ry - s * rx
    vo = c * rx + s * ry
    du = c * dy - s * dx
    dv = c * dx + s * dy
    half_w = fields[k, F_HALF_W]
    u_min = -half_w
    u_max = fields[k, F_U_MAX]
    t_top = ground_t + fields[k, F_HEIGHT] / sink
    inv_du = _ONE / du
    inv_dv = _ONE / dv
    tu1 = (u_min - uo) * inv_du
    tu2 = (u_max - uo) * inv_du
    tv1 = -vo * inv_dv
    tv2 = (fields[k, F_LENGTH] - vo) * inv_dv
    tv_in = fmin(tv1, tv2)
    t0 = maximum(maximum(t_top, fmin(tu1, tu2)), maximum(tv_in, _ZERO))
    t1 = minimum(minimum(ground_t, limit), minimum(fmax(tu1, tu2), fmax(tv1, tv2)))
    if not t0 < t1:
        return _INF, _ZERO, _ZERO, _ZERO
    u0 = uo + t0 * du
    period = fields[k, F_SPACING]
    band = np.floor((u0 + half_w) / period)
    inside = (u0 + half_w - band * period) <= fields[k, F_WIDTH]
    edge = (band + _ONE) * period - half_w if du > 0 else band * period + half_w
    t_edge = t0 + (edge - u0) / du
    if not (inside or (t_edge >= t0 and t_edge <= t1)):
        return _INF, _ZERO, _ZERO, _ZERO
    across = _MINUS_ONE if du > 0 else _ONE
    if not inside:
        return t_edge, -s * across, c * across, _ZERO
    if t0 == t_top:
        return t0, gnx, gny, gnz
    if t0 == tv_in:
        along = _MINUS_ONE if dv > 0 else _ONE
        return t0, c * along, s * along, _ZERO
    return t0, -s * across, c * across, _ZERO


@numba.njit(inline="always", **_JIT)
def _cast_one(
    i: int,
    origin: np.ndarray,
    world: np.ndarray,
    max_range: float,
    ground_t: float,
    gx: float,
    gy: float,
    boxes: np.ndarray,
    in_view: np.ndarray,
    in_view_count: int,
    box_surface: np.ndarray,
    box_item: np.ndarray,
    fields: np.ndarray,
    tallest: float,
    out_range: np.ndarray,
    out_surface: np.ndarray,
    out_normal: np.ndarray,
    out_item: np.ndarray,
) -> None:
    """Ray ``i``, whose ground hit is known (``ground_t``, inf for none, and the ground's slopes
    there, per metre): then the boxes (those of ``in_view[:in_view_count]``, the ones its group of
    rays can see), then the crop canopies, each keeping the nearest hit."""
    ox = origin[0]
    oy = origin[1]
    oz = origin[2]
    dx = world[0, i]
    dy = world[1, i]
    dz = world[2, i]
    best = _INF
    surface = np.uint8(0)
    item = np.int16(-1)
    nx = _ZERO
    ny = _ZERO
    nz = _ZERO
    met = math.isfinite(ground_t)
    sink = _ZERO
    gnx = _ZERO
    gny = _ZERO
    gnz = _ZERO
    if met:
        scale = _ONE / np.sqrt(_ONE + gx * gx + gy * gy)
        sink = dz - gx * dx - gy * dy
        gnx = -gx * scale
        gny = -gy * scale
        gnz = scale
        if ground_t <= max_range:
            best = ground_t
            surface = _GROUND
            nx, ny, nz = gnx, gny, gnz
    # Boxes whose bounding cone holds the ray and that could be nearer than the nearest hit so far.
    for q in range(in_view_count):
        b = in_view[q]
        if boxes[b, B_NEAR] > best:
            continue
        cone = boxes[b, B_CONE]
        if cone > -2 and dx * boxes[b, B_AX] + dy * boxes[b, B_AY] + dz * boxes[b, B_AZ] < cone:
            continue
        t, bx, by, bz = _box(boxes, b, ox, oy, oz, dx, dy, dz)
        if t < best and t <= max_range:
            best = t
            surface = box_surface[b]
            item = box_item[b]
            nx, ny, nz = bx, by, bz
    # Crop canopies, on the rays that met the ground, unless a box is nearer than the top of the
    # tallest canopy along the ray (then no field's hit can be nearer: crop_hits limits it to best).
    t_top = ground_t + tallest / sink if met else _INF
    if met and fields.shape[0] > 0 and not (sink < 0 and best <= t_top):
        x_top = ox + t_top * dx
        y_top = oy + t_top * dy
        x_end = ox + ground_t * dx
        y_end = oy + ground_t * dy
        x_lo = minimum(x_top, x_end)
        x_hi = maximum(x_top, x_end)
        y_lo = minimum(y_top, y_end)
        y_hi = maximum(y_top, y_end)
        for k in range(fields.shape[0]):
            if not (
                x_hi >= fields[k, F_BX0]
                and x_lo <= fields[k, F_BX1]
                and y_hi >= fields[k, F_BY0]
                and y_lo <= fields[k, F_BY1]
            ):
                continue
            limit = minimum(best, max_range)
            t, cx, cy, cz = _crop_field(fields, k, ox, oy, dx, dy, ground_t, sink, gnx, gny, gnz, limit)
            if t < best and t <= max_range:
                best = t
                surface = _CROP
                item = np.int16(k)
                nx, ny, nz = cx, cy, cz
    out_range[i] = best
    out_surface[i] = surface
    out_item[i] = item
    out_normal[0, i] = nx
    out_normal[1, i] = ny
    out_normal[2, i] = nz


_BLOCK: Final = 512  # rays a thread takes at a time: its stages' scratch stays in the L1 cache
assert _BLOCK % SEED_EVERY == 0  # a block holds its rays' seeds
_GROUP: Final = 64  # rays that share one list of the boxes they can see
# Angular margin (rad) of a group's cone: its float rounding, many times over.
_GROUP_MARGIN_RAD: Final = 1e-3


@numba.njit(**_JIT)
def _boxes_in_view(
    boxes: np.ndarray, reach: np.ndarray, world: np.ndarray, start: int, count: int, out: np.ndarray
) -> int:
    """Into ``out``, the boxes that rays ``start`` .. ``start + count`` can see: those whose bounding
    cone, widened by a margin (``reach``: its half angle's cosine and sine per box), meets the rays'
    own cone. How many.

    Only an early-out: a box left out lies, with margin, outside the bounding cone of every one of
    these rays, where each ray's own test (``_cast_one``) would skip it too or find no hit, so the
    hits are the same as with every box."""
    last = start + count - 1
    middle = start + count // 2
    ax = float(world[0, start]) + world[0, middle] + world[0, last]
    ay = float(world[1, start]) + world[1, middle] + world[1, last]
    az = float(world[2, start]) + world[2, middle] + world[2, last]
    norm = math.sqrt(ax * ax + ay * ay + az * az)
    m = 0
    if norm < 0.5:  # the rays point every way: every box
        for b in range(boxes.shape[0]):
            out[m] = b
            m += 1
        return m
    ax /= norm
    ay /= norm
    az /= norm
    # The rays' half angle about that axis, as its cosine and sine.
    cos_spread = 1.0
    for i in range(start, start + count):
        cos_spread = min(cos_spread, world[0, i] * ax + world[1, i] * ay + world[2, i] * az)
    cos_spread = max(-1.0, cos_spread)
    sin_spread = math.sqrt(1.0 - cos_spread * cos_spread)
    for b in range(boxes.shape[0]):
        cos_box = reach[b, 0]
        sin_box = reach[b, 1]
        # Apart by more than the two half angles (whose sum is below pi: both sines, and their
        # sum's sine, are positive), the cones do not meet.
        if cos_box > -2 and sin_box * cos_spread + cos_box * sin_spread > 0:
            apart = ax * boxes[b, B_AX] + ay * boxes[b, B_AY] + az * boxes[b, B_AZ]
            if apart < cos_box * cos_spread - sin_box * sin_spread:
                continue
        out[m] = b
        m += 1
    return m


@numba.njit(**_JIT)
def _cone_reach(boxes: np.ndarray) -> np.ndarray:
    """Per box, the cosine and sine of its bounding cone's half angle plus a margin (the group test's
    float rounding, many times over); -3 (in view of every group) for a box seen from inside, or
    whose widened cone is a hemisphere or wider."""
    reach = np.empty((boxes.shape[0], 2), dtype=np.float64)
    for b in range(boxes.shape[0]):
        cone = float(boxes[b, B_CONE])
        angle = math.acos(max(-1.0, min(1.0, cone))) + _GROUP_MARGIN_RAD if cone > -2 else math.pi
        if angle >= math.pi / 2:
            reach[b, 0] = -3.0
            reach[b, 1] = 0.0
        else:
            reach[b, 0] = math.cos(angle)
            reach[b, 1] = math.sin(angle)
    return reach


@numba.njit(parallel=True, **_JIT)
def turn_rays(rotation: np.ndarray, directions_t: np.ndarray, out: np.ndarray) -> None:
    """acres_sim.sensors._raycast.turn: ``rotation`` (3, 3) float32 applied to the columns of
    ``directions_t`` (3, N) float32, into ``out`` (3, N): each row the sum over the rotation's
    columns in their order, in float32, as the numpy one adds them."""
    n = directions_t.shape[1]
    for block in numba.prange((n + 4095) // 4096):
        for i in range(block * 4096, min(n, (block + 1) * 4096)):
            d0 = directions_t[0, i]
            d1 = directions_t[1, i]
            d2 = directions_t[2, i]
            for row in range(3):
                value = d0 * rotation[row, 0]
                value = value + d1 * rotation[row, 1]
                out[row, i] = value + d2 * rotation[row, 2]


@numba.njit(parallel=True, **_JIT)
def cast_rays(
    origin: np.ndarray,
    world: np.ndarray,
    max_range: float,
    terrain: np.ndarray,
    coeffs: np.ndarray,
    ground0: np.ndarray,
    boxes: np.ndarray,
    box_surface: np.ndarray,
    box_item: np.ndarray,
    fields: np.ndarray,
    z_top: float,
    tallest: float,
    out_range: np.ndarray,
    out_surface: np.ndarray,
    out_normal: np.ndarray,
    out_item: np.ndarray,
    threads: int,
) -> None:
    """Every ray of ``world`` (3, N) float32 unit directions from ``origin`` (3,) float32, into the
    out arrays: range (N,) float32, surface (N,) uint8, normal (3, N) float32, item (N,) int16;
    ``threads``: how many threads run the parallel loop (numba.get_num_threads()).

    ``ground0`` (4,) float32: the height field's sample under the origin (height, slope x, slope y per
    cell) and 1 where the origin is above the ground; ``z_top``: the highest ground plus the tallest
    crop (float32); ``tallest``: the tallest crop (float32)."""
    n = world.shape[1]
    oz = origin[2]
    # Rays rising faster than this meet neither the ground nor a crop canopy within range.
    climb = (z_top - oz) / max_range if oz > z_top else terrain[T_STEEPEST]
    height_field = terrain[T_HEIGHT_FIELD] > 0
    flat_height = oz - terrain[T_FLAT_Z]
    inv = terrain[T_INV_CELL]
    blocks = (n + _BLOCK - 1) // _BLOCK
    threads = max(threads, 1)
    reach = _cone_reach(boxes)
    for thread in numba.prange(threads):
        # Thread t takes blocks t, t + threads, ...: spread over the whole fan, so that no thread gets
        # all the sky or all the ground; its scratch is made once, not per block.
        ground_t = np.empty(_BLOCK, dtype=np.float32)
        residual = np.empty(_BLOCK, dtype=np.float32)
        slope_x = np.empty(_BLOCK, dtype=np.float32)
        slope_y = np.empty(_BLOCK, dtype=np.float32)
        lo = np.empty(_BLOCK, dtype=np.float32)
        hi = np.empty(_BLOCK, dtype=np.float32)
        t_eval = np.empty(_BLOCK, dtype=np.float32)
        live = np.empty(_BLOCK, dtype=np.int32)
        seeded = np.empty(_BLOCK, dtype=np.int32)
        in_view = np.empty(boxes.shape[0], dtype=np.int32)
        in_view_count = 0
        for block in range(thread, blocks, threads):
            start = block * _BLOCK
            count = min(n, start + _BLOCK) - start
            if height_field:
                height_field_block(
                    terrain,
                    coeffs,
                    origin,
                    world,
                    start,
                    count,
                    max_range,
                    ground0,
                    climb,
                    ground_t,
                    residual,
                    slope_x,
                    slope_y,
                    lo,
                    hi,
                    t_eval,
                    live,
                    seeded,
                )
            for j in range(count):
                i = start + j
                if j % _GROUP == 0:
                    in_view_count = _boxes_in_view(boxes, reach, world, i, min(_GROUP, count - j), in_view)
                if height_field:
                    t = ground_t[j] if abs(residual[j]) <= _HIT_TOLERANCE else _INF
                    gx = slope_x[j] * inv
                    gy = slope_y[j] * inv
                else:
                    dz = world[2, i]
                    t = flat_height / -dz if (dz < climb and dz < 0 and flat_height >= 0) else _INF
                    gx = _ZERO
                    gy = _ZERO
                _cast_one(
                    i,
                    origin,
                    world,
                    max_range,
                    t,
                    gx,
                    gy,
                    boxes,
                    in_view,
                    in_view_count,
                    box_surface,
                    box_item,
                    fields,
                    tallest,
                    out_range,
                    out_surface,
                    out_normal,
                    out_item,
                )
