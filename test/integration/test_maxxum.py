"""The Maxxum through the bridge, as an autonomy stack drives it (spec: State and Commands of the Maxxum).

The simulator (`acres_sim --vehicle maxxum --lockstep`) and the bridge (vehicle:=maxxum) run as
processes. A driver publishes like the spec's example node, at 20 Hz of simulation time: before
each step request of 6 physics steps (0.05 s). Lockstep makes the counts exact.

Figures the tests hold the bridge to (the speed controller's defaults, speed_kp 1.0, speed_ki 0.5):
the spec example (plow lowered, 2.0 m/s, 0.05 1/m) keeps the speed within 0.05 m/s of 2.0 (mean and
every sample of the ground truth over the last 5 of 20 s) and drives a circle of 20 +- 1 m radius.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.duration import Duration
from std_msgs.msg import Bool, Float32, String
from tf2_msgs.msg import TFMessage

from acres_bridge.msg_profiles import load_profiles

from .conftest import LATCHED, Processes, Ros, free_port
from .test_dbw import circle_radius

pytestmark = pytest.mark.integration

PROFILES = load_profiles()
STEPS_PER_TICK = 6  # 20 Hz on the 120 Hz physics clock
TICKS_PER_S = 20
NS_PER_S = 1_000_000_000


def qos(topic: str, depth: int = 5000) -> Any:
    """The bridge's QoS for a topic of the Maxxum, with a reader history deep enough for a test."""
    spec = PROFILES.topic("maxxum", topic).qos
    assert spec is not None
    profile = spec.to_rclpy()
    profile.depth = depth
    return profile


def stamp_ns(message: Any) -> int:
    return int(message.header.stamp.sec) * NS_PER_S + int(message.header.stamp.nanosec)


class Driver:
    """The spec's example command node, ticking in simulation time, plus the state topics collected."""

    TOPICS = (
        ("cmd_vel", Twist),
        ("guidance/curvature_cmd", Float32),
        ("speed_cmd", Float32),
        ("hitch/raise_cmd", Bool),
    )

    def __init__(self, ros: Ros) -> None:
        self.ros = ros
        self.publishers = {
            name: ros.node.create_publisher(kind, name, qos(name, 10)) for name, kind in self.TOPICS
        }
        self.state = ros.collect(String, "implement/state", qos("implement/state"))
        self.rpm = ros.collect(Float32, "engine_rpm", qos("engine_rpm"))
        self.steering = ros.collect(Float32, "steering_angle", qos("steering_angle"))
        self.truth = ros.collect(Odometry, "ground_truth/odom", qos("ground_truth/odom"))
        self.commands = ros.collect(String, "/_acres_ingest/agent_0/maxxum_command", 5000)
        self.ticks = 0

    def wait_for_bridge(self) -> None:
        for name, publisher in self.publishers.items():
            self.ros.wait_until(lambda p=publisher: p.get_subscription_count() > 0, f"the bridge on {name}")
        self.ros.wait_until(
            lambda: self.ros.node.count_publishers("/_acres_ingest/agent_0/maxxum_command") > 0,
            "the maxxum node's command channel",
        )
        self.ros.spin_for(0.5)  # the outlet notices the test's subscription of the internal channel

    def tick(self, *messages: tuple[str, Any], acked: bool = False) -> None:
        """Publish, then advance the simulation by one 20 Hz tick. ``acked``: wait until the bridge
        holds the messages before the step request (acknowledged lockstep: they apply from its first
        step), which takes a DDS heartbeat round; else give them 2 ms to leave."""
        for name, message in messages:
            self.publishers[name].publish(message)
        if acked:
            for name, _ in messages:
                assert self.publishers[name].wait_for_all_acked(Duration(seconds=10)), name
        else:
            self.ros.spin_for(0.002)
        self.ros.step(STEPS_PER_TICK)
        self.ticks += 1

    def settle(self) -> None:
        self.ros.settle()

    def implement_state(self, index: int = -1) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self.state[index].data)
        return state

    def speed_at(self, time_ns: int) -> float:
        """The exact forward speed of the ground truth at or just before a simulation time."""
        before = [m for m in self.truth if stamp_ns(m) <= time_ns]
        return float(before[-1].twist.twist.linear.x)


def spec_example() -> tuple[tuple[str, Any], ...]:
    return (
        ("guidance/curvature_cmd", Float32(data=0.05)),
        ("speed_cmd", Float32(data=2.0)),
        ("hitch/raise_cmd", Bool(data=False)),
    )


