"""AckWait over real DDS: the reliable writers of a request are waited for until their readers
acknowledge; a reader in a stopped process is waited for ACK_TIMEOUT_S at most and named."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import rclpy
from nav_msgs.msg import Odometry
from rclpy.context import Context
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from acres_bridge.container.transport import BRIDGE_PROFILES
from acres_bridge.ingest.acks import AckWait

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
READER = """
import rclpy, sys
from rclpy.node import Node
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
rclpy.init()
node = Node("reader")
qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
node.create_subscription(Odometry, sys.argv[1], lambda m: None, qos)
print("reading", flush=True)
rclpy.spin(node)
"""


@pytest.fixture
def node(monkeypatch: pytest.MonkeyPatch) -> Iterator[Node]:
    monkeypatch.setenv("FASTRTPS_DEFAULT_PROFILES_FILE", str(BRIDGE_PROFILES))  # the bridge's heartbeat
    context = Context()
    rclpy.init(context=context)
    made = Node("writer", context=context)
    yield made
    made.destroy_node()
    context.try_shutdown()


@pytest.fixture
def reader(node: Node) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A reliable reader of a topic of its own in another process: (the process, the topic)."""
    topic = f"/acks_{os.getpid()}"
    process = subprocess.Popen(
        [sys.executable, "-c", READER, topic], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "reading"
    yield process, topic
    process.send_signal(signal.SIGCONT)
    process.kill()
    process.wait(10.0)


def _matched(publisher: object) -> None:
    deadline = time.monotonic() + 20.0
    while publisher.get_subscription_count() == 0:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "the reader never matched"
        time.sleep(0.05)


def test_a_reader_that_acknowledges_ends_the_wait(
    node: Node, reader: tuple[subprocess.Popen[str], str]
) -> None:
    acks = AckWait()
    publisher = node.create_publisher(Odometry, reader[1], RELIABLE)
    _matched(publisher)
    acks.open()
    publisher.publish(Odometry())
    acks.wrote(publisher)
    assert acks.wait(timeout_s=10.0) == []
    assert acks.timeouts == 0


def test_a_stopped_reader_is_waited_for_the_bound_and_named(
    node: Node, reader: tuple[subprocess.Popen[str], str]
) -> None:
    process, topic = reader
    acks = AckWait()
    publisher = node.create_publisher(Odometry, topic, RELIABLE)
    _matched(publisher)
    process.send_signal(signal.SIGSTOP)
    acks.open()
    publisher.publish(Odometry())
    acks.wrote(publisher)
    assert acks.wait(timeout_s=0.3) == [topic]
    assert acks.timeouts == 1
    acks.open()  # the next request waits again, and no longer than the bound
    publisher.publish(Odometry())
    acks.wrote(publisher)
    started = time.monotonic()
    assert acks.wait(timeout_s=0.3) == [topic]
    assert time.monotonic() - started < 10.0


def test_only_reliable_writers_of_the_request_are_waited_for(node: Node) -> None:
    acks = AckWait()
    reliable = node.create_publisher(Odometry, "/acks_outside", RELIABLE)
    best_effort = node.create_publisher(Odometry, "/acks_best_effort", BEST_EFFORT)
    acks.wrote(reliable)  # outside a request: not noted
    acks.open()
    acks.wrote(best_effort)  # nothing to acknowledge
    assert acks.wait(timeout_s=0.0) == []
    acks.open()
    acks.wrote(reliable)
    acks.abandon()  # a failed request forgets its writers
    assert acks.wait(timeout_s=0.0) == []
