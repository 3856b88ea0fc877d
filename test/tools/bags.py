"""Bags the tool tests write: the Polaris's topics as the bridge publishes them, with a chosen QoS and
frame, so that a check can be made to fail on purpose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ds_dbw_msgs.msg import BrakeReport, SteeringCmd, SteeringReport
from geometry_msgs.msg import TransformStamped
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

from acres_bridge.tools.bag import BagWriter
from acres_bridge.tools.qos import Durability, OfferedQos, Reliability

RELIABLE = OfferedQos(reliability=Reliability.RELIABLE, durability=Durability.VOLATILE)
BEST_EFFORT = OfferedQos(reliability=Reliability.BEST_EFFORT, durability=Durability.VOLATILE)
LATCHED = OfferedQos(reliability=Reliability.RELIABLE, durability=Durability.TRANSIENT_LOCAL)
NS = 1_000_000_000  # the physics step is 1/120 s


@dataclass
class Topic:
    """One topic of a test bag: its type, offers and messages, serialised once (Fast CDR leaves its
    padding uninitialised, so two serialisations of a message may differ there)."""

    type_name: str
    messages: list[Any]
    offers: Sequence[OfferedQos] = (RELIABLE,)
    raw: list[bytes] = field(default_factory=list)  # the bytes written; default: `messages` serialised

    def __post_init__(self) -> None:
        if not self.raw:
            self.raw = [serialize_message(m) for m in self.messages]


def stamped(message: Any, frame: str, step: int) -> Any:
    message.header.frame_id = frame
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(step * NS // 120, NS)
    return message


def imu(frame: str = "imu_link", steps: int = 5) -> list[Imu]:
    return [stamped(Imu(), frame, step) for step in range(1, steps + 1)]


def tf(parent: str = "utm", child: str = "base_footprint", steps: int = 3) -> list[TFMessage]:
    messages = []
    for step in range(1, steps + 1):
        transform = stamped(TransformStamped(), parent, step)
        transform.child_frame_id = child
        messages.append(TFMessage(transforms=[transform]))
    return messages


def clock(steps: int = 5) -> list[Clock]:
    messages = []
    for step in range(1, steps + 1):
        message = Clock()
        message.clock.sec, message.clock.nanosec = divmod(step * NS // 120, NS)
        messages.append(message)
    return messages


def dbw(steps: int = 4) -> dict[str, Topic]:
    """Drive-by-wire reports and a command as the bridge and a driver publish them."""
    steering = [
        stamped(SteeringReport(steering_wheel_angle=1.5 * s, enabled=True), "", s) for s in range(steps)
    ]
    brake = []
    for s in range(steps):
        report = stamped(BrakeReport(pressure_output=0.5 * s, ready=True), "", s)
        report.torque_input = report.torque_cmd = report.torque_output = float("nan")
        brake.append(report)
    command = [
        stamped(SteeringCmd(cmd=0.02, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True), "base_footprint", s)
        for s in range(steps)
    ]
    return {
        "/vehicle/steering/report": Topic("ds_dbw_msgs/msg/SteeringReport", steering),
        "/vehicle/brake/report": Topic("ds_dbw_msgs/msg/BrakeReport", brake),
        "/vehicle/steering/cmd": Topic("ds_dbw_msgs/msg/SteeringCmd", command),
    }


def polaris(changes: Mapping[str, Topic] | None = None) -> dict[str, Topic]:
    """A few Polaris topics as the bridge publishes them; `changes` replace or add topics."""
    topics = {
        "/clock": Topic("rosgraph_msgs/msg/Clock", clock()),
        "/tf": Topic("tf2_msgs/msg/TFMessage", tf()),
        "/oxts/imu": Topic("sensor_msgs/msg/Imu", imu()),
        "/vehicle/dbw_enabled": Topic("std_msgs/msg/Bool", [Bool(data=True)] * 3),
        **{name: t for name, t in dbw().items() if name.endswith("report")},
    }
    topics.update(changes or {})
    return topics


def write_bag(path: Path, topics: dict[str, Topic], *, metadata_version: int = 9) -> Path:
    """An MCAP file of these topics, messages in turn, log time 1 ms apart."""
    with BagWriter(path, metadata_version=metadata_version) as writer:
        for name, topic in topics.items():
            writer.add_topic(name, topic.type_name, offered_qos=topic.offers)
        time_ns = 1_000_000
        for name, topic in topics.items():
            for data in topic.raw:
                writer.write(name, data, log_time_ns=time_ns)
                time_ns += 1_000_000
    return path
