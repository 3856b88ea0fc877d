"""What a stack owes in simulated time: the commands its timers have fired by a step. Pure: no ROS.

A stack on simulated time (use_sim_time) creates its timers before it has seen a clock, at
simulated time 0, so a timer of period P (rclpy: ``int(1 / rate * 1e9)`` ns) falls due at k * P
and fires on the first clock at or past it: at step ``tick_step(k)`` of the physics grid
(step s is at s * 1e9 // physics_hz ns). rcl fires a timer once per clock it wakes on and skips
the ticks a jump of the clock passes, so the stepper never lets a request pass a tick: each
request ends at the next step where a declared timer falls due (``StackPace.request_steps``).

After a request ending at step s, a topic whose first message was counted at step s1 owes
``ticks_by(s) - ticks_by(s1) + 1`` messages: one a tick since the first. A topic the stack has not
yet sent on owes nothing (a stack may wait for its inputs before it commands).

    pace = StackPace({"/vehicle/ulc/cmd": 50.0}, physics_hz=120)
    pace.request_steps(done=0, most=12)     # 3: the first tick (20 ms) falls due at step 3
    pace.sent("/vehicle/ulc/cmd", step=3)
    pace.behind(step=120)                   # [Shortfall("/vehicle/ulc/cmd", owed=50, sent=1, ...)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from acres_bridge.wire.clock import NS_PER_S, step_stamp_ns

__all__ = ["Shortfall", "StackPace", "tick_step", "timer_period_ns"]


def timer_period_ns(rate_hz: float) -> int:
    """The period of a timer made for `rate_hz`, in ns, rounded as rclpy's create_timer does."""
    return int(float(1.0 / rate_hz) * NS_PER_S)


def tick_step(tick: int, period_ns: int, physics_hz: int) -> int:
    """The first step whose simulated time is at or past the `tick`-th due time of the timer."""
    due_ns = tick * period_ns
    return -(-due_ns * physics_hz // NS_PER_S)


@dataclass(frozen=True)
class Shortfall:
    """A topic on which the stack has sent fewer messages than its timer fired by `now_s`."""

    topic: str
    owed: int
    sent: int
    rate_hz: float
    now_s: float

    def __str__(self) -> str:
        return (
            f"{self.topic} sent {self.sent} of the {self.owed} its {self.rate_hz:g} Hz timer owes "
            f"by {self.now_s:.3f} s of simulated time"
        )


class StackPace:
    """The stack's declared command rates (topic -> Hz) and what it has sent on each topic."""

    def __init__(self, rates: Mapping[str, float], physics_hz: int) -> None:
        for topic, rate in rates.items():
            if not (math.isfinite(rate) and 0 < rate <= physics_hz):
                raise ValueError(
                    f"the rate of {topic} must be above 0 and at most the physics rate "
                    f"{physics_hz} Hz, found {rate}"
                )
        self.rates = dict(rates)
        self.physics_hz = physics_hz
        self._periods_ns = {topic: timer_period_ns(rate) for topic, rate in rates.items()}
        self.counts: dict[str, int] = dict.fromkeys(rates, 0)
        self._first_tick: dict[str, int] = {}

    def ticks_by(self, topic: str, step: int) -> int:
        """How many times the timer of `topic` has fallen due by step `step`."""
        return step_stamp_ns(step, self.physics_hz) // self._periods_ns[topic]

    def request_steps(self, done: int, most: int) -> int:
        """The steps of the next request from step `done`: up to the next step where a declared
        timer falls due, at most `most` (at least 1); `most` without rates."""
        steps = most
        for topic, period_ns in self._periods_ns.items():
            following = tick_step(self.ticks_by(topic, done) + 1, period_ns, self.physics_hz)
            steps = min(steps, following - done)
        return max(1, steps)

    def sent(self, topic: str, step: int) -> None:
        """Count a message of `topic` taken after the request ending at `step` (topics without a
        rate are not counted)."""
        if topic not in self.rates:
            return
        self.counts[topic] += 1
        self._first_tick.setdefault(topic, self.ticks_by(topic, step))

    def owed(self, topic: str, step: int) -> int:
        """The messages of `topic` the stack's timer has fired by step `step`, since its first."""
        first = self._first_tick.get(topic)
        if first is None:
            return 0
        return max(0, self.ticks_by(topic, step) - first + 1)

    def unstarted(self) -> bool:
        """Whether a declared topic has not had its first message yet."""
        return len(self._first_tick) < len(self.rates)

    def behind(self, step: int) -> list[Shortfall]:
        """The topics on which the stack has sent fewer than it owes by step `step`."""
        now_s = step_stamp_ns(step, self.physics_hz) / NS_PER_S
        shortfalls = []
        for topic, rate in self.rates.items():
            owed = self.owed(topic, step)
            if self.counts[topic] < owed:
                shortfalls.append(Shortfall(topic, owed, self.counts[topic], rate, now_s))
        return shortfalls
