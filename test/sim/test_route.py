"""The built-in route and the pure-pursuit follower."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from acres_bridge.errors import ParameterError
from acres_bridge.geo.route import Route, acre_loop
from acres_sim.clock import PHYSICS_DT_S
from acres_sim.errors import ParamsError
from acres_sim.vehicles.kinematics import VehicleState, place, step
from acres_sim.vehicles.params import MAXXUM, POLARIS, VehicleParams
from acres_sim.world.route import FollowerParams, RouteFollower


@pytest.fixture(scope="module")
def route() -> Route:
    return acre_loop()


def test_loop_geometry(route: Route) -> None:
    # Four 100 m runs, three U-turns and two quarter turns of radius 6 m, a 24 m headland.
    assert route.length == pytest.approx(400.0 + 24.0 + 4 * math.pi * 6.0)
    assert route.size == round(route.length)
    gaps = np.hypot(*(np.roll(route.xy, -1, axis=0) - route.xy).T)
    assert gaps.min() > 0.97
    assert gaps.max() <= route.length / route.size + 1e-9  # the loop closes: the last point joins the first
    assert np.all(np.abs(route.xy) < 60.0)  # on the tile, centred on the world origin
    assert route.xy[0] == pytest.approx((-18.0, -50.0))
    assert route.yaw[0] == pytest.approx(math.pi / 2)
    assert set(np.round(np.abs(route.curvature), 9)) == {0.0, round(1 / 6, 9)}
    assert not route.xy.flags.writeable


def test_heading_matches_the_points(route: Route) -> None:
    seg = np.roll(route.xy, -1, axis=0) - route.xy
    chord_heading = np.arctan2(seg[:, 1], seg[:, 0])
    diff = np.remainder(chord_heading - route.yaw + math.pi, 2 * math.pi) - math.pi
    assert np.all(np.abs(diff) < 0.1)


@pytest.mark.parametrize("s", [0.0, 0.5, 37.25, 250.0, 498.9])
def test_project_inverts_pose_at(route: Route, s: float) -> None:
    x, y, yaw = route.pose_at(s)
    found, distance = route.project(x, y)
    assert distance == pytest.approx(0.0, abs=1e-9)
    assert found == pytest.approx(s, abs=1e-9)
    # An offset of 0.5 m to the left of the path.
    found, distance = route.project(x - 0.5 * math.sin(yaw), y + 0.5 * math.cos(yaw), near=s - 3.0)
    assert distance == pytest.approx(0.5, abs=0.02)
    assert found == pytest.approx(s, abs=0.1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"runs": 3}, "runs"), ({"runs": 0}, "runs"), ({"row_spacing_m": 0.0}, "row_spacing_m")],
)
def test_acre_loop_rejects_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        acre_loop(**kwargs)


def test_route_rejects_bad_arrays() -> None:
    with pytest.raises(ParameterError, match="shape"):
        Route(xy=np.zeros((2, 2)), yaw=np.zeros(2), curvature=np.zeros(2), s=np.arange(2.0), length=3.0)
    with pytest.raises(ParameterError, match="increasing"):
        Route(xy=np.eye(3, 2), yaw=np.zeros(3), curvature=np.zeros(3), s=np.zeros(3), length=3.0)


def _drive(
    route: Route, params: VehicleParams, state: VehicleState, steps: int
) -> tuple[VehicleState, float, float, float]:
    """Drive with the follower; return the last state, the largest distance to the route, the distance
    travelled and the highest speed."""
    follower = RouteFollower(route, params)
    worst = travelled = top = 0.0
    for k in range(steps):
        command = follower.command(state)
        after, _ = step(state, params, command.accel, command.steer, PHYSICS_DT_S)
        travelled += math.hypot(after.x - state.x, after.y - state.y)
        state = after
        top = max(top, state.speed)
        if k % 4 == 0:
            worst = max(worst, route.distance_to(state.x, state.y))
    return state, worst, travelled, top


def test_polaris_follows_a_full_lap_within_a_metre(route: Route) -> None:
    start = place(POLARIS, *route.pose_at(0.0))
    steps = round(1.1 * route.length / 3.5 / PHYSICS_DT_S)
    _, worst, travelled, top = _drive(route, POLARIS, start, steps)
    assert travelled > route.length  # more than one lap
    assert worst < 1.0
    assert top == pytest.approx(FollowerParams().cruise_speed_mps, abs=0.05)


def test_maxxum_follows_the_route_too(route: Route) -> None:
    start = place(MAXXUM, *route.pose_at(100.0))
    _, worst, travelled, _ = _drive(route, MAXXUM, start, 60 * 120)
    assert travelled > 150.0
    assert worst < 1.0


def test_rejoins_after_a_teleport(route: Route) -> None:
    # Start 3 m beside the second run, heading along it: the follower finds it and converges.
    x, y, yaw = route.pose_at(200.0)
    start = place(POLARIS, x + 3.0, y, yaw)
    end, _, _, _ = _drive(route, POLARIS, start, 20 * 120)
    assert route.distance_to(end.x, end.y) < 0.3


def test_follower_is_deterministic(route: Route) -> None:
    start = place(POLARIS, *route.pose_at(10.0))
    assert _drive(route, POLARIS, start, 3000) == _drive(route, POLARIS, start, 3000)


def test_follower_params_are_validated() -> None:
    with pytest.raises(ParamsError, match="lookahead_min_m"):
        FollowerParams(lookahead_min_m=0.0)
    with pytest.raises(ParamsError, match="min_speed_mps"):
        FollowerParams(cruise_speed_mps=1.0, min_speed_mps=2.0)
