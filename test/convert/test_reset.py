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
