"""The can node in one process with a real rclpy context: can/rx from the bus, can/tx to the bus,
the barrier left out, bad frames and the absent fence refused and counted."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import rclpy
from can_msgs.msg import Frame
from rclpy.context import Context
from rclpy.parameter import Parameter

from acres_bridge.ingest.channels import CAN_RX, CAN_TX
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.nodes.can import Can
from acres_bridge.wire.can import CanFrame, barrier_frame
from nodes.node_rig import NodeRig, node_rig

TIMEOUT = 10.0
CAN_QOS = load_profiles().topic("maxxum", "can/rx").qos
assert CAN_QOS is not None
GROUP = tuple(
    CanFrame(can_id=0x0CF00400 + i, data=bytes([i] * 8), dlc=8, stamp_ns=100_000_000, step=12)
    for i in range(13)
)


@dataclasses.dataclass
class Rig:
    """The can node in its rig, with a probe on can/rx and a publisher on can/tx."""

    nodes: NodeRig
    rx: list[Frame]
    tx: Any

    @property
    def node(self) -> Can:
        node: Can = self.nodes.node
        return node

    @property
    def sent(self) -> list[CanFrame]:
        return self.nodes.sent

    def send(self, message: Frame) -> None:
        before = self.node.forwarded + sum(self.node.refused.values())
        self.tx.publish(message)
        self.nodes.spin_until(
            lambda: self.node.forwarded + sum(self.node.refused.values()) > before, "the node"
        )


@contextmanager
def can_rig(monkeypatch: pytest.MonkeyPatch, *, fenced: bool = True) -> Iterator[Rig]:
    def unfence() -> None:  # after init: the context itself stays on this machine
        for name in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
            monkeypatch.delenv(name, raising=False)

    with node_rig(
        Can, vehicle="maxxum", feeds=(CAN_RX,), sends=(CAN_TX,), before_node=None if fenced else unfence
    ) as nodes:
        yield Rig(nodes, nodes.received("maxxum", "can/rx", depth=1000), nodes.publisher("maxxum", "can/tx"))


@pytest.fixture
def rig(monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    with can_rig(monkeypatch) as made:
        yield made


def frame(can_id: int = 0x0CFF30FF, dlc: int = 8, *, extended: bool = True) -> Frame:
    message = Frame(id=can_id, dlc=dlc, is_extended=extended)
    message.data = np.arange(1, 9, dtype=np.uint8)
    return message


def test_a_group_reaches_can_rx_whole_and_the_barrier_does_not(rig: Rig) -> None:
    for can_frame in (*GROUP, barrier_frame(step=12, stamp_ns=100_000_000, frames_sent=13)):
        rig.nodes.feed(CAN_RX, can_frame)
    rig.nodes.spin_until(lambda: len(rig.rx) >= 13, "13 frames")
    rig.nodes.executor.spin_once(timeout_sec=0.2)
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
    with can_rig(monkeypatch, fenced=False) as unfenced:
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
