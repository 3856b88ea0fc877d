"""Free run paced to wall time, never faster: the schedule of physics steps and the real-time factor.

The rule (docs/simulation_control.md, "Free run and real time"): a step is due when wall time has
reached its slot; slots are one physics period apart. A simulator that falls behind by up to
`max_lag_s` (the jitter of a busy machine's scheduler, a few steps) makes up for it step by step;
one that falls further behind does not catch up: its schedule starts again from now, the lost
time stays lost, and the real-time factor shows it. So the simulation clock never runs ahead of
wall time, and a stall never turns into a burst of steps that would overrun the depth-10
histories of every subscriber.

The real-time factor is simulated seconds per wall second over the last `window_s` of wall time.
Pure: every method takes the wall time it is asked about, so it is tested without a clock.
"""

from __future__ import annotations

from collections import deque

from acres_bridge.pace import PacingReport

__all__ = ["DEFAULT_MAX_LAG_STEPS", "REPORT_INTERVAL_S", "RTF_WINDOW_S", "SLOW_RTF", "RealTimePacer"]

DEFAULT_MAX_LAG_STEPS = 3  # a lag of up to 3 physics steps is made up for, one step after another
RTF_WINDOW_S = 5.0  # the real-time factor is measured over the last 5 s of wall time
SLOW_RTF = 0.95  # below this the simulator says it runs slower than real time
REPORT_INTERVAL_S = 10.0  # at most one report per 10 s of wall time


class RealTimePacer:
    """The wall-time slots of physics steps in free run, and the pace they were kept at."""

    def __init__(
        self,
        period_s: float,
        *,
        max_lag_steps: int = DEFAULT_MAX_LAG_STEPS,
        window_s: float = RTF_WINDOW_S,
        report_interval_s: float = REPORT_INTERVAL_S,
    ) -> None:
        if not period_s > 0 or max_lag_steps < 1 or not window_s > 0:
            raise ValueError("RealTimePacer needs period_s > 0, max_lag_steps >= 1 and window_s > 0")
        self.period_s = period_s
        self.max_lag_s = max_lag_steps * period_s
        self.window_s = window_s
        self.report_interval_s = report_interval_s
        self.next_slot_s: float | None = None  # None: not started (or paused)
        self.lost_s = 0.0
        self.steps = 0
        self._history: deque[tuple[float, int]] = deque()  # (wall time, steps) after each step
        self._last_report_s: float | None = None
        self._reported_skips = 0

    def start(self, now_s: float) -> None:
        """Begin (or resume after a pause) with a step due now; a pause is not counted as lost."""
        self.next_slot_s = now_s
        self._history.clear()
        self._history.append((now_s, self.steps))

    def stop(self) -> None:
        """Paused or stopped: no step is due until start()."""
        self.next_slot_s = None

    def due(self, now_s: float) -> bool:
        """Whether the next step's slot has come."""
        return self.next_slot_s is not None and now_s >= self.next_slot_s

    def timeout_s(self, now_s: float) -> float | None:
        """How long until the next slot (0 when one is due); None when not running."""
        if self.next_slot_s is None:
            return None
        return max(0.0, self.next_slot_s - now_s)

    def stepped(self, now_s: float) -> None:
        """A step was made at wall time now_s: book it and set the next slot. A simulator more than
        max_lag_s behind its slots gives up the lag instead of catching up."""
        if self.next_slot_s is None:
            self.next_slot_s = now_s
        self.steps += 1
        late = now_s - self.next_slot_s  # how far behind its slot this step was made
        if late > self.max_lag_s:
            self.lost_s += late  # given up: the schedule starts again from this step
            self.next_slot_s = now_s + self.period_s
        else:
            self.next_slot_s += self.period_s
        self._history.append((now_s, self.steps))
        while len(self._history) > 2 and now_s - self._history[1][0] >= self.window_s:
            self._history.popleft()

    def real_time_factor(self, now_s: float) -> float | None:
        """Simulated seconds per wall second over the last window_s (or since start, if shorter);
        None before any wall time has passed."""
        if not self._history:
            return None
        start_s, start_steps = self._history[0]
        elapsed = now_s - start_s
        if elapsed <= 0:
            return None
        return (self.steps - start_steps) * self.period_s / elapsed

    def report(self, now_s: float, skipped_perception_steps: int, sim_ns: int = 0) -> PacingReport | None:
        """A report when the pace is below SLOW_RTF or perception steps were skipped since the
        last report, at most once per report_interval_s and only after a full window. `sim_ns`:
        the simulated time it speaks for (the skips are counted up to it)."""
        if self.next_slot_s is None or not self._history or now_s - self._history[0][0] < self.window_s:
            return None
        if self._last_report_s is not None and now_s - self._last_report_s < self.report_interval_s:
            return None
        factor = self.real_time_factor(now_s)
        if factor is None:
            return None
        if factor >= SLOW_RTF and skipped_perception_steps == self._reported_skips:
            return None
        self._last_report_s = now_s
        self._reported_skips = skipped_perception_steps
        return PacingReport(
            real_time_factor=factor,
            window_s=self.window_s,
            lost_s=self.lost_s,
            skipped_perception_steps=skipped_perception_steps,
            sim_ns=sim_ns,
        )
