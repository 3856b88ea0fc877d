"""The state of the farm: crop and soil per grid cell over the crop fields, changed by the agents.

``Farm`` covers each crop field of the scene (acres_sim.scene.CropField) with a grid of square
cells (``FarmParams.cell_m``, 0.1 m) aligned with the world axes. A cell is farmland when its
centre lies on the field's rectangle; it holds crop (the row's height where its centre lies on a
row, else 0) and soil (bulk density of the top layer and the deepest rut). Outside the fields (the
tracks, the farmyard) there is no farm: nothing there makes a contact.

Each physics step, ``Farm.step`` takes every agent's pose, acceleration and implement and returns
the contacts (one per tyre, body or implement that touches farmland) and the changes of the crop
and the soil, as arrays. The models, simple and documented (values assumed for a tilled silt loam
and the tile's maize):

Tyre loads
    The static weight split between the axles (``front_load_share``), shifted to the rear by
    m a h / L when accelerating and to the outer side by m a_y h / track in a turn (h the centre of
    gravity's height); a mounted implement's weight rests on the rear axle.
Contact patches
    Each tyre's patch is a rectangle of the tyre's width and the length that carries the static load
    at the tyre's ground pressure (``ContactParams.tyre_pressure_pa``), under the axle, turned with
    the vehicle (the steering angle is neglected). It is sampled at half a cell. The mean ground
    pressure is the actual load over that area, so it rises with the load.
Compaction and ruts
    A load compacts the soil of the top ``layer_depth_m`` towards
    rho(p) = rho_loose + (rho_max - rho_loose) (1 - exp(-p / p_c)), where p_c (200 kPa at 25 % soil
    water) falls by 3 % per percent of water above it (wet soil compacts more), within 0.4 .. 1.6 of
    it; a cell never loosens by a load. The layer's mass stays: the rut below the undisturbed
    surface is layer_depth (1 - rho_loose / rho). The soil's deformation work, p/2 times the rut's
    deepening times the cell area, is the tyre's rolling loss in the soil (acres_sim.energy).
Crop
    A tyre flattens the crop under it to ``flattened_crop_height_m``; the body flattens crop taller
    than its ground clearance, under its whole footprint (acres_sim.scene.vehicle_box). A crop
    cell is flattened once: crop at or below that height is not flattened again.
Implements
    A tillage implement in the ground (``ImplementAction.tills``) loosens the soil under its
    footprint to ``loose_density``, levels the ruts and removes the crop; a mower (``cuts``) cuts
    the crop to ``stubble_height_m``.
Rain
    ``Farm.wet`` turns a rise of the soil water (acres_sim.weather) into one SOIL_WETTED event per
    field for each ``wetting_threshold_pct`` it rises (the soil water is uniform over the farm).

Events, one per changed cell (``RUT_FORMED`` only when a rut first reaches ``rut_threshold_m``;
``SOIL_COMPACTED`` when the density rises by at least ``compaction_threshold_kg_per_m3``), carry the
value before and after in the unit of ``EVENT_UNITS``. ``Farm.reset`` restores the farm of the
start (a new episode). Everything is vectorised over the sample points of all agents; a step with
no agent near a field returns at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import Final, TypeVar

import numpy as np
from numpy.typing import NDArray

from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.errors import ParamsError
from acres_sim.kinematics import STANDARD_GRAVITY, VehicleState
from acres_sim.scene import CropField, vehicle_box
from acres_sim.vehicles import VehicleParams

__all__ = [
    "EVENT_UNITS",
    "IMPLEMENT_FOOTPRINTS",
    "MAXXUM_CONTACT",
    "POLARIS_CONTACT",
    "ContactParams",
    "EventKind",
    "Events",
    "Farm",
    "FarmAgent",
    "FarmParams",
    "FarmStep",
    "Heights",
    "ImplementAction",
    "ImplementFootprint",
    "Part",
    "Stamps",
    "contact_params",
]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

Heights = Callable[[F64, F64], NDArray[np.floating]]
"""The ground heights (m) at world positions (x, y), vectorised (e.g. HeightField.heights)."""


class Part(IntEnum):
    """What touches the farm: the PART_* values of the FarmStamp message."""

    FRONT_LEFT_TYRE = 0
    FRONT_RIGHT_TYRE = 1
    REAR_LEFT_TYRE = 2
    REAR_RIGHT_TYRE = 3
    BODY = 4
    IMPLEMENT = 5


class EventKind(IntEnum):
    """What changed: the KIND_* values of the FarmEvent message."""

    CROP_FLATTENED = 0
    CROP_CUT = 1
    SOIL_COMPACTED = 2
    SOIL_TILLED = 3
    RUT_FORMED = 4
    SOIL_WETTED = 5


EVENT_UNITS: Final = {
    EventKind.CROP_FLATTENED: "m",
    EventKind.CROP_CUT: "m",
    EventKind.SOIL_COMPACTED: "kg/m^3",
    EventKind.SOIL_TILLED: "kg/m^3",
    EventKind.RUT_FORMED: "m",
    EventKind.SOIL_WETTED: "%",
}
"""The unit of value_before and value_after of each kind of event."""

_TYRES: Final = 4


def _check(obj: object, *, positive: Sequence[str] = (), fraction: Sequence[str] = ()) -> None:
    """Refuse a field of ``obj`` that is not finite and > 0 (``positive``) or not in (0, 1) (``fraction``)."""
    owner = type(obj).__name__
    for name in positive:
        value = getattr(obj, name)
        if not (math.isfinite(value) and value > 0.0):
            raise ParamsError(f"{owner}.{name}: expected a finite value > 0, got {value!r}")
    for name in fraction:
        value = getattr(obj, name)
        if not (math.isfinite(value) and 0.0 < value < 1.0):
            raise ParamsError(f"{owner}.{name}: expected a value between 0 and 1, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class FarmParams:
    """The grid and the soil and crop constants; the module docstring gives the models."""

    cell_m: float = 0.1
    loose_density_kg_per_m3: float = 1250.0
    max_density_kg_per_m3: float = 1650.0
    compaction_pressure_pa: float = 200_000.0
    reference_water_pct: float = 25.0
    water_sensitivity_per_pct: float = 0.03
    layer_depth_m: float = 0.3
    flattened_crop_height_m: float = 0.1
    stubble_height_m: float = 0.08
    compaction_threshold_kg_per_m3: float = 1.0
    rut_threshold_m: float = 0.02
    wetting_threshold_pct: float = 1.0

    def __post_init__(self) -> None:
        """Positive sizes, pressures and thresholds; the densities in order."""
        _check(
            self,
            positive=(
                "cell_m",
                "loose_density_kg_per_m3",
                "compaction_pressure_pa",
                "reference_water_pct",
                "layer_depth_m",
                "flattened_crop_height_m",
                "stubble_height_m",
                "compaction_threshold_kg_per_m3",
                "rut_threshold_m",
                "wetting_threshold_pct",
            ),
        )
        if not (math.isfinite(self.water_sensitivity_per_pct) and self.water_sensitivity_per_pct >= 0.0):
            raise ParamsError(
                "FarmParams.water_sensitivity_per_pct: expected a finite value >= 0, "
                f"got {self.water_sensitivity_per_pct!r}"
            )
        if not self.loose_density_kg_per_m3 < self.max_density_kg_per_m3:
            raise ParamsError(
                "FarmParams.max_density_kg_per_m3: expected more than loose_density_kg_per_m3 "
                f"({self.loose_density_kg_per_m3}), got {self.max_density_kg_per_m3!r}"
            )


@dataclass(frozen=True, kw_only=True)
class ContactParams:
    """How a vehicle meets the ground: tyre widths (m), the mean ground pressure of a tyre at the
    static load (Pa), the static front axle share of the weight, the centre of gravity's height and
    the body's ground clearance (m)."""

    front_tyre_width_m: float
    rear_tyre_width_m: float
    tyre_pressure_pa: float
    front_load_share: float
    cg_height_m: float
    ground_clearance_m: float

    def __post_init__(self) -> None:
        """Positive sizes and pressure; a front share between 0 and 1."""
        _check(
            self,
            positive=(
                "front_tyre_width_m",
                "rear_tyre_width_m",
                "tyre_pressure_pa",
                "cg_height_m",
                "ground_clearance_m",
            ),
            fraction=("front_load_share",),
        )


