"""The four nodes as components: found by the container's registry, built with node options only,
their parameters checked when they start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.parameter import Parameter

from acres_bridge.container.registry import default_node_name, find_component

PLUGINS = {
    "acres_bridge::DbwDemoDriver": "dbw_demo_driver",
    "acres_bridge::OdomPath": "odom_path",
    "acres_bridge::LabStubs": "lab_stubs",
    "acres_bridge::PolarisDescription": "polaris_description",
}


@pytest.fixture
def context() -> Iterator[Context]:
    ctx = Context()
    rclpy.init(context=ctx, args=[])
    yield ctx
    ctx.try_shutdown()


def build(context: Context, plugin: str, **parameters: Any) -> Any:
    cls = find_component("acres_bridge", plugin)
    overrides = [Parameter(name, value=value) for name, value in parameters.items()]
    return cls(
        node_name=default_node_name(cls),
        namespace=None,
        context=context,
        parameter_overrides=overrides,
        cli_args=None,
        use_global_arguments=False,
    )


@pytest.mark.parametrize(("plugin", "node_name"), PLUGINS.items())
def test_each_node_loads_as_a_component_with_its_node_name(
    context: Context, plugin: str, node_name: str
) -> None:
    node = build(context, plugin)
    try:
        assert node.get_name() == node_name
    finally:
        node.destroy_node()


def test_the_demo_driver_takes_integers_for_its_numbers(context: Context) -> None:
    node = build(context, "acres_bridge::DbwDemoDriver", speed_mps=3, lookahead_m=8, gear=4)
    try:
        assert (node.speed_mps, node.tracker.lookahead_m, node.gear) == (3.0, 8.0, 4)
        assert node.route_frame == "demo_route_origin"
    finally:
        node.destroy_node()


def test_the_frame_prefix_goes_on_the_frames_of_the_other_nodes(context: Context) -> None:
    driver = build(context, "acres_bridge::DbwDemoDriver", frame_prefix="polaris2")
    path = build(context, "acres_bridge::OdomPath", frame_prefix="polaris2/")
    try:
        assert driver.route_frame == "polaris2/demo_route_origin"
        assert path.trail.frame == "polaris2/odom_origin"
    finally:
        driver.destroy_node()
        path.destroy_node()


@pytest.mark.parametrize(
    ("plugin", "parameters", "match"),
    [
        (
            "acres_bridge::DbwDemoDriver",
            {"speed_mps": -1.0},
            "speed_mps must be a finite number from 0 to 18",
        ),
        ("acres_bridge::DbwDemoDriver", {"speed_mps": float("nan")}, "speed_mps must be a finite number"),
        ("acres_bridge::DbwDemoDriver", {"speed_mps": "fast"}, "speed_mps must be a finite number"),
        ("acres_bridge::DbwDemoDriver", {"lookahead_m": 0.0}, "lookahead_m must be a finite number above 0"),
        (
            "acres_bridge::DbwDemoDriver",
            {"gear": 0},
            r"gear must be 1 \(P\), 2 \(R\), 3 \(N\), 4 \(H\) or 5 \(L\)",
        ),
        ("acres_bridge::DbwDemoDriver", {"gear": 6}, "gear must be 1"),
        ("acres_bridge::DbwDemoDriver", {"vehicle": "maxxum"}, "drives a Polaris"),
        ("acres_bridge::OdomPath", {"max_poses": 0}, "max_poses must be a positive integer"),
        ("acres_bridge::OdomPath", {"vehicle": "maxxum"}, "follows the Polaris"),
        (
            "acres_bridge::LabStubs",
            {"speed_limit_mps": -0.5},
            "speed_limit_mps must be a finite number of at least 0",
        ),
        (
            "acres_bridge::LabStubs",
            {"speed_limit_mps": float("inf")},
            "speed_limit_mps must be a finite number",
        ),
        ("acres_bridge::PolarisDescription", {"vehicle": "maxxum"}, "describes a Polaris"),
    ],
)
def test_bad_parameters_refuse_the_start(
    context: Context, plugin: str, parameters: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        build(context, plugin, **parameters)


def test_lab_stubs_refuse_a_bad_speed_limit_while_running(context: Context) -> None:
    node = build(context, "acres_bridge::LabStubs")
    try:
        result = node.set_parameters([Parameter("speed_limit_mps", value=-2.0)])[0]
        assert not result.successful
        assert "at least 0" in result.reason
        assert node.set_parameters([Parameter("speed_limit_mps", value=3)])[0].successful
        assert node.set_parameters([Parameter("safety_stop", value=True)])[0].successful
        assert node.get_parameter("speed_limit_mps").value == 3
    finally:
        node.destroy_node()
