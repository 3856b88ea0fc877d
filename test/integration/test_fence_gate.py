"""The fence's one gate, against a real bridge outside the fence: no command reaches the simulator,
whichever way it comes (spec: the DDS loopback fence; docs/robustness.md).

The bridge runs with ROS_STATIC_PEERS naming this machine: its discovery still stays on the machine
(the test's namespace has nothing else), but the fence counts it as down, as it would with a peer
of the network named there.
"""

from __future__ import annotations

import math

import pytest
from ds_dbw_msgs.msg import GearCmd, UlcCmd
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry

from acres_bridge.convert.dbw import command_from_message
from acres_bridge.ingest.channels import CHANNELS, DBW_COMMAND, Flow
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.processes import ChildProcess, localhost_environment
from acres_bridge.wire import DbwCommand, DbwTarget

from .conftest import Processes, Ros, free_port, wait_for_line

pytestmark = pytest.mark.integration

PROFILES = load_profiles()
UNFENCED = {**localhost_environment(), "ROS_STATIC_PEERS": "127.0.0.1"}


@pytest.fixture
def unfenced(processes: Processes, ros: Ros) -> ChildProcess:
    """An unfenced bridge without its drive-by-wire node (the way to run one's own)."""
    port = free_port()
    processes.simulator(port)
    bridge = processes.bridge(port, env=UNFENCED, dbw=False)
    wait_for_line(bridge, "not behind the DDS loopback fence")
    return bridge


def _drive_commands() -> list[DbwCommand]:
    gear = GearCmd()
    gear.cmd.value = gear.cmd.LOW
    commands = [
        DbwCommand(seq=0, target=DbwTarget.ENABLE, cmd_type=0, flags=0, cmd=0.0),
        command_from_message(gear),
        command_from_message(UlcCmd(cmd=2.0, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)),
    ]
    return [command for command in commands if command is not None]


def test_without_the_fence_no_command_reaches_the_vehicle_by_any_way(
    unfenced: ChildProcess, ros: Ros
) -> None:
    truth = ros.collect(Odometry, "/sim/ground_truth/odom", 5000)
    reset_spec = PROFILES.topic("polaris", "/sim/reset")
    assert reset_spec.qos is not None
    reset = ros.node.create_publisher(PoseStamped, "/sim/reset", reset_spec.qos.to_rclpy())
    internal = ros.node.create_publisher(DBW_COMMAND.message_type, DBW_COMMAND.key("/"), DBW_COMMAND.qos())
    ros.wait_until(lambda: reset.get_subscription_count() > 0, "the bridge on /sim/reset")
    ros.step(60)  # the INS has a position by now: a reset would be taken
    ros.wait_until(lambda: truth, "the ground truth")
    ros.settle()
    start = truth[-1].pose.pose.position
    # No side door: the bridge subscribes to none of its internal command channels.
    for channel in CHANNELS:
        if channel.flow is Flow.TO_SIMULATOR:
            assert ros.node.count_subscribers(channel.key("/")) == 0, channel.suffix
    target = PoseStamped()
    target.header.frame_id = "utm"
    target.pose.position.x, target.pose.position.y = start.x + 5.0, start.y
    target.pose.orientation.w = 1.0
    for _ in range(40):
        for command in _drive_commands():
            internal.publish(DBW_COMMAND.to_message(command))
        reset.publish(target)
        ros.spin_for(0.002)
        ros.step(3)
    ros.settle()
    end = truth[-1].pose.pose.position
    assert math.hypot(end.x - start.x, end.y - start.y) < 1e-6
    assert unfenced.popen.poll() is None
