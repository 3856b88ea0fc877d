"""The plan: which nodes a bridge loads, with which parameters, for each configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from acres_bridge.container.registry import find_component
from acres_bridge.plan import SUBSYSTEMS, BridgeConfig, plan_bridge

PARAMS_FILE = Path(__file__).resolve().parent.parent / "params" / "sim_bridge.yaml"


def test_polaris_plan_loads_the_ingest_first_then_each_subsystem() -> None:
    planned = plan_bridge(BridgeConfig(vehicle="polaris", control_port=47311))
    assert [p.subsystem for p in planned] == [
        "ingest",
        "clock_tf",
        "ins",
        "perception",
        "episode",
        "dbw",
        "reset",
    ]
    ingest = planned[0]
    assert ingest.parameters["control_port"] == 47311
    assert ingest.parameters["control_host"] == "127.0.0.1"
    assert "vehicle" not in ingest.parameters
    assert planned[1].parameters == {
        "publish_clock": True,
        "vehicle": "polaris",
        "frame_prefix": "",
        "utm_frame": "utm",
    }


def test_every_planned_plugin_is_registered() -> None:
    for subsystem in SUBSYSTEMS:
        package, _, _ = subsystem.plugin.partition("::")
        assert find_component(package, subsystem.plugin).__name__


def test_a_toggle_leaves_its_node_out() -> None:
    config = BridgeConfig.from_parameters({"ins": False, "publish_clock": False})
    planned = plan_bridge(config)
    assert [p.subsystem for p in planned] == ["ingest", "clock_tf", "perception", "episode", "dbw", "reset"]
    assert planned[1].parameters["publish_clock"] is False


def test_auto_plans_the_ingest_until_the_session_names_the_vehicle() -> None:
    config = BridgeConfig(vehicle="auto")
    assert [p.subsystem for p in plan_bridge(config)] == ["ingest"]
    maxxum = plan_bridge(config, vehicle="maxxum", namespace="/maxxum")
    assert [p.subsystem for p in maxxum] == ["ingest", "clock_tf", "ins", "perception", "episode", "reset"]
    assert {p.namespace for p in maxxum} == {"/maxxum"}
    assert maxxum[2].parameters["vehicle"] == "maxxum"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"vehicle": "tractor"}, "vehicle must be one of polaris, maxxum, auto; found 'tractor'"),
        ({"control_port": 0}, r"control_port must be a TCP port \(1..65535\); found 0"),
        ({"control_port": "47100"}, "parameter control_port must be int; found '47100'"),
        ({"ins": "yes"}, "parameter ins must be bool; found 'yes'"),
        ({"publish_clock": 1}, "parameter publish_clock must be bool; found 1"),
        ({"perception_rate": 10}, r"unknown bridge parameters \['perception_rate'\]"),
    ],
)
def test_bad_parameters_are_refused_with_the_reason(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BridgeConfig.from_parameters(values)


def test_an_integer_is_taken_for_a_float_parameter() -> None:
    assert BridgeConfig.from_parameters({"step_timeout_s": 5}).step_timeout_s == 5.0


def test_the_parameter_file_shows_every_parameter_with_its_default() -> None:
    values = yaml.safe_load(PARAMS_FILE.read_text())["sim_bridge"]["ros__parameters"]
    assert values == BridgeConfig.parameter_defaults()
