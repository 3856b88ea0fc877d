"""The rear three-point hitch of the Maxxum: the lift arms, their control modes and the working depth.

The lift-arm angle moves between ``lift_min_deg`` (lower links fully down) and ``lift_max_deg``
(fully raised: transport) at most at ``rate_degps``, towards a target that the mode sets:

- raise (the quick-raise switch, any mode): the transport position, ``lift_max_deg``.
- position: the lever's position, ``lift_min_deg`` at lever 0 to ``lift_max_deg`` at lever 1.
- draft: the lift rate is ``draft_gain_degps_per_kn`` per kN of draft above the set point (up when
  the draft is larger, down when smaller); the set point is ``(1 - lever) * draft_full_scale_n``,
  so lever 0 asks for the most draft and lever 1 for none.
- float: the lift arms follow the implement down to its depth stop (the gauge wheels carry it).

Geometry: the tool points are at the ground at ``ground_contact_deg`` and go down by
``link_radius_m * (sin(ground_contact) - sin(lift))`` below it; the working depth is that, limited
to 0 .. the depth stop (a lever asking for more lets the gauge wheels carry the implement). With
the defaults (assumed for a category II/III hitch) the points reach 0.39 m below the ground at
-10 deg and 0.55 m above it at 60 deg; a full stroke of 70 deg takes 2.8 s at 25 deg/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from acres_bridge.geo.scalar import toward
from acres_bridge.wire.maxxum import HitchMode
from acres_sim.errors import ParamsError, require_finite

__all__ = ["Hitch", "HitchMode", "HitchParams"]


@dataclass(frozen=True, kw_only=True)
class HitchParams:
    """The hitch constants; the module docstring explains each. Angles in deg, lengths in m."""

    lift_min_deg: float = -10.0
    lift_max_deg: float = 60.0
    ground_contact_deg: float = 15.0
    link_radius_m: float = 0.9
    rate_degps: float = 25.0
    draft_full_scale_n: float = 40_000.0
    draft_gain_degps_per_kn: float = 2.0
    raised_margin_deg: float = 0.5

    def __post_init__(self) -> None:
        """The lift range must hold the ground contact; lengths, rates and gains must be positive."""
        require_finite(
            self, positive=("link_radius_m", "rate_degps", "draft_full_scale_n", "draft_gain_degps_per_kn")
        )
        if not -90.0 < self.lift_min_deg < self.ground_contact_deg < self.lift_max_deg < 90.0:
            raise ParamsError(
                "HitchParams: expected -90 < lift_min_deg < ground_contact_deg < lift_max_deg < 90, got "
                f"{self.lift_min_deg!r}, {self.ground_contact_deg!r}, {self.lift_max_deg!r}"
            )
        if not 0.0 <= self.raised_margin_deg < self.lift_max_deg - self.lift_min_deg:
            raise ParamsError(
                f"HitchParams.raised_margin_deg: expected 0 .. the lift range, got {self.raised_margin_deg!r}"
            )

    def lever_lift_deg(self, lever: float) -> float:
        """The lift angle that position control holds for a lever of 0 .. 1."""
        lever = min(max(lever, 0.0), 1.0)
        return self.lift_min_deg + lever * (self.lift_max_deg - self.lift_min_deg)

    def point_depth_m(self, lift_deg: float) -> float:
        """How far the tool points are below the ground at a lift angle, in m (negative: above it)."""
        contact = math.sin(math.radians(self.ground_contact_deg))
        return self.link_radius_m * (contact - math.sin(math.radians(lift_deg)))

    def lift_for_depth_deg(self, depth_m: float) -> float:
        """The lift angle that puts the tool points ``depth_m`` below the ground, within the lift range."""
        sine = math.sin(math.radians(self.ground_contact_deg)) - depth_m / self.link_radius_m
        angle = math.degrees(math.asin(min(max(sine, -1.0), 1.0)))
        return min(max(angle, self.lift_min_deg), self.lift_max_deg)

    def position(self, lift_deg: float) -> float:
        """The hitch position as a fraction of the stroke: 0 fully down, 1 fully up."""
        return (lift_deg - self.lift_min_deg) / (self.lift_max_deg - self.lift_min_deg)


class Hitch:
    """The lift arms: their angle, moved once per physics step by ``step``. Deterministic, no I/O."""

    def __init__(self, params: HitchParams | None = None) -> None:
        """A hitch in the transport position."""
        self._p = params if params is not None else HitchParams()
        self._lift_deg = self._p.lift_max_deg

    @property
    def params(self) -> HitchParams:
        """The constants."""
        return self._p

    @property
    def lift_deg(self) -> float:
        """The lift-arm angle in deg."""
        return self._lift_deg

    @property
    def raised(self) -> bool:
        """True in the transport position (within ``raised_margin_deg`` of the top)."""
        return self._lift_deg >= self._p.lift_max_deg - self._p.raised_margin_deg

    def reset(self) -> None:
        """Back to the transport position."""
        self._lift_deg = self._p.lift_max_deg

    def working_depth_m(self, depth_stop_m: float) -> float:
        """The working depth of the tool points now (m, >= 0), limited by the depth stop."""
        return min(max(self._p.point_depth_m(self._lift_deg), 0.0), max(depth_stop_m, 0.0))

    def step(
        self,
        dt: float,
        *,
        mode: HitchMode,
        lever: float,
        raise_hitch: bool,
        draft_n: float,
        depth_stop_m: float,
    ) -> None:
        """Move the lift arms for ``dt`` seconds under the controls and the draft of the last step."""
        p = self._p
        max_step = p.rate_degps * dt
        if raise_hitch:
            lift = toward(self._lift_deg, p.lift_max_deg, max_step)
        elif mode is HitchMode.DRAFT:
            set_point = (1.0 - min(max(lever, 0.0), 1.0)) * p.draft_full_scale_n
            rate = p.draft_gain_degps_per_kn * (draft_n - set_point) / 1000.0
            lift = self._lift_deg + min(max(rate * dt, -max_step), max_step)
        elif mode is HitchMode.FLOAT:
            lift = toward(self._lift_deg, p.lift_for_depth_deg(depth_stop_m), max_step)
        else:
            lift = toward(self._lift_deg, p.lever_lift_deg(lever), max_step)
        self._lift_deg = min(max(lift, p.lift_min_deg), p.lift_max_deg)