# Polaris Ranger XP 1000: 27x9-12 front and 27x11-12 rear tyres (0.23 and 0.28 m wide) at about
# 83 kPa (12 psi) plus the carcass's stiffness, 100 kPa on the ground; 40 % of the weight on the
# front axle; centre of gravity 0.6 m high; 0.33 m (13 in) of ground clearance.
POLARIS_CONTACT: Final = ContactParams(
    front_tyre_width_m=0.23,
    rear_tyre_width_m=0.28,
    tyre_pressure_pa=100_000.0,
    front_load_share=0.4,
    cg_height_m=0.6,
    ground_clearance_m=0.33,
)
# Maxxum: 420/85R28 front and 520/85R38 rear tyres at 160 kPa plus the carcass, 180 kPa on the
# ground; 40 % on the front axle; centre of gravity 1.1 m high; 0.5 m of ground clearance.
MAXXUM_CONTACT: Final = ContactParams(
    front_tyre_width_m=0.42,
    rear_tyre_width_m=0.52,
    tyre_pressure_pa=180_000.0,
    front_load_share=0.4,
    cg_height_m=1.1,
    ground_clearance_m=0.5,
)
_CONTACTS: Final = {Vehicle.POLARIS: POLARIS_CONTACT, Vehicle.MAXXUM: MAXXUM_CONTACT}


