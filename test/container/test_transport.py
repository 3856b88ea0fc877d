"""The bridge's DDS transport profile: used behind the fence with Fast DDS, never over a user's."""

from __future__ import annotations

from xml.etree import ElementTree

from acres_bridge.container.transport import BRIDGE_PROFILES, PROFILES_VARIABLES, use_bridge_transport

NS = {"f": "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"}


def test_behind_the_fence_the_bridge_takes_its_profile() -> None:
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    assert use_bridge_transport(env)
    assert env[PROFILES_VARIABLES[0]] == str(BRIDGE_PROFILES)


def test_a_profile_of_the_user_another_rmw_or_no_fence_leave_the_environment_alone() -> None:
    for env in (
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"},
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"},
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"},
    ):
        before = dict(env)
        assert not use_bridge_transport(env)
        assert env == before


def test_the_profile_keeps_udp_on_the_loopback_and_sizes_the_shared_memory() -> None:
    root = ElementTree.parse(BRIDGE_PROFILES).getroot()
    descriptors = {
        d.findtext("f:type", namespaces=NS): d for d in root.iterfind(".//f:transport_descriptor", NS)
    }
    assert set(descriptors) == {"SHM", "UDPv4"}
    assert [a.text for a in descriptors["UDPv4"].iterfind(".//f:address", NS)] == ["127.0.0.1"]
    assert int(descriptors["SHM"].findtext("f:segment_size", namespaces=NS) or 0) >= 64 * 1024 * 1024
    participant = root.find(".//f:participant", NS)
    assert participant is not None
    assert participant.get("is_default_profile") == "true"
    assert participant.findtext(".//f:useBuiltinTransports", namespaces=NS) == "false"
