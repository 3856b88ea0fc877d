"""The simulation clock: physics steps of 1/120 s, with the protocol's timing rule (wire.clock).

Step 0 is the session start; step n ends at ``step_stamp_ns(n)``; a sensor of rate r Hz yields a
sample at the steps where floor(n * r / 120) increases.
"""

from __future__ import annotations

from typing import Final

from acres_bridge.wire import clock as wire_clock
from acres_bridge.wire.clock import NS_PER_S

__all__ = [
    "INS_RATE_HZ",
    "NS_PER_S",
    "PHYSICS_DT_S",
    "PHYSICS_RATE_HZ",
    "ins_due",
    "is_due",
    "sample_index",
    "step_stamp_ns",
]

PHYSICS_RATE_HZ: Final = 120
PHYSICS_DT_S: Final = 1.0 / PHYSICS_RATE_HZ
INS_RATE_HZ: Final = 100


def step_stamp_ns(step: int) -> int:
    """The simulation time of physics step ``step`` in ns since the session start (floor of step/120 s)."""
    return wire_clock.step_stamp_ns(step, PHYSICS_RATE_HZ)


def sample_index(step: int, rate_hz: int) -> int:
    """How many samples of a ``rate_hz`` sensor the steps 1..``step`` have produced."""
    return wire_clock.samples_through(step, rate_hz, PHYSICS_RATE_HZ)


def is_due(step: int, rate_hz: int) -> bool:
    """True when physics step ``step`` (counted from 1) yields a sample of a ``rate_hz`` sensor.

    ``rate_hz`` must be between 1 and the physics rate; the due steps spread the samples as evenly as
    whole steps allow.
    """
    return wire_clock.is_due(step, rate_hz, PHYSICS_RATE_HZ)


def ins_due(step: int) -> bool:
    """True when physics step ``step`` yields an INS sample (100 of every 120 steps)."""
    return is_due(step, INS_RATE_HZ)
