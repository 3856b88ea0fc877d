"""acres_demo's monitor: a message without a stamp is placed among the clocks it was published between,
however late the demo's own /clock reader is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import rclpy
from builtin_interfaces.msg import Time
from rclpy.context import Context
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool

from acres_bridge.demo.monitor import Monitor
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.topic_watch import TopicWatch
from acres_bridge.wire.clock import NS_PER_S

PROFILES = load_profiles(check_types=False)
STEP_NS = NS_PER_S // 120


@pytest.fixture
def monitor() -> Iterator[Monitor]:
    context = Context()
    rclpy.init(context=context, args=[])
    watches = [TopicWatch(PROFILES.topic("polaris", name)) for name in ("/clock", "/vehicle/dbw_enabled")]
    node = Monitor(watches, context=context, subscribe=lambda _watch: False)
    yield node
    node.destroy_node()
    context.try_shutdown()


def clock_at(step: int) -> Clock:
    return Clock(clock=Time(sec=step * STEP_NS // NS_PER_S, nanosec=step * STEP_NS % NS_PER_S))


def test_an_unstamped_message_ahead_of_its_clock_waits_for_it(monitor: Monitor) -> None:
    clock_watch, enabled = monitor.watches
    on_clock = monitor._callback(clock_watch)
    on_enabled = monitor._raw_callback(enabled, None)
    data = serialize_message(Bool(data=True))
    source = 1_000_000_000  # the bridge's wall clock: step s's /clock at source + s ms
    on_clock(clock_at(1), {"source_timestamp": source + 1_000_000, "publication_sequence_number": 1})
    # Steps 2..60 are published, the report of step 60 comes before this reader's clocks of 2..60.
    on_enabled(data, {"source_timestamp": source + 60_000_000 + 500, "publication_sequence_number": 1})
    assert enabled.placed == 0  # not placed at step 1's clock
    on_clock(clock_at(61), {"source_timestamp": source + 61_000_000, "publication_sequence_number": 61})
    assert enabled.placed == 1
    # Interpolated between the clocks it has on either side: step 60, not step 1.
    assert enabled.newest_sim_ns == pytest.approx(60 * STEP_NS, abs=STEP_NS)
    assert enabled.newest_uncertainty_ns == 60 * STEP_NS


def test_a_message_ahead_of_the_clocks_holds_up_no_other(monitor: Monitor) -> None:
    clock_watch, enabled = monitor.watches
    on_clock = monitor._callback(clock_watch)
    on_enabled = monitor._raw_callback(enabled, None)
    data = serialize_message(Bool(data=True))
    source = 1_000_000_000
    on_clock(clock_at(1), {"source_timestamp": source + 1_000_000, "publication_sequence_number": 1})
    on_enabled(data, {"source_timestamp": source + 90_000_000, "publication_sequence_number": 2})  # ahead
    on_enabled(data, {"source_timestamp": source + 5_000_000, "publication_sequence_number": 1})
    on_clock(clock_at(10), {"source_timestamp": source + 10_000_000, "publication_sequence_number": 10})
    assert enabled.placed == 1  # the one the clocks bracket, not held up by the one ahead of them
    on_clock(clock_at(100), {"source_timestamp": source + 100_000_000, "publication_sequence_number": 100})
    assert enabled.placed == 2
