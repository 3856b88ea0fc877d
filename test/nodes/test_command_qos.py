"""Every command topic of both vehicles takes reliable and best-effort publishers alike (spec: QoS
Profiles, "A publisher with reliable or best-effort reliability is compatible"): each kind of
publisher matches the node's subscription over real DDS, and its message reaches the node."""

from __future__ import annotations

from typing import Any

import pytest
from acres_interfaces.msg import CommandTaken
from ds_dbw_msgs.msg import GearCmd
from rclpy.qos import ReliabilityPolicy

from acres_bridge.ingest.commands_taken import COMMANDS_TAKEN, COMMANDS_TAKEN_QOS
from acres_bridge.msg_profiles import Direction, load_profiles
from acres_bridge.nodes.can import Can
from acres_bridge.nodes.dbw import Dbw
from acres_bridge.nodes.maxxum import Maxxum
from acres_bridge.nodes.reset import PoseReset
from nodes.node_rig import node_rig

PROFILES = load_profiles()
COMMANDS = [
    (vehicle, spec.name)
    for vehicle in ("polaris", "maxxum")
    for spec in PROFILES.table(vehicle)
    if spec.direction is Direction.SUBSCRIBE
]


def _node_class(vehicle: str, topic: str) -> type:
    if topic.endswith("sim/reset"):
        return PoseReset
    if vehicle == "polaris":
        return Dbw
    return Can if topic == "can/tx" else Maxxum


def _taken(node: Any) -> int:
    """Every message the node took: forwarded, accepted or refused (each is counted)."""
    accepted = getattr(node, "accepted", {})
    return getattr(node, "forwarded", 0) + sum(accepted.values()) + sum(node.refused.values())


def _message(vehicle: str, topic: str) -> Any:
    message = PROFILES.topic(vehicle, topic).message_class()()
    if isinstance(message, GearCmd):
        message.cmd.value = message.cmd.LOW  # a gear command of value 0 is no command at all
    return message


def test_every_command_topic_of_the_spec_is_here() -> None:
    assert len([c for c in COMMANDS if c[0] == "polaris"]) == 8  # seven commands and /sim/reset
    assert len([c for c in COMMANDS if c[0] == "maxxum"]) == 10


@pytest.mark.parametrize("reliability", [ReliabilityPolicy.RELIABLE, ReliabilityPolicy.BEST_EFFORT])
@pytest.mark.parametrize(("vehicle", "topic"), COMMANDS)
def test_a_reliable_and_a_best_effort_publisher_both_reach_the_bridge(
    vehicle: str, topic: str, reliability: ReliabilityPolicy
) -> None:
    with node_rig(_node_class(vehicle, topic), vehicle=vehicle) as rig:
        publisher = rig.publisher(vehicle, topic, reliability=reliability)  # fails unless it matches
        message = _message(vehicle, topic)
        before = _taken(rig.node)
        # best effort may lose a message while discovery settles: publish until one is taken
        rig.spin_until(lambda: publisher.publish(message) or _taken(rig.node) > before, f"a {topic} message")


def test_a_message_of_a_reliable_publisher_is_handled_once() -> None:
    # It reaches both readers of the topic; the node takes it once.
    with node_rig(Dbw) as rig:
        publisher = rig.publisher("polaris", "/vehicle/enable")
        best_effort = rig.publisher("polaris", "/vehicle/disable", reliability=ReliabilityPolicy.BEST_EFFORT)
        assert publisher.get_subscription_count() == 2  # the reliable and the best-effort reader
        assert best_effort.get_subscription_count() == 1  # only the best-effort one matches it
        for _ in range(5):
            publisher.publish(_message("polaris", "/vehicle/enable"))
        rig.spin_until(lambda: rig.node.forwarded >= 5, "five enables")
        for _ in range(20):
            rig.executor.spin_once(timeout_sec=0.01)
        assert rig.node.forwarded == 5


def test_each_command_taken_is_told_with_its_source_timestamp() -> None:
    # A stepper that saw a stack's command waits until the bridge tells it has taken that very
    # message (acres_bridge.ingest.commands_taken): the count and the DDS source timestamp.
    with node_rig(Dbw) as rig:
        told: list[CommandTaken] = []
        rig.probe.create_subscription(CommandTaken, COMMANDS_TAKEN, told.append, COMMANDS_TAKEN_QOS)
        publisher = rig.publisher("polaris", "/vehicle/ulc/cmd")
        stamps: list[int] = []
        rig.probe.create_subscription(
            PROFILES.topic("polaris", "/vehicle/ulc/cmd").message_class(),
            publisher.topic_name,
            lambda _message, info: stamps.append(int(info["source_timestamp"])),
            10,
        )
        rig.spin_until(lambda: rig.node.count_publishers(COMMANDS_TAKEN) > 0, "the tally's publisher")
        rig.spin_until(lambda: publisher.get_subscription_count() == 3, "the probe's reader too")
        for _ in range(3):
            publisher.publish(_message("polaris", "/vehicle/ulc/cmd"))
        rig.spin_until(lambda: len(told) >= 3 and len(stamps) >= 3, "three commands told")
        ulc = [m for m in told if m.topic == publisher.topic_name]
        assert [m.taken for m in ulc] == [1, 2, 3]  # each message once, though both readers got it
        assert [m.source_timestamp_ns for m in ulc] == stamps
