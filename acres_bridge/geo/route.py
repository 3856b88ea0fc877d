"""The built-in scripted route on the tile, and pure pursuit along a path. Pure: no node, no I/O.

The route is a closed loop in the world frame, the way a vehicle works a field: straight runs along
the crop rows (grid north and south), joined at the headlands by U-turns, and a headland run back to
the start. It is sampled at evenly spaced points about 1 m apart, with the heading and the curvature
of the exact path at each point. The simulator's autopilot and the Polaris's demo driver follow it
with the one pure-pursuit rule here.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from acres_bridge.errors import ParameterError

__all__ = ["Route", "acre_loop", "pure_pursuit_curvature"]

FloatArray = NDArray[np.float64]

# How far a projection near a known arc length may climb along the route, in m.
_CLIMB_LIMIT_M = 20.0


def pure_pursuit_curvature(x: float, y: float, yaw: float, target_x: float, target_y: float) -> float:
    """The curvature of the circle through the vehicle at (x, y), tangent to its heading ``yaw``,
    that passes through the target: 2 * lateral offset / distance^2 (0 at the target itself)."""
    dx, dy = target_x - x, target_y - y
    lateral = -math.sin(yaw) * dx + math.cos(yaw) * dy
    d2 = dx * dx + dy * dy
    return 2.0 * lateral / d2 if d2 > 1e-12 else 0.0


@dataclass(frozen=True, eq=False)
class Route:
    """A closed path in the world frame, sampled at points; the last point joins the first.

    ``xy`` (N, 2) in m; ``yaw`` (N,) the heading in rad, counter-clockwise from grid east;
    ``curvature`` (N,) in 1/m, positive to the left; ``s`` (N,) the arc length of each point from the
    first, in m; ``length`` the length of the whole loop in m. The arrays are read-only copies.
    Between two points the route is the straight segment, parametrised linearly in arc length.
    """

    xy: FloatArray
    yaw: FloatArray
    curvature: FloatArray
    s: FloatArray
    length: float
    # Per-point scalars as Python lists: the follower reads a few of them each physics step, where
    # numpy's per-call cost would dominate.
    _x: list[float] = field(init=False, repr=False)
    _y: list[float] = field(init=False, repr=False)
    _sx: list[float] = field(init=False, repr=False)
    _sy: list[float] = field(init=False, repr=False)
    _len2: list[float] = field(init=False, repr=False)
    _ds: list[float] = field(init=False, repr=False)
    _s: list[float] = field(init=False, repr=False)
    _max_climb: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        """Validate the shapes and the arc lengths; freeze the arrays; precompute the segments."""
        xy = np.array(self.xy, dtype=np.float64)
        n = xy.shape[0]
        if xy.ndim != 2 or xy.shape[1] != 2 or n < 3:
            raise ParameterError(f"Route.xy: expected an (N, 2) array with N >= 3, got shape {xy.shape}")
        arrays = {"xy": xy}
        for name in ("yaw", "curvature", "s"):
            a = np.array(getattr(self, name), dtype=np.float64)
            if a.shape != (n,):
                raise ParameterError(f"Route.{name}: expected shape ({n},), got {a.shape}")
            arrays[name] = a
        for name, a in arrays.items():
            if not np.all(np.isfinite(a)):
                raise ParameterError(f"Route.{name}: expected finite values")
        s = arrays["s"]
        if (
            s[0] != 0.0
            or np.any(np.diff(s) <= 0.0)
            or not (math.isfinite(self.length) and self.length > s[-1])
        ):
            raise ParameterError(
                "Route.s: expected 0 first, strictly increasing, and below a finite Route.length"
            )
        seg = np.roll(xy, -1, axis=0) - xy
        if np.any(np.hypot(seg[:, 0], seg[:, 1]) == 0.0):
            raise ParameterError("Route.xy: expected no two consecutive points at the same place")
        for name, a in arrays.items():
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        lists = {
            "_x": xy[:, 0],
            "_y": xy[:, 1],
            "_sx": seg[:, 0],
            "_sy": seg[:, 1],
            "_len2": np.einsum("ij,ij->i", seg, seg),
            "_ds": np.diff(s, append=self.length),
            "_s": s,
        }
        for name, a in lists.items():
            object.__setattr__(self, name, a.tolist())
        object.__setattr__(self, "_max_climb", math.ceil(_CLIMB_LIMIT_M * n / self.length))

    @property
    def size(self) -> int:
        """The number of points."""
        return len(self._s)

    def index_at(self, s: float) -> int:
        """The index of the point at or before arc length ``s`` (taken modulo the loop length)."""
        return bisect.bisect_right(self._s, s % self.length) - 1

    def pose_at(self, s: float) -> tuple[float, float, float]:
        """(x, y, yaw) at arc length ``s`` (modulo the loop length); the yaw is that of the segment."""
        s = s % self.length
        i = bisect.bisect_right(self._s, s) - 1
        t = (s - self._s[i]) / self._ds[i]
        sx, sy = self._sx[i], self._sy[i]
        return self._x[i] + t * sx, self._y[i] + t * sy, math.atan2(sy, sx)

    def _nearest_on(self, i: int, x: float, y: float) -> tuple[float, float]:
        """(squared distance, segment parameter t in [0, 1]) of world (x, y) to segment ``i``."""
        px, py = x - self._x[i], y - self._y[i]
        sx, sy = self._sx[i], self._sy[i]
        t = (px * sx + py * sy) / self._len2[i]
        t = 0.0 if t < 0.0 else min(t, 1.0)
        dx, dy = px - t * sx, py - t * sy
        return dx * dx + dy * dy, t

    def project(self, x: float, y: float, *, near: float | None = None) -> tuple[float, float]:
        """(arc length, distance) of the point of the route nearest to world (x, y).

        Without ``near`` the whole loop is searched. With ``near`` (an arc length close to the answer,
        such as the previous one) the search climbs from there to the nearest local minimum, at most
        20 m either way: cheap, and it keeps a vehicle on its own run where runs lie side by side.
        """
        n = self.size
        if near is None:
            a = self.xy
            px, py = x - a[:, 0], y - a[:, 1]
            seg = np.roll(a, -1, axis=0) - a
            t_all = np.clip((px * seg[:, 0] + py * seg[:, 1]) / np.asarray(self._len2), 0.0, 1.0)
            d2_all = (px - t_all * seg[:, 0]) ** 2 + (py - t_all * seg[:, 1]) ** 2
            best = int(np.argmin(d2_all))
            best_d2, best_t = float(d2_all[best]), float(t_all[best])
        else:
            best = self.index_at(near)
            best_d2, best_t = self._nearest_on(best, x, y)
            for direction in (1, -1):
                moved = False
                for _ in range(self._max_climb):
                    i = (best + direction) % n
                    d2, t = self._nearest_on(i, x, y)
                    if d2 >= best_d2:
                        break
                    best, best_d2, best_t, moved = i, d2, t, True
                if moved:
                    break
        s = (self._s[best] + best_t * self._ds[best]) % self.length
        return s, math.sqrt(best_d2)

    def distance_to(self, x: float, y: float) -> float:
        """The distance in m from world (x, y) to the nearest point of the route."""
        return self.project(x, y)[1]


@dataclass
class _Turtle:
    """Builds a path from straight pieces and arcs; each piece is (x0, y0, heading0, length, curvature)."""

    x: float
    y: float
    heading: float
    pieces: list[tuple[float, float, float, float, float]] = field(default_factory=list)

    def straight(self, length: float) -> None:
        if length > 0.0:
            self.pieces.append((self.x, self.y, self.heading, length, 0.0))
            self.x += length * math.cos(self.heading)
            self.y += length * math.sin(self.heading)

    def arc(self, radius: float, sweep: float) -> None:
        """An arc of ``radius``; ``sweep`` in rad, positive turning left."""
        curvature = math.copysign(1.0 / radius, sweep)
        self.pieces.append((self.x, self.y, self.heading, radius * abs(sweep), curvature))
        end = self.heading + sweep
        self.x += (math.sin(end) - math.sin(self.heading)) / curvature
        self.y -= (math.cos(end) - math.cos(self.heading)) / curvature
        self.heading = end


def _sample(pieces: list[tuple[float, float, float, float, float]], spacing: float) -> Route:
    """Sample the pieces at evenly spaced arc lengths, as close to ``spacing`` as the length allows."""
    table = np.array(pieces, dtype=np.float64)
    x0, y0, h0, lengths, kappa = table.T
    starts = np.concatenate(([0.0], np.cumsum(lengths)[:-1]))
    total = float(lengths.sum())
    n = max(3, round(total / spacing))
    s = np.arange(n, dtype=np.float64) * (total / n)
    k = np.searchsorted(starts, s, side="right") - 1
    u = s - starts[k]
    curv = kappa[k]
    heading = h0[k] + curv * u
    straight = curv == 0.0
    safe = np.where(straight, 1.0, curv)
    x = np.where(straight, x0[k] + u * np.cos(h0[k]), x0[k] + (np.sin(heading) - np.sin(h0[k])) / safe)
    y = np.where(straight, y0[k] + u * np.sin(h0[k]), y0[k] - (np.cos(heading) - np.cos(h0[k])) / safe)
    yaw = np.remainder(heading + math.pi, 2.0 * math.pi) - math.pi
    return Route(xy=np.column_stack((x, y)), yaw=yaw, curvature=curv, s=s, length=total)


def acre_loop(
    *,
    runs: int = 4,
    run_length_m: float = 100.0,
    row_spacing_m: float = 12.0,
    spacing_m: float = 1.0,
    centre: tuple[float, float] = (0.0, 0.0),
) -> Route:
    """The built-in route: ``runs`` runs along the rows, alternately north and south, closed by a headland.

    The runs are ``row_spacing_m`` apart and joined by U-turns of radius ``row_spacing_m / 2``; after
    the last (southbound) run, two quarter turns and a westward headland run lead back to the start of
    the first. The loop is centred on ``centre`` (world x, y); it starts at the south end of the
    westernmost run, heading north. The defaults give a loop of about 500 m.
    """
    if runs < 2 or runs % 2:
        raise ParameterError(f"acre_loop runs: expected an even number >= 2, got {runs}")
    for name, value in (
        ("run_length_m", run_length_m),
        ("row_spacing_m", row_spacing_m),
        ("spacing_m", spacing_m),
    ):
        if not (math.isfinite(value) and value > 0.0):
            raise ParameterError(f"acre_loop {name}: expected a finite value > 0, got {value!r}")
    radius = 0.5 * row_spacing_m
    width = (runs - 1) * row_spacing_m
    turtle = _Turtle(x=centre[0] - 0.5 * width, y=centre[1] - 0.5 * run_length_m, heading=0.5 * math.pi)
    for k in range(runs):
        turtle.straight(run_length_m)
        if k < runs - 1:
            turtle.arc(radius, -math.pi if k % 2 == 0 else math.pi)
    turtle.arc(radius, -0.5 * math.pi)
    turtle.straight(width - 2.0 * radius)
    turtle.arc(radius, -0.5 * math.pi)
    return _sample(turtle.pieces, spacing_m)
