"""Quaternions, rpy and body-frame rotation; the scalar helpers beside them."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from acres_bridge.geo.rotation import (
    quaternion_from_rpy,
    rpy_from_quaternion,
    world_to_body,
    wrap_angle,
    yaw_from_quaternion,
)
from acres_bridge.geo.scalar import toward

angles = st.floats(min_value=-math.pi, max_value=math.pi)
pitches = st.floats(min_value=-1.5, max_value=1.5)
components = st.floats(min_value=-100.0, max_value=100.0)


def _matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


@given(angles, pitches, angles)
def test_rpy_round_trip(roll: float, pitch: float, yaw: float) -> None:
    q = quaternion_from_rpy(roll, pitch, yaw)
    assert math.isclose(math.fsum(c * c for c in q), 1.0, rel_tol=1e-12)
    r, p, y = rpy_from_quaternion(q)
    assert abs(wrap_angle(r - roll)) < 1e-9
    assert abs(p - pitch) < 1e-9
    assert abs(wrap_angle(y - yaw)) < 1e-9


@given(angles, pitches, angles, st.tuples(components, components, components))
def test_world_to_body_is_the_transpose(
    roll: float, pitch: float, yaw: float, v: tuple[float, float, float]
) -> None:
    expected = _matrix(quaternion_from_rpy(roll, pitch, yaw)).T @ np.array(v)
    np.testing.assert_allclose(world_to_body(roll, pitch, yaw, v), expected, atol=1e-9)


def test_yaw_is_counter_clockwise() -> None:
    # Heading grid north: the body x axis is world y.
    q = quaternion_from_rpy(0.0, 0.0, math.pi / 2)
    np.testing.assert_allclose(_matrix(q) @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-15)
    assert math.isclose(yaw_from_quaternion(q), math.pi / 2)


def test_wrap_angle() -> None:
    assert math.isclose(wrap_angle(3 * math.pi / 2), -math.pi / 2)
    assert math.isclose(wrap_angle(-5 * math.pi / 2), -math.pi / 2)
    assert wrap_angle(0.25) == 0.25


def test_toward_moves_by_at_most_the_step() -> None:
    assert toward(1.0, 5.0, 0.5) == 1.5
    assert toward(1.0, -5.0, 0.5) == 0.5
    assert toward(1.0, 1.2, 0.5) == 1.2  # within one step: the target itself
    assert toward(1.0, 5.0, 0.0) == 1.0
    assert toward(1.0, 5.0, math.inf) == 5.0


@given(components, components, st.floats(min_value=0.0, max_value=10.0))
def test_toward_is_the_clamped_step(value: float, target: float, max_step: float) -> None:
    moved = toward(value, target, max_step)
    assert moved == value + min(max(target - value, -max_step), max_step)
    assert abs(moved - value) <= max_step + 1e-12  # the rounding of the sums only
