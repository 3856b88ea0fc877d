"""A /sim/reset pose in utm becomes the simulator's AGENT_RESET, or is refused naming the field."""

from __future__ import annotations

import math

import pytest
import samples

from acres_bridge.convert.reset import reset_in_world
from acres_bridge.errors import CommandRefusedError

ORIGIN = (500400.0, 4479900.0, 181.5)


def test_the_position_is_taken_from_the_tile_centre_and_the_yaw_carries_over() -> None:
    reset = reset_in_world(samples.reset_pose(500438.1, 4479970.0, math.pi / 2), ORIGIN, agent=2)
    assert (reset.agent, reset.x_m, reset.y_m) == (2, pytest.approx(38.1), pytest.approx(70.0))
    assert reset.yaw_rad == pytest.approx(math.pi / 2)


def test_an_unnormalised_quaternion_gives_the_same_yaw() -> None:
    message = samples.reset_pose(ORIGIN[0], ORIGIN[1], 0.7)
    q = message.pose.orientation
    q.z, q.w = 3.0 * q.z, 3.0 * q.w
    assert reset_in_world(message, ORIGIN, agent=0).yaw_rad == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("x", math.nan, "NaN or infinite"),
        ("y", math.inf, "NaN or infinite"),
        ("w", math.nan, "NaN or infinite"),
        ("zero", 0.0, "not a rotation"),
    ],
)
def test_a_pose_that_is_no_pose_is_refused(field: str, value: float, match: str) -> None:
    message = samples.reset_pose(ORIGIN[0], ORIGIN[1], 0.0)
    if field == "x":
        message.pose.position.x = value
    elif field == "y":
        message.pose.position.y = value
    elif field == "w":
        message.pose.orientation.w = value
    else:
        message.pose.orientation.z = message.pose.orientation.w = 0.0
    with pytest.raises(CommandRefusedError, match=match):
        reset_in_world(message, ORIGIN, agent=0)


@pytest.mark.parametrize(
    ("east", "north"),
    [(1_000_000.0, 0.0), (0.0, -1e9), (1000.5, 0.0), (-3000.0, 2000.0)],
    ids=["1000-km-east", "1e9-south", "just-beyond", "both"],
)
def test_a_pose_off_the_tile_is_refused(east: float, north: float) -> None:
    # 1000 km east put the vehicle off the ground; at 1e9 m its INS latitude became inf and
    # /vehicle/odom stopped until the next reset.
    message = samples.reset_pose(ORIGIN[0] + east, ORIGIN[1] + north, 0.0)
    with pytest.raises(CommandRefusedError, match="a reset must stay within 1000 m of it in each direction"):
        reset_in_world(message, ORIGIN, agent=0)


def test_a_pose_at_the_edge_of_the_reach_is_taken() -> None:
    reset = reset_in_world(samples.reset_pose(ORIGIN[0] - 1000.0, ORIGIN[1] + 1000.0, 0.0), ORIGIN, agent=0)
    assert (reset.x_m, reset.y_m) == (-1000.0, 1000.0)
