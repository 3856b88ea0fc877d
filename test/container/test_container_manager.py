"""ComponentManager in process: load and unload through the Python API and through its own services."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest
import rclpy
from composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from rcl_interfaces.msg import Parameter as ParameterMsg
from rclpy.context import Context
from rclpy.exceptions import InvalidHandle
from rclpy.executors import SingleThreadedExecutor
from rclpy.impl.logging_severity import LoggingSeverity
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String

from acres_bridge.container import ComponentManager, LoadedComponent, find_component
from acres_bridge.errors import ComponentError

HEARTBEAT = ("acres_bridge", "acres_bridge::Heartbeat")


class Broken(Node):
    """Raises after its rcl node exists; keeps the instances so a test can check they were destroyed."""

    instances: ClassVar[list[Node]] = []

    def __init__(self, *, node_name: str, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        Broken.instances.append(self)
        raise RuntimeError("no simulator to talk to")


class Stubborn(Node):
    """Its destroy_node raises, after destroying the node; its default node name is stubborn."""

    def destroy_node(self) -> None:
        super().destroy_node()
        raise OSError("socket already closed")


def finder(package: str, plugin: str) -> type[Node]:
    """The real registry, plus test::Broken and test::Stubborn."""
    return {"test::Broken": Broken, "test::Stubborn": Stubborn}.get(plugin) or find_component(package, plugin)


@pytest.fixture
def manager_with_broken(
    context: Context, executor: SingleThreadedExecutor, unique_name
) -> Iterator[ComponentManager]:
    node = ComponentManager(
        executor, node_name=unique_name("container"), context=context, component_finder=finder
    )
    executor.add_node(node)
    yield node
    executor.remove_node(node)
    node.destroy_node()


def test_load_with_parameters_and_remap(
    manager: ComponentManager, probe: Node, spin_until, unique_name
) -> None:
    name = unique_name("hb")
    unique_id, node = manager.load(
        *HEARTBEAT,
        node_name=name,
        namespace="/ns",
        parameters=[Parameter("rate_hz", value=20.0)],
        remap_rules=["heartbeat:=beat"],
    )
    assert unique_id == 1
    assert node.get_fully_qualified_name() == f"/ns/{name}"
    assert node.get_parameter("rate_hz").value == 20.0
    assert "/ns/beat" in {publisher.topic_name for publisher in node.publishers}
    assert manager.components() == [LoadedComponent(1, f"/ns/{name}")]

    received: list[str] = []
    probe.create_subscription(String, "/ns/beat", lambda msg: received.append(msg.data), 10)
    spin_until(lambda: any(f"/ns/{name} alive" in text for text in received), "a heartbeat on /ns/beat")

    manager.unload(unique_id)
    assert manager.components() == []
    with pytest.raises(InvalidHandle):
        node.get_fully_qualified_name()
    spin_until(
        lambda: (name, "/ns") not in probe.get_node_names_and_namespaces(), "the node to leave the graph"
    )


def test_unique_ids_grow_and_are_not_reused(manager: ComponentManager) -> None:
    first, _ = manager.load(*HEARTBEAT)
    second, _ = manager.load(*HEARTBEAT, node_name="other")
    manager.unload(first)
    third, _ = manager.load(*HEARTBEAT)
    assert (first, second, third) == (1, 2, 3)
    assert manager.components() == [LoadedComponent(2, "/other"), LoadedComponent(3, "/heartbeat")]


def test_default_node_name(manager: ComponentManager) -> None:
    _, node = manager.load(*HEARTBEAT)
    assert node.get_fully_qualified_name() == "/heartbeat"


def test_log_level(manager: ComponentManager, unique_name) -> None:
    _, node = manager.load(*HEARTBEAT, node_name=unique_name("hb"), log_level=10)
    assert node.get_logger().get_effective_level() == LoggingSeverity.DEBUG


def test_use_intra_process_comms_is_accepted(manager: ComponentManager) -> None:
    unique_id, _ = manager.load(
        *HEARTBEAT, extra_arguments=[Parameter("use_intra_process_comms", value=True)]
    )
    assert unique_id == 1


@pytest.fixture
def global_context() -> Iterator[Context]:
    """A context whose command line renames every node that takes global arguments."""
    ctx = Context()
    rclpy.init(context=ctx, args=["--ros-args", "-r", "__node:=the_container"])
    yield ctx
    ctx.try_shutdown()


@pytest.mark.parametrize(("forward", "expected"), [(None, "/hb"), (False, "/hb"), (True, "/the_container")])
def test_container_arguments_reach_components_only_when_forwarded(
    global_context: Context, forward: bool | None, expected: str
) -> None:
    executor = SingleThreadedExecutor(context=global_context)
    manager = ComponentManager(executor, context=global_context)
    try:
        assert manager.get_fully_qualified_name() == "/the_container"
        extra = [] if forward is None else [Parameter("forward_global_arguments", value=forward)]
        _, node = manager.load(*HEARTBEAT, node_name="hb", extra_arguments=extra)
        assert node.get_fully_qualified_name() == expected
    finally:
        manager.destroy_node()
        executor.shutdown()


@pytest.mark.parametrize(
    ("plugin", "arguments", "message"),
    [
        ("acres_bridge::Nope", {}, r"acres_bridge::Nope: .*registers: .*acres_bridge::Heartbeat"),
        ("test::Broken", {}, r"test::Broken: the constructor raised RuntimeError: no simulator"),
        (
            "acres_bridge::Heartbeat",
            {"parameters": [Parameter("rate_hz", value="fast")]},
            r"acres_bridge::Heartbeat: the constructor raised ParameterError: rate_hz .*'fast'",
        ),
        (
            "acres_bridge::Heartbeat",
            {"parameters": [Parameter("rate_hz", value=0.0)]},
            r"acres_bridge::Heartbeat: .*rate_hz must be a number above 0, got 0.0",
        ),
        ("acres_bridge::Heartbeat", {"remap_rules": ["nonsense"]}, r"acres_bridge::Heartbeat: .*nonsense"),
        ("acres_bridge::Heartbeat", {"namespace": "bad ns"}, r"acres_bridge::Heartbeat: .*InvalidNamespace"),
        (
            "acres_bridge::Heartbeat",
            {"log_level": 15},
            r"acres_bridge::Heartbeat: log_level 15 is not one of",
        ),
        (
            "acres_bridge::Heartbeat",
            {"extra_arguments": [Parameter("use_threads", value=True)]},
            r"acres_bridge::Heartbeat: unknown extra argument 'use_threads'",
        ),
        (
            "acres_bridge::Heartbeat",
            {"extra_arguments": [Parameter("use_intra_process_comms", value=1)]},
            r"acres_bridge::Heartbeat: extra argument 'use_intra_process_comms' must be a boolean",
        ),
    ],
)
def test_refused_loads_leave_the_container_as_it_was(
    manager_with_broken: ComponentManager, plugin: str, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ComponentError, match=message):
        manager_with_broken.load(plugin.partition("::")[0], plugin, **arguments)
    assert manager_with_broken.components() == []
    assert manager_with_broken.load(*HEARTBEAT)[0] == 1


def test_a_constructor_that_raises_leaves_no_node(manager_with_broken: ComponentManager, unique_name) -> None:
    Broken.instances.clear()
    with pytest.raises(ComponentError):
        manager_with_broken.load("test", "test::Broken", node_name=unique_name("broken"))
    (instance,) = Broken.instances
    with pytest.raises(InvalidHandle):
        instance.get_fully_qualified_name()


def test_a_destroy_node_that_raises_still_unloads(manager_with_broken: ComponentManager) -> None:
    unique_id, _ = manager_with_broken.load("test", "test::Stubborn")
    with pytest.raises(ComponentError, match=r"/stubborn \(unique_id 1\) is unloaded, .*OSError: socket"):
        manager_with_broken.unload(unique_id)
    assert manager_with_broken.components() == []


def test_unload_unknown_id(manager: ComponentManager) -> None:
    with pytest.raises(ComponentError, match="No node found with unique_id: 7"):
        manager.unload(7)


def test_destroying_the_manager_unloads_everything(
    context: Context, executor: SingleThreadedExecutor, unique_name
) -> None:
    manager = ComponentManager(executor, node_name=unique_name("container"), context=context)
    nodes = [manager.load(*HEARTBEAT, node_name=f"hb{i}")[1] for i in range(3)]
    manager.destroy_node()
    assert executor.get_nodes() == []
    for node in nodes:
        with pytest.raises(InvalidHandle):
            node.get_fully_qualified_name()


def parameter_msg(name: str, value: Any) -> ParameterMsg:
    return Parameter(name, value=value).to_parameter_msg()


def test_services_in_process(manager: ComponentManager, probe: Node, call: Callable[[Any, Any], Any]) -> None:
    base = manager.get_fully_qualified_name()
    load = probe.create_client(LoadNode, f"{base}/_container/load_node")
    unload = probe.create_client(UnloadNode, f"{base}/_container/unload_node")
    list_nodes = probe.create_client(ListNodes, f"{base}/_container/list_nodes")

    request = LoadNode.Request(package_name="acres_bridge", plugin_name="acres_bridge::Heartbeat")
    request.parameters = [
        parameter_msg("rate_hz", 5)
    ]  # an integer, as `ros2 component load -p rate_hz:=5` sends
    response = call(load, request)
    assert (response.success, response.error_message, response.unique_id) == (True, "", 1)
    assert response.full_node_name == "/heartbeat"

    bad_type = parameter_msg("rate_hz", 5.0)
    bad_type.value.type = 99
    response = call(
        load,
        LoadNode.Request(
            package_name="acres_bridge", plugin_name="acres_bridge::Heartbeat", parameters=[bad_type]
        ),
    )
    assert not response.success
    assert "acres_bridge::Heartbeat: parameter 'rate_hz' has an unknown type 99" in response.error_message

    response = call(list_nodes, ListNodes.Request())
    assert (list(response.unique_ids), list(response.full_node_names)) == ([1], ["/heartbeat"])

    response = call(unload, UnloadNode.Request(unique_id=1))
    assert (response.success, response.error_message) == (True, "")
    response = call(unload, UnloadNode.Request(unique_id=1))
    assert not response.success
    assert response.error_message == "No node found with unique_id: 1"
