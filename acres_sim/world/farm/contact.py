"""Each vehicle's fixed contact geometry: its tyre patches at the static load and its body footprint,
as sample points in base_footprint (acres_sim.world.farm.model places them each step)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from acres_sim.errors import ParamsError
from acres_sim.sensors.tile import vehicle_box
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY, VehicleState
from acres_sim.vehicles.params import VehicleParams
from acres_sim.world.farm.columns import Part
from acres_sim.world.farm.params import IMPLEMENT_FOOTPRINTS, ContactParams

__all__ = ["ContactGeometry", "contact_geometry", "rectangle_points"]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

_TYRES: Final = 4


def rectangle_points(length: float, width: float, spacing: float, centre_x: float, centre_y: float) -> F64:
    """Sample points (K, 2) covering a rectangle (length along x, width along y) at most ``spacing``
    apart, edges included."""
    nx = max(2, math.ceil(length / spacing) + 1)
    ny = max(2, math.ceil(width / spacing) + 1)
    xs = np.linspace(centre_x - 0.5 * length, centre_x + 0.5 * length, nx)
    ys = np.linspace(centre_y - 0.5 * width, centre_y + 0.5 * width, ny)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    return np.stack((gx.ravel(), gy.ravel()), axis=1)


@dataclass(frozen=True, eq=False)
class ContactGeometry:
    """One agent's fixed contact geometry."""

    vehicle: VehicleParams
    contact: ContactParams
    reach_m: float  # radius around base_footprint that holds every contact point
    tyre_centres: tuple[tuple[float, float], ...]  # (x, y) in base_footprint, by Part
    tyre_areas: tuple[float, ...]  # m^2, by Part
    tyre_area_array: F64
    points: F64  # (K + B, 2) in base_footprint: the tyre patches' K, then the body's B
    tyres: int  # K
    tyre_part: I64  # (K,)
    body_centre: tuple[float, float]


def contact_geometry(vehicle: VehicleParams, contact: ContactParams, spacing: float) -> ContactGeometry:
    """The tyre patches at the static load and the body footprint of a vehicle."""
    weight = vehicle.mass_kg * STANDARD_GRAVITY
    half = 0.5 * vehicle.track_m
    axle_load = (contact.front_load_share * weight, (1.0 - contact.front_load_share) * weight)
    widths = (contact.front_tyre_width_m, contact.rear_tyre_width_m)
    centres: list[tuple[float, float]] = []
    areas: list[float] = []
    points: list[F64] = []
    parts: list[I64] = []
    for part in Part:
        if part >= _TYRES:
            break
        axle = 0 if part < 2 else 1
        x = vehicle.wheelbase_m if axle == 0 else 0.0
        y = half if part in (Part.FRONT_LEFT_TYRE, Part.REAR_LEFT_TYRE) else -half
        area = 0.5 * axle_load[axle] / contact.tyre_pressure_pa
        length = area / widths[axle]
        centres.append((x, y))
        areas.append(area)
        patch = rectangle_points(length, widths[axle], 0.5 * spacing, x, y)
        points.append(patch)
        parts.append(np.full(len(patch), int(part), dtype=np.int64))
    lengths = [areas[0] / widths[0], areas[2] / widths[1]]
    gaps = (vehicle.track_m - max(widths), vehicle.wheelbase_m - 0.5 * (lengths[0] + lengths[1]))
    if min(gaps) <= math.sqrt(2.0) * spacing:
        raise ParamsError(
            f"ContactParams of {vehicle.vehicle}: the tyre patches come {min(gaps):.3f} m close; expected "
            f"more than a cell's diagonal ({math.sqrt(2.0) * spacing:.3f} m) between them"
        )
    box = vehicle_box(vehicle, VehicleState())
    body = rectangle_points(box.lx, box.ly, spacing, box.x, box.y)
    reach = float(np.max(np.hypot(body[:, 0], body[:, 1])))
    for footprint in IMPLEMENT_FOOTPRINTS.values():
        corner = math.hypot(abs(footprint.offset_m) + 0.5 * footprint.length_m, 0.5 * footprint.width_m)
        reach = max(reach, corner)
    reach += max(widths) + spacing
    tyre_points = np.concatenate(points)
    return ContactGeometry(
        vehicle=vehicle,
        contact=contact,
        reach_m=reach,
        tyre_centres=tuple(centres),
        tyre_areas=tuple(areas),
        tyre_area_array=np.array(areas),
        points=np.concatenate((tyre_points, body)),
        tyres=len(tyre_points),
        tyre_part=np.concatenate(parts),
        body_centre=(box.x, box.y),
    )