def twist(x: float, z: float) -> tuple[str, Twist]:
    message = Twist()
    message.linear.x, message.angular.z = x, z
    return ("cmd_vel", message)


@pytest.fixture
def driver(processes: Processes, ros: Ros) -> Driver:
    port = free_port()
    processes.simulator(port, "--vehicle", "maxxum")
    processes.bridge(port, vehicle="maxxum")
    driver = Driver(ros)
    driver.wait_for_bridge()
    return driver


def test_the_spec_example_holds_2_m_s_on_a_circle_of_20_m_with_the_plow_working(driver: Driver) -> None:
    for _ in range(20 * TICKS_PER_S):  # 20 simulated seconds
        driver.tick(*spec_example())
    driver.settle()
    # 10 Hz of simulation time, exactly: 200 of each, the last at 20 s.
    assert len(driver.state) == len(driver.rpm) == len(driver.steering) == 200
    assert stamp_ns(driver.truth[-1]) == 20 * NS_PER_S
    speeds = np.array([m.twist.twist.linear.x for m in driver.truth[-500:]])  # the last 5 s at 100 Hz
    assert abs(speeds.mean() - 2.0) < 0.05
    assert np.abs(speeds - 2.0).max() < 0.05
    points = np.array([(m.pose.pose.position.x, m.pose.pose.position.y) for m in driver.truth[-1000:]])
    assert circle_radius(points) == pytest.approx(20.0, abs=1.0)
    state = driver.implement_state()
    assert (state["implement"], state["raised"], state["stale"], state["hitch_mode"]) == (
        "chisel_plow",
        False,
        False,
        "position",
    )
    assert state["implement_depth_m"] > 0.1  # the plow is in the ground
    assert state["draft_n"] > 10_000.0  # and pulls
    assert state["rpm"] > 1000.0  # above idle: the engine works
    assert driver.rpm[-1].data == pytest.approx(state["rpm"], abs=0.1)
    assert driver.steering[-1].data == pytest.approx(math.atan(0.05 * 2.9), abs=0.002)  # wheelbase 2.9 m


def test_cmd_vel_brakes_on_a_negative_speed_and_steers_at_standstill(driver: Driver) -> None:
    for _ in range(8 * TICKS_PER_S):
        driver.tick(twist(2.0, 0.0))
    driver.settle()
    assert driver.truth[-1].twist.twist.linear.x == pytest.approx(2.0, abs=0.1)
    for _ in range(TICKS_PER_S):  # 1 s: negative speed, a yaw rate that must be ignored
        driver.tick(twist(-1.0, 0.5))
    driver.settle()
    # The full brake (3 m/s^2) stops it within 2 / 3 s; the wheels stay straight.
    assert driver.truth[-1].twist.twist.linear.x == pytest.approx(0.0, abs=1e-6)
    assert max(abs(m.data) for m in driver.steering[-10:]) < 1e-6
    assert driver.implement_state()["stale"] is False  # held by the bridge's brake, not the safety brake
    # A yaw rate at standstill: 0.02 rad/s over the least speed 0.1 m/s, a curvature of 0.2 1/m.
    for _ in range(2 * TICKS_PER_S):
        driver.tick(twist(0.0, 0.02))
    driver.settle()
    assert driver.steering[-1].data == pytest.approx(math.atan(0.2 * 2.9), abs=0.002)
    assert driver.truth[-1].twist.twist.linear.x == pytest.approx(0.0, abs=1e-6)


