"""The component manager: a node that loads node classes into its process on request.

It serves the three services of rclcpp_components' container, relative to its own name, so that
``ros2 component load|unload|list`` and launch_ros's ComposableNodeContainer / LoadComposableNodes
work against it unchanged:

- ``~/_container/load_node`` (composition_interfaces/srv/LoadNode)
- ``~/_container/unload_node`` (composition_interfaces/srv/UnloadNode)
- ``~/_container/list_nodes`` (composition_interfaces/srv/ListNodes)

Code in the same process uses :meth:`ComponentManager.load` and :meth:`ComponentManager.unload`,
the same path the services take::

    executor = SingleThreadedExecutor()
    manager = ComponentManager(executor)
    executor.add_node(manager)
    unique_id, node = manager.load("acres_bridge", "acres_bridge::Heartbeat", namespace="/ns")
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from rclpy.context import Context
from rclpy.executors import Executor
from rclpy.impl.logging_severity import LoggingSeverity
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from acres_bridge.container.registry import default_node_name, find_component
from acres_bridge.errors import ComponentError
from acres_bridge.publisher_events import NodeWithoutPublisherEvents

# rclpy leaves part of its API unannotated (QoSProfile, Node.get_logger, Node.destroy_node, ...). The
# "no-untyped-call, unused-ignore" ignores keep this module clean both under the project's mypy
# settings, which allow such calls, and under plain `mypy --strict`.

__all__ = [
    "DEFAULT_CONTAINER_NAME",
    "EXTRA_ARGUMENTS",
    "ComponentFinder",
    "ComponentManager",
    "LoadedComponent",
    "parameters_from_msgs",
]

DEFAULT_CONTAINER_NAME = "ComponentManager"  # as rclcpp_components names its container node

# The extra_arguments a LoadNode request may carry, all booleans, as rclcpp_components knows them.
# use_intra_process_comms is accepted and has no effect: the nodes of this container always share
# the process. forward_global_arguments=true lets the container's command-line arguments apply to
# the loaded node too (default false, so that `-r __node:=...` renames only the container).
EXTRA_ARGUMENTS = ("forward_global_arguments", "use_intra_process_comms")

# launch_ros sends one LoadNode request per composable node, all at once; keep them all queued, as
# rclcpp_components does.
_REQUEST_QOS = QoSProfile(  # type: ignore[no-untyped-call, unused-ignore]
    history=HistoryPolicy.KEEP_LAST,
    depth=200,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

ComponentFinder = Callable[[str, str], type[Node]]


class LoadedComponent(NamedTuple):
    """A node that the manager holds, as ListNodes reports it."""

    unique_id: int
    full_node_name: str


def parameters_from_msgs(plugin: str, msgs: Sequence[Any]) -> list[Parameter]:
    """rcl_interfaces/msg/Parameter messages as rclpy Parameters; ComponentError names a bad one."""
    parameters = []
    for msg in msgs:
        try:
            parameters.append(Parameter.from_parameter_msg(msg))  # type: ignore[no-untyped-call, unused-ignore]
        except ValueError as exc:
            raise ComponentError(
                f"{plugin}: parameter {msg.name!r} has an unknown type {msg.value.type}: {exc}"
            ) from exc
    return parameters


def _use_global_arguments(plugin: str, extra_arguments: Sequence[Parameter]) -> bool:
    """Check the extra arguments of a request; return whether global arguments reach the node."""
    use_global_arguments = False
    for argument in extra_arguments:
        if argument.name not in EXTRA_ARGUMENTS:
            raise ComponentError(
                f"{plugin}: unknown extra argument {argument.name!r}; this container knows "
                + ", ".join(EXTRA_ARGUMENTS)
            )
        if argument.type_ is not Parameter.Type.BOOL:
            raise ComponentError(
                f"{plugin}: extra argument {argument.name!r} must be a boolean, got {argument.value!r}"
            )
        if argument.name == "forward_global_arguments":
            use_global_arguments = bool(argument.value)
    return use_global_arguments


def _severity(plugin: str, log_level: int) -> LoggingSeverity | None:
    """The logger level a request asks for; None for 0, which leaves the node's level alone."""
    if log_level == 0:
        return None
    try:
        return LoggingSeverity(log_level)
    except ValueError:
        known = ", ".join(f"{level.value} ({level.name})" for level in LoggingSeverity if level.value)
        raise ComponentError(f"{plugin}: log_level {log_level} is not one of {known}") from None


def _logger(node: Node) -> Any:
    """The node's logger (rclpy leaves Node.get_logger and its loggers unannotated)."""
    return node.get_logger()  # type: ignore[no-untyped-call, unused-ignore]


def _destroy(node: Node) -> None:
    node.destroy_node()  # type: ignore[no-untyped-call, unused-ignore]


def _construct(cls: type[Node], plugin: str, **kwargs: Any) -> Node:
    """Build a node; if its constructor raises, destroy what it built and raise ComponentError."""
    node = cls.__new__(cls)
    try:
        cls.__init__(node, **kwargs)
    except Exception as exc:
        # The rcl node may exist already; without this it would stay in the graph until collected.
        with contextlib.suppress(Exception):
            _destroy(node)
        raise ComponentError(f"{plugin}: the constructor raised {type(exc).__name__}: {exc}") from exc
    return node


