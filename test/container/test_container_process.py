"""component_container as a real process, driven through its three services from this process."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import pytest
from composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

Call = Callable[[Any, Any], Any]


def heartbeat_request(name: str, **extra: bool) -> Any:
    """LoadNode for a Heartbeat in /ns at 20 Hz, publishing on beat instead of heartbeat."""
    return LoadNode.Request(
        package_name="acres_bridge",
        plugin_name="acres_bridge::Heartbeat",
        node_name=name,
        node_namespace="/ns",
        remap_rules=["heartbeat:=beat"],
        parameters=[Parameter("rate_hz", value=20.0).to_parameter_msg()],
        extra_arguments=[Parameter(key, value=value).to_parameter_msg() for key, value in extra.items()],
    )


def assert_running(container) -> None:
    assert container.running(), f"the container exited:\n{container.output()}"


def wait_for_container(container, probe: Node, spin_until) -> None:
    def up() -> bool:
        assert_running(container)
        return (container.name, "/") in probe.get_node_names_and_namespaces()

    spin_until(up, f"container {container.name} in the graph")


def test_load_list_unload(container, probe: Node, spin_until, call: Call, unique_name) -> None:
    base = f"/{container.name}/_container"
    load = probe.create_client(LoadNode, f"{base}/load_node")
    unload = probe.create_client(UnloadNode, f"{base}/unload_node")
    list_nodes = probe.create_client(ListNodes, f"{base}/list_nodes")
    wait_for_container(container, probe, spin_until)

    def listed() -> list[tuple[int, str]]:
        response = call(list_nodes, ListNodes.Request())
        return list(zip(response.unique_ids, response.full_node_names, strict=True))

    texts: list[str] = []
    probe.create_subscription(String, "/ns/beat", lambda msg: texts.append(msg.data), 10)

    first, second = unique_name("hb"), unique_name("hb")
    response = call(load, heartbeat_request(first))
    assert (response.success, response.error_message) == (True, ""), container.output()
    assert (response.unique_id, response.full_node_name) == (1, f"/ns/{first}")
    spin_until(
        lambda: any(f"/ns/{first} alive" in text for text in texts), f"a heartbeat of {first} on /ns/beat"
    )
    assert listed() == [(1, f"/ns/{first}")]

    response = call(load, heartbeat_request(second, use_intra_process_comms=True))
    assert (response.success, response.unique_id, response.full_node_name) == (True, 2, f"/ns/{second}")
    assert listed() == [(1, f"/ns/{first}"), (2, f"/ns/{second}")]

    response = call(unload, UnloadNode.Request(unique_id=1))
    assert (response.success, response.error_message) == (True, "")
    assert listed() == [(2, f"/ns/{second}")]
    spin_until(
        lambda: (first, "/ns") not in probe.get_node_names_and_namespaces(), f"{first} to leave the graph"
    )

    # The first node's messages have stopped: ten more from the second bring none from the first.
    def count(name: str) -> int:
        return sum(f"/ns/{name} alive" in text for text in texts)

    first_count, second_count = count(first), count(second)
    spin_until(lambda: count(second) >= second_count + 10, f"ten more heartbeats of {second}")
    assert count(first) == first_count

    response = call(unload, UnloadNode.Request(unique_id=1))
    assert not response.success
    assert response.error_message == "No node found with unique_id: 1"

    response = call(load, LoadNode.Request(package_name="acres_bridge", plugin_name="acres_bridge::Nope"))
    assert not response.success
    assert "acres_bridge::Nope" in response.error_message
    assert "acres_bridge::Heartbeat" in response.error_message  # what is registered instead
    assert_running(container)
    assert listed() == [(2, f"/ns/{second}")]

    assert container.stop(signal.SIGINT) == 0, container.output()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_exits_cleanly_on_signal(
    container, probe: Node, spin_until, call: Call, signum: signal.Signals
) -> None:
    load = probe.create_client(LoadNode, f"/{container.name}/_container/load_node")
    wait_for_container(container, probe, spin_until)
    assert call(load, heartbeat_request("")).success  # no name: the class's default, heartbeat
    assert container.stop(signum) == 0, container.output()
    assert "Unloaded /ns/heartbeat (unique_id 1)" in container.output()
