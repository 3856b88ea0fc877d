"""Pure pursuit along a route, and where the route lies in utm. Pure: no node, no I/O.

The route (``acres_bridge.geo.route.Route``) is in the simulator's world frame: east, north, up with the
origin at the tile centre and the axes of the UTM grid, so a utm position is the world position
plus the session's ``world_origin_utm`` and a yaw counter-clockwise from grid east is the same
number in both frames (acres_bridge.geo.georef). Curvatures are in 1/m, positive to the left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from acres_bridge.geo.georef import Georeference
from acres_bridge.geo.route import Route, pure_pursuit_curvature
from acres_bridge.wire.messages import SensorMeta

__all__ = [
    "MAX_CURVATURE",
    "PursuitCommand",
    "RouteTracker",
    "georeference",
    "route_origin_utm",
]

# The clamp of the steering command: about the range of the Polaris's curvature commands
# (ds_dbw_msgs SteeringCmd CMD_CURVATURE, about -0.2..0.2 1/m).
MAX_CURVATURE = 0.2


@dataclass(frozen=True, slots=True)
class PursuitCommand:
    """One output of the tracker.

    ``route_index`` the route point at or before the vehicle's projection, ``s_m`` its arc length in
    m, ``cross_track_m`` the distance to the route in m, ``target`` the pursued point (world x, y),
    ``curvature`` the pure-pursuit curvature in 1/m, clamped to the tracker's limit.
    """

    route_index: int
    s_m: float
    cross_track_m: float
    target: tuple[float, float]
    curvature: float


class RouteTracker:
    """Pure pursuit of the point ``lookahead_m`` ahead, along the route, of the vehicle's projection.

    The tracker remembers the progress along the route and searches the next projection near it,
    so a vehicle stays on its own run where runs lie side by side; ``reset()`` forgets it.
    """

    def __init__(self, route: Route, *, lookahead_m: float, max_curvature: float = MAX_CURVATURE) -> None:
        if not (math.isfinite(lookahead_m) and lookahead_m > 0.0):
            raise ValueError(f"lookahead_m must be a finite number above 0, found {lookahead_m!r}")
        if not (math.isfinite(max_curvature) and max_curvature > 0.0):
            raise ValueError(f"max_curvature must be a finite number above 0, found {max_curvature!r}")
        self.route = route
        self.lookahead_m = lookahead_m
        self.max_curvature = max_curvature
        self._s: float | None = None

    def reset(self) -> None:
        """Forget the progress: the next command searches the whole route."""
        self._s = None

    def command(self, x: float, y: float, yaw: float) -> PursuitCommand:
        """The command for a vehicle at world (x, y) heading ``yaw`` (rad, counter-clockwise from east)."""
        s, cross_track = self.route.project(x, y, near=self._s)
        self._s = s
        tx, ty, _ = self.route.pose_at(s + self.lookahead_m)
        curvature = pure_pursuit_curvature(x, y, yaw, tx, ty)
        limit = self.max_curvature
        return PursuitCommand(
            route_index=self.route.index_at(s),
            s_m=s,
            cross_track_m=cross_track,
            target=(tx, ty),
            curvature=max(-limit, min(limit, curvature)),
        )


def georeference(meta: SensorMeta) -> Georeference:
    """The georeference of a session's world frame from an agent's SENSOR_META.

    Raises acres_sim.errors.ParamsError for a non-finite origin or a zone that is no UTM zone.
    """
    easting, northing, height = meta.world_origin_utm
    return Georeference(
        origin_easting=easting, origin_northing=northing, origin_height=height, utm_epsg=meta.utm_epsg
    )


def route_origin_utm(route: Route, georef: Georeference) -> tuple[float, float, float]:
    """The utm position of the route's first point, at the height of world z = 0."""
    x0, y0 = (float(v) for v in route.xy[0])
    return georef.world_to_utm(x0, y0, 0.0)
