"""Helpers of the integration tests of the other nodes: start a node, read the graph, check QoS,
transforms and the Polaris description."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from acres_bridge.msg_profiles import load_profiles
from acres_bridge.processes import ChildProcess
from acres_sim.vehicles.params import PolarisParams

from .conftest import Processes, Ros

PROFILES = load_profiles()
# Several nodes publish /tf_static; each one's latched message must reach the probe.
TF_STATIC = QoSProfile(
    depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


def start_node(processes: Processes, module: str, *parameters: str) -> ChildProcess:
    args = [sys.executable, "-m", f"acres_bridge.other.{module}", "--ros-args"]
    for parameter in parameters:
        args += ["-p", parameter]
    return processes.script(module, args)


def wait_for_publisher(ros: Ros, topic: str, node_name: str) -> None:
    ros.wait_until(lambda: publisher_info(ros, topic, node_name) is not None, f"{node_name}'s {topic}")


def publisher_info(ros: Ros, topic: str, node_name: str) -> Any:
    infos = ros.node.get_publishers_info_by_topic(topic)
    return next((info for info in infos if info.node_name == node_name), None)


def assert_wire_qos(ros: Ros, table: str, topic: str, node_name: str) -> None:
    """The node's publisher of the topic has the type, reliability and durability of msg_profiles.

    The graph names a publisher's node some time after its data can arrive (discovery of the node
    names is a topic of its own), so the publisher is waited for (bounded) before it is judged.
    """
    spec = PROFILES.topic(table, topic)
    assert spec.qos is not None
    wait_for_publisher(ros, topic, node_name)
    info = publisher_info(ros, topic, node_name)
    assert info.topic_type == spec.type_name, topic
    expected = spec.qos.to_rclpy()
    assert info.qos_profile.reliability == expected.reliability, topic
    assert info.qos_profile.durability == expected.durability, topic


def static_transforms(messages: list[TFMessage]) -> dict[tuple[str, str], Any]:
    return {
        (t.header.frame_id, t.child_frame_id): t.transform for message in messages for t in message.transforms
    }


def check_description(urdf_text: str, transforms: dict[tuple[str, str], Any], prefix: str = "") -> None:
    robot = ET.fromstring(urdf_text)
    links = {link.get("name") for link in robot.findall("link")}
    assert links == {"base_footprint", "lidar", "reolink_camera", "reolink_camera_optical", "imu_link"}
    mounts = {m.frame: m for m in PolarisParams().mounts}
    expected = {
        (f"{prefix}{m.parent}", f"{prefix}{m.frame}"): m for m in mounts.values() if m.frame != "imu_link"
    }
    assert set(transforms) == set(expected)
    for pair, mount in expected.items():
        t, r = transforms[pair].translation, transforms[pair].rotation
        assert (t.x, t.y, t.z) == mount.translation
        assert (r.x, r.y, r.z, r.w) == pytest.approx(mount.rotation, abs=1e-12)
