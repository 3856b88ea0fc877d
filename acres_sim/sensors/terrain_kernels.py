"""The height field's ray intersection compiled: a block of rays against the ground, stage by stage.

HeightField.intersect of acres_sim.sensors.terrain (the reference) in the same float32 operations
and order, so that both give the same ground hits: the bracket, the plain Newton steps, then the
safeguarded ones on the rays that have not converged. The ground is a stage of its own, with a
reference of its own: acres_sim.sensors.cast_kernels solves it here for a whole block of rays
before it tests each ray's boxes and crop (flat ground it meets there, without this solver).

This module also owns the packed ground's layout (acres_sim.sensors.compiled_cast packs it):
``terrain`` (16,) float32, see the ``T_*`` slots, and the height field's bilinear cell coefficients
``coeffs`` (cells, 4) float32, a cell's four in one cache line (unused for flat ground).

Compiled by numba like cast_kernels (``nogil``, ``cache``). numba caches ``height_field_block``
inside ``cast_rays``, keyed on cast_kernels.py alone: after a change here, delete the kernels' cache
files (``*.nbi``, ``*.nbc`` in ``acres_sim/sensors/__pycache__``) so that it is compiled again.
"""

from __future__ import annotations

import math
from typing import Final

import numba
import numpy as np

from acres_sim.sensors.minmax_kernels import maximum, minimum
from acres_sim.sensors.terrain import (
    CONVERGED_M,
    EXTRA_ITERATIONS,
    FARTHEST_T,
    HIT_TOLERANCE_M,
    NEWTON_ITERATIONS,
    SEED_EVERY,
)

__all__ = ["TERRAIN_SLOTS", "height_field_block"]

_JIT: Final = {"nogil": True, "cache": True, "error_model": "numpy"}

# Terrain slots.
T_HEIGHT_FIELD, T_FLAT_Z, T_X0, T_Y0, T_INV_CELL, T_NX, T_NY, T_Z_MIN, T_Z_MAX, T_STEEPEST = range(10)
TERRAIN_SLOTS: Final = 16

_ZERO: Final = np.float32(0.0)
_ONE: Final = np.float32(1.0)
_HALF: Final = np.float32(0.5)
_INF: Final = np.float32(np.inf)
_FARTHEST: Final = np.float32(FARTHEST_T)
_HIT_TOLERANCE: Final = np.float32(HIT_TOLERANCE_M)
_SEED_EVERY: Final = SEED_EVERY
_INSIDE: Final = np.float32(1.0 - 1e-6)
_CONVERGED: Final = np.float32(CONVERGED_M)
_NEWTON: Final = NEWTON_ITERATIONS
_EXTRA: Final = EXTRA_ITERATIONS


@numba.njit(inline="always", **_JIT)
def _sample(terrain: np.ndarray, coeffs: np.ndarray, x: float, y: float) -> tuple[float, float, float]:
    """HeightField._sample at one point: (height, slope x, slope y), slopes per grid cell."""
    inv = terrain[T_INV_CELL]
    nx1 = terrain[T_NX] - _ONE
    ny1 = terrain[T_NY] - _ONE
    gx = (x - terrain[T_X0]) * inv
    gy = (y - terrain[T_Y0]) * inv
    # Clamped onto the grid (as np.minimum(np.maximum(...)) for numbers; NaN: the first cell, where
    # the reference would fail on its index: never an address outside the grid).
    gx_max = nx1 * _INSIDE
    gy_max = ny1 * _INSIDE
    gx = gx if gx > _ZERO else _ZERO
    gx = gx if gx < gx_max else gx_max
    gy = gy if gy > _ZERO else _ZERO
    gy = gy if gy < gy_max else gy_max
    fi = np.floor(gx)
    fj = np.floor(gy)
    fx = gx - fi
    fy = gy - fj
    k = int(fj * nx1 + fi)
    a = coeffs[k, 0]
    b = coeffs[k, 1]
    c = coeffs[k, 2]
    d = coeffs[k, 3]
    b = b + d * fy
    slope_y = d * fx + c
    a = a + c * fy
    a = a + fx * b
    return a, b, slope_y


