"""The implements of the Maxxum: their draft force and their PTO power, after ASABE D497.

Draft of a tillage tool (ASABE D497.4, section 4.1.2 and Table 1):

    D = F_i * (A + B * S + C * S^2) * W * T

D the draft in N, S the speed in km/h, W the width in the table's unit (tools or m), T the tillage
depth in cm, F_i the soil texture factor (i = 1 fine, 2 medium, 3 coarse), A, B, C the machine
parameters. The draft opposes the motion; at standstill it is the force that the soil holds the
tools with (the A term), which a tractor must overcome to start.

PTO power of a PTO-driven implement (ASABE D497.4, section 4.1.3 and Table 1): P = a + b * W in
kW at the rated PTO speed (the feed-rate term c * F of harvesting machines is not used). It scales
with the PTO speed, at a constant PTO torque.

The implements (all values from D497.4 Table 1 unless they say assumed):

- ``CHISEL_PLOW``: a mounted chisel plow with 9 shanks, 51 mm straight points, 0.30 m apart
  (2.7 m working width; assumed). A = 91 N, B = 5.4 N h/km, C = 0 per tool and cm of depth;
  medium soil F_2 = 0.85 (fine 1.0, coarse 0.65; D497 gives a range of +-50 %). Working depth up to
  0.30 m, depth stop at 0.20 m, 1100 kg (assumed). At 0.20 m and 8 km/h its draft is 20.5 kN.
- ``DISK_MOWER``: a mounted disk mower of 3.0 m on the 1000 r/min PTO: a = 0, b = 5.0 kW/m, so
  15 kW at the rated PTO speed (+-30 %). 750 kg (assumed). It does not work the soil: no depth and
  no draft (the drag of its skids is neglected).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from acres_sim.errors import ParamsError, require_finite

__all__ = [
    "CHISEL_PLOW",
    "DISK_MOWER",
    "IMPLEMENTS",
    "ImplementParams",
    "PtoSpeed",
    "draft_n",
    "pto_power_kw",
]

_MPS_TO_KMH: Final = 3.6
_M_TO_CM: Final = 100.0


class PtoSpeed(IntEnum):
    """The rated PTO speeds in r/min: what the PTO gearbox gives at the engine's rated speed."""

    RPM_540 = 540
    RPM_1000 = 1000


@dataclass(frozen=True, kw_only=True)
class ImplementParams:
    """One implement on the rear three-point hitch.

    ``code`` identifies it on the CAN bus (1 .. 250). A tillage implement (``tillage``) works at a
    depth up to ``max_depth_m`` and has the D497 draft parameters ``draft_a_n``, ``draft_b_n_per_kmh``,
    ``draft_c_n_per_kmh2`` (per width unit and cm of depth), ``width_units`` and ``soil_factor``.
    ``pto_a_kw`` and ``pto_b_kw_per_m`` with ``pto_width_m`` give its PTO power at ``pto_speed``.
    """

    name: str
    code: int
    mass_kg: float
    tillage: bool = False
    max_depth_m: float = 0.0
    default_depth_stop_m: float = 0.0
    draft_a_n: float = 0.0
    draft_b_n_per_kmh: float = 0.0
    draft_c_n_per_kmh2: float = 0.0
    width_units: float = 0.0
    soil_factor: float = 1.0
    pto_speed: PtoSpeed = PtoSpeed.RPM_540
    pto_a_kw: float = 0.0
    pto_b_kw_per_m: float = 0.0
    pto_width_m: float = 0.0

    def __post_init__(self) -> None:
        """Refuse a nameless implement, a code outside 1 .. 250 and negative or non-finite values."""
        if not self.name:
            raise ParamsError("ImplementParams.name: expected a non-empty name")
        if not 1 <= self.code <= 250:
            raise ParamsError(f"ImplementParams.code: expected 1 .. 250, got {self.code!r}")
        require_finite(
            self,
            non_negative=(
                "mass_kg",
                "max_depth_m",
                "default_depth_stop_m",
                "draft_a_n",
                "draft_b_n_per_kmh",
                "draft_c_n_per_kmh2",
                "width_units",
                "soil_factor",
                "pto_a_kw",
                "pto_b_kw_per_m",
                "pto_width_m",
            ),
        )
        if self.default_depth_stop_m > self.max_depth_m:
            raise ParamsError(
                f"ImplementParams.default_depth_stop_m: expected at most max_depth_m ({self.max_depth_m}), "
                f"got {self.default_depth_stop_m!r}"
            )

    @property
    def rated_pto_kw(self) -> float:
        """The PTO power at the rated PTO speed, in kW (0 for an implement without a PTO shaft)."""
        return self.pto_a_kw + self.pto_b_kw_per_m * self.pto_width_m


def draft_n(implement: ImplementParams, depth_m: float, speed_mps: float) -> float:
    """The D497 draft force (N, >= 0) of ``implement`` at a working depth and a speed of either sign.

    0 for an implement that does not work the soil or is out of the ground (depth <= 0).
    """
    if not implement.tillage or depth_m <= 0.0:
        return 0.0
    s = abs(speed_mps) * _MPS_TO_KMH
    per_unit = implement.draft_a_n + implement.draft_b_n_per_kmh * s + implement.draft_c_n_per_kmh2 * s * s
    return implement.soil_factor * per_unit * implement.width_units * depth_m * _M_TO_CM


def pto_power_kw(implement: ImplementParams, pto_rpm: float) -> float:
    """The PTO power (kW, >= 0) that ``implement`` takes at a PTO speed: the rated power, pro rata."""
    if pto_rpm <= 0.0:
        return 0.0
    return implement.rated_pto_kw * pto_rpm / float(implement.pto_speed)


CHISEL_PLOW: Final = ImplementParams(
    name="chisel_plow",
    code=1,
    mass_kg=1100.0,
    tillage=True,
    max_depth_m=0.30,
    default_depth_stop_m=0.20,
    draft_a_n=91.0,
    draft_b_n_per_kmh=5.4,
    draft_c_n_per_kmh2=0.0,
    width_units=9.0,
    soil_factor=0.85,
)
DISK_MOWER: Final = ImplementParams(
    name="disk_mower",
    code=2,
    mass_kg=750.0,
    pto_speed=PtoSpeed.RPM_1000,
    pto_b_kw_per_m=5.0,
    pto_width_m=3.0,
)
IMPLEMENTS: Final = {implement.name: implement for implement in (CHISEL_PLOW, DISK_MOWER)}
