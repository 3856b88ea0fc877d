"""The plan: which nodes a bridge loads, with which parameters, for each configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from acres_bridge.container.registry import find_component
from acres_bridge.plan import (
    PARAMETER_DESCRIPTIONS,
    SUBSYSTEMS,
    BridgeConfig,
    SessionAgent,
    plan_agent,
    plan_bridge,
    sanitize_name,
    serve_agents,
)

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
    assert ingest.parameters["vehicle"] == "polaris"  # agent 0's channels before any session
    assert ingest.parameters["allow_unfenced_commands"] is False  # the gate where commands leave
    assert planned[1].parameters == {
        "publish_clock": True,
        "vehicle": "polaris",
        "frame_prefix": "",
        "utm_frame": "utm",
        "agent": 0,
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
    assert [p.subsystem for p in maxxum] == [
        "ingest",
        "clock_tf",
        "ins",
        "perception",
        "episode",
        "reset",
        "maxxum",
        "can",
    ]
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
        ({"can_udp_port": 70000}, r"can_udp_port must be a UDP port \(1..65535\), or 0 for the simulator's"),
        ({"speed_kp": -1.0}, "speed_kp: expected a finite value >= 0, got -1.0"),
        ({"max_speed_mps": 0.0}, "max_speed_mps: expected a finite value > 0, got 0.0"),
        ({"cmd_timeout_s": float("nan")}, "cmd_timeout_s must be a finite number of seconds > 0; found nan"),
        ({"step_timeout_s": 0.0}, "step_timeout_s must be a finite number of seconds > 0; found 0.0"),
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


def test_every_parameter_has_a_description_for_the_launch_arguments() -> None:
    assert set(PARAMETER_DESCRIPTIONS) == set(BridgeConfig.parameter_defaults())


def test_the_speed_controller_and_the_can_port_reach_the_nodes_that_use_them() -> None:
    config = BridgeConfig.from_parameters(
        {
            "vehicle": "maxxum",
            "speed_kp": 0.8,
            "speed_ki": 0.2,
            "max_speed_mps": 5.0,
            "cmd_timeout_s": 1.0,
            "can_udp_port": 47190,
        }
    )
    nodes = {p.subsystem: p.parameters for p in plan_bridge(config)}
    assert nodes["ingest"]["can_udp_port"] == 47190
    maxxum = nodes["maxxum"]
    assert (maxxum["speed_kp"], maxxum["speed_ki"], maxxum["max_speed_mps"], maxxum["cmd_timeout_s"]) == (
        0.8,
        0.2,
        5.0,
        1.0,
    )
    assert "speed_kp" not in nodes["ins"]


# ---- several agents --------------------------------------------------------------------------------

SESSION = [
    SessionAgent(0, "polaris", "polaris"),
    SessionAgent(1, "polaris 2", "polaris"),
    SessionAgent(2, "maxxum", "maxxum"),
]


@pytest.mark.parametrize(
    ("name", "token"),
    [("polaris", "polaris"), ("polaris 2", "polaris_2"), ("a-b.c/d", "a_b_c_d"), ("2nd", "_2nd"), ("", "_")],
)
def test_sanitize_name_makes_a_ros_name_token(name, token):
    assert sanitize_name(name) == token


def test_auto_serves_every_agent_with_its_namespace_and_prefix():
    slots = serve_agents(BridgeConfig(vehicle="auto", agents="auto"), SESSION, namespace="/sim")
    assert [(s.index, s.namespace, s.frame_prefix, s.primary) for s in slots] == [
        (0, "/sim", "", True),
        (1, "/sim/polaris_2", "polaris_2/", False),
        (2, "/sim/maxxum", "maxxum/", False),
    ]
    root = serve_agents(BridgeConfig(vehicle="auto", agents="auto"), SESSION)
    assert [s.namespace for s in root] == ["", "/polaris_2", "/maxxum"]


def test_a_second_bridge_serves_its_agent_as_its_first_one():
    config = BridgeConfig(vehicle="auto", agents="1", publish_clock=False, frame_prefix="polaris2/")
    (slot,) = serve_agents(config, SESSION, namespace="/polaris2")
    assert (slot.index, slot.namespace, slot.frame_prefix, slot.primary) == (
        1,
        "/polaris2",
        "polaris2/",
        True,
    )
    clock_tf = next(
        p for p in plan_agent(config, slot, ingest_namespace="/polaris2") if p.subsystem == "clock_tf"
    )
    assert clock_tf.parameters["publish_clock"] is False
    assert clock_tf.parameters["agent"] == 1


def test_an_index_the_session_lacks_is_left_out():
    assert [s.index for s in serve_agents(BridgeConfig(agents="2,7"), SESSION)] == [2]


def test_plan_agent_gives_each_agent_its_vehicle_nodes_and_the_clock_and_episode_to_agent_0_only():
    config = BridgeConfig(vehicle="auto", agents="auto")
    slots = serve_agents(config, SESSION)
    plans = [plan_agent(config, slot) for slot in slots]
    assert [p.subsystem for p in plans[0]] == ["clock_tf", "ins", "perception", "episode", "dbw", "reset"]
    assert [p.subsystem for p in plans[1]] == ["clock_tf", "ins", "perception", "dbw", "reset"]
    assert [p.subsystem for p in plans[2]] == ["clock_tf", "ins", "perception", "reset", "maxxum", "can"]
    assert [p.parameters["publish_clock"] for p in (plans[0][0], plans[1][0], plans[2][0])] == [
        True,
        False,
        False,
    ]
    second = plans[1][1]
    assert second.namespace == "/polaris_2"
    assert second.parameters == {
        "vehicle": "polaris",
        "frame_prefix": "polaris_2/",
        "utm_frame": "utm",
        "agent": 1,
        "ingest_namespace": "/",
    }
    assert "ingest_namespace" not in plans[0][1].parameters  # agent 0 shares the ingest's namespace
    assert plans[2][0].parameters["vehicle"] == "maxxum"


@pytest.mark.parametrize("text", ["", "x", "0,0", "-1", "1,a"])
def test_bad_agents_are_refused(text):
    with pytest.raises(ValueError, match="agents must be auto or"):
        BridgeConfig(agents=text)


def test_agents_given_as_an_integer_parameter_is_taken():
    assert BridgeConfig.from_parameters({"agents": 1}).agents == "1"
