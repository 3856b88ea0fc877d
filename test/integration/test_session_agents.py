"""A new session with other agents is served by the same bridge, without a restart.

The simulator of one Polaris goes away; another starts on the same port with a second Polaris;
the bridge (agents:=auto) reconnects and loads the new agent's nodes. Then the first session's
agent set comes back and the second agent's nodes are unloaded.
"""

from __future__ import annotations

import pytest
from nav_msgs.msg import Odometry

from .conftest import Processes, Ros, free_port

pytestmark = pytest.mark.integration

SECOND = "/polaris_2/vehicle/odom"


def _odometry(ros: Ros, topic: str) -> list[Odometry]:
    return ros.collect(Odometry, topic, 1000)


def test_agents_of_a_new_session_are_served_and_those_gone_unloaded(processes: Processes, ros: Ros) -> None:
    port = free_port()
    first = processes.simulator(port)
    bridge = processes.bridge(port, vehicle="auto", agents="auto", reconnect_interval_s=0.1)
    ros.wait_until(lambda: ros.node.count_publishers("/vehicle/odom") > 0, "agent 0's odometry", 60.0)
    assert ros.node.count_publishers(SECOND) == 0
    first.stop()

    processes.simulator(port, "--agent", "polaris:polaris", "--agent", "polaris 2:polaris")
    ros.wait_until(lambda: ros.node.count_publishers(SECOND) > 0, "the new agent's odometry", 60.0)
    second = _odometry(ros, SECOND)
    for _ in range(100):
        if second:
            break
        ros.step(12)
        ros.spin_for(0.02)
    assert second, "the new agent's odometry carries data"
    assert second[-1].child_frame_id == "polaris_2/base_footprint"
    bridge.check_alive()  # the same bridge process all along
    processes.started[-1].stop()

    processes.simulator(port)  # one agent again
    ros.wait_until(lambda: ros.node.count_publishers(SECOND) == 0, "the second agent's nodes to go", 60.0)
    assert ros.node.count_publishers("/vehicle/odom") > 0
