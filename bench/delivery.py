"""Delivery in lockstep: the largest request a plain subscriber receives whole, and the stepping client.

One simulator (lockstep, perception) serves a bridge with the full Polaris set (clock, /tf, the
INS topics, cloud, image and camera info, the DBW reports, the episode). The bench's node
subscribes to the 17 topics of all but the episode with the spec's QoS (reliable, history 10; /tf 100) and
spins while it waits, as a user's node would. For each request size it sends requests, reads the
bridge's delivery report of each and counts what arrived: a topic's row is the largest size up to
which no request lost a message of it. The bridge runs twice: as shipped (its Fast DDS profile,
acres_bridge.container.transport) and on Fast DDS's defaults, so the profile's effect is measured
in the same run. The last row steps the same set through acres_bridge.lockstep.SteppingClient.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from acres_interfaces.msg import StepDelivery

from acres_bridge.ingest.deliveries import STEP_DELIVERIES
from acres_bridge.lockstep import SteppingClient
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.nodes.dbw import REPORT_TOPICS
from acres_bridge.processes import free_port, localhost_environment
from bench._processes import Children
from bench._ros import BenchNode
from bench.core import Benchmark, Outcome, Row, Settings
from bench.errors import BenchError
from bench.lockstep import STEPS_PER_SIM_S, SteppedBridge

__all__ = ["BENCHMARK", "KINDS", "run"]

SUBSYSTEMS = ("ingest", "clock_tf", "ins", "perception", "episode", "dbw")
SIZES = (1, 2, 4, 8, 15, 30, 60, 120, 240)
SETTLE_S = 0.5  # after the report: this long without a message, and nothing more is coming
KINDS: Mapping[str, tuple[str, ...]] = {
    "/clock (120 Hz)": ("/clock",),
    "/tf (100 Hz, depth 100)": ("/tf",),
    "INS topics (100 Hz)": (
        "/vehicle/odom",
        "/oxts/imu",
        "/oxts/velocity",
        "/oxts/fix",
        "/sim/ground_truth/odom",
    ),
    "DBW reports (50 Hz)": REPORT_TOPICS,
    "perception (10 Hz)": ("/lidar/points", "/camera/image_raw", "/camera/camera_info"),
}
TOPICS = tuple(topic for topics in KINDS.values() for topic in topics)
SHIPPED = "bridge profile"
DEFAULTS = "Fast DDS defaults"
CLIENT = "stepping client, full Polaris set, 240 steps/call"
# A participant profile that changes nothing: named by the user, it keeps the bridge's own away.
_DEFAULT_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <participant profile_name="defaults" is_default_profile="true"><rtps/></participant>
</profiles>
"""


def _row_name(kind: str, transport: str) -> str:
    return f"largest lossless request, depth-10 subscriber, {kind}, {transport}"


ROWS = (
    *((_row_name(kind, transport), "steps") for transport in (SHIPPED, DEFAULTS) for kind in KINDS),
    (CLIENT, "steps/s"),
)


@dataclass
class _Counts:
    """Messages received per topic since the last clear, and the delivery reports."""

    received: dict[str, int]
    reports: list[Any]

    def clear(self) -> None:
        self.received = dict.fromkeys(self.received, 0)
        self.reports.clear()


def _subscribe(ros: BenchNode) -> _Counts:
    profiles = load_profiles()
    counts = _Counts(received=dict.fromkeys(TOPICS, 0), reports=[])
    for topic in TOPICS:
        spec = profiles.topic("polaris", topic)

        def count(_message: Any, topic: str = topic) -> None:
            counts.received[topic] += 1

        spec.create_subscription(ros.node, count)
    ros.node.create_subscription(StepDelivery, STEP_DELIVERIES, counts.reports.append, 100)
    return counts


