"""The ground of a scene: flat, or a gently sloping height field. Both are kinematics terrains.

Heights are world z in m at world (x, y) in m. ``HeightField`` interpolates a regular grid
bilinearly and continues its edge values outside the grid. Both also intersect rays with the ground
for the scene's ray caster (``intersect``): the plane analytically, the height field by a few
vectorised, bracketed Newton iterations (docs/sensors.md gives the accuracy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from acres_sim.errors import ParamsError, require_finite
from acres_sim.sensors._raycast import F32, Rays, as_f32

__all__ = ["FlatGround", "GroundHits", "HeightField"]

# Newton iterations of a height-field ray cast: plain ones, a ray stopping once converged to
# CONVERGED_M (m), then safeguarded ones on the rays not converged; a hit is accepted with a height
# error (m) up to HIT_TOLERANCE_M.
NEWTON_ITERATIONS: Final = 3
EXTRA_ITERATIONS: Final = 10
CONVERGED_M: Final = 1e-3
HIT_TOLERANCE_M: Final = 0.02
FARTHEST_T: Final = np.finfo(np.float32).max  # the end of every ray's bracket (m)
# Rays of one origin are solved in two rounds: every SEED_EVERY-th ray of the fan (a seed) from the
# tangent plane of the ground under the origin, then each of the others from the tangent plane at its
# seed's hit, its neighbour's ground, where most converge at the first evaluation.
SEED_EVERY: Final = 8
# Grid coordinates are clamped to this fraction of the last node, so that floor() stays in a cell.
_INSIDE: Final = np.float32(1.0 - 1e-6)


@dataclass(frozen=True, slots=True)
class GroundHits:
    """Rays against the ground: ``t`` (k,) float32 along each ray (inf: no hit) and the ground's
    height gradient (``grad_x``, ``grad_y``, dimensionless) at the hit."""

    t: F32
    grad_x: F32
    grad_y: F32


def _xy_arrays(x: ArrayLike, y: ArrayLike) -> tuple[F32, F32]:
    xa, ya = np.broadcast_arrays(np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32))
    return xa, ya


def _unit_normals(grad_x: F32, grad_y: F32) -> F32:
    """Unit upward normals (-gx, -gy, 1)/|.| of a surface z = h(x, y) with gradient (gx, gy)."""
    out = np.empty((*grad_x.shape, 3), dtype=np.float32)
    scale = np.float32(1.0) / np.sqrt(np.float32(1.0) + grad_x * grad_x + grad_y * grad_y)
    out[..., 0] = -grad_x * scale
    out[..., 1] = -grad_y * scale
    out[..., 2] = scale
    return out


@dataclass(frozen=True, slots=True)
class _Bracket:
    """Newton's state per ray: the next guess ``t`` and the bracket [lo, hi] of the root."""

    t: F32
    lo: F32
    hi: F32

    def take(self, idx: NDArray[np.intp]) -> _Bracket:
        return _Bracket(t=self.t.take(idx), lo=self.lo.take(idx), hi=self.hi.take(idx))


@dataclass(frozen=True, slots=True)
class _Newton:
    """After some Newton steps: the best ``t``, and the residual ``f`` (m) and the slopes (per grid
    cell) at the last evaluation."""

    t: F32
    f: F32
    grad_x: F32
    grad_y: F32


@dataclass(frozen=True)
class FlatGround:
    """Level ground at world z = ``height_m``."""

    height_m: float = 0.0

    def __post_init__(self) -> None:
        """The height must be finite."""
        if not math.isfinite(self.height_m):
            raise ParamsError(
                f"FlatGround.height_m: expected a finite number of metres, got {self.height_m!r}"
            )

    def __call__(self, x: float, y: float) -> float:
        """The ground height at world (x, y): a kinematics ``Terrain``."""
        return self.height_m

    @property
    def z_range(self) -> tuple[float, float]:
        """The lowest and the highest ground height, in m."""
        return self.height_m, self.height_m

    @property
    def max_slope(self) -> float:
        """The steepest gradient anywhere (dimensionless): 0."""
        return 0.0

    def heights(self, x: ArrayLike, y: ArrayLike) -> F32:
        """The ground heights at world positions (x, y) of any broadcastable shapes, float32."""
        xa, _ = _xy_arrays(x, y)
        return np.full(xa.shape, self.height_m, dtype=np.float32)

    def normals(self, x: ArrayLike, y: ArrayLike) -> F32:
        """The unit upward ground normals at (x, y): shape (..., 3), float32."""
        xa, _ = _xy_arrays(x, y)
        zeros = np.zeros(xa.shape, dtype=np.float32)
        return _unit_normals(zeros, zeros)

    def intersect(self, rays: Rays, *, reach: float, index: NDArray[np.intp] | None = None) -> GroundHits:
        """Where the rays meet the plane (exactly, at any distance: ``reach`` and ``index``, the rays'
        places in their fan, are unused).

        Rays that do not descend, or start below the plane, miss.
        """
        height = rays.oz - np.float32(self.height_m)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t = height / -rays.dz
        t = np.where((rays.dz < 0) & (height >= 0), t, np.float32(np.inf))
        zeros = np.zeros_like(t)
        return GroundHits(t=t, grad_x=zeros, grad_y=zeros)


