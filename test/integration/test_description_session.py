"""polaris_description before any session, then with one; and loaded into the running bridge, where
it gets the session from the bus instead of the internal ROS topic.

A module of its own: no simulator or bridge of another test may be running when it starts.
"""

from __future__ import annotations

from typing import Any

import pytest
from composition_interfaces.srv import LoadNode
from rclpy.parameter import Parameter
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from .conftest import LATCHED, Processes, Ros, free_port
from .other_nodes import (
    TF_STATIC,
    assert_wire_qos,
    check_description,
    start_node,
    static_transforms,
    wait_for_publisher,
)

pytestmark = pytest.mark.integration


def test_the_description_waits_for_a_session_and_loads_into_the_bridge(
    processes: Processes, ros: Ros
) -> None:
    descriptions: list[String] = ros.collect(String, "/robot_description", LATCHED)
    tf_static: list[TFMessage] = ros.collect(TFMessage, "/tf_static", TF_STATIC)
    start_node(processes, "polaris_description")
    wait_for_publisher(ros, "/robot_description", "polaris_description")
    ros.spin_for(1.0)
    assert (descriptions, tf_static) == ([], []), "nothing without a session"

    port = free_port()
    processes.simulator(port)
    processes.bridge(port)
    ros.wait_until(lambda: descriptions and tf_static, "the description once the bridge has a session")
    check_description(descriptions[0].data, static_transforms(tf_static))

    request = LoadNode.Request(
        package_name="acres_bridge",
        plugin_name="acres_bridge::PolarisDescription",
        node_name="description_in_bridge",
        parameters=[Parameter("frame_prefix", value="inproc/").to_parameter_msg()],
    )
    loaded = ros.call(LoadNode, "/sim_bridge/_container/load_node", request)
    assert loaded.success, loaded.error_message

    def prefixed() -> dict[tuple[str, str], Any]:
        return {pair: t for pair, t in static_transforms(tf_static).items() if pair[1].startswith("inproc/")}

    ros.wait_until(prefixed, "the transforms of the description in the bridge")
    check_description(descriptions[-1].data, prefixed(), prefix="inproc/")
    assert_wire_qos(ros, "other_nodes", "/tf_static", "description_in_bridge")
