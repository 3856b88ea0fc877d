"""The georeference of the simulated tile: world frame <-> UTM zone 16N <-> WGS 84 geodetic.

The ``world`` frame is ENU with its origin at the tile centre and its axes along the UTM grid
(x = grid east, y = grid north, z up), so a UTM position is the origin plus the world position and a
yaw counter-clockwise from grid east is the same number in both frames. Only the geodetic conversions
go through pyproj; its transformers are built once per CRS pair and cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Final, TypeVar, cast

import numpy as np
import pyproj
from numpy.typing import NDArray

from acres_bridge.errors import ParameterError

__all__ = ["ACRE_GEOREFERENCE", "UTM16N_EPSG", "WGS84_3D_EPSG", "Georeference"]

UTM16N_EPSG: Final = 32616
WGS84_3D_EPSG: Final = 4979

# Scalars stay scalars and arrays stay arrays through every conversion.
_F = TypeVar("_F", float, NDArray[np.float64])


@cache
def _transformer(source_epsg: int, target_epsg: int) -> pyproj.Transformer:
    """A cached pyproj transformer with (x=east/lon, y=north/lat) axis order on both sides."""
    return pyproj.Transformer.from_crs(source_epsg, target_epsg, always_xy=True)


@cache
def _proj(epsg: int) -> pyproj.Proj:
    """A cached projection object, for the grid convergence."""
    return pyproj.Proj(pyproj.CRS.from_epsg(epsg))


@dataclass(frozen=True, kw_only=True)
class Georeference:
    """Where the world frame sits on the Earth: its origin in a UTM zone and the ellipsoidal height.

    ``origin_height`` is the WGS 84 ellipsoidal height of world z = 0.
    """

    origin_easting: float
    origin_northing: float
    origin_height: float
    utm_epsg: int = UTM16N_EPSG

    def __post_init__(self) -> None:
        """Reject non-finite origins and a CRS that is not a WGS 84 UTM zone."""
        for name in ("origin_easting", "origin_northing", "origin_height"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise ParameterError(
                    f"Georeference.{name}: expected a finite number of metres, got {value!r}"
                )
        if not (32601 <= self.utm_epsg <= 32660 or 32701 <= self.utm_epsg <= 32760):
            raise ParameterError(
                f"Georeference.utm_epsg: expected a WGS 84 UTM zone (326xx/327xx), got {self.utm_epsg}"
            )

    def world_to_utm(self, x: _F, y: _F, z: _F) -> tuple[_F, _F, _F]:
        """(easting, northing, ellipsoidal height) in m of a world position."""
        return x + self.origin_easting, y + self.origin_northing, z + self.origin_height

    def utm_to_world(self, easting: _F, northing: _F, height: _F) -> tuple[_F, _F, _F]:
        """World (x, y, z) in m of a UTM position with ellipsoidal height."""
        return easting - self.origin_easting, northing - self.origin_northing, height - self.origin_height

    def utm_to_geodetic(self, easting: _F, northing: _F, height: _F) -> tuple[_F, _F, _F]:
        """(latitude deg, longitude deg, ellipsoidal height m) on WGS 84 of a UTM position."""
        lon, lat, h = _transformer(self.utm_epsg, WGS84_3D_EPSG).transform(easting, northing, height)
        return cast("_F", lat), cast("_F", lon), cast("_F", h)

    def geodetic_to_utm(self, latitude: _F, longitude: _F, height: _F) -> tuple[_F, _F, _F]:
        """(easting, northing, ellipsoidal height) in m of a WGS 84 position given in degrees."""
        e, n, h = _transformer(WGS84_3D_EPSG, self.utm_epsg).transform(longitude, latitude, height)
        return cast("_F", e), cast("_F", n), cast("_F", h)

    def world_to_geodetic(self, x: _F, y: _F, z: _F) -> tuple[_F, _F, _F]:
        """(latitude deg, longitude deg, ellipsoidal height m) of a world position."""
        return self.utm_to_geodetic(*self.world_to_utm(x, y, z))

    def grid_convergence_rad(self, x: float = 0.0, y: float = 0.0) -> float:
        """The grid convergence at a world position, in radians.

        The angle from grid north to true north, counter-clockwise positive: a heading measured
        counter-clockwise from true east is the grid yaw minus this angle. About +5e-5 rad on the tile.
        """
        lat, lon, _ = self.world_to_geodetic(x, y, 0.0)
        factors = _proj(self.utm_epsg).get_factors(lon, lat)
        return math.radians(float(factors.meridian_convergence))


# The tile at Purdue's Agronomy Center for Research and Education (ACRE), West Lafayette, Indiana.
ACRE_GEOREFERENCE: Final = Georeference(
    origin_easting=500400.0, origin_northing=4479900.0, origin_height=181.5
)
