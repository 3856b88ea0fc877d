"""The farm's constants: the grid and soil model, how each vehicle meets the ground, the implements'
footprints (the models they feed are in acres_sim.world.farm.model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.errors import ParamsError, require_finite
from acres_sim.vehicles.params import VehicleParams

__all__ = [
    "IMPLEMENT_FOOTPRINTS",
    "MAXXUM_CONTACT",
    "POLARIS_CONTACT",
    "ContactParams",
    "FarmParams",
    "ImplementFootprint",
    "contact_params",
]


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
        require_finite(
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
            non_negative=("water_sensitivity_per_pct",),
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
        require_finite(
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
        require_finite(self, positive=("width_m", "length_m"), finite=("offset_m",))


# The implements of acres_sim.vehicles.implement: the chisel plow's 9 shanks 0.30 m apart (2.7 m) 1.8 m behind
# the rear axle; the disk mower's 3.0 m cutter bar 1.4 m behind it (assumed).
IMPLEMENT_FOOTPRINTS: Final = {
    "chisel_plow": ImplementFootprint(width_m=2.7, length_m=0.3, offset_m=-1.8),
    "disk_mower": ImplementFootprint(width_m=3.0, length_m=0.6, offset_m=-1.4),
}
