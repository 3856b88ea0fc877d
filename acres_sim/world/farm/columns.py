"""What a farm step takes and returns: each agent's state and implement, and the contacts and changes
as columns of arrays (the FarmStamp and FarmEvent fields), with the enums of their kinds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Final, TypeVar

import numpy as np
from numpy.typing import NDArray

from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.world.farm.params import ImplementFootprint

__all__ = [
    "EVENT_UNITS",
    "NO_EVENTS",
    "NO_STAMPS",
    "EventKind",
    "Events",
    "FarmAgent",
    "FarmStep",
    "ImplementAction",
    "Part",
    "Stamps",
    "concat_columns",
    "single_stamp",
]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


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
        return cls(stamps=NO_STAMPS, events=NO_EVENTS, soil_work_j=(0.0,) * agents)


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


def single_stamp(
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


def concat_columns(parts: Sequence[_Columns]) -> _Columns:
    """One table of columns (Stamps or Events) from several, column by column."""
    if len(parts) == 1:
        return parts[0]
    columns = {f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(parts[0])}
    return type(parts[0])(**columns)


NO_STAMPS: Final = _no_stamps()
NO_EVENTS: Final = _no_events()
