"""The criteria of a scenario, judged from the bridge's topics: pure, no ROS wiring.

Each judge reads messages of agent 0's topics (the names of the vehicle's msg_profiles table), in
the order the episode made them, each with its simulation time in s since the episode's start, and
gives a CriterionResult at the end. Positions come from the ground-truth odometry (utm), placed on
the tile with the tile's georeference; the route is the built-in one, acres_bridge.geo.route.

A verdict is a claim on evidence. make_judges wraps each judge in a Criterion that counts what
each of its topics brought (messages, the simulated span they cover, the longest silence) and
states it in the result (``evidence``). A criterion that read no message on a topic it needs,
or whose topic fell silent for more than EVIDENCE_GAP_PERIODS of its periods (the vehicle's
msg_profiles rate; its first message may come FIRST_MESSAGE_S later, as odometry waits for the
GNSS receiver's first fix), was not judged: its result says why (``unjudged``), and the runner makes
the episode an ERROR, never a PASS. A topic_rate criterion judges the silence of its topic itself
(no message is a rate of 0, a FAIL); its evidence is the simulated time it covered.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.geo.route import Route, acre_loop
from acres_bridge.msg_profiles import RateKind, load_profiles
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

__all__ = [
    "EVIDENCE_GAP_PERIODS",
    "FIRST_MESSAGE_S",
    "GROUND_TRUTH",
    "Criterion",
    "CriterionResult",
    "Judge",
    "make_judges",
    "odometry_topic",
]

GROUND_TRUTH: Final = {"polaris": "/sim/ground_truth/odom", "maxxum": "ground_truth/odom"}
DBW_REPORTS: Final = (
    "/vehicle/steering/report",
    "/vehicle/throttle/report",
    "/vehicle/brake/report",
    "/vehicle/ulc/report",
)
IMPLEMENT_STATE: Final = "implement/state"
_TOLERANCE: Final = 1e-9
EVIDENCE_GAP_PERIODS: Final = 5  # a periodic topic silent for longer than this many periods lost data
FIRST_MESSAGE_S: Final = 1.0  # a topic's first message may come this late (a GNSS receiver's first fix)


@dataclass(frozen=True)
class CriterionResult:
    """A criterion's verdict: its name, kind, whether it passed, the measured value and the rule;
    ``limit`` the one number the value is held to, where the rule has one (a report draws it);
    ``evidence`` what each topic it read brought; ``unjudged`` why it could not be judged (no data,
    or a silence), None when the evidence holds."""

    name: str
    kind: str
    passed: bool
    value: float | bool | str | None
    rule: str
    limit: float | None = None
    evidence: tuple[dict[str, Any], ...] = ()
    unjudged: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "passed": self.passed,
            "value": self.value,
            "rule": self.rule,
            "limit": self.limit,
            "evidence": list(self.evidence),
            "unjudged": self.unjudged,
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


@dataclass
class _TopicEvidence:
    """What one topic brought, in simulated time: messages, first and last, the longest silence."""

    period_s: float | None  # the topic's period where msg_profiles gives it a rate
    count: int = 0
    first_s: float = 0.0
    last_s: float = 0.0
    gap_s: float = 0.0  # the longest silence between two messages
    gap_from_s: float = 0.0

    def observe(self, time_s: float) -> None:
        if self.count and time_s - self.last_s > self.gap_s:
            self.gap_s, self.gap_from_s = time_s - self.last_s, self.last_s
        if not self.count:
            self.first_s = time_s
        self.last_s = time_s
        self.count += 1

    def as_dict(self, topic: str) -> dict[str, Any]:
        return {
            "topic": topic,
            "messages": self.count,
            "from_s": _round(self.first_s) if self.count else None,
            "to_s": _round(self.last_s) if self.count else None,
            "longest_gap_s": _round(self.gap_s),
        }

    def shortfall(self, topic: str, end_s: float) -> str | None:
        """Why this topic's messages are not evidence enough over [0, end_s], or None."""
        if not self.count:
            return f"no message on {topic} in {end_s:g} s of simulated time"
        if self.period_s is None:
            return None
        allowed = EVIDENCE_GAP_PERIODS * self.period_s + _TOLERANCE
        silences = (
            (self.first_s, 0.0, FIRST_MESSAGE_S + allowed),
            (self.gap_s, self.gap_from_s, allowed),
            (end_s - self.last_s, self.last_s, allowed),
        )
        for silence, since, bound in silences:
            if silence > bound:
                return (
                    f"{topic} silent for {silence:.3f} s from {since:.3f} s (a message every "
                    f"{self.period_s:g} s is due; at most {EVIDENCE_GAP_PERIODS} periods may be missing)"
                )
        return None


class Criterion:
    """A judge with the evidence it judged: every message it reads is counted per topic."""

    def __init__(
        self, judge: Judge, periods: Mapping[str, float | None], *, needs_data: bool, from_s: float = 0.0
    ) -> None:
        self.judge = judge
        self.label = judge.label
        self.topics: tuple[str, ...] = judge.topics
        self._needs_data = needs_data
        self._from_s = from_s  # where a criterion that judges silence itself starts to judge
        self._evidence = {topic: _TopicEvidence(periods.get(topic)) for topic in judge.topics}

    def observe(self, topic: str, message: Any, time_s: float) -> None:
        self._evidence[topic].observe(time_s)
        self.judge.observe(topic, message, time_s)

    def finish(self, end_s: float) -> CriterionResult:
        result = self.judge.finish(end_s)
        evidence = tuple(e.as_dict(topic) for topic, e in self._evidence.items())
        if self._needs_data:
            reasons = [e.shortfall(topic, end_s) for topic, e in self._evidence.items()]
            unjudged = "; ".join(r for r in reasons if r) or None
        else:
            covered = end_s - self._from_s
            unjudged = None if covered > 0 else f"no simulated time after {self._from_s:g} s was run"
        return replace(result, evidence=evidence, unjudged=unjudged)


def _periods(vehicle: str) -> dict[str, float | None]:
    """The period of each periodic topic of the vehicle's table, by its table name."""
    return {
        spec.name: 1.0 / spec.rate_hz
        for spec in load_profiles().table(vehicle)
        if spec.rate_kind is RateKind.PERIODIC and spec.rate_hz
    }


def make_judges(
    criteria: Sequence[CriterionSpec], vehicle: str, route: Route | None = None
) -> list[Criterion]:
    """A judge per criterion, for agent 0's `vehicle`, with the evidence it judged; `route`
    defaults to the built-in loop."""
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
    periods = _periods(vehicle)
    return [
        Criterion(j, periods, needs_data=False, from_s=j.spec.after_s)
        if isinstance(j, _RateJudge)
        else Criterion(j, periods, needs_data=True)
        for j in judges
    ]
