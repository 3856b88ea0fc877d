"""Pure pursuit: the curvature's sign and magnitude on a straight run and on circles; the route in utm."""

from __future__ import annotations

import math

import numpy as np
import pytest

from acres_bridge.geo.route import Route, acre_loop, pure_pursuit_curvature
from acres_bridge.other.pursuit import (
    MAX_CURVATURE,
    RouteTracker,
    georeference,
    route_origin_utm,
)
from acres_bridge.wire.messages import SensorMeta

LOOKAHEAD_M = 6.0


def circle(radius: float, *, clockwise: bool = False, points: int = 720) -> Route:
    """A circle about the origin, starting at (radius, 0), counter-clockwise unless clockwise."""
    sign = -1.0 if clockwise else 1.0
    theta = sign * np.arange(points) * (2.0 * math.pi / points)
    xy = np.column_stack((radius * np.cos(theta), radius * np.sin(theta)))
    yaw = np.remainder(theta + sign * 0.5 * math.pi + math.pi, 2.0 * math.pi) - math.pi
    length = 2.0 * math.pi * radius
    return Route(
        xy=xy,
        yaw=yaw,
        curvature=np.full(points, sign / radius),
        s=np.arange(points) * (length / points),
        length=length,
    )


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ((10.0, 0.0), 0.0),  # straight ahead
        ((3.0, 4.0), 2.0 * 4.0 / 25.0),  # left: positive
        ((3.0, -4.0), -2.0 * 4.0 / 25.0),  # right: negative
        ((0.0, 0.0), 0.0),  # at the target itself
    ],
)
def test_curvature_of_the_circle_through_the_target(target: tuple[float, float], expected: float) -> None:
    assert pure_pursuit_curvature(0.0, 0.0, 0.0, *target) == pytest.approx(expected)


def test_curvature_does_not_depend_on_where_the_frame_is() -> None:
    yaw = 2.0
    c, s = math.cos(yaw), math.sin(yaw)
    x, y = 500438.0, 4479963.0
    # The target 3 m ahead and 4 m to the left of a vehicle heading `yaw`.
    tx, ty = x + 3.0 * c - 4.0 * s, y + 3.0 * s + 4.0 * c
    assert pure_pursuit_curvature(x, y, yaw, tx, ty) == pytest.approx(8.0 / 25.0)


def test_on_a_straight_run_the_curvature_steers_back_to_the_route() -> None:
    route = acre_loop()
    x_run = float(route.xy[0][0])  # the first run goes north along x = x_run
    north = 0.5 * math.pi
    on_route = RouteTracker(route, lookahead_m=LOOKAHEAD_M).command(x_run, -20.0, north)
    assert on_route.curvature == pytest.approx(0.0, abs=1e-9)
    assert on_route.cross_track_m == pytest.approx(0.0, abs=1e-9)

    # 1 m to the east (right of the heading): steer left; the target is 6 m up the run.
    right = RouteTracker(route, lookahead_m=LOOKAHEAD_M).command(x_run + 1.0, -20.0, north)
    assert right.target == pytest.approx((x_run, -14.0))
    assert right.curvature == pytest.approx(2.0 * 1.0 / (1.0 + 36.0))
    assert right.cross_track_m == pytest.approx(1.0)
    left = RouteTracker(route, lookahead_m=LOOKAHEAD_M).command(x_run - 1.0, -20.0, north)
    assert left.curvature == pytest.approx(-right.curvature)


def test_a_longer_lookahead_steers_more_gently() -> None:
    route = acre_loop()
    x_run = float(route.xy[0][0])
    near = RouteTracker(route, lookahead_m=3.0).command(x_run + 1.0, -20.0, 0.5 * math.pi)
    far = RouteTracker(route, lookahead_m=12.0).command(x_run + 1.0, -20.0, 0.5 * math.pi)
    assert 0.0 < far.curvature < near.curvature


@pytest.mark.parametrize("radius", [10.0, 20.0, 50.0])
@pytest.mark.parametrize("clockwise", [False, True])
def test_on_a_circle_the_curvature_is_that_of_the_circle(radius: float, clockwise: bool) -> None:
    route = circle(radius, clockwise=clockwise)
    tracker = RouteTracker(route, lookahead_m=LOOKAHEAD_M)
    sign = -1.0 if clockwise else 1.0
    for k in (0, 100, 400):  # anywhere on the circle, heading along it
        tracker.reset()  # a jump: search the whole route
        x, y = route.xy[k]
        command = tracker.command(float(x), float(y), float(route.yaw[k]))
        assert command.curvature == pytest.approx(sign / radius, rel=1e-3)
        assert command.route_index == k


def test_the_curvature_is_clamped() -> None:
    tight = circle(2.0)
    command = RouteTracker(tight, lookahead_m=1.0).command(2.0, 0.0, 0.5 * math.pi)
    assert command.curvature == MAX_CURVATURE
    clockwise = circle(2.0, clockwise=True)
    command = RouteTracker(clockwise, lookahead_m=1.0).command(2.0, 0.0, -0.5 * math.pi)
    assert command.curvature == -MAX_CURVATURE


def test_the_tracker_keeps_its_progress_along_side_by_side_runs() -> None:
    route = acre_loop()
    tracker = RouteTracker(route, lookahead_m=LOOKAHEAD_M)
    x_run = float(route.xy[0][0])
    first = tracker.command(x_run, 40.0, 0.5 * math.pi)
    assert first.route_index == route.index_at(first.s_m)
    assert first.s_m == pytest.approx(90.0, abs=1.0)  # 90 m up the first run
    # Halfway between the first run and the second (12 m east): the progress keeps it on the first.
    between = tracker.command(x_run + 5.9, 41.0, 0.5 * math.pi)
    assert between.s_m == pytest.approx(91.0, abs=1.0)
    assert between.curvature > 0.0
    tracker.reset()
    assert tracker.command(x_run, 40.0, 0.5 * math.pi).s_m == pytest.approx(90.0, abs=1.0)


@pytest.mark.parametrize(
    ("lookahead", "limit"), [(0.0, 0.2), (-1.0, 0.2), (math.nan, 0.2), (6.0, 0.0), (6.0, math.inf)]
)
def test_the_tracker_refuses_bad_settings(lookahead: float, limit: float) -> None:
    with pytest.raises(ValueError, match="must be a finite number above 0"):
        RouteTracker(acre_loop(), lookahead_m=lookahead, max_curvature=limit)


def test_the_route_origin_in_utm_is_the_world_origin_plus_the_first_point() -> None:
    meta = SensorMeta(
        agent=0, vehicle="polaris", utm_epsg=32616, world_origin_utm=(500400.0, 4479900.0, 181.5), sensors=()
    )
    georef = georeference(meta)
    route = acre_loop()
    x0, y0 = route.xy[0]
    assert route_origin_utm(route, georef) == pytest.approx((500400.0 + x0, 4479900.0 + y0, 181.5))
    # and the world position of a utm point is the utm position minus the origin
    assert georef.utm_to_world(500410.0, 4479880.0, 181.5) == pytest.approx((10.0, -20.0, 0.0))
