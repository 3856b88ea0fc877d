"""The state of the farm: crop and soil per grid cell over the crop fields, changed by the agents.

``Farm`` covers each crop field of the scene (acres_sim.sensors.scene.CropField) with a grid of square
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
    deepening times the cell area, is the tyre's rolling loss in the soil (acres_sim.vehicles.energy).
Crop
    A tyre flattens the crop under it to ``flattened_crop_height_m``; the body flattens crop taller
    than its ground clearance, under its whole footprint (acres_sim.sensors.tile.vehicle_box). A crop
    cell is flattened once: crop at or below that height is not flattened again.
Implements
    A tillage implement in the ground (``ImplementAction.tills``) loosens the soil under its
    footprint to ``loose_density``, levels the ruts and removes the crop; a mower (``cuts``) cuts
    the crop to ``stubble_height_m``.
Rain
    ``Farm.wet`` turns a rise of the soil water (acres_sim.world.weather) into one SOIL_WETTED event per
    field for each ``wetting_threshold_pct`` it rises (the soil water is uniform over the farm).

Events, one per changed cell (``RUT_FORMED`` only when a rut first reaches ``rut_threshold_m``;
``SOIL_COMPACTED`` when the density rises by at least ``compaction_threshold_kg_per_m3``), carry the
value before and after in the unit of ``EVENT_UNITS``. ``Farm.reset`` restores the farm of the
start (a new episode). Everything is vectorised over the sample points of all agents; a step with
no agent near a field returns at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from acres_sim.errors import ParamsError
from acres_sim.sensors.scene import CropField
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY, VehicleState
from acres_sim.vehicles.params import VehicleParams
from acres_sim.world.farm.columns import (
    NO_EVENTS,
    NO_STAMPS,
    EventKind,
    Events,
    FarmAgent,
    FarmStep,
    Part,
    Stamps,
    concat_columns,
    single_stamp,
)
from acres_sim.world.farm.contact import ContactGeometry, contact_geometry, rectangle_points
from acres_sim.world.farm.grid import FarmGrid, FieldGrid, Heights
from acres_sim.world.farm.params import ContactParams, FarmParams, ImplementFootprint, contact_params

__all__ = ["Farm", "Heights"]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


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
        self._geometry = tuple(contact_geometry(v, c, cell) for v, c in zip(vehicles, contacts, strict=True))
        self._implement_points: dict[ImplementFootprint, F64] = {}
        self._grid = FarmGrid(self._fields, cell, self._heights)
        cells = self._grid.size
        self._crop = np.zeros(cells, dtype=np.float64)
        self._density = np.zeros(cells, dtype=np.float64)
        self._rut = np.zeros(cells, dtype=np.float64)
        self._tilled = np.zeros(cells, dtype=np.bool_)
        self._wet_level: float | None = None
        self.reset()

    # ---- the grid ---------------------------------------------------------------------------

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
        return self._grid.size

    def reset(self) -> None:
        """The farm of the start: standing crop, loose soil without ruts (a new episode)."""
        for f, g in zip(self._fields, self._grid.grids, strict=True):
            self._crop[g.cells] = np.where(self._grid.rows[g.cells], f.height_m, 0.0)
        self._density[:] = self._p.loose_density_kg_per_m3
        self._rut[:] = 0.0
        self._tilled[:] = False

    def cell_index(self, x: F64 | float, y: F64 | float) -> I64:
        """The global cell index of world points (x, y): -1 where no farmland lies."""
        return self._grid.cell_index(x, y)

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

    def _near(self, geometry: ContactGeometry, state: VehicleState) -> tuple[FieldGrid, ...]:
        """The fields within reach of an agent."""
        return self._grid.near(geometry.reach_m, state.x, state.y)

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
            stamps=concat_columns(out.stamps) if out.stamps else NO_STAMPS,
            events=self._positioned(out.events) if out.events else NO_EVENTS,
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
        self, index: int, agent: FarmAgent, grids: Sequence[FieldGrid], out: _Output, *, soil_water_pct: float
    ) -> float:
        """The tyres, then the body, then the implement of one agent near the fields; the soil's
        deformation work (J)."""
        geometry = self._geometry[index]
        x, y = self._to_world(agent.state, geometry.points)
        cells = self._grid.cells(grids, x, y)
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
        size = self._grid.size
        keys = _unique(parts * size + cells)  # each (tyre, cell) once, by tyre, then cell
        part = keys // size
        cell = keys % size
        # The patches of one vehicle never share a cell (``contact_geometry`` checks it): one pass per cell.
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
        x, y, z = self._grid.centres(cells)
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
            single_stamp(
                index,
                Part.BODY,
                (px, py, self._patch_z(state, ox, oy)),
                area=touched.size * p.cell_m * p.cell_m,
                sinkage=0.0,
                crop=float(np.max(before)),
            )
        )

    def _implement(self, index: int, agent: FarmAgent, grids: Sequence[FieldGrid], out: _Output) -> None:
        """Till or cut under an implement's footprint."""
        action = agent.implement
        if action is None or not (action.tills or action.cuts):
            return
        p = self._p
        footprint = action.footprint
        points = self._implement_points.get(footprint)
        if points is None:
            points = rectangle_points(
                footprint.length_m, footprint.width_m, 0.5 * p.cell_m, footprint.offset_m, 0.0
            )
            self._implement_points[footprint] = points
        x, y = self._to_world(agent.state, points)
        cells = self._grid.cells(grids, x, y)
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
            single_stamp(
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
            return NO_EVENTS
        if soil_water_pct - level < self._p.wetting_threshold_pct:
            return NO_EVENTS
        self._wet_level = soil_water_pct
        count = len(self._fields)
        cx, cy, area = [], [], []
        for g in self._grid.grids:
            cx.append(0.5 * (g.bounds[0] + g.bounds[2]))
            cy.append(0.5 * (g.bounds[1] + g.bounds[3]))
            area.append(self._grid.farmland_area_m2(g))
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
