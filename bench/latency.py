"""Sample-to-publish latency at real-time pace: from the simulator's send to the subscriber.

The simulator runs free, paced at 120 Hz, in a child process of bench/ (bench/_paced_sim.py)
that notes, per step, the CLOCK_MONOTONIC time just before the step's frames go to the kernel,
keyed by the simulation stamp of the frame. The bench process subscribes to /oxts/imu and
/clock and notes CLOCK_MONOTONIC when each message reaches its callback. CLOCK_MONOTONIC is one
clock for every process on a Linux machine, so the two compare directly; the stamp in the ROS
message (simulation time) identifies the sample, no clock needs to be synchronised.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu

from acres_bridge.convert.stamps import time_ns
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.processes import SIMULATOR_READY_LINE, free_port
from bench._processes import BRIDGE_SUBSYSTEMS, START_TIMEOUT_S, Children
from bench._ros import BenchNode
from bench._stats import median, percentile, spread
from bench.core import Benchmark, Outcome, Row, Settings
from bench.errors import BenchError

__all__ = ["BENCHMARK", "run"]

IMU_P50 = "sample-to-publish latency /oxts/imu p50"
IMU_P99 = "sample-to-publish latency /oxts/imu p99"
CLOCK_P50 = "sample-to-publish latency /clock p50"
CLOCK_P99 = "sample-to-publish latency /clock p99"
BRIDGE_CPU = "bridge CPU per simulated second, real time"

ROWS = (
    (IMU_P50, "ms"),
    (IMU_P99, "ms"),
    (CLOCK_P50, "ms"),
    (CLOCK_P99, "ms"),
    (BRIDGE_CPU, "ms/sim s"),
)

_RATES_HZ = {"ins": 100, "clock": 120}
_TOPICS = {"ins": "/oxts/imu", "clock": "/clock"}


@dataclass(frozen=True, kw_only=True)
class _Plan:
    windows: int
    window_s: float
    warmup_s: float


@dataclass
class _Receipts:
    """(stamp_ns, received monotonic ns) per topic kind, as the callbacks note them."""

    by_kind: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: {k: [] for k in _TOPICS})

    def callback(self, kind: str, stamp_of: Callable[[Any], Any]) -> Callable[[Any], None]:
        received = self.by_kind[kind]

        def note(message: Any) -> None:
            now = time.monotonic_ns()
            stamp = stamp_of(message)
            received.append((time_ns(stamp), now))

        return note

    def take(self) -> dict[str, list[tuple[int, int]]]:
        taken = {kind: list(values) for kind, values in self.by_kind.items()}
        for values in self.by_kind.values():
            values.clear()
        return taken


@dataclass(frozen=True, kw_only=True)
class _Window:
    receipts: dict[str, list[tuple[int, int]]]
    bridge_cpu_s: float
    wall_s: float


def _read_sent(path: Path) -> dict[str, dict[int, int]]:
    sent: dict[str, dict[int, int]] = {kind: {} for kind in _TOPICS}
    for line in path.read_text().splitlines():
        kind, stamp, at = line.split()
        sent[kind][int(stamp)] = int(at)
    return sent


def _measure(plan: _Plan) -> tuple[list[_Window], dict[str, dict[int, int]]]:
    profiles = load_profiles()
    with tempfile.TemporaryDirectory(prefix="acres_bench_") as folder, Children() as started:
        log = Path(folder) / "sent.txt"
        port = free_port()
        simulator = started.start(
            "acres_sim (paced, logging)",
            [sys.executable, "-m", "bench._paced_sim", "--port", str(port), "--log", str(log)],
        )
        simulator.wait_for_line(SIMULATOR_READY_LINE, START_TIMEOUT_S)
        bridge = started.bridge(port)
        receipts = _Receipts()
        windows: list[_Window] = []
        with BenchNode() as ros:
            for kind, message_type, stamp_of in (
                ("ins", Imu, lambda m: m.header.stamp),
                ("clock", Clock, lambda m: m.clock),
            ):
                qos = profiles.topic("polaris", _TOPICS[kind]).qos
                assert qos is not None
                profile = qos.to_rclpy()
                profile.depth = 1000  # the bridge's QoS, with room for a slow spin of this process
                ros.node.create_subscription(
                    message_type, _TOPICS[kind], receipts.callback(kind, stamp_of), profile
                )
            ros.wait_until(
                lambda: all(receipts.by_kind.values()),
                "the first /oxts/imu and /clock from the bridge",
                60.0,
                watch=(bridge, simulator),
            )
            ros.spin_for(plan.warmup_s)
            for _ in range(plan.windows):
                receipts.take()
                cpu0, wall0 = bridge.cpu_seconds(), time.monotonic()
                ros.spin_for(plan.window_s)
                cpu, wall = bridge.cpu_seconds() - cpu0, time.monotonic() - wall0
                windows.append(_Window(receipts=receipts.take(), bridge_cpu_s=cpu, wall_s=wall))
        bridge.stop()
        if simulator.stop() != 0 or not log.exists():
            raise BenchError(f"the paced simulator wrote no send log; its output:\n{simulator.text_tail()}")
        return windows, _read_sent(log)


def _latencies_ms(receipts: list[tuple[int, int]], sent: dict[int, int]) -> tuple[list[float], int]:
    """Latency of every matched receipt, and how many receipts had no send time."""
    latencies = [(received - sent[stamp]) / 1e6 for stamp, received in receipts if stamp in sent]
    return latencies, len(receipts) - len(latencies)


def run(settings: Settings) -> Outcome:
    plan = settings.pick(
        _Plan(windows=3, window_s=10.0, warmup_s=2.0), _Plan(windows=1, window_s=4.0, warmup_s=1.0)
    )
    windows, sent = _measure(plan)
    rows: list[Row] = []
    for kind, p50_name, p99_name in (("ins", IMU_P50, IMU_P99), ("clock", CLOCK_P50, CLOCK_P99)):
        p50s: list[float] = []
        p99s: list[float] = []
        count = unmatched = 0
        expected = 0.0
        for window in windows:
            latencies, missing = _latencies_ms(window.receipts[kind], sent[kind])
            if not latencies:
                raise BenchError(f"no {_TOPICS[kind]} message in a {window.wall_s:.1f} s window")
            p50s.append(percentile(latencies, 50))
            p99s.append(percentile(latencies, 99))
            count += len(latencies)
            unmatched += missing
            expected += window.wall_s * _RATES_HZ[kind]
        over = f"{count} samples in {len(windows)} x {plan.window_s:g} s ({100 * count / expected:.0f}% of "
        over += f"{_RATES_HZ[kind]} Hz)" + (f", {unmatched} unmatched" if unmatched else "")
        many = len(windows) > 1
        rows.append(
            Row(
                name=p50_name,
                value=median(p50s),
                unit="ms",
                notes=over + (f"; median of windows (range {spread(p50s)})" if many else "") + " [2]",
            )
        )
        rows.append(
            Row(
                name=p99_name,
                value=median(p99s),
                unit="ms",
                notes=(f"median of windows (range {spread(p99s)})" if many else "one window") + " [2]",
            )
        )
    cpu_ms = [1000.0 * w.bridge_cpu_s / w.wall_s for w in windows]
    rows.append(
        Row(
            name=BRIDGE_CPU,
            value=median(cpu_ms),
            unit="ms/sim s",
            notes=f"free run at 120 Hz, one subscriber on /oxts/imu and /clock; = {median(cpu_ms) / 10:.0f}% "
            "of a core",
        )
    )
    footnotes = (
        "[2] Latency: the simulator (bench/_paced_sim.py, acres_sim's SimServer with a subclass that "
        "notes send times) runs free at 120 Hz and notes time.monotonic_ns() just before each step's "
        "frames go to the kernel; the bench's subscriber notes time.monotonic_ns() on entry to its "
        "callback; samples are matched by their simulation stamp. CLOCK_MONOTONIC is one clock for all "
        "processes of the machine. Includes the bench's rclpy executor (deserialisation, dispatch). "
        f"The bridge runs {', '.join(BRIDGE_SUBSYSTEMS)}, as in the lockstep rows.",
    )
    return Outcome(rows=tuple(rows), footnotes=footnotes)


BENCHMARK = Benchmark(key="latency", rows=ROWS, run=run)
