"""The built-in scripted route on the tile and a pure-pursuit follower that drives it forever.

The route is a closed loop in the world frame, the way a vehicle works a field: straight runs along
the crop rows (grid north and south), joined at the headlands by U-turns, and a headland run back to
the start. It is sampled at evenly spaced points about 1 m apart, with the heading and the curvature
of the exact path at each point.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from acres_sim.errors import ParamsError
from acres_sim.kinematics import VehicleState
from acres_sim.vehicles import VehicleParams

__all__ = ["FollowerCommand", "FollowerParams", "Route", "RouteFollower", "acre_loop"]

FloatArray = NDArray[np.float64]

# How far a projection near a known arc length may climb along the route, in m.
_CLIMB_LIMIT_M = 20.0


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
            raise ParamsError(f"Route.xy: expected an (N, 2) array with N >= 3, got shape {xy.shape}")
        arrays = {"xy": xy}
        for name in ("yaw", "curvature", "s"):
            a = np.array(getattr(self, name), dtype=np.float64)
            if a.shape != (n,):
                raise ParamsError(f"Route.{name}: expected shape ({n},), got {a.shape}")
            arrays[name] = a
        for name, a in arrays.items():
            if not np.all(np.isfinite(a)):
                raise ParamsError(f"Route.{name}: expected finite values")
        s = arrays["s"]
        if (
            s[0] != 0.0
            or np.any(np.diff(s) <= 0.0)
            or not (math.isfinite(self.length) and self.length > s[-1])
        ):
            raise ParamsError(
                "Route.s: expected 0 first, strictly increasing, and below a finite Route.length"
            )
        seg = np.roll(xy, -1, axis=0) - xy
        if np.any(np.hypot(seg[:, 0], seg[:, 1]) == 0.0):
            raise ParamsError("Route.xy: expected no two consecutive points at the same place")
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
        raise ParamsError(f"acre_loop runs: expected an even number >= 2, got {runs}")
    for name, value in (
        ("run_length_m", run_length_m),
        ("row_spacing_m", row_spacing_m),
        ("spacing_m", spacing_m),
    ):
        if not (math.isfinite(value) and value > 0.0):
            raise ParamsError(f"acre_loop {name}: expected a finite value > 0, got {value!r}")
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


@dataclass(frozen=True, kw_only=True)
class FollowerParams:
    """Tuning of the route follower.

    The speed target is the cruise speed, lowered where the route's curvature would exceed the lateral
    acceleration limit, and taken as the lowest target over the next ``preview_m`` so the vehicle slows
    before a turn. The pure-pursuit look-ahead is ``lookahead_min_m + lookahead_time_s * |speed|``. The
    speed controller is proportional, its output clipped to the comfort limits.
    """

    cruise_speed_mps: float = 4.0
    min_speed_mps: float = 1.0
    max_lateral_accel_mps2: float = 1.5
    preview_m: float = 10.0
    lookahead_min_m: float = 2.0
    lookahead_time_s: float = 0.4
    speed_gain_per_s: float = 1.5
    max_accel_mps2: float = 1.0
    max_decel_mps2: float = 2.0

    def __post_init__(self) -> None:
        """Every tuning value must be finite and positive, and the minimum speed at most the cruise."""
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ParamsError(f"FollowerParams.{name}: expected a finite value > 0, got {value!r}")
        if self.min_speed_mps > self.cruise_speed_mps:
            raise ParamsError(
                f"FollowerParams.min_speed_mps: expected <= cruise_speed_mps ({self.cruise_speed_mps}), "
                f"got {self.min_speed_mps}"
            )


@dataclass(frozen=True, slots=True)
class FollowerCommand:
    """One output of the follower: the commands and where it thinks the vehicle is.

    ``speed_target`` in m/s, ``steer`` the road-wheel angle in rad, ``accel`` in m/s^2, ``s`` the arc
    length of the vehicle's projection on the route in m, ``cross_track`` its distance to the route in m.
    """

    speed_target: float
    steer: float
    accel: float
    s: float
    cross_track: float


class RouteFollower:
    """Pure pursuit along a closed route with a proportional speed controller; deterministic.

    The follower remembers its progress along the route to search only near it; ``reset()`` forgets
    it (after a teleport), so the next command searches the whole route.
    """

    def __init__(self, route: Route, vehicle: VehicleParams, params: FollowerParams | None = None) -> None:
        """Precompute the speed profile of ``route`` for ``vehicle``."""
        self._route = route
        self._vehicle = vehicle
        self._params = params if params is not None else FollowerParams()
        p = self._params
        cruise = min(p.cruise_speed_mps, vehicle.max_speed_mps)
        curvature = np.maximum(np.abs(route.curvature), 1e-9)
        limit = np.clip(np.sqrt(p.max_lateral_accel_mps2 / curvature), min(p.min_speed_mps, cruise), cruise)
        ahead = max(1, math.ceil(p.preview_m * route.size / route.length))
        idx = (np.arange(route.size)[:, None] + np.arange(ahead + 1)[None, :]) % route.size
        self._speed_profile: list[float] = limit[idx].min(axis=1).tolist()
        self._s: float | None = None

    @property
    def route(self) -> Route:
        """The route being followed."""
        return self._route

    @property
    def params(self) -> FollowerParams:
        """The tuning."""
        return self._params

    @property
    def progress(self) -> float | None:
        """The last arc length of the vehicle on the route in m, or None before the first command."""
        return self._s

    def reset(self) -> None:
        """Forget the progress: the next command projects the vehicle on the whole route."""
        self._s = None

    def command(self, state: VehicleState) -> FollowerCommand:
        """The speed target, road-wheel angle and acceleration command for a vehicle in ``state``."""
        p = self._params
        route = self._route
        s, cross_track = route.project(state.x, state.y, near=self._s)
        self._s = s
        speed_target = self._speed_profile[route.index_at(s)]

        lookahead = p.lookahead_min_m + p.lookahead_time_s * abs(state.speed)
        tx, ty, _ = route.pose_at(s + lookahead)
        dx, dy = tx - state.x, ty - state.y
        c, si = math.cos(state.yaw), math.sin(state.yaw)
        lateral = -si * dx + c * dy
        d2 = dx * dx + dy * dy
        curvature = 2.0 * lateral / d2 if d2 > 1e-12 else 0.0
        limit = self._vehicle.max_steer_rad
        steer = max(-limit, min(limit, math.atan(self._vehicle.wheelbase_m * curvature)))

        accel = p.speed_gain_per_s * (speed_target - state.speed)
        accel = max(-p.max_decel_mps2, min(p.max_accel_mps2, accel))
        return FollowerCommand(
            speed_target=speed_target, steer=steer, accel=accel, s=s, cross_track=cross_track
        )
