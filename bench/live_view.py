"""The live view's cost: the bridge's CPU at 1x with the full Polaris set, without a viewer and with
one viewer subscribed to every channel, in the same session.

The simulator runs free at real time (perception on, the Polaris parked); the bridge runs the full
Polaris set and the foxglove subsystem. A viewer speaking the Foxglove protocol connects first and
subscribes to nothing: the bridge's CPU per simulated second over a window (the simulated time
from the server's time messages). Then the viewer subscribes to every channel (the cloud and the
image included, about 30 MB per simulated second) and reads all of it, and the same is measured
again. Target: at most 1.3x the bridge's CPU without the viewer. Last, the viewer unsubscribes
and a second viewer subscribes to every channel and never reads (its outbox fills, the server drops
its oldest messages): the bridge's CPU then, against that with the reading viewer. Target: a
stalled viewer costs the bridge no more than a reading one (1.0x, within the noise).
"""

from __future__ import annotations

import time

from acres_bridge.live_view.viewer import Viewer, open_viewer
from acres_bridge.processes import free_port
from bench._processes import Child, Children
from bench.core import Benchmark, Outcome, Row, Settings
from bench.errors import BenchError

__all__ = ["BENCHMARK", "run"]

SUBSYSTEMS = ("ingest", "clock_tf", "ins", "perception", "episode", "dbw", "reset", "foxglove")
ALONE = "bridge CPU at 1x, full Polaris set, no viewer"
VIEWED = "bridge CPU at 1x, full Polaris set, one viewer of everything"
RATIO = "live view's cost: bridge CPU with a viewer / without"
STALLED = "bridge CPU at 1x, full Polaris set, one stalled viewer of everything"
STALL_RATIO = "a stalled viewer's cost: bridge CPU with it / with a reading viewer"
ROWS = ((ALONE, "ms/sim s"), (VIEWED, "ms/sim s"), (RATIO, "x"), (STALLED, "ms/sim s"), (STALL_RATIO, "x"))
TARGET = 1.3
NS = 1_000_000_000


def _window(bridge: Child, viewer: Viewer, wall_s: float) -> tuple[float, float, int]:
    """(bridge CPU s, simulated s, bytes the viewer got) over `wall_s` of wall time."""
    cpu, sim, got = bridge.cpu_seconds(), viewer.times[-1], viewer.bytes_received
    time.sleep(wall_s)
    bridge.check_alive()
    return bridge.cpu_seconds() - cpu, (viewer.times[-1] - sim) / NS, viewer.bytes_received - got


def run(settings: Settings) -> Outcome:
    warmup_s, window_s = settings.pick((3.0, 10.0), (2.0, 3.0))
    with Children() as started:
        port, view_port = free_port(), free_port()
        started.simulator(port, lockstep=False, perception=True)
        bridge = started.bridge(port, subsystems=SUBSYSTEMS, foxglove_port=view_port)
        viewer = open_viewer(view_port, keep=False)
        try:
            viewer.wait_for(lambda: len(viewer.times) > 2, "the simulation clock on the viewer")
            time.sleep(warmup_s)
            alone_cpu, alone_sim, _ = _window(bridge, viewer, window_s)
            viewer.subscribe(sorted(viewer.channels))
            time.sleep(warmup_s)
            viewed_cpu, viewed_sim, got = _window(bridge, viewer, window_s)
            viewer.unsubscribe(sorted(viewer.channels))
            stalled = open_viewer(view_port, read=False, keep=False)
            try:
                stalled.subscribe(sorted(stalled.channels))
                time.sleep(warmup_s)
                stalled_cpu, stalled_sim, _ = _window(bridge, viewer, window_s)  # the reader's clock
            finally:
                stalled.close()
        finally:
            viewer.close()
    if min(alone_sim, viewed_sim, stalled_sim) <= 0:
        raise BenchError("the simulation clock did not advance during a window")
    alone = 1000.0 * alone_cpu / alone_sim
    viewed = 1000.0 * viewed_cpu / viewed_sim
    ratio = viewed / alone
    verdict = "met" if ratio <= TARGET else "missed"
    stalled_ms = 1000.0 * stalled_cpu / stalled_sim
    return Outcome(
        rows=(
            Row(
                name=ALONE,
                value=alone,
                unit="ms/sim s",
                notes=f"user+sys of the bridge over {alone_sim:.1f} sim s "
                f"({alone_sim / window_s:.2f}x real time); a viewer connected, subscribed to nothing",
            ),
            Row(
                name=VIEWED,
                value=viewed,
                unit="ms/sim s",
                notes=f"the viewer subscribed to all {len(viewer.channels)} channels: "
                f"{got / 1e6 / viewed_sim:.1f} MB per sim s to it over {viewed_sim:.1f} sim s",
            ),
            Row(
                name=RATIO,
                value=ratio,
                unit="x",
                notes=f"same session, same run; target <= {TARGET}: {verdict}",
            ),
            Row(
                name=STALLED,
                value=stalled_ms,
                unit="ms/sim s",
                notes=f"a second viewer of all channels, never reading, over {stalled_sim:.1f} sim s",
            ),
            Row(
                name=STALL_RATIO,
                value=stalled_ms / viewed,
                unit="x",
                notes="same session, same run; target <= 1.0 (within the noise)",
            ),
        )
    )


BENCHMARK = Benchmark(key="live_view", rows=ROWS, run=run)
