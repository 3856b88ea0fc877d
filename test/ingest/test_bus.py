"""The in-process sample bus and the SampleSubscription that chooses between it and the ROS topic."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import rclpy
from rclpy.context import Context
from rclpy.node import Node

from acres_bridge.ingest.bus import SampleBus
from acres_bridge.ingest.channels import CLOCK, INS, SampleSubscription, channel_key
from acres_bridge.wire import Clock


def test_samples_reach_every_subscriber_in_order() -> None:
    bus = SampleBus()
    bus.register_producer("/k")
    first: list[int] = []
    second: list[int] = []
    bus.subscribe("/k", first.append)
    bus.subscribe("/k", second.append)
    assert [bus.publish("/k", n) for n in (1, 2, 3)] == [2, 2, 2]
    assert first == second == [1, 2, 3]


def test_a_failing_subscriber_is_counted_and_the_others_still_get_the_sample() -> None:
    bus = SampleBus()

    def broken(_sample: object) -> None:
        raise RuntimeError("subscriber bug")

    got: list[int] = []
    bus.subscribe("/k", broken)
    bus.subscribe("/k", got.append)
    bus.publish("/k", 1)
    bus.publish("/k", 2)
    assert got == [1, 2]
    assert bus.errors["/k"] == 2


def test_a_latched_channel_replays_its_last_sample_to_a_late_subscriber() -> None:
    bus = SampleBus()
    bus.register_producer("/latched", latched=True)
    bus.register_producer("/plain")
    bus.publish("/latched", "old")
    bus.publish("/latched", "last")
    bus.publish("/plain", "gone")
    late: list[str] = []
    bus.subscribe("/latched", late.append)
    bus.subscribe("/plain", late.append)
    assert late == ["last"]


def test_unsubscribed_callbacks_get_nothing_more() -> None:
    bus = SampleBus()
    got: list[int] = []
    subscription = bus.subscribe("/k", got.append)
    bus.publish("/k", 1)
    subscription.close()
    bus.publish("/k", 2)
    assert got == [1]
    assert bus.subscriber_count("/k") == 0


def test_producer_watchers_hear_the_first_producer_and_the_last_one_leaving() -> None:
    bus = SampleBus()
    heard: list[tuple[str, bool]] = []
    unwatch = bus.watch_producers(lambda key, present: heard.append((key, present)))
    bus.register_producer("/k")
    bus.register_producer("/k")
    bus.unregister_producer("/k")
    bus.unregister_producer("/k")
    unwatch()
    bus.register_producer("/k")
    assert heard == [("/k", True), ("/k", True), ("/k", False)]


@pytest.fixture
def node() -> Iterator[Node]:
    context = Context()
    rclpy.init(context=context, args=[])
    ros_node = Node("bus_test", context=context)
    yield ros_node
    ros_node.destroy_node()
    context.try_shutdown()


def test_a_source_uses_the_ros_topic_until_an_ingest_appears_in_its_process(node: Node) -> None:
    bus = SampleBus()
    got: list[Clock] = []
    source = SampleSubscription(node, CLOCK, got.append, namespace="/robot", bus=bus)
    assert source.key == "/robot/_acres_ingest/clock"
    assert not source.in_process
    assert node.count_subscribers("/robot/_acres_ingest/clock") == 1  # the ROS path
    bus.register_producer(source.key)
    assert source.in_process
    assert node.count_subscribers("/robot/_acres_ingest/clock") == 0
    bus.publish(source.key, Clock(step=1, stamp_ns=8_333_333))
    assert got == [Clock(step=1, stamp_ns=8_333_333)]
    bus.unregister_producer(source.key)
    assert not source.in_process
    source.close()
    assert node.count_subscribers("/robot/_acres_ingest/clock") == 0


def test_channel_keys_follow_the_namespace_and_the_agent() -> None:
    assert channel_key("/", "clock") == "/_acres_ingest/clock"
    assert channel_key("", "clock") == "/_acres_ingest/clock"
    assert INS.key("/fleet/", 3) == "/fleet/_acres_ingest/agent_3/ins"
