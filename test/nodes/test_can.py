"""The can node in one process with a real rclpy context: can/rx from the bus, can/tx to the bus,
the barrier left out, bad frames and the absent fence refused and counted."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import rclpy
from can_msgs.msg import Frame
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

from acres_bridge.ingest.bus import BUS
from acres_bridge.ingest.channels import CAN_RX, CAN_TX
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.nodes.can import Can
from acres_bridge.wire.can import CanFrame, barrier_frame

TIMEOUT = 10.0
CAN_QOS = load_profiles().topic("maxxum", "can/rx").qos
assert CAN_QOS is not None
GROUP = tuple(
    CanFrame(can_id=0x0CF00400 + i, data=bytes([i] * 8), dlc=8, stamp_ns=100_000_000, step=12)
    for i in range(13)
)


@dataclasses.dataclass
class Rig:
    node: Can
    namespace: str
    executor: SingleThreadedExecutor
    rx: list[Frame]
    sent: list[CanFrame]
    tx: Any

    def spin_until(self, condition: Callable[[], object], what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}")
            self.executor.spin_once(timeout_sec=0.02)

    def send(self, message: Frame) -> None:
        before = self.node.forwarded + sum(self.node.refused.values())
        self.tx.publish(message)
        self.spin_until(lambda: self.node.forwarded + sum(self.node.refused.values()) > before, "the node")


def make_rig(monkeypatch: pytest.MonkeyPatch, *, fenced: bool = True) -> Iterator[Rig]:
    context = Context()
    rclpy.init(context=context, args=[])
    if fenced:
        monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    else:  # after init: the context itself stays on this machine
        for name in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
            monkeypatch.delenv(name, raising=False)
    namespace = f"/can_{uuid.uuid4().hex[:8]}"
    rx_key = CAN_RX.key(namespace, 0)
    BUS.register_producer(rx_key)
    sent: list[CanFrame] = []
    taken = BUS.subscribe(CAN_TX.key(namespace, 0), sent.append)
    node = Can(
        context=context, namespace=namespace, parameter_overrides=[Parameter("vehicle", value="maxxum")]
    )
    probe = Node("probe", namespace=namespace, context=context)
    rx: list[Frame] = []
    probe.create_subscription(Frame, "can/rx", rx.append, CAN_QOS.to_rclpy())
    tx = probe.create_publisher(Frame, "can/tx", CAN_QOS.to_rclpy())
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(probe)
    rig = Rig(node, namespace, executor, rx, sent, tx)
    rig.spin_until(
        lambda: tx.get_subscription_count() and node.count_subscribers("can/rx"), "the subscriptions"
    )
    try:
        yield rig
    finally:
        taken.close()
        node.destroy_node()
        probe.destroy_node()
        executor.shutdown()
        BUS.unregister_producer(rx_key)
        context.try_shutdown()


@pytest.fixture
def rig(monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    yield from make_rig(monkeypatch)


def frame(can_id: int = 0x0CFF30FF, dlc: int = 8, *, extended: bool = True) -> Frame:
    message = Frame(id=can_id, dlc=dlc, is_extended=extended)
    message.data = np.arange(1, 9, dtype=np.uint8)
    return message


def test_a_group_reaches_can_rx_whole_and_the_barrier_does_not(rig: Rig) -> None:
    key = CAN_RX.key(rig.namespace, 0)
    for can_frame in (*GROUP, barrier_frame(step=12, stamp_ns=100_000_000, frames_sent=13)):
        BUS.publish(key, can_frame)
    rig.spin_until(lambda: len(rig.rx) >= 13, "13 frames")
    rig.executor.spin_once(timeout_sec=0.2)
    assert len(rig.rx) == 13 == rig.node.published
    assert [m.id for m in rig.rx] == [f.can_id for f in GROUP]
    assert {(m.header.frame_id, m.header.stamp.sec, m.header.stamp.nanosec) for m in rig.rx} == {
        ("can", 0, 100_000_000)
    }


def test_a_good_can_tx_frame_goes_to_the_ingest(rig: Rig) -> None:
    rig.send(frame(dlc=3))
    (sent,) = rig.sent
    assert (sent.can_id, sent.dlc, sent.data, sent.is_extended) == (0x0CFF30FF, 3, b"\x01\x02\x03", True)


@pytest.mark.parametrize(
    "message",
    [frame(dlc=9), frame(can_id=1 << 29), frame(can_id=0x800, extended=False)],
    ids=["dlc-9", "id-30-bits", "standard-id-12-bits"],
)
def test_a_bad_can_tx_frame_is_refused_and_counted(rig: Rig, message: Frame) -> None:
    rig.send(message)
    rig.send(frame())  # the next good one goes on
    assert rig.node.refused == {"frame": 1}
    assert len(rig.sent) == 1


def test_without_the_fence_can_tx_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for unfenced in make_rig(monkeypatch, fenced=False):
        unfenced.send(frame())
        assert unfenced.sent == []
        assert unfenced.node.refused == {"unfenced": 1}


def test_the_can_node_serves_only_a_maxxum() -> None:
    context = Context()
    rclpy.init(context=context, args=[])
    try:
        with pytest.raises(ValueError, match="the can node serves the Maxxum's CAN bus; a polaris has none"):
            Can(context=context, parameter_overrides=[Parameter("vehicle", value="polaris")])
    finally:
        context.try_shutdown()