class ComponentManager(NodeWithoutPublisherEvents):
    """A node that loads registered node classes into the given executor and unloads them.

    Unique ids start at 1 and grow by one per node loaded; they are never reused. ``load`` and
    ``unload`` may be called from any thread; unloading a node while another thread runs one of
    its callbacks is safe only as far as rclpy's ``destroy_node`` is (the services run in the
    executor, so with a single-threaded executor they never race the node's callbacks).
    """

    def __init__(
        self,
        executor: Executor,
        *,
        node_name: str = DEFAULT_CONTAINER_NAME,
        namespace: str | None = None,
        context: Context | None = None,
        cli_args: Sequence[str] | None = None,
        component_finder: ComponentFinder = find_component,
    ) -> None:
        super().__init__(
            node_name,
            namespace=namespace,
            context=context,
            cli_args=list(cli_args) if cli_args is not None else None,
        )
        self._executor = executor
        self._find = component_finder
        self._lock = threading.Lock()
        self._components: dict[int, tuple[Node, str]] = {}  # unique id -> (node, full name)
        self._next_id = 1
        self.create_service(LoadNode, "~/_container/load_node", self._on_load_node, qos_profile=_REQUEST_QOS)
        self.create_service(
            UnloadNode, "~/_container/unload_node", self._on_unload_node, qos_profile=_REQUEST_QOS
        )
        self.create_service(ListNodes, "~/_container/list_nodes", self._on_list_nodes)

    def load(
        self,
        package: str,
        plugin: str,
        *,
        node_name: str | None = None,
        namespace: str | None = None,
        parameters: Sequence[Parameter] = (),
        remap_rules: Sequence[str] = (),
        log_level: int = 0,
        extra_arguments: Sequence[Parameter] = (),
    ) -> tuple[int, Node]:
        """Build ``plugin`` of ``package``, add it to the executor; return its unique id and the node.

        ``remap_rules`` are ``from:=to`` strings; ``log_level`` is an rcl_interfaces/msg/Log level
        (0 leaves the node's level alone); ``extra_arguments`` are those of a LoadNode request
        (see ``EXTRA_ARGUMENTS``). Raises ComponentError, naming the plugin and the reason, when
        the plugin is unknown, an argument is bad or the constructor raises.
        """
        use_global_arguments = _use_global_arguments(plugin, extra_arguments)
        severity = _severity(plugin, log_level)
        cls = self._find(package, plugin)
        cli_args = ["--ros-args"]
        for rule in remap_rules:
            cli_args += ["-r", rule]
        node = _construct(
            cls,
            plugin,
            node_name=node_name or default_node_name(cls),
            namespace=namespace or None,
            context=self.context,
            parameter_overrides=list(parameters),
            cli_args=cli_args,
            use_global_arguments=use_global_arguments,
        )
        if severity is not None:
            _logger(node).set_level(severity)
        full_name = node.get_fully_qualified_name()
        with self._lock:
            unique_id = self._next_id
            self._next_id += 1
            self._components[unique_id] = (node, full_name)
        self._executor.add_node(node)
        _logger(self).info(f"Loaded {plugin} as {full_name} (unique_id {unique_id})")
        return unique_id, node

    def unload(self, unique_id: int) -> None:
        """Remove the node from the executor and destroy it.

        Raises ComponentError if the id is not loaded, or if the node's ``destroy_node`` raises
        (the node is out of the container then all the same).
        """
        with self._lock:
            node, full_name = self._components.pop(unique_id, (None, ""))
        if node is None:
            raise ComponentError(f"No node found with unique_id: {unique_id}")
        self._executor.remove_node(node)
        try:
            _destroy(node)
        except Exception as exc:
            raise ComponentError(
                f"{full_name} (unique_id {unique_id}) is unloaded, but its destroy_node raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        finally:
            _logger(self).info(f"Unloaded {full_name} (unique_id {unique_id})")

    def components(self) -> list[LoadedComponent]:
        """The loaded nodes, in the order they were loaded."""
        with self._lock:
            return [LoadedComponent(unique_id, name) for unique_id, (_, name) in self._components.items()]

    def destroy_node(self) -> None:
        """Unload every node, oldest first (as rclcpp's component manager does), then destroy the
        manager itself. The oldest of the bridge is its ingest: its I/O thread stops before any
        node it feeds is gone, so nothing publishes through a destroyed node."""
        with self._lock:
            unique_ids = sorted(self._components)
        for unique_id in unique_ids:
            with contextlib.suppress(ComponentError):
                self.unload(unique_id)
        super().destroy_node()  # type: ignore[no-untyped-call, unused-ignore]

    def _on_load_node(self, request: Any, response: Any) -> Any:
        plugin = request.plugin_name
        try:
            unique_id, node = self.load(
                request.package_name,
                plugin,
                node_name=request.node_name or None,
                namespace=request.node_namespace or None,
                parameters=parameters_from_msgs(plugin, request.parameters),
                remap_rules=list(request.remap_rules),
                log_level=request.log_level,
                extra_arguments=parameters_from_msgs(plugin, request.extra_arguments),
            )
        except ComponentError as exc:
            return self._refuse(response, str(exc))
        except Exception as exc:  # a request must get an answer, never take the container down
            return self._refuse(response, f"{plugin}: {type(exc).__name__}: {exc}")
        response.success = True
        response.full_node_name = node.get_fully_qualified_name()
        response.unique_id = unique_id
        return response

    def _refuse(self, response: Any, message: str) -> Any:
        _logger(self).error(f"Failed to load component: {message}")
        response.success = False
        response.error_message = message
        return response

    def _on_unload_node(self, request: Any, response: Any) -> Any:
        try:
            self.unload(request.unique_id)
        except ComponentError as exc:
            _logger(self).warning(str(exc))
            response.success = False
            response.error_message = str(exc)
            return response
        response.success = True
        return response

    def _on_list_nodes(self, request: Any, response: Any) -> Any:
        loaded = self.components()
        response.unique_ids = [component.unique_id for component in loaded]
        response.full_node_names = [component.full_node_name for component in loaded]
        return response
