"""The simulator's autopilot: a pure-pursuit follower that drives the built-in route forever.

The route and the pure-pursuit rule are acres_bridge.geo.route's, shared with the Polaris's demo
driver.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from acres_bridge.geo.route import Route, pure_pursuit_curvature
from acres_sim.errors import ParamsError, require_finite
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import VehicleParams

__all__ = ["FollowerCommand", "FollowerParams", "RouteFollower"]


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
        require_finite(self, positive=self.__dataclass_fields__)
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
        curvature = pure_pursuit_curvature(state.x, state.y, state.yaw, tx, ty)
        limit = self._vehicle.max_steer_rad
        steer = max(-limit, min(limit, math.atan(self._vehicle.wheelbase_m * curvature)))

        accel = p.speed_gain_per_s * (speed_target - state.speed)
        accel = max(-p.max_decel_mps2, min(p.max_accel_mps2, accel))
        return FollowerCommand(
            speed_target=speed_target, steer=steer, accel=accel, s=s, cross_track=cross_track
        )