def test_commands_stop_0_5_s_after_the_last_guidance_and_the_safety_brake_stops_the_tractor(
    driver: Driver,
) -> None:
    active = 8 * TICKS_PER_S
    for tick in range(active):
        # The first and the last input acknowledged before their step: the count does not hang on
        # whether they beat the step request.
        driver.tick(*spec_example(), acked=tick in (0, active - 1))
    last_input_ns = (active - 1) * NS_PER_S // TICKS_PER_S  # published before the last tick's request
    for _ in range(2 * TICKS_PER_S):  # 2 s without guidance
        driver.tick()
    driver.settle()
    # One command per tick from the first tick on, until 0.5 s (10 ticks) after the last input.
    assert len(driver.commands) == active - 1 + 10
    # implement/state each 0.1 s from 0.1 s. The last command (0.5 s after the last input) holds the
    # tractor for the safety brake's 0.25 s; stale from the next observation on.
    stale = {(i + 1) * NS_PER_S // 10: json.loads(m.data)["stale"] for i, m in enumerate(driver.state)}
    assert not any(flag for t, flag in stale.items() if t <= last_input_ns + 750_000_000)
    assert all(flag for t, flag in stale.items() if t >= last_input_ns + 850_000_000)
    assert driver.speed_at(last_input_ns + 500_000_000) == pytest.approx(2.0, abs=0.1)
    assert driver.truth[-1].twist.twist.linear.x == pytest.approx(0.0, abs=1e-6)  # stopped


def test_the_bridge_publishes_the_rig_on_tf_static(driver: Driver) -> None:
    static = driver.ros.collect(TFMessage, "/tf_static", LATCHED)
    driver.ros.wait_until(lambda: static, "/tf_static")
    pairs = {(t.header.frame_id, t.child_frame_id) for t in static[0].transforms}
    assert pairs == {
        ("base_footprint", "lidar"),
        ("base_footprint", "camera"),
        ("camera", "camera_optical"),
        ("base_footprint", "imu_link"),
        ("base_footprint", "gnss_link"),
    }
    gnss = next(t for t in static[0].transforms if t.child_frame_id == "gnss_link").transform.translation
    assert (gnss.x, gnss.y, gnss.z) == (0.5, 0.0, 3.1)  # acres_sim.vehicles.params: the Maxxum's antenna


def test_vehicle_auto_serves_the_maxxum_and_sim_reset_moves_it(processes: Processes, ros: Ros) -> None:
    port = free_port()
    processes.simulator(port, "--vehicle", "maxxum")
    processes.bridge(port, vehicle="auto", agents="auto")
    driver = Driver(ros)
    driver.wait_for_bridge()  # the maxxum node, loaded once the session said agent 0 is a Maxxum
    ros.wait_until(lambda: ros.node.count_publishers("/can/rx") > 0, "the can node")
    reset = ros.node.create_publisher(PoseStamped, "sim/reset", qos("sim/reset", 10))
    ros.wait_until(lambda: reset.get_subscription_count() > 0, "the bridge on sim/reset")
    for _ in range(2 * TICKS_PER_S):
        driver.tick(twist(1.0, 0.0))
    for _ in range(TICKS_PER_S):  # no guidance: the commands stop, the tractor stops
        driver.tick()
    driver.settle()
    start = driver.truth[-1].pose.pose.position
    target = (start.x + 30.0, start.y - 10.0)
    message = PoseStamped()
    message.header.frame_id = "utm"
    message.pose.position.x, message.pose.position.y = target
    message.pose.orientation.w = 1.0  # heading east
    reset.publish(message)
    assert reset.wait_for_all_acked(Duration(seconds=10))
    driver.tick()
    driver.tick()
    driver.settle()
    moved = driver.truth[-1]
    assert (moved.pose.pose.position.x, moved.pose.pose.position.y) == pytest.approx(target, abs=1e-6)
    assert moved.twist.twist.linear.x == pytest.approx(0.0, abs=1e-9)
    assert driver.implement_state()["stale"] is True  # the reset tractor is parked and braked


def test_a_lockstep_run_with_the_bridges_controller_is_repeatable(processes: Processes, ros: Ros) -> None:
    runs = []
    for _ in range(2):
        port = free_port()
        simulator = processes.simulator(port, "--vehicle", "maxxum")
        bridge = processes.bridge(port, vehicle="maxxum")
        driver = Driver(ros)
        driver.wait_for_bridge()
        for name, message in spec_example():  # the first input is held by the bridge before the first step
            driver.publishers[name].publish(message)
            assert driver.publishers[name].wait_for_all_acked(Duration(seconds=10)), name
        for _ in range(5 * TICKS_PER_S):
            driver.tick(*spec_example())
        driver.settle()
        runs.append(
            (
                [(stamp_ns(m), m.pose.pose.position.x, m.pose.pose.position.y) for m in driver.truth],
                [m.data for m in driver.state],
            )
        )
        for subscription in list(ros.node.subscriptions):
            ros.node.destroy_subscription(subscription)
        for publisher in driver.publishers.values():
            ros.node.destroy_publisher(publisher)
        bridge.stop()
        simulator.stop()
        # The next run's readiness and acks count the bridge's readers: wait until this one's have
        # left the graph (if its goodbye was lost, its lease of 20 s ends them).
        for name in driver.publishers:
            ros.wait_until(lambda n=name: ros.node.count_subscribers(n) == 0, f"the bridge off {name}", 60.0)
    assert len(runs[0][0]) == 476  # the ground truth from the first fix (0.25 s) to 5 s
    assert runs[0] == runs[1]
