"""The protocol's timing rule: physics steps, their stamps, and which steps carry a sample.

Time is integer nanoseconds since the session start. Step 0 is the session start; step n ends at
``step_stamp_ns(n, physics_hz)``. A stream of rate r Hz has a sample at step n (n >= 1) when
floor(n * r / physics_hz) increases, so exactly r samples fall in every physics_hz steps, each
stamped with the time of the step that made it. The simulator makes its samples by this rule and
the bridge's nodes tick by it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_STEPS_PER_REQUEST", "NS_PER_S", "is_due", "samples_through", "step_stamp_ns"]

NS_PER_S: Final = 1_000_000_000
MAX_STEPS_PER_REQUEST: Final = 36_000
"""The most physics steps one step request may ask for: 5 simulated minutes at 120 Hz. A request
runs to its end before the simulator takes another one, so the bound keeps it answerable."""


def step_stamp_ns(step: int, physics_hz: int) -> int:
    """The simulation time of physics step ``step`` in ns since the session start (floored)."""
    return step * NS_PER_S // physics_hz


def samples_through(step: int, rate_hz: int, physics_hz: int) -> int:
    """How many samples of a ``rate_hz`` stream the steps 1..``step`` have."""
    return step * rate_hz // physics_hz


def is_due(step: int, rate_hz: int, physics_hz: int) -> bool:
    """True when physics step ``step`` (from 1) has a sample of a ``rate_hz`` stream.

    ``rate_hz`` is between 1 and ``physics_hz``; the due steps spread the samples as evenly as whole
    steps allow (20 Hz on 120 Hz: steps 6, 12, ...).
    """
    return step >= 1 and samples_through(step, rate_hz, physics_hz) > samples_through(
        step - 1, rate_hz, physics_hz
    )