@dataclass(frozen=True, eq=False)
class HeightField:
    """A terrain height grid: ``grid[j, i]`` is the height (m) at world (x0 + i cell, y0 + j cell).

    ``origin`` is (x0, y0) in m and ``cell_m`` the grid spacing in m. Between nodes the height is
    bilinear; outside the grid the edge values continue. ``grid`` is stored as a read-only float32
    copy. Call it as ``hf(x, y)`` (a kinematics ``Terrain``), or vectorised ``hf.heights(x, y)``.
    """

    grid: F32
    origin: tuple[float, float]
    cell_m: float
    # Per-cell bilinear coefficients h = a + b fx + c fy + d fx fy, flat, for gathers.
    _a: F32 = field(init=False, repr=False)
    _b: F32 = field(init=False, repr=False)
    _c: F32 = field(init=False, repr=False)
    _d: F32 = field(init=False, repr=False)
    _z_range: tuple[float, float] = field(init=False, repr=False)
    _max_slope: float = field(init=False, repr=False)
    _shape: tuple[int, int] = field(init=False, repr=False)
    _heights: list[float] = field(init=False, repr=False)  # the grid, row-major, for scalar calls

    def __post_init__(self) -> None:
        """Validate and freeze the grid; precompute the cell coefficients, height range and slope."""
        grid = np.array(self.grid, dtype=np.float32, order="C")
        if grid.ndim != 2 or grid.shape[0] < 2 or grid.shape[1] < 2:
            raise ParamsError(f"HeightField.grid: expected a 2-D array of at least 2 x 2, got {grid.shape}")
        if not np.all(np.isfinite(grid)):
            raise ParamsError("HeightField.grid: expected finite heights")
        require_finite(self, positive=("cell_m",))
        if len(self.origin) != 2 or not all(math.isfinite(v) for v in self.origin):
            raise ParamsError(f"HeightField.origin: expected finite (x, y) in m, got {self.origin!r}")
        grid.setflags(write=False)
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "origin", (float(self.origin[0]), float(self.origin[1])))
        h00, h10 = grid[:-1, :-1], grid[:-1, 1:]
        h01, h11 = grid[1:, :-1], grid[1:, 1:]
        coeffs = {"_a": h00, "_b": h10 - h00, "_c": h01 - h00, "_d": h11 - h10 - h01 + h00}
        for name, value in coeffs.items():
            object.__setattr__(self, name, np.ascontiguousarray(value, dtype=np.float32).ravel())
        object.__setattr__(self, "_z_range", (float(grid.min()), float(grid.max())))
        object.__setattr__(self, "_shape", (int(grid.shape[0]), int(grid.shape[1])))
        object.__setattr__(self, "_heights", grid.ravel().tolist())
        # The gradient of a bilinear cell is extreme at its corners.
        gx = np.abs(np.stack((h10 - h00, h11 - h01)))
        gy = np.abs(np.stack((h01 - h00, h11 - h10)))
        slope = math.hypot(float(gx.max()), float(gy.max())) / self.cell_m
        object.__setattr__(self, "_max_slope", slope)

    @classmethod
    def generate(
        cls,
        *,
        seed: int,
        half_size_m: float = 400.0,
        cell_m: float = 4.0,
        max_slope: float = 0.03,
        waves: int = 6,
    ) -> HeightField:
        """Gently rolling terrain, the same for the same arguments.

        A sum of ``waves`` plane waves (wavelengths 150 to 600 m, random directions and phases from
        ``seed``), scaled so that the steepest gradient is ``max_slope``, shifted to height 0 at the
        world origin; the grid spans +-``half_size_m`` in x and y.
        """
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ParamsError(f"HeightField.generate seed: expected an integer >= 0, got {seed!r}")
        for name, value in (("half_size_m", half_size_m), ("cell_m", cell_m), ("max_slope", max_slope)):
            if not (math.isfinite(value) and value > 0.0):
                raise ParamsError(f"HeightField.generate {name}: expected a finite value > 0, got {value!r}")
        if waves < 1:
            raise ParamsError(f"HeightField.generate waves: expected >= 1, got {waves}")
        n = math.ceil(half_size_m / cell_m)
        axis = (np.arange(-n, n + 1) * cell_m).astype(np.float64)
        x, y = np.meshgrid(axis, axis)
        rng = np.random.Generator(np.random.PCG64(seed))
        wavelength = rng.uniform(150.0, 600.0, waves)
        heading = rng.uniform(0.0, 2.0 * math.pi, waves)
        phase = rng.uniform(0.0, 2.0 * math.pi, waves)
        height = np.zeros_like(x)
        grad_x = np.zeros_like(x)
        grad_y = np.zeros_like(x)
        for lam, th, ph in zip(wavelength, heading, phase, strict=True):
            k = 2.0 * math.pi / lam
            kx, ky = k * math.cos(th), k * math.sin(th)
            arg = kx * x + ky * y + ph
            amplitude = lam / 600.0  # every wave about as steep
            height += amplitude * np.sin(arg)
            grad_x += amplitude * kx * np.cos(arg)
            grad_y += amplitude * ky * np.cos(arg)
        steepest = float(np.max(np.hypot(grad_x, grad_y)))
        height *= max_slope / steepest
        height -= height[n, n]
        return cls(grid=height.astype(np.float32), origin=(-n * cell_m, -n * cell_m), cell_m=cell_m)

    @property
    def z_range(self) -> tuple[float, float]:
        """The lowest and the highest grid height, in m."""
        return self._z_range

    @property
    def max_slope(self) -> float:
        """An upper bound of the gradient's magnitude anywhere (dimensionless)."""
        return self._max_slope

    def __call__(self, x: float, y: float) -> float:
        """The ground height at world (x, y): a kinematics ``Terrain``.

        Plain Python on a list of the heights: the world calls it four times per vehicle and physics
        step, where numpy's per-call cost would dominate.
        """
        ny, nx = self._shape
        gx = min(max((x - self.origin[0]) / self.cell_m, 0.0), nx - 1.0)
        gy = min(max((y - self.origin[1]) / self.cell_m, 0.0), ny - 1.0)
        i = min(int(gx), nx - 2)
        j = min(int(gy), ny - 2)
        fx, fy = gx - i, gy - j
        g = self._heights
        k = j * nx + i
        h00, h10, h01, h11 = g[k], g[k + 1], g[k + nx], g[k + nx + 1]
        return h00 + fx * (h10 - h00) + fy * (h01 - h00 + fx * (h11 - h10 - h01 + h00))

    def _sample(self, x: F32, y: F32) -> tuple[F32, F32, F32]:
        """(height, dh/dx, dh/dy) at world (x, y), the slopes per grid cell (divide by ``cell_m`` for
        dh/dx per metre); float32 arrays of the same shape."""
        ny, nx = self.grid.shape
        inv = np.float32(1.0 / self.cell_m)
        # Grid coordinates, clamped just inside the last cell so that floor() picks a cell.
        gx = x - np.float32(self.origin[0])
        gx *= inv
        gy = y - np.float32(self.origin[1])
        gy *= inv
        np.clip(gx, np.float32(0.0), np.float32(nx - 1) * _INSIDE, out=gx)
        np.clip(gy, np.float32(0.0), np.float32(ny - 1) * _INSIDE, out=gy)
        fi = np.floor(gx)
        fj = np.floor(gy)
        gx -= fi  # the fractions within the cell
        gy -= fj
        fx, fy = gx, gy
        fj *= np.float32(nx - 1)
        fj += fi
        k = fj.astype(np.intp)
        a = self._a.take(k)
        b = self._b.take(k)
        c = self._c.take(k)
        d = self._d.take(k)
        d_fy = d * fy
        b += d_fy  # dh/dfx
        d *= fx
        d += c  # dh/dfy
        c *= fy
        a += c
        fx *= b
        a += fx  # the height
        return a, b, d

    def heights(self, x: ArrayLike, y: ArrayLike) -> F32:
        """The ground heights at world positions (x, y) of any broadcastable shapes, float32."""
        xa, ya = _xy_arrays(x, y)
        return self._sample(xa, ya)[0]

    def cell_coefficients(self) -> F32:
        """(4, cells) float32: per grid cell (row-major, (ny - 1) x (nx - 1)) the bilinear
        coefficients a, b, c, d of h = a + b fx + c fy + d fx fy (the compiled caster takes them
        transposed)."""
        return np.stack((self._a, self._b, self._c, self._d))

    def sample_slopes(self, x: float, y: float) -> tuple[float, float, float]:
        """(height, dh/dx, dh/dy per grid cell) at one point, in float32 arithmetic as the ray cast does."""
        h, sx, sy = self._sample(np.array([x], dtype=np.float32), np.array([y], dtype=np.float32))
        return float(h[0]), float(sx[0]), float(sy[0])

    def normals(self, x: ArrayLike, y: ArrayLike) -> F32:
        """The unit upward ground normals at (x, y): shape (..., 3), float32."""
        xa, ya = _xy_arrays(x, y)
        _, slope_x, slope_y = self._sample(xa, ya)
        inv = np.float32(1.0 / self.cell_m)
        return _unit_normals(slope_x * inv, slope_y * inv)

    def intersect(
        self,
        rays: Rays,
        *,
        reach: float,
        index: NDArray[np.intp] | None = None,
        seed_every: int = SEED_EVERY,
    ) -> GroundHits:
        """Where the rays first meet the ground.

        Newton on f(t) = z(t) - h(x(t), y(t)) within the bracket where the ray is inside the grid's
        height range (a rising ray: up to ``reach`` m). First up to ``NEWTON_ITERATIONS`` plain steps,
        clipped to the bracket, a ray stopping once |f| is within ``CONVERGED_M`` (its next step is
        its answer); then, on the rays whose |f| still exceeds ``CONVERGED_M``, up to
        ``EXTRA_ITERATIONS`` safeguarded steps (``_newton``). A ray hits where |f| <=
        ``HIT_TOLERANCE_M`` at the end. Exact for rays steeper than the ground; a ray that grazes the
        ground at a shallower angle can meet it more than once and may get a later crossing or none.

        Newton starts from the tangent plane of the ground under the origin. Rays of a sensor's fan
        (one origin; ``index``: their places in the fan, ascending) whose place is not a multiple of
        ``seed_every`` start from the tangent plane at the hit of the one before them that is (their
        seed, a neighbour in the fan), solved first; ``seed_every=1``: every ray from the plane under
        the origin.
        """
        # Rays that graze the ground or fall too slowly for float32 reach inf and NaN on the way
        # (an overflowed t, inf - inf in a bracket): the solver means IEEE arithmetic there, as the
        # compiled one does, and decides such rays by comparisons that hold for inf and NaN.
        with np.errstate(all="ignore"):
            bracket = self._bracket(rays, reach)
            hits = GroundHits(
                t=np.full(rays.size, np.inf, dtype=np.float32),
                grad_x=np.zeros(rays.size, dtype=np.float32),
                grad_y=np.zeros(rays.size, dtype=np.float32),
            )
            live = np.flatnonzero(bracket.lo <= bracket.hi)
            if index is None or not rays.one_origin:
                self._solve_into(hits, rays, live, bracket.take(live))
                return hits
            is_seed = index.take(live) % seed_every == 0
            seeds, others = live[is_seed], live[~is_seed]
            self._solve_into(hits, rays, seeds, bracket.take(seeds))
            start = self._seeded_start(
                rays, bracket.take(others), others, place=index, seeds=hits, every=seed_every
            )
            self._solve_into(hits, rays, others, start)
            return hits

    def _solve_into(self, hits: GroundHits, rays: Rays, which: NDArray[np.intp], start: _Bracket) -> None:
        """``_solve`` of the rays ``which`` from ``start``, written into their places of ``hits``."""
        if which.size:
            found = self._solve(rays.take(which), start)
            hits.t[which] = found.t
            hits.grad_x[which] = found.grad_x
            hits.grad_y[which] = found.grad_y

    @staticmethod
    def _seeded_start(
        rays: Rays,
        start: _Bracket,
        solved: NDArray[np.intp],
        *,
        place: NDArray[np.intp],
        seeds: GroundHits,
        every: int,
    ) -> _Bracket:
        """``start`` of the rays ``solved`` moved onto the tangent plane at their seed's hit, where the
        seed hit and that start is within the ray's bracket: t = t_seed (dz - g . d)_seed / (dz - g . d)
        with the ground's gradient g at the seed's hit."""
        seed_place = place.take(solved)
        seed_place -= seed_place % every
        seed = np.minimum(np.searchsorted(place, seed_place), place.size - 1)
        t_seed = np.where(place.take(seed) == seed_place, seeds.t.take(seed), np.float32(np.inf))
        gx, gy = seeds.grad_x.take(seed), seeds.grad_y.take(seed)
        along_seed = rays.dz.take(seed) - gx * rays.dx.take(seed) - gy * rays.dy.take(seed)
        along = rays.dz.take(solved) - gx * rays.dx.take(solved) - gy * rays.dy.take(solved)
        guess = t_seed * along_seed / along
        use = (guess >= start.lo) & (guess <= start.hi)
        return _Bracket(t=as_f32(np.where(use, guess, start.t)), lo=start.lo, hi=start.hi)

    def _bracket(self, rays: Rays, reach: float) -> _Bracket:
        """Where each ray can meet the ground, and Newton's start there.

        The ray must be within the grid's height range; and since the ground rises or falls at most
        ``max_slope`` per metre, a ray that starts ``c`` m above the ground under it cannot meet it
        before c / (max_slope - dz), nor, going down more steeply than that, after
        c / (-dz - max_slope). A ray with an empty bracket misses. The start is the crossing with the
        tangent plane of the ground under the origin.
        """
        ox, oy, oz, dx, dy, dz = rays.ox, rays.oy, rays.oz, rays.dx, rays.dy, rays.dz
        z_min, z_max = self._z_range
        zero = np.float32(0.0)
        steepest = np.float32(self._max_slope)
        h0, g0x, g0y = self._sample(ox, oy)
        clearance = oz - h0
        inv_dz = np.float32(1.0) / dz
        t_enter = (np.float32(z_max) - oz) * inv_dz
        t_leave = (np.float32(z_min) - oz) * inv_dz
        earliest = clearance / (steepest - dz)
        latest = clearance / (-dz - steepest)
        falling = dz < 0
        lo = np.where(falling, np.maximum(t_enter, zero), zero)
        hi = np.where(falling, t_leave, np.minimum(np.where(dz > 0, t_enter, np.inf), np.float32(reach)))
        if float(np.min(clearance)) > 0.0:  # the bounds hold for origins above the ground
            lo = np.maximum(lo, np.where(dz < steepest, earliest, np.inf))
            hi = np.minimum(hi, np.where(-dz > steepest, latest, np.inf))
        # A ray that falls too slowly for float32 leaves the height range at an overflowed infinite t,
        # where x = t dx is inf and y = t * 0 NaN: the bracket ends at the largest float32 instead.
        hi = np.minimum(hi, FARTHEST_T)
        inv = np.float32(1.0 / self.cell_m)
        t = (oz - h0) / ((g0x * dx + g0y * dy) * inv - dz)
        t = np.where((t >= lo) & (t <= hi), t, np.where(np.isfinite(hi), hi, lo))
        return _Bracket(t=as_f32(t), lo=as_f32(lo), hi=as_f32(hi))

    def _solve(self, rays: Rays, start: _Bracket) -> GroundHits:
        """Newton from ``start`` on rays whose bracket is not empty (see ``intersect``)."""
        lo, hi = start.lo, start.hi
        t = start.t.copy()
        t_eval = t.copy()
        f = np.full(rays.size, np.inf, dtype=np.float32)
        slope_x = np.zeros(rays.size, dtype=np.float32)
        slope_y = np.zeros(rays.size, dtype=np.float32)
        # The rays still stepping: a ray is done once its residual is within CONVERGED_M.
        active = np.arange(rays.size)
        for _ in range(NEWTON_ITERATIONS):
            if not active.size:
                break
            t_active = t.take(active)
            step = self._plain_step(rays.take(active), t_active, lo.take(active), hi.take(active))
            t_eval[active] = t_active
            t[active] = step.t
            f[active] = step.f
            slope_x[active] = step.grad_x
            slope_y[active] = step.grad_y
            active = active[~(np.abs(step.f) <= np.float32(CONVERGED_M))]
        inv = np.float32(1.0 / self.cell_m)
        # f was measured at t_eval; t is the next Newton step, better where the ray has converged.
        converged = np.abs(f) <= np.float32(CONVERGED_M)
        best = np.where(converged, t, t_eval)
        slow = np.flatnonzero(~converged)
        if slow.size:
            # Go on with a bracket: t_eval is below the root where the ray was still above the ground.
            above = f.take(slow) > 0
            t_slow = t_eval.take(slow)
            lo_slow = np.where(above, t_slow, lo.take(slow))
            hi_slow = np.where(above, hi.take(slow), t_slow)
            start = _Bracket(t=np.clip(t.take(slow), lo_slow, hi_slow), lo=lo_slow, hi=hi_slow)
            again = self._newton(rays.take(slow), start, EXTRA_ITERATIONS)
            best[slow] = again.t
            f[slow] = again.f
            slope_x[slow] = again.grad_x
            slope_y[slow] = again.grad_y
        best = np.where(np.abs(f) <= np.float32(HIT_TOLERANCE_M), best, np.float32(np.inf))
        return GroundHits(t=as_f32(best), grad_x=as_f32(slope_x * inv), grad_y=as_f32(slope_y * inv))

    def _plain_step(self, rays: Rays, t: F32, lo: F32, hi: F32) -> _Newton:
        """One plain Newton step from ``t``, clipped to [lo, hi]: the next t, and the residual and
        slopes (per grid cell) measured at ``t``."""
        ox, oy, oz, dx, dy, dz = rays.ox, rays.oy, rays.oz, rays.dx, rays.dy, rays.dz
        inv = np.float32(1.0 / self.cell_m)  # directions per grid cell, for the slopes _sample returns
        x = t * dx
        x += ox
        y = t * dy
        y += oy
        h, slope_x, slope_y = self._sample(x, y)
        f = t * dz
        f += oz
        f -= h
        # The step f / f'(t), f' = dz - grad . (dx, dy), in place: these arrays are large.
        np.multiply(slope_x, dx * inv, out=x)
        np.multiply(slope_y, dy * inv, out=y)
        x += y
        np.subtract(dz, x, out=x)
        np.divide(f, x, out=x)
        x = t - x
        np.clip(x, lo, hi, out=x)
        return _Newton(t=x, f=f, grad_x=slope_x, grad_y=slope_y)

    def _newton(self, rays: Rays, start: _Bracket, iterations: int) -> _Newton:
        """Up to ``iterations`` (>= 1) bracketed Newton steps from ``start``: the best t, and the residual
        and slopes (per grid cell) of the last evaluation. A ray stops once its |f| is within
        ``CONVERGED_M`` (its Newton step from there is its answer) or once its bracket is empty (it
        misses: the ground is out of its reach)."""
        inv = np.float32(1.0 / self.cell_m)
        tolerance = np.float32(HIT_TOLERANCE_M)
        steepest = np.float32(self._max_slope)
        half = np.float32(0.5)
        best, lo, hi = start.t.copy(), start.lo.copy(), start.hi.copy()
        f = np.full_like(best, np.inf)
        slope_x = np.zeros_like(best)
        slope_y = np.zeros_like(best)
        active = np.arange(rays.size)
        for i in range(iterations):
            r = rays.take(active)
            t, lo_a, hi_a = best.take(active), lo.take(active), hi.take(active)
            h, sx, sy = self._sample(r.ox + t * r.dx, r.oy + t * r.dy)
            fa = r.oz + t * r.dz
            fa -= h
            # Above the ground by f at t, the ray cannot come within HIT_TOLERANCE_M of it for another
            # (f - HIT_TOLERANCE_M) / (steepest + |dz|) m: the ground rises at most ``steepest`` per
            # metre along the ray, the ray falls |dz|. So t plus that is below the first root. Blends,
            # not np.where: the mask is random, and a mispredicted branch per element costs more
            # than the arithmetic.
            above = (fa > 0).astype(np.float32)
            clear = np.maximum(fa - tolerance, np.float32(0.0)) / (steepest + np.abs(r.dz))
            lo_a += (t + clear - lo_a) * above
            hi_a += (t - hi_a) * (np.float32(1.0) - above)
            step = t - fa / (r.dz - sx * (r.dx * inv) - sy * (r.dy * inv))
            newton = (step >= lo_a) & (step <= hi_a)
            # The Newton step from the last evaluation is better still; a bisection is not.
            done = (np.abs(fa) <= np.float32(CONVERGED_M)) | ~(lo_a <= hi_a) | (i == iterations - 1)
            best[active] = np.where(newton, step, np.where(done, t, half * (lo_a + hi_a)))
            lo[active], hi[active] = lo_a, hi_a
            f[active], slope_x[active], slope_y[active] = fa, sx, sy
            active = active[~done]
        return _Newton(t=as_f32(best), f=f, grad_x=slope_x, grad_y=slope_y)
