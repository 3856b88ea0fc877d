"""The V03ACRE tile's scene and the vehicles' bodies in it.

``acre_scene()`` is the tile as the sensors see it: rolling ground, a farmstead of boxes standing
on it, crop rows beside the route; ``flat_scene()`` is flat ground alone. ``vehicle_box()`` is a
vehicle's body as a box, for the other agents' sensors.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Final

from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.sensors.scene import BGR, Box, CropField, FlatGround, Ground, HeightField, Scene, Surface
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import VehicleParams

__all__ = ["ACRE_TERRAIN_SEED", "ROUTE_CLEARANCE_M", "acre_scene", "flat_scene", "vehicle_box"]

ACRE_TERRAIN_SEED: Final = 3  # the V03ACRE tile's ground
ROUTE_CLEARANCE_M: Final = 3.0  # the least distance of a building or a crop row from the route

# The V03ACRE tile. The route (acres_sim.world.route.acre_loop) spans x -18..18 m and y -56..56 m; the
# Maxxums park east of it at y = 0 from x = 30 m. Crop rows run north-south: three strips between the
# runs, a field west of the loop and one north of it; the farmstead lies east and north-west.
_FARMSTEAD: Final[tuple[tuple[float, float, float, float, float, float, BGR], ...]] = (
    # x, y, length, width, height (m), yaw (rad), colour (B, G, R)
    (62.0, 42.0, 36.0, 18.0, 7.5, 0.0, (175, 170, 170)),  # machine shed, grey sheet metal
    (-58.0, 82.0, 24.0, 14.0, 9.0, 0.2, (30, 40, 140)),  # barn, red
    (78.0, -38.0, 14.0, 10.0, 6.5, -0.3, (215, 225, 230)),  # house, white
    (46.0, 78.0, 8.0, 8.0, 12.0, 0.0, (205, 200, 200)),  # grain bin
    (56.0, 78.0, 8.0, 8.0, 12.0, 0.0, (205, 200, 200)),  # grain bin
    (-40.0, -82.0, 10.0, 8.0, 4.0, 0.5, (60, 90, 120)),  # tool shed, brown
)
_NORTH: Final = 0.5 * math.pi
_ACRE_CROP: Final = (
    *(CropField(x=xc + 3 * 0.76, y=-44.0, yaw=_NORTH, length_m=88.0, rows=7) for xc in (-12.0, 0.0, 12.0)),
    CropField(x=-25.0, y=-60.0, yaw=_NORTH, length_m=120.0, rows=100),
    CropField(x=30.0, y=64.0, yaw=_NORTH, length_m=46.0, rows=80),
)

# Vehicle bodies: the height per vehicle (m), its colour, and the default for another vehicle.
_BODY_HEIGHT_M: Final = {Vehicle.POLARIS: 1.9, Vehicle.MAXXUM: 2.95}
_BODY_COLOR: Final[dict[str, BGR]] = {Vehicle.POLARIS: (40, 190, 230), Vehicle.MAXXUM: (30, 30, 190)}
_DEFAULT_BODY_HEIGHT_M: Final = 2.0
_DEFAULT_BODY_COLOR: Final[BGR] = (90, 90, 90)
_OVERHANG_M: Final = 0.2  # body beyond each tyre, front and rear
_TYRE_WIDTH_M: Final = 0.3  # body width = track + one tyre width


def _building(terrain: Ground, spec: tuple[float, float, float, float, float, float, BGR]) -> Box:
    """A farmstead building: ``height`` above the highest ground under it, its base 0.1 m below the
    lowest. ``spec``: x, y, length, width, height (m), yaw (rad), colour."""
    x, y, lx, ly, lz, yaw, colour = spec
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [
        (x + c * a - s * b, y + s * a + c * b) for a in (-0.5 * lx, 0.5 * lx) for b in (-0.5 * ly, 0.5 * ly)
    ]
    heights = [terrain(cx, cy) for cx, cy in [*corners, (x, y)]]
    base = min(heights) - 0.1
    full = max(heights) - base + lz
    return Box(x=x, y=y, z=base + 0.5 * full, lx=lx, ly=ly, lz=full, yaw=yaw, color=colour)


@cache
def acre_scene() -> Scene:
    """The default scene of the V03ACRE tile: rolling ground, a farmstead, crop beside the route.

    The same object on every call (it is immutable). No building or crop row lies within
    ``ROUTE_CLEARANCE_M`` of the route (acres_sim.world.route.acre_loop) or on the Maxxums' parking row.
    """
    terrain = HeightField.generate(seed=ACRE_TERRAIN_SEED)
    buildings = tuple(_building(terrain, spec) for spec in _FARMSTEAD)
    return Scene(terrain=terrain, buildings=buildings, crop=_ACRE_CROP)


def flat_scene() -> Scene:
    """Flat ground at z = 0 and nothing else."""
    return Scene(terrain=FlatGround(0.0))


def vehicle_box(params: VehicleParams, state: VehicleState) -> Box:
    """The body of a vehicle in ``state`` as a box standing on the ground under base_footprint.

    Length: wheelbase plus a tyre radius and 0.2 m beyond each axle; width: track plus 0.3 m; height:
    1.9 m (Polaris), 2.95 m (Maxxum cab roof), 2 m otherwise. Roll and pitch are neglected (the box
    only turns about z).
    """
    rear = params.tyre_radius_rear_m + _OVERHANG_M
    front = params.wheelbase_m + params.tyre_radius_front_m + _OVERHANG_M
    height = _BODY_HEIGHT_M.get(params.vehicle, _DEFAULT_BODY_HEIGHT_M)
    ahead = 0.5 * (front - rear)
    c, s = math.cos(state.yaw), math.sin(state.yaw)
    return Box(
        x=state.x + c * ahead,
        y=state.y + s * ahead,
        z=state.z + 0.5 * height,
        lx=front + rear,
        ly=params.track_m + _TYRE_WIDTH_M,
        lz=height,
        yaw=state.yaw,
        surface=Surface.VEHICLE,
        color=_BODY_COLOR.get(params.vehicle, _DEFAULT_BODY_COLOR),
    )
