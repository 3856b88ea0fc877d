"""The criteria of a scenario, judged from the bridge's topics: pure, no ROS wiring.

Each judge reads messages of agent 0's topics (the names of the vehicle's msg_profiles table), in
the order the episode made them, each with its simulation time in s since the episode's start, and
gives a CriterionResult at the end. Positions come from the ground-truth odometry (utm), placed on
the tile with the tile's georeference; the route is the built-in one, acres_bridge.geo.route.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.geo.route import Route, acre_loop
from acres_bridge.scenario.schema import (
    CriterionSpec,
    GoalReached,
    ImplementState,
    MaxCrossTrackError,
    MaxSpeed,
    MinDistance,
    NoDbwFault,
    NoDbwOverride,
    NoDbwTimeout,
    TopicRate,
)

__all__ = ["GROUND_TRUTH", "CriterionResult", "Judge", "make_judges", "odometry_topic"]

GROUND_TRUTH: Final = {"polaris": "/sim/ground_truth/odom", "maxxum": "ground_truth/odom"}
DBW_REPORTS: Final = (
    "/vehicle/steering/report",
    "/vehicle/throttle/report",
    "/vehicle/brake/report",
    "/vehicle/ulc/report",
)
IMPLEMENT_STATE: Final = "implement/state"
_TOLERANCE: Final = 1e-9


@dataclass(frozen=True)
class CriterionResult:
    """A criterion's verdict: its name, kind, whether it passed, the measured value and the rule;
    ``limit`` the one number the value is held to, where the rule has one (a report draws it)."""

    name: str
    kind: str
    passed: bool
    value: float | bool | str | None
    rule: str
    limit: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "passed": self.passed,
            "value": self.value,
            "rule": self.rule,
            "limit": self.limit,
        }


class Judge(Protocol):
    """Reads the messages of its topics and judges at the end."""

    label: str
    topics: tuple[str, ...]

    def observe(self, topic: str, message: Any, time_s: float) -> None: ...

    def finish(self, end_s: float) -> CriterionResult: ...


def odometry_topic(vehicle: str) -> str:
    """The ground-truth odometry of a vehicle: where criteria read positions and speeds."""
    return GROUND_TRUTH[vehicle]


def _position(message: Any) -> tuple[float, float]:
    """World (tile) x, y of an odometry message in utm."""
    p = message.pose.pose.position
    x, y, _ = ACRE_GEOREFERENCE.utm_to_world(p.x, p.y, 0.0)
    return x, y


def _round(value: float) -> float:
    """Metrics to a micrometre (or micro-unit): what a verdict needs, and stable in a table."""
    return round(value, 6)


class _GoalJudge:
    def __init__(self, spec: GoalReached, vehicle: str) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = (odometry_topic(vehicle),)
        gx, gy = (spec.x, spec.y)
        if spec.frame == "utm":
            gx, gy, _ = ACRE_GEOREFERENCE.utm_to_world(spec.x, spec.y, 0.0)
        self._goal = (gx, gy)
        self._reached: float | None = None

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        if self._reached is None:
            x, y = _position(message)
            if math.hypot(x - self._goal[0], y - self._goal[1]) <= self.spec.radius_m:
                self._reached = time_s

    def finish(self, end_s: float) -> CriterionResult:
        spec = self.spec
        passed = self._reached is not None and self._reached <= spec.within_s + _TOLERANCE
        rule = f"within {spec.radius_m:g} m of ({spec.x:g}, {spec.y:g}) {spec.frame} by {spec.within_s:g} s"
        value = None if self._reached is None else _round(self._reached)
        return CriterionResult(self.label, spec.kind, passed, value, rule)


class _CrossTrackJudge:
    def __init__(self, spec: MaxCrossTrackError, vehicle: str, route: Route) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = (odometry_topic(vehicle),)
        self._route = route
        self._near: float | None = None
        self._largest = 0.0

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        x, y = _position(message)
        s, distance = self._route.project(x, y, near=self._near)
        self._near = s
        if time_s >= self.spec.after_s:
            self._largest = max(self._largest, distance)

    def finish(self, end_s: float) -> CriterionResult:
        spec = self.spec
        passed = self._largest <= spec.max_m
        rule = f"<= {spec.max_m:g} m from the route" + (f" after {spec.after_s:g} s" if spec.after_s else "")
        return CriterionResult(self.label, spec.kind, passed, _round(self._largest), rule, spec.max_m)


class _SpeedJudge:
    def __init__(self, spec: MaxSpeed, vehicle: str) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = (odometry_topic(vehicle),)
        self._largest = 0.0

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        v = message.twist.twist.linear
        self._largest = max(self._largest, math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z))

    def finish(self, end_s: float) -> CriterionResult:
        spec = self.spec
        return CriterionResult(
            self.label,
            spec.kind,
            self._largest <= spec.max_mps,
            _round(self._largest),
            f"<= {spec.max_mps:g} m/s",
            spec.max_mps,
        )


class _DistanceJudge:
    def __init__(self, spec: MinDistance, vehicle: str) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = (odometry_topic(vehicle),)
        self._last: tuple[float, float] | None = None
        self._length = 0.0

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        here = _position(message)
        if self._last is not None:
            self._length += math.hypot(here[0] - self._last[0], here[1] - self._last[1])
        self._last = here

    def finish(self, end_s: float) -> CriterionResult:
        spec = self.spec
        passed = self._length >= spec.min_m
        return CriterionResult(
            self.label, spec.kind, passed, _round(self._length), f">= {spec.min_m:g} m", spec.min_m
        )


class _DbwFlagJudge:
    """Counts drive-by-wire reports on which any of `flags` is true."""

    def __init__(
        self, spec: NoDbwTimeout | NoDbwFault | NoDbwOverride, flags: Sequence[str], what: str
    ) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = DBW_REPORTS
        self._flags = tuple(flags)
        self._what = what
        self._count = 0
        self._first: float | None = None

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        if any(getattr(message, flag, False) for flag in self._flags):
            self._count += 1
            if self._first is None:
                self._first = time_s

    def finish(self, end_s: float) -> CriterionResult:
        rule = f"no report with {self._what}"
        if self._first is not None:
            rule += f" (first at {self._first:.3f} s)"
        return CriterionResult(self.label, self.spec.kind, self._count == 0, self._count, rule)


class _RateJudge:
    def __init__(self, spec: TopicRate) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = (spec.topic,)
        self._count = 0

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        if time_s >= self.spec.after_s:
            self._count += 1

    def finish(self, end_s: float) -> CriterionResult:
        spec = self.spec
        span = end_s - spec.after_s
        rate = self._count / span if span > 0 else 0.0
        rule = f">= {spec.min_hz:g} Hz of simulated time from {spec.after_s:g} s"
        passed = rate >= spec.min_hz - _TOLERANCE
        return CriterionResult(self.label, spec.kind, passed, _round(rate), rule, spec.min_hz)


class _ImplementJudge:
    def __init__(self, spec: ImplementState) -> None:
        self.label, self.spec = spec.label, spec
        self.topics: tuple[str, ...] = (IMPLEMENT_STATE,)
        self._last: object = None
        self._broken: object = None
        self._seen = False

    def _holds(self, value: object) -> bool:
        spec = self.spec
        if spec.equals is not None:
            return bool(value == spec.equals and type(value) is type(spec.equals))
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return (spec.min is None or value >= spec.min) and (spec.max is None or value <= spec.max)

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        try:
            state = json.loads(message.data)
        except (ValueError, AttributeError):
            return
        if not isinstance(state, dict) or self.spec.key not in state:
            return
        value = state[self.spec.key]
        self._last, self._seen = value, True
        if (
            self.spec.at == "always"
            and time_s >= self.spec.after_s
            and self._broken is None
            and not self._holds(value)
        ):
            self._broken = value

    def finish(self, end_s: float) -> CriterionResult:
        spec = self.spec
        if spec.equals is not None:
            rule = f"{spec.key} == {json.dumps(spec.equals)}"
        else:
            rule = " and ".join(
                part
                for part in (
                    None if spec.min is None else f"{spec.key} >= {spec.min:g}",
                    None if spec.max is None else f"{spec.key} <= {spec.max:g}",
                )
                if part
            )
        rule += " at the end" if spec.at == "end" else f" always from {spec.after_s:g} s"
        if spec.at == "always":
            passed = self._seen and self._broken is None
            value = self._last if self._broken is None else self._broken
        else:
            passed = self._seen and self._holds(self._last)
            value = self._last
        shown = value if isinstance(value, bool | int | float | str) or value is None else json.dumps(value)
        return CriterionResult(self.label, spec.kind, passed, shown, rule)


def make_judges(criteria: Sequence[CriterionSpec], vehicle: str, route: Route | None = None) -> list[Judge]:
    """A judge per criterion, for agent 0's `vehicle`; `route` defaults to the built-in loop."""
    judges: list[Judge] = []
    for spec in criteria:
        match spec:
            case GoalReached():
                judges.append(_GoalJudge(spec, vehicle))
            case MaxCrossTrackError():
                judges.append(_CrossTrackJudge(spec, vehicle, route or acre_loop()))
            case MaxSpeed():
                judges.append(_SpeedJudge(spec, vehicle))
            case MinDistance():
                judges.append(_DistanceJudge(spec, vehicle))
            case NoDbwTimeout():
                judges.append(_DbwFlagJudge(spec, ("timeout",), "timeout"))
            case NoDbwFault():
                judges.append(_DbwFlagJudge(spec, ("fault",), "fault"))
            case NoDbwOverride():
                judges.append(_DbwFlagJudge(spec, ("override_active", "override_latched"), "an override"))
            case TopicRate():
                judges.append(_RateJudge(spec))
            case ImplementState():
                judges.append(_ImplementJudge(spec))
    return judges
