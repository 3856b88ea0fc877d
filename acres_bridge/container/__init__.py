"""The component container: rclcpp_components' container for Python node classes.

``component_container`` runs a :class:`ComponentManager` node that serves
``~/_container/load_node``, ``~/_container/unload_node`` and ``~/_container/list_nodes``, so
``ros2 component load|unload|list`` and launch_ros's ComposableNodeContainer work against it.
The node classes it loads are registered in the entry-point group ``acres_bridge.components``;
the class contract is in :mod:`acres_bridge.container.registry`. docs/container.md has the
usage.
"""

from acres_bridge.container.manager import (
    DEFAULT_CONTAINER_NAME,
    EXTRA_ARGUMENTS,
    ComponentFinder,
    ComponentManager,
    LoadedComponent,
    parameters_from_msgs,
)
from acres_bridge.container.registry import (
    ENTRY_POINT_GROUP,
    ComponentType,
    component_types,
    default_node_name,
    find_component,
)

__all__ = [
    "DEFAULT_CONTAINER_NAME",
    "ENTRY_POINT_GROUP",
    "EXTRA_ARGUMENTS",
    "ComponentFinder",
    "ComponentManager",
    "ComponentType",
    "LoadedComponent",
    "component_types",
    "default_node_name",
    "find_component",
    "parameters_from_msgs",
]
