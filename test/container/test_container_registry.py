"""The registry finds node classes through the entry-point group, and says what exists when it cannot."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from rclpy.node import Node

from acres_bridge.container import registry
from acres_bridge.container.heartbeat import Heartbeat
from acres_bridge.container.main import format_types
from acres_bridge.container.registry import (
    ENTRY_POINT_GROUP,
    ComponentType,
    component_types,
    default_node_name,
    find_component,
)
from acres_bridge.errors import ComponentError


def test_finds_heartbeat() -> None:
    assert find_component("acres_bridge", "acres_bridge::Heartbeat") is Heartbeat


def test_lists_heartbeat() -> None:
    heartbeat = ComponentType(
        "acres_bridge", "acres_bridge::Heartbeat", "acres_bridge.container.heartbeat:Heartbeat"
    )
    assert heartbeat in component_types()


def test_unknown_plugin_lists_what_the_package_registers() -> None:
    with pytest.raises(ComponentError, match=r"acres_bridge::Nope.*registers: .*acres_bridge::Heartbeat"):
        find_component("acres_bridge", "acres_bridge::Nope")


def test_unknown_package_lists_packages_with_components() -> None:
    with pytest.raises(ComponentError, match=r"'no_such_pkg' registers no components.*: .*acres_bridge"):
        find_component("no_such_pkg", "no_such_pkg::Thing")


@pytest.mark.parametrize(
    ("plugin", "target", "message"),
    [
        (
            "fake::Missing",
            "no_such_module_for_acres:Thing",
            r"fake::Missing: cannot import .*ModuleNotFoundError",
        ),
        (
            "fake::Dict",
            "builtins:dict",
            r"fake::Dict: 'builtins:dict' is .*not a subclass of rclpy.node.Node",
        ),
    ],
)
def test_broken_registration(monkeypatch: pytest.MonkeyPatch, plugin: str, target: str, message: str) -> None:
    entry = EntryPoint(name=plugin, value=target, group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "_registered", lambda: [entry])
    with pytest.raises(ComponentError, match=message):
        find_component("fake", plugin)


@pytest.mark.parametrize(
    ("class_name", "expected"),
    [
        ("ClockTf", "clock_tf"),
        ("HTTPServer", "http_server"),
        ("Lidar2Points", "lidar2_points"),
        ("Talker", "talker"),
    ],
)
def test_default_node_name_is_snake_case(class_name: str, expected: str) -> None:
    assert default_node_name(type(class_name, (Node,), {})) == expected


def test_default_node_name_prefers_the_class_attribute() -> None:
    assert default_node_name(Heartbeat) == Heartbeat.DEFAULT_NODE_NAME == "heartbeat"


def test_format_types_groups_by_package() -> None:
    types = [
        ComponentType("b_pkg", "b_pkg::Two", "b:Two"),
        ComponentType("a_pkg", "a_pkg::One", "a:One"),
        ComponentType("b_pkg", "b_pkg::Three", "b:Three"),
    ]
    assert format_types(types) == "a_pkg\n  a_pkg::One\nb_pkg\n  b_pkg::Two\n  b_pkg::Three"
