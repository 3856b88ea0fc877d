"""The commands the bridge has taken, told on the hidden topic /_acres/commands_taken.

A stack's command goes to the bridge and to a stepper that watches the stack (the scenario runner,
the test kit) on two paths; neither knows when the other has it. A stepper that saw the stack's
answer to a request and then asks for the next steps could be served before the bridge took the
command, which then applies a request late, now and then: a run would not repeat. So the bridge
tells each command it has handled (acres_interfaces/msg/CommandTaken: the topic, the message's DDS
source timestamp, the count so far), and the stepper waits until the bridge has taken the newest
command it saw on each topic (acres_bridge.lockstep.stack_reply.BridgeTally).
"""

from __future__ import annotations

from typing import Any, Final

from acres_interfaces.msg import CommandTaken
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

__all__ = ["COMMANDS_TAKEN", "COMMANDS_TAKEN_QOS", "CommandTally"]

COMMANDS_TAKEN: Final = "/_acres/commands_taken"  # hidden (leading underscore), in the root namespace
# Each message carries the count so far: a reader that lost some still knows the newest.
COMMANDS_TAKEN_QOS: Final = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=100,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


class CommandTally:
    """One command topic's count, told after each command the bridge handled."""

    def __init__(self, node: Any, topic: str) -> None:
        self.topic = topic
        self.taken = 0
        self._publisher = node.create_publisher(CommandTaken, COMMANDS_TAKEN, COMMANDS_TAKEN_QOS)

    def took(self, source_timestamp_ns: int) -> None:
        self.taken += 1
        self._publisher.publish(
            CommandTaken(topic=self.topic, source_timestamp_ns=source_timestamp_ns, taken=self.taken)
        )
