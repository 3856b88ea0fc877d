"""Which topics the live view serves, and how each becomes a Foxglove channel.

Pure, from msg_profiles: every topic of the vehicle's table (what the bridge publishes and the
commands it takes) and of the session's, by absolute name. A channel carries the topic's CDR as
published (``cdr``) with the ``ros2msg`` schema rosbag2 writes (the .msg text and those it uses),
so the Foxglove app decodes it as it decodes a ROS 2 bag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from acres_bridge.msg_profiles import Direction, MsgProfiles, TopicSpec
from acres_bridge.names import resolve_name

__all__ = ["MESSAGE_ENCODING", "SCHEMA_ENCODING", "STAMPED_TYPES", "ViewTopic", "view_topics"]

MESSAGE_ENCODING: Final = "cdr"
SCHEMA_ENCODING: Final = "ros2msg"
STAMPED_TYPES: Final = frozenset({"rosgraph_msgs/msg/Clock"})
"""Types without a std_msgs/Header whose first field is still a builtin_interfaces/Time."""


@dataclass(frozen=True)
class ViewTopic:
    """A topic of the bridge as the live view serves it."""

    name: str  # absolute
    spec: TopicSpec

    @property
    def type_name(self) -> str:
        return self.spec.type_name

    @property
    def latched(self) -> bool:
        """Whether a late subscriber gets the last message (transient local durability)."""
        return self.spec.qos is not None and self.spec.qos.durability == "transient_local"

    @property
    def command(self) -> bool:
        """Whether the bridge takes this topic (a command), rather than publishes it."""
        return self.spec.direction is Direction.SUBSCRIBE

    @property
    def stamped(self) -> bool:
        """Whether a message starts with its time (a std_msgs/Header, or /clock's Time)."""
        if self.type_name in STAMPED_TYPES:
            return True
        message_class: Any = self.spec.message_class()
        fields: dict[str, str] = message_class.get_fields_and_field_types()
        return next(iter(fields.items()), ("", ""))[1] == "std_msgs/Header"


def view_topics(profiles: MsgProfiles, vehicle: str, namespace: str) -> tuple[ViewTopic, ...]:
    """The vehicle's and the session's topics that are on the wire, each once, in table order."""
    topics: dict[str, ViewTopic] = {}
    for spec in (*profiles.table(vehicle), *profiles.table("session")):
        if spec.qos is None:
            continue
        name = resolve_name(spec.ros_name, namespace)
        topics.setdefault(name, ViewTopic(name=name, spec=spec))
    return tuple(topics.values())