def contact_params(vehicle: VehicleParams) -> ContactParams:
    """The contact constants of a vehicle, by its ``vehicle`` name (polaris or maxxum)."""
    try:
        return _CONTACTS[vehicle.vehicle]
    except KeyError:
        raise ParamsError(
            f"contact_params: expected a vehicle of {sorted(str(v) for v in _CONTACTS)}, "
            f"got '{vehicle.vehicle}'"
        ) from None


@dataclass(frozen=True, kw_only=True)
class ImplementFootprint:
    """Where an implement works the ground: a rectangle ``width_m`` across and ``length_m`` along the
    vehicle, centred ``offset_m`` ahead of base_footprint (negative: behind the rear axle)."""

    width_m: float
    length_m: float
    offset_m: float

    def __post_init__(self) -> None:
        """Positive sizes, a finite offset."""
        _check(self, positive=("width_m", "length_m"))
        if not math.isfinite(self.offset_m):
            raise ParamsError(f"ImplementFootprint.offset_m: expected a finite number, got {self.offset_m!r}")


# The implements of acres_sim.implement: the chisel plow's 9 shanks 0.30 m apart (2.7 m) 1.8 m behind
# the rear axle; the disk mower's 3.0 m cutter bar 1.4 m behind it (assumed).
IMPLEMENT_FOOTPRINTS: Final = {
    "chisel_plow": ImplementFootprint(width_m=2.7, length_m=0.3, offset_m=-1.8),
    "disk_mower": ImplementFootprint(width_m=3.0, length_m=0.6, offset_m=-1.4),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ImplementAction:
    """What an implement does to the ground in one step: it works ``depth_m`` deep under its footprint,
    tilling the soil (``tills``) or cutting the crop (``cuts``)."""

    footprint: ImplementFootprint
    depth_m: float = 0.0
    tills: bool = False
    cuts: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FarmAgent:
    """One agent in one step: its state after the step, its longitudinal and lateral acceleration
    (m/s^2, body axes), its mass with what it carries (kg), the mass of a mounted implement (on the
    rear axle) and what its implement does (None: nothing)."""

    state: VehicleState
    accel_mps2: float
    lateral_accel_mps2: float
    mass_kg: float
    implement_mass_kg: float = 0.0
    implement: ImplementAction | None = None


@dataclass(frozen=True, eq=False)
class Stamps:
    """The contacts of one step, one per array element: the FarmStamp fields. ``agent`` is the agent
    index, ``part`` a ``Part`` value; positions in world m; the slip ratio is not the farm's (the
    energy model knows it)."""

    agent: I64
    part: NDArray[np.uint8]
    x: F64
    y: F64
    z: F64
    area_m2: F64
    force_n: F64
    pressure_pa: F64
    sinkage_m: F64
    crop_height_m: F64

    def __len__(self) -> int:
        return int(self.agent.size)


@dataclass(frozen=True, eq=False)
class Events:
    """The changes of one step, one per array element: the FarmEvent fields. ``agent`` is the agent
    index, -1 for the weather; ``kind`` an ``EventKind`` value (its unit in ``EVENT_UNITS``)."""

    kind: NDArray[np.uint8]
    agent: I64
    x: F64
    y: F64
    z: F64
    area_m2: F64
    before: F64
    after: F64

    def __len__(self) -> int:
        return int(self.kind.size)


@dataclass(frozen=True, eq=False)
class FarmStep:
    """What one step did to the farm: the contacts, the changes and each agent's soil deformation
    work in J (by agent index)."""

    stamps: Stamps
    events: Events
    soil_work_j: tuple[float, ...]

    @classmethod
    def nothing(cls, agents: int) -> FarmStep:
        """The step of ``agents`` agents that touch no farmland."""
        return cls(stamps=_NO_STAMPS, events=_NO_EVENTS, soil_work_j=(0.0,) * agents)


def _empty_f64() -> F64:
    return np.zeros(0, dtype=np.float64)


def _no_stamps() -> Stamps:
    return Stamps(
        agent=np.zeros(0, dtype=np.int64),
        part=np.zeros(0, dtype=np.uint8),
        x=_empty_f64(),
        y=_empty_f64(),
        z=_empty_f64(),
        area_m2=_empty_f64(),
        force_n=_empty_f64(),
        pressure_pa=_empty_f64(),
        sinkage_m=_empty_f64(),
        crop_height_m=_empty_f64(),
    )


def _no_events() -> Events:
    return Events(
        kind=np.zeros(0, dtype=np.uint8),
        agent=np.zeros(0, dtype=np.int64),
        x=_empty_f64(),
        y=_empty_f64(),
        z=_empty_f64(),
        area_m2=_empty_f64(),
        before=_empty_f64(),
        after=_empty_f64(),
    )


def _rectangle(length: float, width: float, spacing: float, centre_x: float, centre_y: float) -> F64:
    """Sample points (K, 2) covering a rectangle (length along x, width along y) at most ``spacing``
    apart, edges included."""
    nx = max(2, math.ceil(length / spacing) + 1)
    ny = max(2, math.ceil(width / spacing) + 1)
    xs = np.linspace(centre_x - 0.5 * length, centre_x + 0.5 * length, nx)
    ys = np.linspace(centre_y - 0.5 * width, centre_y + 0.5 * width, ny)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    return np.stack((gx.ravel(), gy.ravel()), axis=1)


@dataclass(frozen=True, eq=False)
class _Geometry:
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


@dataclass(frozen=True, eq=False)
class _Grid:
    """One field's cells: centres at (x0 + (i + 0.5) cell, y0 + (j + 0.5) cell), i < nx, j < ny,
    at global indices offset + j nx + i."""

    x0: float
    y0: float
    nx: int
    ny: int
    offset: int
    bounds: tuple[float, float, float, float]  # x_min, y_min, x_max, y_max


def _geometry(vehicle: VehicleParams, contact: ContactParams, spacing: float) -> _Geometry:
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
        patch = _rectangle(length, widths[axle], 0.5 * spacing, x, y)
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
    body = _rectangle(box.lx, box.ly, spacing, box.x, box.y)
    reach = float(np.max(np.hypot(body[:, 0], body[:, 1])))
    for footprint in IMPLEMENT_FOOTPRINTS.values():
        corner = math.hypot(abs(footprint.offset_m) + 0.5 * footprint.length_m, 0.5 * footprint.width_m)
        reach = max(reach, corner)
    reach += max(widths) + spacing
    tyre_points = np.concatenate(points)
    return _Geometry(
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


@dataclass(eq=False)
class _Output:
    """What a step collects: contacts and changes, in the order they happen."""

    stamps: list[Stamps] = field(default_factory=list)
    events: list[_CellEvents] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class _CellEvents:
    """Changes of one kind by one agent, by global cell (positioned once per step, all together)."""

    kind: EventKind
    agent: int
    cells: I64
    before: F64
    after: F64


def _default_heights(x: F64, y: F64) -> F64:
    return np.zeros_like(x)


class Farm:
    """The crop and the soil of the crop fields, changed one physics step at a time; deterministic."""

    def __init__(
        self,
        fields: Sequence[CropField],
        vehicles: Sequence[VehicleParams],
        *,
        params: FarmParams | None = None,
        contacts: Sequence[ContactParams] | None = None,
        heights: Heights | None = None,
    ) -> None:
        """A farm of the crop ``fields`` for agents with the ``vehicles`` (by agent index).

        ``contacts`` default to each vehicle's (``contact_params``); ``heights`` (default: flat at
        z = 0) gives the z of the events' cells.
        """
        self._p = params if params is not None else FarmParams()
        if contacts is None:
            contacts = [contact_params(v) for v in vehicles]
        if len(contacts) != len(vehicles):
            raise ParamsError(
                f"Farm contacts: expected one per vehicle ({len(vehicles)}), got {len(contacts)}"
            )
        self._fields = tuple(fields)
        if not all(isinstance(f, CropField) for f in self._fields):
            raise ParamsError("Farm fields: expected CropField values")
        self._heights = heights if heights is not None else _default_heights
        cell = self._p.cell_m
        self._geometry = tuple(_geometry(v, c, cell) for v, c in zip(vehicles, contacts, strict=True))
        self._implement_points: dict[ImplementFootprint, F64] = {}
        grids: list[_Grid] = []
        offset = 0
        for f in self._fields:
            (x_min, y_min), (x_max, y_max) = f.bounds()
            nx = max(1, math.ceil((x_max - x_min) / cell))
            ny = max(1, math.ceil((y_max - y_min) / cell))
            grids.append(_Grid(x_min, y_min, nx, ny, offset, (x_min, y_min, x_max, y_max)))
            offset += nx * ny
        self._grids = tuple(grids)
        self._size = offset
        self._grid_x0 = np.array([g.x0 for g in grids], dtype=np.float64)
        self._grid_y0 = np.array([g.y0 for g in grids], dtype=np.float64)
        self._grid_nx = np.array([g.nx for g in grids], dtype=np.int64)
        self._grid_offset = np.array([g.offset for g in grids], dtype=np.int64)
        self._farmland = np.zeros(offset, dtype=np.bool_)
        self._rows = np.zeros(offset, dtype=np.bool_)
        self._ground_z = np.zeros(offset, dtype=np.float32)  # the ground height of each cell's centre
        for f, g in zip(self._fields, self._grids, strict=True):
            x, y = self._centres(g)
            sl = slice(g.offset, g.offset + g.nx * g.ny)
            self._farmland[sl] = f.contains(x, y)
            self._rows[sl] = self._farmland[sl] & _in_row(f, x, y)
            self._ground_z[sl] = self._heights(x, y)
        self._crop = np.zeros(offset, dtype=np.float64)
        self._density = np.zeros(offset, dtype=np.float64)
        self._rut = np.zeros(offset, dtype=np.float64)
        self._tilled = np.zeros(offset, dtype=np.bool_)
        self._wet_level: float | None = None
        self.reset()

    # ---- the grid ---------------------------------------------------------------------------

    def _centres(self, g: _Grid) -> tuple[F64, F64]:
        cell = self._p.cell_m
        xs = g.x0 + (np.arange(g.nx, dtype=np.float64) + 0.5) * cell
        ys = g.y0 + (np.arange(g.ny, dtype=np.float64) + 0.5) * cell
        gx, gy = np.meshgrid(xs, ys)
        return gx.ravel(), gy.ravel()

    @property
    def params(self) -> FarmParams:
        """The constants."""
        return self._p

    @property
    def fields(self) -> tuple[CropField, ...]:
        """The crop fields."""
        return self._fields

    @property
    def cells(self) -> int:
        """The number of grid cells over all fields."""
        return self._size

    def reset(self) -> None:
        """The farm of the start: standing crop, loose soil without ruts (a new episode)."""
        for f, g in zip(self._fields, self._grids, strict=True):
            sl = slice(g.offset, g.offset + g.nx * g.ny)
            self._crop[sl] = np.where(self._rows[sl], f.height_m, 0.0)
        self._density[:] = self._p.loose_density_kg_per_m3
        self._rut[:] = 0.0
        self._tilled[:] = False

    def cell_index(self, x: F64 | float, y: F64 | float) -> I64:
        """The global cell index of world points (x, y): -1 where no farmland lies."""
        xa, ya = np.broadcast_arrays(
            np.atleast_1d(np.asarray(x, dtype=np.float64)), np.atleast_1d(np.asarray(y, dtype=np.float64))
        )
        return self._cells(self._grids, xa, ya)

    def _lookup(self, values: F64, x: F64 | float, y: F64 | float) -> F64:
        index = self.cell_index(x, y)
        return np.where(index >= 0, values[np.maximum(index, 0)], np.nan)

    def crop_height_at(self, x: F64 | float, y: F64 | float) -> F64:
        """The crop height (m) of the cells at world points; NaN where no farmland lies."""
        return self._lookup(self._crop, x, y)

    def density_at(self, x: F64 | float, y: F64 | float) -> F64:
        """The soil's bulk density (kg/m^3) of the cells at world points; NaN where no farmland lies."""
        return self._lookup(self._density, x, y)

    def rut_at(self, x: F64 | float, y: F64 | float) -> F64:
        """The rut depth (m) of the cells at world points; NaN where no farmland lies."""
        return self._lookup(self._rut, x, y)

    def _cell_centres(self, index: I64) -> tuple[F64, F64, F64]:
        """World (x, y, z) of the centres of global cells."""
        grid = np.searchsorted(self._grid_offset, index, side="right") - 1
        local = index - self._grid_offset[grid]
        nx = self._grid_nx[grid]
        cell = self._p.cell_m
        x = self._grid_x0[grid] + (local % nx + 0.5) * cell
        y = self._grid_y0[grid] + (local // nx + 0.5) * cell
        return x, y, self._ground_z[index].astype(np.float64)

    # ---- the soil model ---------------------------------------------------------------------

    def compacted_density(self, pressure_pa: F64, soil_water_pct: float) -> F64:
        """The density (kg/m^3) that a ground pressure compacts loose soil to at a soil water content."""
        p = self._p
        factor = 1.0 - p.water_sensitivity_per_pct * (soil_water_pct - p.reference_water_pct)
        scale = p.compaction_pressure_pa * min(max(factor, 0.4), 1.6)
        span = p.max_density_kg_per_m3 - p.loose_density_kg_per_m3
        return p.loose_density_kg_per_m3 + span * (1.0 - np.exp(-np.maximum(pressure_pa, 0.0) / scale))

    def rut_depth(self, density: F64) -> F64:
        """The rut (m) that compacting the loose layer to ``density`` leaves (its mass stays)."""
        p = self._p
        return p.layer_depth_m * (1.0 - p.loose_density_kg_per_m3 / density)

    def tyre_loads(self, index: int, agent: FarmAgent) -> tuple[float, float, float, float]:
        """The normal force (N) on each tyre of agent ``index`` (by Part), from the static split and the
        load transfer of its accelerations; a mounted implement rests on the rear axle."""
        geometry = self._geometry[index]
        c = geometry.contact
        v = geometry.vehicle
        weight = (agent.mass_kg - agent.implement_mass_kg) * STANDARD_GRAVITY
        transfer = agent.mass_kg * agent.accel_mps2 * c.cg_height_m / v.wheelbase_m
        front = max(0.0, c.front_load_share * weight - transfer)
        rear = max(0.0, weight + agent.implement_mass_kg * STANDARD_GRAVITY - front)
        total = front + rear
        side = agent.mass_kg * agent.lateral_accel_mps2 * c.cg_height_m / v.track_m  # to the right
        shares = (front / total, rear / total) if total > 0.0 else (0.5, 0.5)
        loads: list[float] = []
        for axle, load in enumerate((front, rear)):
            shift = side * shares[axle]
            loads += [max(0.0, 0.5 * load - shift), max(0.0, 0.5 * load + shift)]
        return loads[0], loads[1], loads[2], loads[3]

    # ---- stepping ---------------------------------------------------------------------------

    def _near(self, geometry: _Geometry, state: VehicleState) -> tuple[_Grid, ...]:
        """The fields whose bounds come within reach of an agent (plain floats: it runs every step)."""
        r = geometry.reach_m
        return tuple(
            g
            for g in self._grids
            if g.bounds[0] - r <= state.x <= g.bounds[2] + r and g.bounds[1] - r <= state.y <= g.bounds[3] + r
        )

    def _cells(self, grids: Sequence[_Grid], x: F64, y: F64) -> I64:
        """The global cell of each point on farmland of these grids, -1 elsewhere (the fields are
        expected not to overlap: where they do, the later field's cell counts)."""
        out = np.full(x.shape, -1, dtype=np.int64)
        cell = self._p.cell_m
        for g in grids:
            ix = np.floor((x - g.x0) / cell).astype(np.int64)
            iy = np.floor((y - g.y0) / cell).astype(np.int64)
            inside = (ix >= 0) & (ix < g.nx) & (iy >= 0) & (iy < g.ny)
            index = np.where(inside, g.offset + iy * g.nx + ix, 0)
            inside &= self._farmland[index]
            out = np.where(inside, index, out)
        return out

    def reaches(self, states: Sequence[VehicleState]) -> bool:
        """Whether an agent in one of ``states`` (by agent index) comes near a field: only then can a
        step touch the farm (a check of plain floats, for every physics step)."""
        return any(self._near(g, state) for g, state in zip(self._geometry, states, strict=True))

    def step(self, agents: Sequence[FarmAgent], *, soil_water_pct: float) -> FarmStep:
        """Apply one physics step of every agent (by agent index) to the farm and return what it did."""
        n = len(self._geometry)
        if len(agents) != n:
            raise ParamsError(f"Farm.step agents: expected {n} (one per vehicle), got {len(agents)}")
        near = [
            (i, a, grids) for i, a in enumerate(agents) if (grids := self._near(self._geometry[i], a.state))
        ]
        if not near:
            return FarmStep.nothing(n)
        out = _Output()
        soil = [0.0] * n
        for i, a, grids in near:
            soil[i] = self._agent_step(i, a, grids, out, soil_water_pct=soil_water_pct)
        return FarmStep(
            stamps=_concat(out.stamps) if out.stamps else _NO_STAMPS,
            events=self._positioned(out.events) if out.events else _NO_EVENTS,
            soil_work_j=tuple(soil),
        )

    def _to_world(self, state: VehicleState, points: F64) -> tuple[F64, F64]:
        c, s = math.cos(state.yaw), math.sin(state.yaw)
        px, py = points[:, 0], points[:, 1]
        return state.x + c * px - s * py, state.y + s * px + c * py

    def _patch_z(self, state: VehicleState, ox: float, oy: float) -> float:
        """The world z of a point (ox, oy, 0) of base_footprint: the third row of R = Rz Ry Rx."""
        return state.z - math.sin(state.pitch) * ox + math.cos(state.pitch) * math.sin(state.roll) * oy

    def _patch_xy(self, state: VehicleState, ox: float, oy: float) -> tuple[float, float]:
        c, s = math.cos(state.yaw), math.sin(state.yaw)
        return state.x + c * ox - s * oy, state.y + s * ox + c * oy

    def _agent_step(
        self, index: int, agent: FarmAgent, grids: Sequence[_Grid], out: _Output, *, soil_water_pct: float
    ) -> float:
        """The tyres, then the body, then the implement of one agent near the fields; the soil's
        deformation work (J)."""
        geometry = self._geometry[index]
        x, y = self._to_world(agent.state, geometry.points)
        cells = self._cells(grids, x, y)
        tyres, body = cells[: geometry.tyres], cells[geometry.tyres :]
        on = tyres >= 0
        work = 0.0
        if on.any():
            work = self._tyres(
                index,
                agent,
                out,
                loads=self.tyre_loads(index, agent),
                cells=tyres[on],
                parts=geometry.tyre_part[on],
                soil_water_pct=soil_water_pct,
            )
        body = body[body >= 0]
        if body.size:
            self._body(index, agent, body, out)
        if agent.implement is not None:
            self._implement(index, agent, grids, out)
        return work

    def _tyres(
        self,
        index: int,
        agent: FarmAgent,
        out: _Output,
        *,
        loads: tuple[float, float, float, float],
        cells: I64,
        parts: I64,
        soil_water_pct: float,
    ) -> float:
        """Compact, rut and flatten under the tyres; return the soil's deformation work (J)."""
        p = self._p
        geometry = self._geometry[index]
        size = self._size
        keys = _unique(parts * size + cells)  # each (tyre, cell) once, by tyre, then cell
        part = keys // size
        cell = keys % size
        # The patches of one vehicle never share a cell (``_geometry`` checks it): one pass per cell.
        crop_before = self._crop[cell]
        areas = geometry.tyre_area_array
        pressure = (np.array(loads) / areas)[part]
        density_before = self._density[cell]
        density_after = np.maximum(density_before, self.compacted_density(pressure, soil_water_pct))
        self._density[cell] = density_after
        rut_before = self._rut[cell]
        rut_after = np.maximum(rut_before, self.rut_depth(density_after))
        self._rut[cell] = rut_after
        work = float(np.dot(pressure, rut_after - rut_before)) * 0.5 * p.cell_m * p.cell_m
        flattened = crop_before > p.flattened_crop_height_m
        self._crop[cell[flattened]] = p.flattened_crop_height_m

        compacted = density_after - density_before >= p.compaction_threshold_kg_per_m3
        if compacted.any():
            out.events.append(
                _CellEvents(
                    EventKind.SOIL_COMPACTED,
                    index,
                    cell[compacted],
                    density_before[compacted],
                    density_after[compacted],
                )
            )
        rutted = (rut_before < p.rut_threshold_m) & (rut_after >= p.rut_threshold_m)
        if rutted.any():
            out.events.append(
                _CellEvents(EventKind.RUT_FORMED, index, cell[rutted], rut_before[rutted], rut_after[rutted])
            )
        if flattened.any():
            flat = cell[flattened]
            out.events.append(
                _CellEvents(
                    EventKind.CROP_FLATTENED,
                    index,
                    flat,
                    crop_before[flattened],
                    np.full(flat.size, p.flattened_crop_height_m),
                )
            )

        # One stamp per tyre on farmland: the deepest rut and the tallest crop before, over its cells.
        starts = _run_starts(part)
        present = part[starts]
        sinkage = np.maximum.reduceat(rut_after, starts)
        crop = np.maximum.reduceat(crop_before, starts)
        state = agent.state
        xs, ys, zs = [], [], []
        for k in present.tolist():
            ox, oy = geometry.tyre_centres[k]
            px, py = self._patch_xy(state, ox, oy)
            xs.append(px)
            ys.append(py)
            zs.append(self._patch_z(state, ox, oy))
        patch_area = areas[present]
        force = np.array(loads)[present]
        out.stamps.append(
            Stamps(
                agent=np.full(present.size, index, dtype=np.int64),
                part=present.astype(np.uint8),
                x=np.array(xs),
                y=np.array(ys),
                z=np.array(zs),
                area_m2=patch_area,
                force_n=force,
                pressure_pa=force / patch_area,
                sinkage_m=sinkage,
                crop_height_m=crop,
            )
        )
        return work

    def _positioned(self, raw: Sequence[_CellEvents]) -> Events:
        """The events of the changed cells, with the cells' centres."""
        sizes = [r.cells.size for r in raw]
        cells = np.concatenate([r.cells for r in raw])
        x, y, z = self._cell_centres(cells)
        return Events(
            kind=np.repeat(np.array([int(r.kind) for r in raw], dtype=np.uint8), sizes),
            agent=np.repeat(np.array([r.agent for r in raw], dtype=np.int64), sizes),
            x=x,
            y=y,
            z=z,
            area_m2=np.full(cells.size, self._p.cell_m * self._p.cell_m),
            before=np.concatenate([r.before for r in raw]).astype(np.float64, copy=False),
            after=np.concatenate([r.after for r in raw]).astype(np.float64, copy=False),
        )

    def _body(self, index: int, agent: FarmAgent, cells: I64, out: _Output) -> None:
        """Flatten the crop taller than the body's ground clearance under its footprint."""
        p = self._p
        geometry = self._geometry[index]
        tall = self._crop[cells] > geometry.contact.ground_clearance_m
        if not tall.any():
            return
        touched = _unique(cells[tall])
        before = self._crop[touched]
        self._crop[touched] = p.flattened_crop_height_m
        out.events.append(
            _CellEvents(
                EventKind.CROP_FLATTENED,
                index,
                touched,
                before,
                np.full(touched.size, p.flattened_crop_height_m),
            )
        )
        state = agent.state
        ox, oy = geometry.body_centre
        px, py = self._patch_xy(state, ox, oy)
        out.stamps.append(
            _single_stamp(
                index,
                Part.BODY,
                (px, py, self._patch_z(state, ox, oy)),
                area=touched.size * p.cell_m * p.cell_m,
                sinkage=0.0,
                crop=float(np.max(before)),
            )
        )

    def _implement(self, index: int, agent: FarmAgent, grids: Sequence[_Grid], out: _Output) -> None:
        """Till or cut under an implement's footprint."""
        action = agent.implement
        if action is None or not (action.tills or action.cuts):
            return
        p = self._p
        footprint = action.footprint
        points = self._implement_points.get(footprint)
        if points is None:
            points = _rectangle(
                footprint.length_m, footprint.width_m, 0.5 * p.cell_m, footprint.offset_m, 0.0
            )
            self._implement_points[footprint] = points
        x, y = self._to_world(agent.state, points)
        cells = self._cells(grids, x, y)
        cells = _unique(cells[cells >= 0])
        if cells.size == 0:
            return
        crop_before = self._crop[cells]
        if action.tills:
            density_before = self._density[cells]
            changed = (~self._tilled[cells]) | (density_before > p.loose_density_kg_per_m3)
            self._density[cells] = p.loose_density_kg_per_m3
            self._rut[cells] = 0.0
            self._tilled[cells] = True
            if changed.any():
                loose = np.full(int(np.count_nonzero(changed)), p.loose_density_kg_per_m3)
                out.events.append(
                    _CellEvents(EventKind.SOIL_TILLED, index, cells[changed], density_before[changed], loose)
                )
            stubble = 0.0
        else:
            stubble = p.stubble_height_m
        cut = crop_before > stubble
        if cut.any():
            self._crop[cells[cut]] = stubble
            out.events.append(
                _CellEvents(
                    EventKind.CROP_CUT,
                    index,
                    cells[cut],
                    crop_before[cut],
                    np.full(int(np.count_nonzero(cut)), stubble),
                )
            )
        state = agent.state
        px, py = self._patch_xy(state, footprint.offset_m, 0.0)
        out.stamps.append(
            _single_stamp(
                index,
                Part.IMPLEMENT,
                (px, py, self._patch_z(state, footprint.offset_m, 0.0)),
                area=cells.size * p.cell_m * p.cell_m,
                sinkage=action.depth_m,
                crop=float(np.max(crop_before)),
            )
        )

    # ---- rain -------------------------------------------------------------------------------

    def wet(self, soil_water_pct: float) -> Events:
        """SOIL_WETTED events (one per field, agent -1) when the soil water has risen by the threshold
        since the last event; the level follows the soil water down without events. The first call
        sets the level."""
        level = self._wet_level
        if level is None or soil_water_pct < level:
            self._wet_level = soil_water_pct
            return _NO_EVENTS
        if soil_water_pct - level < self._p.wetting_threshold_pct:
            return _NO_EVENTS
        self._wet_level = soil_water_pct
        count = len(self._fields)
        cx, cy, area = [], [], []
        for g in self._grids:
            sl = slice(g.offset, g.offset + g.nx * g.ny)
            cx.append(0.5 * (g.bounds[0] + g.bounds[2]))
            cy.append(0.5 * (g.bounds[1] + g.bounds[3]))
            area.append(float(np.count_nonzero(self._farmland[sl])) * self._p.cell_m**2)
        x, y = np.array(cx), np.array(cy)
        return Events(
            kind=np.full(count, int(EventKind.SOIL_WETTED), dtype=np.uint8),
            agent=np.full(count, -1, dtype=np.int64),
            x=x,
            y=y,
            z=np.asarray(self._heights(x, y), dtype=np.float64),
            area_m2=np.array(area),
            before=np.full(count, level),
            after=np.full(count, soil_water_pct),
        )


def _run_starts(values: I64) -> I64:
    """The index of the first element of each run of equal values of a sorted array."""
    first = np.empty(values.size, dtype=np.bool_)
    first[:1] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return np.flatnonzero(first)


def _unique(values: I64) -> I64:
    """The sorted distinct values: np.unique without its fixed cost, for the few dozen of a step."""
    ordered = np.sort(values)
    return ordered[_run_starts(ordered)]


def _in_row(f: CropField, x: F64, y: F64) -> NDArray[np.bool_]:
    """Whether world points lie on one of the field's rows (across: within half a row width of a
    row's centre line; the field's rectangle is checked by the caller)."""
    c, s = math.cos(f.yaw), math.sin(f.yaw)
    u = -s * (x - f.x) + c * (y - f.y)  # across the rows, to the left of row 0
    k = np.clip(np.rint(u / f.row_spacing_m), 0, f.rows - 1)
    return np.abs(u - k * f.row_spacing_m) <= 0.5 * f.row_width_m


def _single_stamp(
    index: int, part: Part, position: tuple[float, float, float], *, area: float, sinkage: float, crop: float
) -> Stamps:
    """A contact that carries no load (the body pushing crop, an implement in the ground)."""
    x, y, z = position
    return Stamps(
        agent=np.array([index], dtype=np.int64),
        part=np.array([int(part)], dtype=np.uint8),
        x=np.array([x]),
        y=np.array([y]),
        z=np.array([z]),
        area_m2=np.array([area]),
        force_n=np.zeros(1),
        pressure_pa=np.zeros(1),
        sinkage_m=np.array([sinkage]),
        crop_height_m=np.array([crop]),
    )


_Columns = TypeVar("_Columns", Stamps, Events)


def _concat(parts: Sequence[_Columns]) -> _Columns:
    """One table of columns (Stamps or Events) from several, column by column."""
    if len(parts) == 1:
        return parts[0]
    columns = {f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(parts[0])}
    return type(parts[0])(**columns)


_NO_STAMPS: Final = _no_stamps()
_NO_EVENTS: Final = _no_events()
