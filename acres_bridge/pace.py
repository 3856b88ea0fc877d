"""The pace of a session: its real-time factor (simulated seconds per wall second), and the
simulator's own word on it.

Both the bridge (in /get_simulator_features) and acres_demo (above its table) measure the factor
from the clock messages they get, over the last few seconds of wall time (PaceMeter; pure: the
caller gives the wall time of each arrival). The reference simulator logs a PacingReport line at
a limited rate when it runs slower than real time or skips perception steps; the demo, which
starts it, reads the line back with parse_pacing_line.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from acres_bridge.wire.clock import NS_PER_S

__all__ = ["PACE_WINDOW_S", "PaceMeter", "PacingReport", "describe_pace", "parse_pacing_line"]

PACE_WINDOW_S = 5.0


class PaceMeter:
    """Simulated time per wall time over a sliding window of wall time."""

    def __init__(self, window_s: float = PACE_WINDOW_S) -> None:
        if not window_s > 0:
            raise ValueError(f"PaceMeter needs a window > 0 s, got {window_s}")
        self.window_ns = int(window_s * NS_PER_S)
        self._samples: deque[tuple[int, int]] = deque()  # (wall ns, simulated ns)

    def record(self, wall_ns: int, sim_ns: int) -> None:
        """A clock message with simulated time sim_ns arrived at wall_ns. Simulated time that goes
        back (a new session) starts the window again."""
        if self._samples and sim_ns < self._samples[-1][1]:
            self._samples.clear()
        self._samples.append((wall_ns, sim_ns))
        while len(self._samples) > 2 and wall_ns - self._samples[1][0] >= self.window_ns:
            self._samples.popleft()

    def factor(self, wall_ns: int) -> float | None:
        """Simulated seconds per wall second from the start of the window to wall_ns; None with
        fewer than two samples. A clock that stopped (paused, lockstep between requests) reads as a
        falling factor, as it should: the simulation is not keeping real time.

        The window starts at the wall time its first clock was made, judged from the least delayed
        arrival in the window (the smallest wall - simulated offset): a first clock that arrived
        late, its reader off the CPU, would otherwise start the window late and read as faster
        than real time."""
        if len(self._samples) < 2:
            return None
        first_sim = self._samples[0][1]
        last_sim = self._samples[-1][1]
        start_wall = first_sim + min(wall - sim for wall, sim in self._samples)
        elapsed = wall_ns - start_wall
        if elapsed <= 0:
            return None
        return (last_sim - first_sim) / elapsed

    def clear(self) -> None:
        self._samples.clear()


def describe_pace(factor: float | None) -> str:
    """A few words on a factor, as the demo's header and the features' custom_info say it."""
    if factor is None:
        return "real-time factor: not measured yet"
    return f"real-time factor {factor:.2f} (simulated s per wall s, last {PACE_WINDOW_S:g} s)"


@dataclass(frozen=True, kw_only=True)
class PacingReport:
    """What a free-running simulator says about its pace."""

    real_time_factor: float  # simulated seconds per wall second over window_s
    window_s: float
    lost_s: float  # wall time given up since the start because the simulator was too far behind
    skipped_perception_steps: int  # perception steps skipped since the start (the renderer was busy)
    sim_ns: int  # the simulated time of the report: the skips are counted up to it

    def line(self) -> str:
        """The log line; parse_pacing_line reads it back."""
        return (
            f"pace: real_time_factor={self.real_time_factor:.3f} window_s={self.window_s:.1f} "
            f"lost_s={self.lost_s:.3f} skipped_perception_steps={self.skipped_perception_steps} "
            f"sim_ns={self.sim_ns}"
        )


_PACING_LINE = re.compile(
    r"pace: real_time_factor=(?P<factor>[0-9.]+) window_s=(?P<window>[0-9.]+) "
    r"lost_s=(?P<lost>[0-9.]+) skipped_perception_steps=(?P<skipped>[0-9]+) sim_ns=(?P<sim>[0-9]+)"
)


def parse_pacing_line(line: str) -> PacingReport | None:
    """The report in a line of the simulator's output, or None when the line has none."""
    found = _PACING_LINE.search(line)
    if found is None:
        return None
    return PacingReport(
        real_time_factor=float(found["factor"]),
        window_s=float(found["window"]),
        lost_s=float(found["lost"]),
        skipped_perception_steps=int(found["skipped"]),
        sim_ns=int(found["sim"]),
    )