@numba.njit(**_JIT)
def _solve(
    terrain: np.ndarray,
    coeffs: np.ndarray,
    origin: np.ndarray,
    world: np.ndarray,
    start: int,
    live: np.ndarray,
    m: int,
    t_out: np.ndarray,
    f_out: np.ndarray,
    sx_out: np.ndarray,
    sy_out: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    t_eval: np.ndarray,
) -> None:
    """HeightField._solve of the rays in slots ``live[:m]`` of the block from ``start``, from their
    start in ``t_out`` within [lo, hi]: the plain Newton steps, then the safeguarded ones on the rays
    that have not converged. ``live`` is scratch."""
    ox = origin[0]
    oy = origin[1]
    oz = origin[2]
    inv = terrain[T_INV_CELL]
    # Plain Newton steps, clipped to the bracket; a ray is done once its residual is within
    # CONVERGED_M (its next step is its answer).
    for _ in range(_NEWTON):
        kept = 0
        for q in range(m):
            j = live[q]
            i = start + j
            dx = world[0, i]
            dy = world[1, i]
            dz = world[2, i]
            t = t_out[j]
            t_eval[j] = t
            h, slope_x, slope_y = _sample(terrain, coeffs, t * dx + ox, t * dy + oy)
            f = t * dz + oz - h
            step = f / (dz - (slope_x * (dx * inv) + slope_y * (dy * inv)))
            t_out[j] = minimum(maximum(t - step, lo[j]), hi[j])
            f_out[j] = f
            sx_out[j] = slope_x
            sy_out[j] = slope_y
            if not abs(f) <= _CONVERGED:
                live[kept] = j
                kept += 1
        m = kept
    # Safeguarded steps on the rays that have not converged: t_eval is below the root where the ray
    # was still above the ground.
    slow = 0
    for q in range(m):
        j = live[q]
        f = f_out[j]
        if abs(f) <= _CONVERGED:
            continue
        if f > 0:
            lo[j] = t_eval[j]
        else:
            hi[j] = t_eval[j]
        t_out[j] = minimum(maximum(t_out[j], lo[j]), hi[j])
        live[slow] = j
        slow += 1
    # (HeightField._newton: a ray stops once converged or once its bracket is empty.)
    steepest = terrain[T_STEEPEST]
    for it in range(_EXTRA):
        kept = 0
        for q in range(slow):
            j = live[q]
            i = start + j
            dx = world[0, i]
            dy = world[1, i]
            dz = world[2, i]
            t = t_out[j]
            h, slope_x, slope_y = _sample(terrain, coeffs, ox + t * dx, oy + t * dy)
            f = oz + t * dz
            f = f - h
            above = _ONE if f > 0 else _ZERO
            clear = maximum(f - _HIT_TOLERANCE, _ZERO) / (steepest + abs(dz))
            lo_j = lo[j] + (t + clear - lo[j]) * above
            hi_j = hi[j] + (t - hi[j]) * (_ONE - above)
            lo[j] = lo_j
            hi[j] = hi_j
            step = t - f / (dz - slope_x * (dx * inv) - slope_y * (dy * inv))
            newton = step >= lo_j and step <= hi_j
            f_out[j] = f
            sx_out[j] = slope_x
            sy_out[j] = slope_y
            done = abs(f) <= _CONVERGED or not lo_j <= hi_j
            if newton:
                t_out[j] = step
            elif done or it == _EXTRA - 1:
                t_out[j] = t
            else:
                t_out[j] = _HALF * (lo_j + hi_j)
            if not done:
                live[kept] = j
                kept += 1
        slow = kept


@numba.njit(**_JIT)
def height_field_block(
    terrain: np.ndarray,
    coeffs: np.ndarray,
    origin: np.ndarray,
    world: np.ndarray,
    start: int,
    count: int,
    reach: float,
    ground0: np.ndarray,
    climb: float,
    t_out: np.ndarray,
    f_out: np.ndarray,
    sx_out: np.ndarray,
    sy_out: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    t_eval: np.ndarray,
    live: np.ndarray,
    seeded: np.ndarray,
) -> None:
    """HeightField.intersect of rays ``start`` .. ``start + count`` (``start`` a multiple of
    SEED_EVERY), stage by stage over the block so that the rays' Newton chains overlap in the
    processor: into slot ``j`` of the out arrays, the ray's best t, the residual of its last
    evaluation (inf: not tried) and the slopes there (per cell). A ray hits where
    |residual| <= HIT_TOLERANCE_M. The seed rays first, from the tangent plane under the origin;
    then the others, each from the tangent plane at its seed's hit where it has one."""
    zero = _ZERO
    oz = origin[2]
    h0 = ground0[0]
    g0x = ground0[1]
    g0y = ground0[2]
    bound = ground0[3] > 0
    steepest = terrain[T_STEEPEST]
    inv = terrain[T_INV_CELL]
    clearance = oz - h0
    # The bracket and Newton's start, for the rays that can meet the ground: seeds into live, the
    # others into seeded.
    m = 0
    k = 0
    for j in range(count):
        i = start + j
        t_out[j] = _INF
        f_out[j] = _INF
        sx_out[j] = zero
        sy_out[j] = zero
        dz = world[2, i]
        if not dz < climb:
            continue
        inv_dz = _ONE / dz
        t_enter = (terrain[T_Z_MAX] - oz) * inv_dz
        t_leave = (terrain[T_Z_MIN] - oz) * inv_dz
        if dz < 0:
            lo_j = maximum(t_enter, zero)
            hi_j = t_leave
        else:
            lo_j = zero
            hi_j = minimum(t_enter if dz > 0 else _INF, reach)
        if bound:
            lo_j = maximum(lo_j, clearance / (steepest - dz) if dz < steepest else _INF)
            hi_j = minimum(hi_j, clearance / (-dz - steepest) if -dz > steepest else _INF)
        hi_j = minimum(hi_j, _FARTHEST)
        if not lo_j <= hi_j:
            continue
        t = (oz - h0) / ((g0x * world[0, i] + g0y * world[1, i]) * inv - dz)
        if not (t >= lo_j and t <= hi_j):
            t = hi_j if math.isfinite(hi_j) else lo_j
        lo[j] = lo_j
        hi[j] = hi_j
        t_out[j] = t
        if i % _SEED_EVERY == 0:
            live[m] = j
            m += 1
        else:
            seeded[k] = j
            k += 1
    _solve(terrain, coeffs, origin, world, start, live, m, t_out, f_out, sx_out, sy_out, lo, hi, t_eval)
    # The others start on the tangent plane at their seed's hit (as HeightField._seeded_start).
    for q in range(k):
        j = seeded[q]
        i = start + j
        s = j - i % _SEED_EVERY
        if not abs(f_out[s]) <= _HIT_TOLERANCE:
            continue
        gx = sx_out[s] * inv
        gy = sy_out[s] * inv
        along_seed = world[2, start + s] - gx * world[0, start + s] - gy * world[1, start + s]
        along = world[2, i] - gx * world[0, i] - gy * world[1, i]
        guess = t_out[s] * along_seed / along
        if guess >= lo[j] and guess <= hi[j]:
            t_out[j] = guess
    _solve(terrain, coeffs, origin, world, start, seeded, k, t_out, f_out, sx_out, sy_out, lo, hi, t_eval)
