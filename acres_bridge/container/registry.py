"""Find the node classes that the component container can load, by their rclcpp-style names.

A package makes a node class loadable by naming it in the entry-point group
``acres_bridge.components`` of its ``setup.py``; the entry-point name is the plugin name, written
as rclcpp writes it, ``package::ClassName``::

    entry_points={
        "acres_bridge.components": [
            "my_package::Talker = my_package.talker:Talker",
        ],
    }

The *package* of a plugin is the distribution that declares the entry point (``my_package``
above), as a LoadNode request's ``package_name`` names the package that provides the plugin.

The component class contract
----------------------------
A component class is a subclass of :class:`rclpy.node.Node` that the container builds with
keyword arguments only::

    cls(
        node_name="talker",             # the request's node_name, else DEFAULT_NODE_NAME
        namespace="/ns",                # None when the request gives no namespace
        context=container_context,
        parameter_overrides=[rclpy.parameter.Parameter(...), ...],
        cli_args=["--ros-args", "-r", "chatter:=talk", ...],
        use_global_arguments=False,     # the container's own remaps (__node:=...) stay its own
    )

Every keyword is one that :class:`rclpy.node.Node` takes, so a class that forwards the keywords it
does not use is enough::

    class Talker(Node):
        DEFAULT_NODE_NAME = "talker"

        def __init__(self, *, node_name: str = DEFAULT_NODE_NAME, **kwargs: Any) -> None:
            super().__init__(node_name, **kwargs)
            ...

- ``DEFAULT_NODE_NAME`` (class attribute, optional): the node name when the request gives none;
  without it the class name in snake_case (``ClockTf`` -> ``clock_tf``).
- Parameters come as ``parameter_overrides``: declare them in the constructor and check them
  there; raising from the constructor refuses the load and the requester gets the reason.
- The remap rules of the request come in ``cli_args``, one ``-r from:=to`` per rule.
- Unloading removes the node from the executor and calls ``destroy_node()``; a class that holds
  other resources (threads, sockets, files) overrides ``destroy_node()`` and calls ``super()``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import NamedTuple

from rclpy.node import Node

from acres_bridge.errors import ComponentError

__all__ = ["ENTRY_POINT_GROUP", "ComponentType", "component_types", "default_node_name", "find_component"]

ENTRY_POINT_GROUP = "acres_bridge.components"


class ComponentType(NamedTuple):
    """A registered node class: where it comes from, the name to load it by, and its import path."""

    package: str  # the distribution that registers it, in ROS spelling (underscores)
    plugin: str  # package::ClassName
    target: str  # module:attribute


def _ros_package_name(distribution_name: str) -> str:
    """A distribution name as ROS spells package names: lower case, underscores."""
    return re.sub(r"[-_.]+", "_", distribution_name).lower()


def _package_of(entry_point: EntryPoint) -> str:
    if entry_point.dist is not None:
        return _ros_package_name(entry_point.dist.name)
    return entry_point.name.partition("::")[0]


def _registered() -> Iterable[EntryPoint]:
    return entry_points(group=ENTRY_POINT_GROUP)


def component_types() -> list[ComponentType]:
    """Every registered node class, sorted by package and plugin (what ``ros2 component types`` lists)."""
    found = {ComponentType(_package_of(ep), ep.name, ep.value) for ep in _registered()}
    return sorted(found)


def find_component(package_name: str, plugin_name: str) -> type[Node]:
    """The node class that ``package_name`` registers as ``plugin_name`` (``package::ClassName``).

    Raises ComponentError when the package registers no such plugin (the message lists what it
    does register), when the class cannot be imported, or when it is not a Node subclass.
    """
    package = _ros_package_name(package_name)
    candidates = [ep for ep in _registered() if _package_of(ep) == package]
    match = next((ep for ep in candidates if ep.name == plugin_name), None)
    if match is None:
        raise ComponentError(_not_found_message(package_name, plugin_name, candidates))
    try:
        cls = match.load()
    except Exception as exc:
        raise ComponentError(
            f"{plugin_name}: cannot import {match.value!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Node)):
        raise ComponentError(f"{plugin_name}: {match.value!r} is {cls!r}, not a subclass of rclpy.node.Node")
    return cls


def _not_found_message(package_name: str, plugin_name: str, candidates: list[EntryPoint]) -> str:
    if candidates:
        names = ", ".join(sorted(ep.name for ep in candidates))
        return (
            f"{plugin_name}: package {package_name!r} registers no such component "
            f"(entry-point group {ENTRY_POINT_GROUP}); it registers: {names}"
        )
    packages = sorted({entry.package for entry in component_types()})
    listed = ", ".join(packages) if packages else "none"
    return (
        f"{plugin_name}: package {package_name!r} registers no components "
        f"(entry-point group {ENTRY_POINT_GROUP}); packages with components: {listed}"
    )


def default_node_name(cls: type[Node]) -> str:
    """The class's ``DEFAULT_NODE_NAME``, or else its name in snake_case (``ClockTf`` -> ``clock_tf``)."""
    name = getattr(cls, "DEFAULT_NODE_NAME", None)
    if isinstance(name, str) and name:
        return name
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", cls.__name__).lower()
