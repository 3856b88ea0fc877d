"""Vehicle parameters and sensor mounts."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from acres_sim.errors import ParamsError
from acres_sim.vehicles.params import MAXXUM, POLARIS, MaxxumParams, PolarisParams


def _rotate(q: tuple[float, float, float, float], v: tuple[float, float, float]) -> np.ndarray:
    x, y, z, w = q
    u = np.array([x, y, z])
    vv = np.array(v)
    return vv + 2.0 * np.cross(u, np.cross(u, vv) + w * vv)


def test_polaris_steering() -> None:
    assert POLARIS.wheelbase_m == pytest.approx(2.06)
    assert POLARIS.max_steer_rad == pytest.approx(0.61)
    # The steering-wheel limit maps onto the road-wheel limit.
    assert POLARIS.steering_wheel_deg(POLARIS.max_steer_rad) == pytest.approx(487.0)
    assert POLARIS.road_wheel_rad(487.0) == pytest.approx(0.61)
    assert POLARIS.steering_ratio == pytest.approx(487.0 / math.degrees(0.61))
    assert POLARIS.max_steer_rate_radps == pytest.approx(math.radians(1000.0) / POLARIS.steering_ratio)
    assert POLARIS.max_speed_mps == pytest.approx(18.0)


def test_polaris_rate_limit_follows_the_steering_wheel() -> None:
    slower = dataclasses.replace(POLARIS, steering_wheel_rate_max_degps=500.0)
    assert slower.max_steer_rate_radps == pytest.approx(POLARIS.max_steer_rate_radps / 2)


def test_polaris_mounts() -> None:
    assert POLARIS.mount("reolink_camera").translation == (2.745, 0.606, 1.887)
    assert POLARIS.mount("lidar").translation == (1.2, 0.0, 1.95)
    imu = POLARIS.mount("imu_link")
    assert imu.translation == (0.0, 0.0, 0.9)
    # The OxTS axes: x left, y forward, z down.
    np.testing.assert_allclose(_rotate(imu.rotation, (1.0, 0.0, 0.0)), (0.0, 1.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(_rotate(imu.rotation, (0.0, 1.0, 0.0)), (1.0, 0.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(_rotate(imu.rotation, (0.0, 0.0, 1.0)), (0.0, 0.0, -1.0), atol=1e-15)
    optical = POLARIS.mount("reolink_camera_optical")
    assert optical.parent == "reolink_camera"
    # z forward, x right, y down.
    np.testing.assert_allclose(_rotate(optical.rotation, (0.0, 0.0, 1.0)), (1.0, 0.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(_rotate(optical.rotation, (1.0, 0.0, 0.0)), (0.0, -1.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(_rotate(optical.rotation, (0.0, 1.0, 0.0)), (0.0, 0.0, -1.0), atol=1e-15)
    with pytest.raises(KeyError, match="gnss_link"):
        POLARIS.mount("gnss_link")


def test_maxxum() -> None:
    assert MAXXUM.vehicle == "maxxum"
    assert MAXXUM.wheelbase_m == pytest.approx(2.9)
    assert MAXXUM.max_speed_mps == pytest.approx(11.0)
    assert MAXXUM.max_steer_rad == pytest.approx(0.7)
    assert MAXXUM.tyre_radius_rear_m > POLARIS.tyre_radius_rear_m
    assert {m.frame for m in MAXXUM.mounts} >= {"lidar", "camera", "camera_optical", "imu_link", "gnss_link"}


@pytest.mark.parametrize(
    ("cls", "kwargs", "match"),
    [
        (PolarisParams, {"wheelbase_m": 0.0}, "wheelbase_m"),
        (PolarisParams, {"max_steer_rad": 1.6}, "max_steer_rad"),
        (PolarisParams, {"steering_wheel_rate_max_degps": math.nan}, "steering_wheel_rate_max_degps"),
        (MaxxumParams, {"max_speed_mps": -1.0}, "max_speed_mps"),
        (MaxxumParams, {"max_reverse_speed_mps": -1.0}, "max_reverse_speed_mps"),
        (MaxxumParams, {"mounts": (MAXXUM.mounts[0], MAXXUM.mounts[0])}, "unique"),
    ],
)
def test_rejects_bad_params(cls: type, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        cls(**kwargs)