def _lost(ros: BenchNode, bridge: SteppedBridge, counts: _Counts, steps: int) -> dict[str, int]:
    """Messages of each topic that one request of `steps` did not bring to the subscriber."""
    counts.clear()
    bridge.step(steps)
    ros.wait_until(lambda: bool(counts.reports), "the delivery report", 30.0)
    due = {t.topic: len(t.steps) for t in counts.reports[0].topics if t.topic in counts.received}
    seen = dict(counts.received)
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < SETTLE_S and any(counts.received[t] < due[t] for t in due):
        ros.spin_for(0.02)
        if counts.received != seen:
            seen, quiet_since = dict(counts.received), time.monotonic()
    return {topic: due[topic] - counts.received[topic] for topic in due}


def _largest_lossless(
    ros: BenchNode, transport: str, repetitions: int, env: dict[str, str] | None
) -> dict[str, int]:
    """For each kind, the largest request size up to which nothing of it was lost."""
    with Children() as started:
        port = free_port()
        simulator = started.simulator(port, lockstep=True, perception=True)
        process = started.bridge(port, subsystems=SUBSYSTEMS, env=env)
        bridge = SteppedBridge(ros, process, simulator)
        bridge.wait_paused()
        counts = _subscribe(ros)
        ros.wait_until(
            lambda: all(ros.node.count_publishers(t) > 0 for t in (*TOPICS, STEP_DELIVERIES)),
            f"the bridge's publishers ({transport})",
            30.0,
        )
        bridge.step(30)  # the GNSS fix: odometry, the fix and /tf from here on
        ros.spin_for(SETTLE_S)
        largest = dict.fromkeys(KINDS, 0)
        open_kinds = set(KINDS)
        for size in SIZES:
            losses = [_lost(ros, bridge, counts, size) for _ in range(repetitions)]
            for kind in list(open_kinds):
                if any(loss[t] > 0 for loss in losses for t in KINDS[kind]):
                    open_kinds.discard(kind)
                else:
                    largest[kind] = size
            if not open_kinds:
                break
        for subscription in list(ros.node.subscriptions):
            ros.node.destroy_subscription(subscription)
    return largest


def _client_rate(ros: BenchNode, total: int) -> float:
    with Children() as started:
        port = free_port()
        started.simulator(port, lockstep=True, perception=True)
        started.bridge(port, subsystems=SUBSYSTEMS)
        client = SteppingClient(ros.node, list(TOPICS), executor=ros.executor)
        client.step(30)
        start = time.perf_counter()
        left = total
        while left > 0:
            batch = client.step(min(240, left))
            left -= batch.last_step - batch.first_step + 1
        rate = total / (time.perf_counter() - start)
        client.destroy()
    return rate


def run(settings: Settings) -> Outcome:
    repetitions, client_steps = settings.pick((5, 2400), (1, 480))
    with TemporaryDirectory() as folder, BenchNode() as ros:
        defaults = Path(folder) / "fastdds_defaults.xml"
        defaults.write_text(_DEFAULT_PROFILE, encoding="utf-8")
        env_defaults = localhost_environment()
        env_defaults["FASTRTPS_DEFAULT_PROFILES_FILE"] = str(defaults)
        shipped = _largest_lossless(ros, SHIPPED, repetitions, None)
        plain = _largest_lossless(ros, DEFAULTS, repetitions, env_defaults)
        rate = _client_rate(ros, client_steps)
    if not shipped or not plain:
        raise BenchError("no request size measured")
    note = (
        f"{repetitions} request(s) per size of {', '.join(map(str, SIZES))}; "
        "the largest size up to which none lost a message of these topics"
    )
    rows = [
        Row(name=_row_name(kind, transport), value=float(found[kind]), unit="steps", notes=note)
        for transport, found in ((SHIPPED, shipped), (DEFAULTS, plain))
        for kind in KINDS
    ]
    rows.append(
        Row(
            name=CLIENT,
            value=rate,
            unit="steps/s",
            notes=f"{rate / STEPS_PER_SIM_S:.1f}x real time; every message of {len(TOPICS)} topics received, "
            "in requests of 30 steps; compare the full Polaris set's lockstep row (no subscriber)",
        )
    )
    return Outcome(rows=tuple(rows))


BENCHMARK = Benchmark(key="delivery", rows=ROWS, run=run)
