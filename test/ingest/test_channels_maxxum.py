"""The Maxxum's internal channels: the observation, the commands and CAN frames cross the internal
topic unchanged; a message that does not decode is refused, and SampleSubscription drops and counts it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import rclpy
from can_msgs.msg import Frame
from convert.test_maxxum import OBSERVATION
from rclpy.context import Context
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import String

from acres_bridge.convert.can import CanFrameRefusedError
from acres_bridge.ingest.bus import SampleBus
from acres_bridge.ingest.channels import (
    CAN_RX,
    CAN_TX,
    MAXXUM_COMMAND,
    MAXXUM_OBSERVATION,
    IngestChannel,
    SampleSubscription,
)
from acres_bridge.wire import ProtocolError
from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.maxxum import Difflock, HitchMode, ImplementControls, MaxxumCommand

COMMAND = MaxxumCommand(
    seq=0,
    curvature_1pm=0.05,
    pedal=0.62,
    brake=0.0,
    hand_throttle=0.1,
    hitch_lever=0.235,
    hitch_raise=False,
    pto_on=True,
    difflock=Difflock.REAR,
    implement=ImplementControls(hitch_mode=HitchMode.DRAFT, depth_stop_m=0.2),
)
FRAME = CanFrame(
    can_id=0x18FF1580, data=bytes([58, 250, 250, 79, 250, 128, 250, 250]), dlc=8, stamp_ns=34_991_668_492
)


@pytest.mark.parametrize(
    ("channel", "sample"),
    [(MAXXUM_OBSERVATION, OBSERVATION), (MAXXUM_COMMAND, COMMAND), (CAN_RX, FRAME), (CAN_TX, FRAME)],
    ids=lambda value: value.suffix if isinstance(value, IngestChannel) else "",
)
def test_a_maxxum_sample_crosses_the_internal_topic_unchanged(
    channel: IngestChannel[Any], sample: object
) -> None:
    message = deserialize_message(serialize_message(channel.to_message(sample)), channel.message_type)
    assert channel.from_message(message) == sample


def test_the_internal_command_carries_no_seq() -> None:
    data = json.loads(MAXXUM_COMMAND.to_message(COMMAND).data)
    assert "seq" not in data
    assert data["implement"] == {"hitch_mode": "draft", "depth_stop_m": 0.2}


@pytest.mark.parametrize(
    ("channel", "message", "error", "match"),
    [
        (
            MAXXUM_COMMAND,
            String(data="{"),
            ProtocolError,
            r"MAXXUM_COMMAND on the internal topic: payload is not a UTF-8 JSON object",
        ),
        (MAXXUM_COMMAND, String(data="[1]"), ProtocolError, r"payload must be a JSON object, found list"),
        (MAXXUM_COMMAND, String(data='{"seq": 5}'), ProtocolError, r"expected a JSON object without seq"),
        (MAXXUM_COMMAND, String(data='{"pedal": 2.0}'), ProtocolError, r"internal topic: field 'pedal'"),
        (MAXXUM_OBSERVATION, String(data="{}"), ProtocolError, r"MAXXUM_OBSERVATION: "),
        (CAN_TX, Frame(dlc=9), CanFrameRefusedError, r"can/tx: dlc 9 is above 8"),
    ],
    ids=["command-not-json", "command-array", "command-seq", "command-range", "observation-empty", "can-dlc"],
)
def test_an_internal_message_that_does_not_decode_is_refused(
    channel: IngestChannel[Any], message: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        channel.from_message(message)


def test_a_source_drops_and_counts_an_internal_message_that_does_not_decode() -> None:
    context = Context()
    rclpy.init(context=context, args=[])
    node = Node(f"source_{uuid.uuid4().hex[:8]}", context=context)
    got: list[MaxxumCommand] = []
    source = SampleSubscription(node, MAXXUM_COMMAND, got.append, namespace="/x", bus=SampleBus())
    try:
        assert not source.in_process  # no ingest here: the internal topic
        source._on_message(String(data='{"pedal": "full"}'))
        source._on_message(MAXXUM_COMMAND.to_message(COMMAND))
        assert source.dropped == 1
        assert got == [COMMAND]
    finally:
        source.close()
        node.destroy_node()
        context.try_shutdown()
