"""The scenario criteria as test assertions, judged on what a Sim recorded.

    assert_within_route(sim, max_xte=0.3, after_s=2.0)
    assert_no_dbw_timeout(sim)
    assert_topic_rate(sim, "/vehicle/ulc/cmd", min_hz=20)
    assert_criteria(sim, {"kind": "max_speed", "max_mps": 3.0}, {"kind": "min_distance", "min_m": 10})

Each criterion is the scenario file's (docs/scenarios.md: the same fields, the same judges in
acres_bridge.scenario.criteria), judged over the whole of the Sim's simulated time. A failed one
is an AssertionError that names the criterion, the topic it read, the value and the rule, e.g.
``max_cross_track_error: 2.31 on /sim/ground_truth/odom, wanted <= 0.3 m from the route``. A
criterion without evidence (no message on a topic it reads, or a silence of more than a few of the
topic's periods) is an AssertionError too, never a pass: ``max_speed: not judged: no message on
/sim/ground_truth/odom in 5 s of simulated time``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from acres_bridge.scenario.criteria import CriterionResult, make_judges
from acres_bridge.scenario.schema import CriterionSpec
from acres_bridge.testing.sim import Sim

__all__ = [
    "assert_criteria",
    "assert_goal_reached",
    "assert_max_speed",
    "assert_min_distance",
    "assert_no_dbw_fault",
    "assert_no_dbw_override",
    "assert_no_dbw_timeout",
    "assert_topic_rate",
    "assert_within_route",
    "judge",
]

_SPECS: TypeAdapter[Any] = TypeAdapter(CriterionSpec)


def judge(sim: Sim, *criteria: Mapping[str, Any]) -> list[tuple[CriterionResult, tuple[str, ...]]]:
    """Each criterion's result over what `sim` recorded, with the topics it read. A criterion the
    scenario schema refuses is a ValueError that says which field and why."""
    specs = []
    for criterion in criteria:
        try:
            specs.append(_SPECS.validate_python(dict(criterion)))
        except ValidationError as error:
            raise ValueError(f"criterion {dict(criterion)}: {error}") from None
    judged = []
    for one in make_judges(specs, sim.vehicle):
        for topic in one.topics:
            try:
                timed = sim.timed(topic)
            except KeyError:
                raise ValueError(f"{one.label} reads {topic}, which this Sim does not watch") from None
            for time_s, message in timed:
                one.observe(topic, message, time_s)
        judged.append((one.finish(sim.now), one.topics))
    return judged


def assert_criteria(sim: Sim, *criteria: Mapping[str, Any]) -> None:
    """AssertionError naming every criterion that did not hold, its topic, value and rule."""
    failed = [
        f"{result.name}: not judged: {result.unjudged}"
        if result.unjudged
        else f"{result.name}: {result.value} on {', '.join(topics)}, wanted {result.rule}"
        for result, topics in judge(sim, *criteria)
        if result.unjudged or not result.passed
    ]
    if failed:
        raise AssertionError(f"at {sim.now:.2f} s of simulated time: " + "; ".join(failed))


def assert_within_route(sim: Sim, max_xte: float, *, after_s: float = 0.0) -> None:
    """The vehicle stayed within `max_xte` m of the built-in route (ground truth) from `after_s`."""
    assert_criteria(sim, {"kind": "max_cross_track_error", "max_m": max_xte, "after_s": after_s})


def assert_max_speed(sim: Sim, max_mps: float) -> None:
    assert_criteria(sim, {"kind": "max_speed", "max_mps": max_mps})


def assert_min_distance(sim: Sim, min_m: float) -> None:
    assert_criteria(sim, {"kind": "min_distance", "min_m": min_m})


def assert_goal_reached(sim: Sim, x: float, y: float, *, radius_m: float, within_s: float) -> None:
    assert_criteria(sim, {"kind": "goal_reached", "x": x, "y": y, "radius_m": radius_m, "within_s": within_s})


def assert_topic_rate(sim: Sim, topic: str, min_hz: float, *, after_s: float = 0.0) -> None:
    """`topic` (one the bridge publishes or a command of the stack) came at `min_hz` or more."""
    assert_criteria(
        sim, {"kind": "topic_rate", "topic": sim.table_name(topic), "min_hz": min_hz, "after_s": after_s}
    )


def assert_no_dbw_timeout(sim: Sim) -> None:
    assert_criteria(sim, {"kind": "no_dbw_timeout"})


def assert_no_dbw_fault(sim: Sim) -> None:
    assert_criteria(sim, {"kind": "no_dbw_fault"})


def assert_no_dbw_override(sim: Sim) -> None:
    assert_criteria(sim, {"kind": "no_dbw_override"})
