"""World <-> UTM 16N <-> WGS 84 on the ACRE tile."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyproj
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acres_bridge.errors import ParameterError
from acres_bridge.geo.georef import ACRE_GEOREFERENCE, Georeference

G = ACRE_GEOREFERENCE
metres = st.floats(min_value=-2000.0, max_value=2000.0)


def test_origin_is_at_acre() -> None:
    lat, lon, h = G.world_to_geodetic(0.0, 0.0, 0.0)
    # The ACRE farm, north-west of West Lafayette, Indiana, just east of the zone's central meridian.
    assert 40.45 < lat < 40.50
    assert -87.0 < lon < -86.98
    assert math.isclose(lat, 40.46977697128209, abs_tol=1e-9)
    assert math.isclose(lon, -86.9952814536632, abs_tol=1e-9)
    assert h == 181.5


def test_spec_odometry_lies_on_the_tile() -> None:
    x, y, z = G.utm_to_world(500438.12220755406, 4479963.951710937, 181.76825509173662)
    assert math.hypot(x, y) < 100.0
    assert abs(z) < 1.0


def test_central_meridian_is_at_false_easting() -> None:
    e, _, _ = G.geodetic_to_utm(40.47, -87.0, 0.0)
    assert math.isclose(e, 500000.0, abs_tol=1e-6)


@pytest.mark.parametrize(("x", "y"), [(0.0, 0.0), (38.12, 63.95), (-450.0, 300.0), (1000.0, -1000.0)])
def test_agrees_with_an_independent_pyproj_definition(x: float, y: float) -> None:
    proj = pyproj.Transformer.from_crs(
        "+proj=utm +zone=16 +datum=WGS84 +units=m", "EPSG:4326", always_xy=True
    )
    lon, lat = proj.transform(500400.0 + x, 4479900.0 + y)
    glat, glon, _ = G.world_to_geodetic(x, y, 0.0)
    assert math.isclose(glat, lat, abs_tol=1e-10)
    assert math.isclose(glon, lon, abs_tol=1e-10)


@given(metres, metres, st.floats(min_value=-50.0, max_value=50.0))
def test_round_trip_through_geodetic(x: float, y: float, z: float) -> None:
    lat, lon, h = G.world_to_geodetic(x, y, z)
    back = G.utm_to_world(*G.geodetic_to_utm(lat, lon, h))
    np.testing.assert_allclose(back, (x, y, z), atol=1e-6)


def test_arrays_in_arrays_out() -> None:
    rng = np.random.default_rng(1)
    x, y, z = rng.uniform(-500, 500, 100), rng.uniform(-500, 500, 100), rng.uniform(-5, 5, 100)
    e, n, h = G.world_to_utm(x, y, z)
    assert isinstance(e, np.ndarray)
    np.testing.assert_array_equal(e, x + 500400.0)
    np.testing.assert_array_equal(n, y + 4479900.0)
    np.testing.assert_array_equal(h, z + 181.5)
    lat, lon, hh = G.utm_to_geodetic(e, n, h)
    assert lat.shape == (100,)
    np.testing.assert_allclose(G.utm_to_world(*G.geodetic_to_utm(lat, lon, hh)), (x, y, z), atol=1e-6)
    # The same values one at a time.
    assert math.isclose(
        G.utm_to_geodetic(float(e[7]), float(n[7]), float(h[7]))[0], float(lat[7]), abs_tol=1e-12
    )


def test_grid_convergence_matches_the_direction_of_true_north() -> None:
    lat, lon, _ = G.world_to_geodetic(0.0, 0.0, 0.0)
    e0, n0, _ = G.geodetic_to_utm(lat, lon, 0.0)
    e1, n1, _ = G.geodetic_to_utm(lat + 1e-4, lon, 0.0)
    true_north_in_grid = math.atan2(n1 - n0, e1 - e0) - math.pi / 2
    gamma = G.grid_convergence_rad()
    assert gamma > 0.0  # east of the central meridian in the northern hemisphere
    assert math.isclose(gamma, true_north_in_grid, abs_tol=1e-8)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"origin_easting": math.nan}, "origin_easting"),
        ({"origin_height": math.inf}, "origin_height"),
        ({"utm_epsg": 4326}, "utm_epsg"),
    ],
)
def test_rejects_bad_origins(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"origin_easting": 500400.0, "origin_northing": 4479900.0, "origin_height": 181.5}
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match):
        Georeference(**args)
