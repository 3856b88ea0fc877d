"""sim_bridge.launch.py under launch_testing: each vehicle, and each subsystem toggled off.

One launch per case: the simulator in lockstep with perception, and the launch file's container.
With every subsystem on, every topic of the vehicle's table has data. With one toggle false,
exactly that subsystem's node and topics are gone, and every other topic still has data.
After the launch ends, every process has exited with 0.
"""

from __future__ import annotations

import pytest

pytest.importorskip("launch_testing", reason="launch_testing is not installed (make test ROS2_WHEELS=DIR)")
pytest.importorskip("launch_ros", reason="launch_ros is not installed (make test ROS2_WHEELS=DIR)")

import unittest

import launch_testing
import launch_testing.actions
import launch_testing.asserts
from integration.conftest import Ros
from launch_common import (
    BRIDGE_TOPICS,
    SUBSYSTEM_NODES,
    TIMEOUT_S,
    TestExit,  # noqa: F401  (launch_testing runs it after the launch)
    bridge_launch,
    publish_topics,
    simulator_process,
    step_until_each_has,
    subscribe_all,
)

from acres_bridge.processes import free_port
from launch import LaunchDescription

CASES = [
    ("polaris", None),
    *(
        ("polaris", toggle)
        for toggle in ("ingest", "clock_tf", "ins", "perception", "episode", "dbw", "reset")
    ),
    ("maxxum", None),
    ("maxxum", "maxxum"),
    ("maxxum", "can"),
]


@pytest.mark.launch_test
@launch_testing.parametrize("vehicle, toggle", CASES)
def generate_test_description(vehicle: str, toggle: str | None) -> LaunchDescription:
    port = free_port()
    arguments = {"vehicle": vehicle, "control_port": str(port)}
    if toggle is not None:
        arguments[toggle] = "false"
    return LaunchDescription(
        [
            simulator_process(port, "--vehicle", vehicle, perception=True),
            bridge_launch(arguments),
            launch_testing.actions.ReadyToTest(),
        ]
    )


def _node_names(ros: Ros) -> set[str]:
    return {name for name, _ in ros.node.get_node_names_and_namespaces()}


class TestToggles(unittest.TestCase):
    def test_exactly_the_toggled_subsystem_is_gone(self, vehicle: str, toggle: str | None) -> None:
        ros = Ros()
        try:
            self._check(ros, vehicle, toggle)
        finally:
            ros.shutdown()

    def _check(self, ros: Ros, vehicle: str, toggle: str | None) -> None:
        owned = BRIDGE_TOPICS[vehicle]
        published = {n: s for n, s in publish_topics(vehicle).items() if any(n in t for t in owned.values())}
        collected = subscribe_all(ros, published)
        kept = [s for s in SUBSYSTEM_NODES[vehicle] if s != toggle]
        ros.wait_until(lambda: set(kept) <= _node_names(ros), f"the nodes {kept}", TIMEOUT_S)
        gone = owned.get(toggle, ()) if toggle else ()
        if toggle == "ingest":  # no connection: no simulation services, nothing to publish
            ros.spin_for(1.0)
            assert "ingest" not in _node_names(ros)
            services = {name for name, _ in ros.node.get_service_names_and_types()}
            assert "/step_simulation" not in services
            assert all(ros.node.count_publishers(t) == 1 for t in published)
            return
        others = [t for t in published if t not in gone]
        step_until_each_has(ros, collected, others)
        assert toggle not in _node_names(ros)
        for topic in gone:
            if topic in published:
                assert ros.node.count_publishers(topic) == 0, topic
                assert collected[topic] == [], topic
            else:
                assert ros.node.count_subscribers(topic) == 0, topic
        for subsystem, topics in owned.items():
            if subsystem == toggle:
                continue
            for topic in topics:
                if topic in published:
                    assert collected[topic], f"{topic} has no data"
                else:
                    # a command's two readers: reliable (acknowledges) and best-effort
                    assert ros.node.count_subscribers(topic) == 2, f"{topic} has not its two readers"
