"""The farm: tyres, bodies and implements on the crop fields; crop, compaction, ruts, rain."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pytest

from acres_bridge.geo.route import acre_loop
from acres_sim.errors import ParamsError
from acres_sim.sensors.scene import CropField
from acres_sim.sensors.tile import acre_scene
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY, VehicleState
from acres_sim.vehicles.params import MAXXUM, POLARIS
from acres_sim.world.farm import (
    EVENT_UNITS,
    IMPLEMENT_FOOTPRINTS,
    MAXXUM_CONTACT,
    POLARIS_CONTACT,
    ContactParams,
    EventKind,
    Events,
    Farm,
    FarmAgent,
    FarmParams,
    FarmStep,
    ImplementAction,
    ImplementFootprint,
    Part,
    contact_params,
)

NORTH = 0.5 * math.pi
# One row of soybeans (0.25 m: below the Polaris's 0.33 m of clearance) running north along x = 0.
SOY_ROW = CropField(x=0.0, y=-5.0, yaw=NORTH, length_m=10.0, rows=1, height_m=0.25)
# Maize: 14 rows 0.76 m apart, from x = 5.0 westwards, y = -5 .. 5.
MAIZE = CropField(x=5.0, y=-5.0, yaw=NORTH, length_m=10.0, rows=14, height_m=0.9)


def _agent(
    x: float, y: float = 0.0, yaw: float = 0.0, *, mass: float = POLARIS.mass_kg, **kw: float
) -> FarmAgent:
    return FarmAgent(
        state=VehicleState(x=x, y=y, yaw=yaw),
        accel_mps2=kw.get("accel", 0.0),
        lateral_accel_mps2=kw.get("lateral", 0.0),
        mass_kg=mass,
    )


def _drive(
    farm: Farm, points: Sequence[tuple[float, float]], *, yaw: float = 0.0, mass: float = POLARIS.mass_kg
) -> list[FarmStep]:
    """One step of agent 0 at each of ``points`` (base_footprint, world m), heading ``yaw``."""
    return [farm.step([_agent(x, y, yaw, mass=mass)], soil_water_pct=25.0) for x, y in points]


def _events(steps: Sequence[FarmStep], kind: EventKind) -> list[tuple[float, float, float, float]]:
    """(x, y, before, after) of every event of a kind."""
    found = []
    for s in steps:
        e = s.events
        mask = e.kind == kind
        found += list(
            zip(
                e.x[mask].tolist(),
                e.y[mask].tolist(),
                e.before[mask].tolist(),
                e.after[mask].tolist(),
                strict=True,
            )
        )
    return found


def _line(
    start: tuple[float, float], end: tuple[float, float], step: float = 0.02
) -> list[tuple[float, float]]:
    """Points from start to end, ``step`` m apart (2 cm: 2.4 m/s at 120 Hz)."""
    (x0, y0), (x1, y1) = start, end
    count = round(math.hypot(x1 - x0, y1 - y0) / step)
    return [(x0 + (x1 - x0) * k / count, y0 + (y1 - y0) * k / count) for k in range(count + 1)]


# Between maize rows 0 (x = 5.0) and 1 (x = 4.24) lies bare soil at x = 4.62: heading north, the
# left tyres of a Polaris with base_footprint at x = 5.28 run there (the right ones leave the field).
GAP_X = MAIZE.x - 0.5 * MAIZE.row_spacing_m
POLARIS_IN_GAP_X = GAP_X + 0.5 * POLARIS.track_m


def test_a_tyre_crossing_a_crop_row_flattens_it_once() -> None:
    farm = Farm([SOY_ROW], [POLARIS])
    steps = _drive(farm, _line((-3.0, 0.0), (3.0, 0.0)))  # east across the row: front, then rear tyres
    flattened = _events(steps, EventKind.CROP_FLATTENED)
    assert flattened
    assert {(before, after) for _, _, before, after in flattened} == {(0.25, 0.1)}
    cells = [(x, y) for x, y, _, _ in flattened]
    assert len(set(cells)) == len(cells)  # each cell once
    assert all(abs(x) <= 0.2 for x, _ in cells)  # on the row
    half_track, widest = 0.5 * POLARIS.track_m, 0.5 * POLARIS_CONTACT.rear_tyre_width_m + 0.1
    assert all(abs(abs(y) - half_track) <= widest for _, y in cells)  # in the tyre tracks
    assert {y > 0.0 for _, y in cells} == {True, False}  # both sides
    assert all(len(s.events) == 0 or set(s.events.agent.tolist()) == {0} for s in steps)
    # Back across: the crop in the tracks is already flat.
    assert _events(_drive(farm, _line((3.0, 0.0), (-3.0, 0.0))), EventKind.CROP_FLATTENED) == []
    assert farm.crop_height_at(0.0, half_track)[0] == 0.1
    assert farm.crop_height_at(0.0, 0.0)[0] == 0.25  # between the tracks it stands


def test_the_stamps_of_a_crossing_show_the_crop_before_and_the_load() -> None:
    farm = Farm([SOY_ROW], [POLARIS])
    steps = _drive(farm, _line((-3.0, 0.0), (3.0, 0.0)))
    stamps = [s.stamps for s in steps if len(s.stamps)]
    front = [st for st in stamps if Part.FRONT_LEFT_TYRE in st.part.tolist()]
    assert max(float(st.crop_height_m.max()) for st in front) == 0.25
    last = stamps[-1]
    assert set(last.part.tolist()) <= {Part.REAR_LEFT_TYRE, Part.REAR_RIGHT_TYRE}
    weight = POLARIS.mass_kg * STANDARD_GRAVITY
    rear = last.force_n[last.part == Part.REAR_LEFT_TYRE][0]
    assert rear == pytest.approx(0.5 * (1.0 - POLARIS_CONTACT.front_load_share) * weight)
    assert last.pressure_pa == pytest.approx(last.force_n / last.area_m2)
    assert np.all(last.area_m2 > 0.0)
    assert np.all(np.abs(last.x) <= 0.3)  # the patch centres lie on the row
    assert np.all(last.sinkage_m > 0.0)


def test_no_stamps_on_the_road() -> None:
    scene = acre_scene()
    farm = Farm(scene.crop, [POLARIS, MAXXUM], heights=scene.terrain.heights)
    route = acre_loop()
    for s in np.arange(0.0, route.length, 2.0):
        x, y, yaw = route.pose_at(float(s))
        step = farm.step(
            [_agent(x, y, yaw), _agent(40.0 + 0.0 * s, 0.0, NORTH, mass=MAXXUM.mass_kg)], soil_water_pct=25.0
        )
        assert len(step.stamps) == 0, (x, y)
        assert len(step.events) == 0
        assert step.soil_work_j == (0.0, 0.0)


@pytest.mark.parametrize("mass", [900.0, 1400.0])
def test_a_load_compacts_the_soil_under_the_tyre(mass: float) -> None:
    farm = Farm([MAIZE], [POLARIS])
    step = farm.step([_agent(POLARIS_IN_GAP_X, 0.0, NORTH, mass=mass)], soil_water_pct=25.0)
    rear = step.stamps.part == Part.REAR_LEFT_TYRE
    load = farm.tyre_loads(0, _agent(0.0, mass=mass))[Part.REAR_LEFT_TYRE]
    assert step.stamps.force_n[rear][0] == pytest.approx(load)
    pressure = step.stamps.pressure_pa[rear][0]
    assert pressure == pytest.approx(load / step.stamps.area_m2[rear][0])
    density = farm.density_at(GAP_X, 0.0)[0]
    assert density == pytest.approx(farm.compacted_density(np.array([pressure]), 25.0)[0])
    assert step.stamps.sinkage_m[rear][0] == pytest.approx(farm.rut_depth(np.array([density]))[0])
    assert step.stamps.crop_height_m[rear][0] == 0.0  # bare soil between the rows
    compacted = _events([step], EventKind.SOIL_COMPACTED)
    assert any(abs(x - GAP_X) <= 0.05 and abs(y) <= 0.1 for x, y, _, _ in compacted)


def test_more_load_compacts_more_and_once_compacted_soil_stays() -> None:
    track = _line((POLARIS_IN_GAP_X, -4.0), (POLARIS_IN_GAP_X, -2.0))
    densities = {}
    for mass in (900.0, 1400.0):
        farm = Farm([MAIZE], [POLARIS])
        steps = _drive(farm, track, yaw=NORTH, mass=mass)
        compacted = _events(steps, EventKind.SOIL_COMPACTED)
        assert compacted
        assert {before for _, _, before, _ in compacted} == {FarmParams().loose_density_kg_per_m3}
        densities[mass] = max(after for _, _, _, after in compacted)
        ruts = _events(steps, EventKind.RUT_FORMED)
        assert ruts
        assert all(before < 0.02 <= after for _, _, before, after in ruts)
        if mass == 1400.0:
            # A lighter vehicle in the same tracks compacts nothing more.
            again = _drive(farm, track, yaw=NORTH, mass=900.0)
            assert _events(again, EventKind.SOIL_COMPACTED) == []
            assert _events(again, EventKind.RUT_FORMED) == []
    assert densities[1400.0] > densities[900.0] > FarmParams().loose_density_kg_per_m3


def test_wet_soil_compacts_more() -> None:
    farm = Farm([MAIZE], [POLARIS])
    pressure = np.array([100_000.0])
    dry, wet = farm.compacted_density(pressure, 18.0)[0], farm.compacted_density(pressure, 35.0)[0]
    assert FarmParams().loose_density_kg_per_m3 < dry < wet < FarmParams().max_density_kg_per_m3


def test_the_soil_work_is_paid_once_per_rut() -> None:
    farm = Farm([MAIZE], [POLARIS])
    track = _line((POLARIS_IN_GAP_X, -4.0), (POLARIS_IN_GAP_X, -2.0))
    first = _drive(farm, track, yaw=NORTH)
    again = _drive(farm, track, yaw=NORTH)
    assert sum(s.soil_work_j[0] for s in first) > 0.0
    assert sum(s.soil_work_j[0] for s in again) == 0.0


def test_the_body_pushes_over_crop_taller_than_its_clearance() -> None:
    farm = Farm([MAIZE], [POLARIS])
    steps = _drive(farm, _line((-8.0, 0.0), (-6.0, 0.0)))  # east, into the maize rows
    bodies = [s.stamps for s in steps if Part.BODY in s.stamps.part.tolist()]
    assert bodies
    body = bodies[0]
    assert body.crop_height_m[body.part == Part.BODY][0] == 0.9
    assert body.force_n[body.part == Part.BODY][0] == 0.0
    flattened = _events(steps, EventKind.CROP_FLATTENED)
    assert any(abs(y) < 0.4 for _, y, _, _ in flattened)  # between the tracks: the body did it
    # A Maxxum (0.5 m clearance) over a 0.4 m crop leaves the crop between its tyres standing.
    low = dataclasses.replace(MAIZE, height_m=0.4)
    tractor = Farm([low], [MAXXUM])
    steps = _drive(tractor, _line((-8.0, 0.0), (-6.0, 0.0)), mass=MAXXUM.mass_kg)
    assert all(Part.BODY not in s.stamps.part.tolist() for s in steps)


def test_a_tillage_implement_loosens_levels_and_removes_the_crop() -> None:
    farm = Farm([MAIZE], [MAXXUM])
    # A track of the tractor's front tyres (x = 0.05 and 1.95) up to y = 3.4, then the chisel plow
    # 1.8 m behind base_footprint at (1, 3): across the track at y = 1.05 .. 1.35.
    _drive(farm, _line((1.0, -2.0), (1.0, 0.5)), yaw=NORTH, mass=MAXXUM.mass_kg)
    track = (0.05, 1.2)
    assert farm.rut_at(*track)[0] > 0.0
    plow = ImplementAction(footprint=IMPLEMENT_FOOTPRINTS["chisel_plow"], depth_m=0.2, tills=True)
    agent = dataclasses.replace(
        _agent(1.0, 3.0, NORTH, mass=MAXXUM.mass_kg + 1100.0), implement=plow, implement_mass_kg=1100.0
    )
    step = farm.step([agent], soil_water_pct=25.0)
    assert {EventKind.SOIL_TILLED, EventKind.CROP_CUT} <= set(step.events.kind.tolist())
    assert farm.rut_at(*track)[0] == 0.0
    assert farm.density_at(*track)[0] == FarmParams().loose_density_kg_per_m3
    implement = step.stamps.part == Part.IMPLEMENT
    assert step.stamps.sinkage_m[implement][0] == 0.2
    assert step.stamps.crop_height_m[implement][0] == 0.9
    cut = step.events.kind == EventKind.CROP_CUT
    assert set(step.events.after[cut].tolist()) == {0.0}
    tilled = step.events.kind == EventKind.SOIL_TILLED
    assert set(step.events.after[tilled].tolist()) == {FarmParams().loose_density_kg_per_m3}
    again = farm.step([agent], soil_water_pct=25.0)
    assert EventKind.SOIL_TILLED not in again.events.kind.tolist()  # already loose and tilled
    assert EventKind.CROP_CUT not in again.events.kind.tolist()


def test_a_mower_cuts_to_stubble() -> None:
    farm = Farm([MAIZE], [MAXXUM])
    mower = ImplementAction(footprint=IMPLEMENT_FOOTPRINTS["disk_mower"], cuts=True)
    agent = dataclasses.replace(_agent(1.0, 3.0, NORTH, mass=MAXXUM.mass_kg), implement=mower)
    step = farm.step([agent], soil_water_pct=25.0)
    cut = step.events.kind == EventKind.CROP_CUT
    assert cut.any()
    assert set(step.events.after[cut].tolist()) == {FarmParams().stubble_height_m}
    assert EventKind.SOIL_TILLED not in step.events.kind.tolist()


def test_rain_wets_each_field_once_per_threshold() -> None:
    farm = Farm([SOY_ROW, MAIZE], [POLARIS])
    assert len(farm.wet(25.0)) == 0  # sets the level
    assert len(farm.wet(25.5)) == 0
    events: Events = farm.wet(26.2)
    assert len(events) == 2
    assert set(events.kind.tolist()) == {EventKind.SOIL_WETTED}
    assert set(events.agent.tolist()) == {-1}
    assert (events.before.tolist(), events.after.tolist()) == ([25.0, 25.0], [26.2, 26.2])
    # The farmland of each grid: the field's area, to the cells along its edges.
    assert events.area_m2 == pytest.approx(
        [SOY_ROW.width_m * SOY_ROW.length_m, MAIZE.width_m * MAIZE.length_m], rel=0.15
    )
    assert len(farm.wet(24.0)) == 0  # drying: the level follows
    assert len(farm.wet(25.1)) == 1 * 2


def test_reset_restores_the_farm_of_the_start() -> None:
    farm = Farm([SOY_ROW], [POLARIS])
    _drive(farm, _line((-3.0, 0.0), (3.0, 0.0)))
    half = 0.5 * POLARIS.track_m
    assert farm.crop_height_at(0.0, half)[0] == 0.1
    farm.reset()
    assert farm.crop_height_at(0.0, half)[0] == 0.25
    assert farm.density_at(0.0, half)[0] == FarmParams().loose_density_kg_per_m3
    assert farm.rut_at(0.0, half)[0] == 0.0


def test_the_same_steps_give_the_same_farm() -> None:
    runs = []
    for _ in range(2):
        farm = Farm([SOY_ROW, MAIZE], [POLARIS])
        steps = _drive(farm, _line((-3.0, 0.0), (8.0, 0.0), 0.05))
        runs.append([(s.stamps.x.tolist(), s.events.before.tolist(), s.soil_work_j) for s in steps])
    assert runs[0] == runs[1]


def test_tyre_loads_shift_with_acceleration_and_turns() -> None:
    farm = Farm([SOY_ROW], [POLARIS])
    still = farm.tyre_loads(0, _agent(0.0))
    assert sum(still) == pytest.approx(POLARIS.mass_kg * STANDARD_GRAVITY)
    assert still[0] == pytest.approx(still[1])
    speeding = farm.tyre_loads(0, _agent(0.0, accel=2.0))
    assert speeding[Part.REAR_LEFT_TYRE] > still[Part.REAR_LEFT_TYRE]
    assert sum(speeding) == pytest.approx(sum(still))
    turning_left = farm.tyre_loads(0, _agent(0.0, lateral=3.0))
    assert turning_left[Part.FRONT_RIGHT_TYRE] > turning_left[Part.FRONT_LEFT_TYRE]
    carrying = farm.tyre_loads(
        0, dataclasses.replace(_agent(0.0, mass=POLARIS.mass_kg + 200.0), implement_mass_kg=200.0)
    )
    assert carrying[Part.FRONT_LEFT_TYRE] == pytest.approx(still[Part.FRONT_LEFT_TYRE])


def test_cells_outside_the_fields_are_no_farmland() -> None:
    farm = Farm([SOY_ROW], [POLARIS])
    assert farm.cell_index([0.0, 50.0], [0.0, 0.0]).tolist()[1] == -1
    assert farm.cell_index(0.0, 0.0)[0] >= 0
    assert math.isnan(farm.crop_height_at(50.0, 0.0)[0])
    assert farm.cells == 4 * 100


def test_every_event_kind_has_a_unit() -> None:
    assert set(EVENT_UNITS) == set(EventKind)
    assert contact_params(POLARIS) is POLARIS_CONTACT
    assert contact_params(MAXXUM) is MAXXUM_CONTACT


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"cell_m": 0.0}, "cell_m: expected a finite value > 0"),
        ({"rut_threshold_m": math.nan}, "rut_threshold_m: expected a finite value > 0"),
        ({"water_sensitivity_per_pct": -0.1}, "water_sensitivity_per_pct: expected a finite value >= 0"),
        ({"max_density_kg_per_m3": 1000.0}, "max_density_kg_per_m3: expected more than loose_density"),
    ],
)
def test_bad_farm_params_are_refused(change: dict[str, float], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        dataclasses.replace(FarmParams(), **change)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"tyre_pressure_pa": 0.0}, "tyre_pressure_pa: expected a finite value > 0"),
        ({"front_load_share": 1.0}, "front_load_share: expected a value between 0 and 1"),
    ],
)
def test_bad_contact_params_are_refused(change: dict[str, float], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        dataclasses.replace(POLARIS_CONTACT, **change)


def test_bad_footprints_and_farms_are_refused() -> None:
    with pytest.raises(ParamsError, match="width_m: expected a finite value > 0"):
        ImplementFootprint(width_m=0.0, length_m=0.3, offset_m=-1.0)
    with pytest.raises(ParamsError, match="offset_m: expected a finite number"):
        ImplementFootprint(width_m=1.0, length_m=0.3, offset_m=math.inf)
    with pytest.raises(ParamsError, match=r"contacts: expected one per vehicle \(1\), got 2"):
        Farm([SOY_ROW], [POLARIS], contacts=[POLARIS_CONTACT, MAXXUM_CONTACT])
    with pytest.raises(ParamsError, match="fields: expected CropField values"):
        Farm(["row"], [POLARIS])  # type: ignore[list-item]
    with pytest.raises(ParamsError, match=r"agents: expected 1 \(one per vehicle\), got 2"):
        Farm([SOY_ROW], [POLARIS]).step([_agent(0.0), _agent(1.0)], soil_water_pct=25.0)
    wide = dataclasses.replace(POLARIS_CONTACT, rear_tyre_width_m=1.3)
    with pytest.raises(ParamsError, match=r"the tyre patches come 0\.020 m close; expected more than"):
        Farm([SOY_ROW], [POLARIS], contacts=[wide])
    quad = dataclasses.replace(POLARIS, vehicle="quad")
    with pytest.raises(ParamsError, match="contact_params: expected a vehicle of"):
        contact_params(quad)
    assert isinstance(POLARIS_CONTACT, ContactParams)
