"""The simulator and the bridge as processes: clock, TF, INS, episode, simulation control.

A lockstep session makes the checks exact: N steps requested give exactly N /clock messages.
Before measuring, each test steps until every topic it watches has delivered once, so DDS
discovery is complete and nothing after that can be lost.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from acres_interfaces.msg import Episode
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.qos import DurabilityPolicy, QoSPolicyKind, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, NavSatFix
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (
    GetSimulationState,
    GetSimulatorFeatures,
    ResetSimulation,
    SetSimulationState,
    StepSimulation,
)
from tf2_msgs.msg import TFMessage

from acres_bridge.msg_profiles import load_profiles

from .conftest import LATCHED, Processes, Ros, free_port

pytestmark = pytest.mark.integration

NS_PER_S = 1_000_000_000
PROFILES = load_profiles()


def stamp_ns(message: Any) -> int:
    stamp = message.clock if isinstance(message, Clock) else message.header.stamp
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def step_stamp_ns(step: int) -> int:
    return step * NS_PER_S // 120


class Session:
    """One simulator and one bridge, the topics the tests watch, and the step count of the session."""

    def __init__(self, processes: Processes, ros: Ros, *, seed: int = 42) -> None:
        self.port = free_port()
        self.simulator = processes.simulator(self.port, seed=seed)
        self.bridge = processes.bridge(self.port)
        self.ros = ros
        self.steps_done = 0  # a fresh lockstep session starts at step 0, and only step() advances it
        # The bridge's QoS, with a deep reader history: a burst of steps must not overrun the test.
        qos = {name: PROFILES.topic("polaris", name).qos.to_rclpy() for name in ("/clock", "/tf")}
        for profile in qos.values():
            profile.depth = 5000
        self.clock: list[Clock] = []
        self.clock_seqs: list[int] = []  # the DDS publication sequence number of each /clock
        self.latest_clock_ns = -1
        ros.node.create_subscription(Clock, "/clock", self._on_clock, qos["/clock"])
        self.tf = ros.collect(TFMessage, "/tf", qos["/tf"])
        self.odom = ros.collect(Odometry, "/vehicle/odom", 5000)
        self.imu = ros.collect(Imu, "/oxts/imu", 5000)
        self.velocity = ros.collect(TwistStamped, "/oxts/velocity", 5000)
        self.fix = ros.collect(NavSatFix, "/oxts/fix", 5000)
        self.truth = ros.collect(Odometry, "/sim/ground_truth/odom", 5000)
        ros.wait_until(lambda: ros.node.count_publishers("/clock") > 0, "the bridge's /clock publisher")
        ros.wait_until(self._paused, "the bridge to connect to the simulator")

    def _on_clock(self, message: Clock, info: dict[str, Any]) -> None:
        self.clock.append(message)
        self.clock_seqs.append(int(info["publication_sequence_number"]))
        self.latest_clock_ns = stamp_ns(message)

    def _paused(self) -> bool:
        response = self.ros.call(GetSimulationState, "/get_simulation_state", GetSimulationState.Request())
        return bool(response.state.state == SimulationState.STATE_PAUSED)

    def step(self, steps: int) -> None:
        self.ros.step(steps)
        self.steps_done += steps

    def topics(self) -> dict[str, list[Any]]:
        return {
            "/clock": self.clock,
            "/tf": self.tf,
            "/vehicle/odom": self.odom,
            "/oxts/imu": self.imu,
            "/oxts/velocity": self.velocity,
            "/oxts/fix": self.fix,
            "/sim/ground_truth/odom": self.truth,
        }

    def warm_up(self) -> None:
        """Step until every watched topic has delivered (past the INS fix), then forget what came."""
        for _ in range(200):
            if all(self.topics().values()):
                break
            self.step(12)
        else:
            empty = [name for name, got in self.topics().items() if not got]
            pytest.fail(f"no message on {empty} after 2400 steps")
        self.settle()
        for received in self.topics().values():
            received.clear()

    def settle(self) -> None:
        """Wait until the last /clock of the steps done so far has arrived.

        /clock is the first message of each step: the INS messages of the last step may still be
        on their way, so the tests that count INS messages step once more first.
        """
        last = step_stamp_ns(self.steps_done)
        self.ros.wait_until(lambda: self.latest_clock_ns == last, f"/clock of step {self.steps_done}")


@pytest.fixture(scope="module")
def session(module_processes: Processes, module_ros: Ros) -> Session:
    live = Session(module_processes, module_ros)
    live.warm_up()
    return live


def test_n_steps_give_exactly_n_clock_messages(session: Session) -> None:
    # What the bridge publishes, judged by the publication sequence numbers: exactly one /clock per
    # step, each with its step's stamp. (Whether a reader takes all 240 of one burst through a
    # depth-10 writer depends on it getting the CPU: docs/simulation_control.md.)
    session.step(1)
    session.settle()
    start, first_seq = session.steps_done, session.clock_seqs[-1]
    session.clock.clear()
    session.clock_seqs.clear()
    session.step(240)
    session.step(1)  # anything extra from the 240 would come before this one
    session.settle()
    assert session.clock_seqs[-1] - first_seq == 241  # published: 241 clocks, no more, no fewer
    assert session.clock_seqs == sorted(set(session.clock_seqs))  # in order, none twice
    stamps = [stamp_ns(message) for message in session.clock]
    assert stamps == [step_stamp_ns(start + seq - first_seq) for seq in session.clock_seqs]
    assert len(stamps) >= 200, f"only {len(stamps)} of 241 received"


def test_ins_topics_at_100_per_simulated_second(session: Session) -> None:
    session.settle()
    for received in session.topics().values():
        received.clear()
    # One simulated second in requests of 6 steps (6 clocks, 5 INS samples each), each waited for
    # until it has arrived: a burst larger than a writer's depth of 10 can be lost to a reader that
    # a busy machine does not let keep up (the topics are judged here, not the reader's pace).
    for request in range(1, 21):
        session.step(6)
        session.ros.wait_until(
            lambda n=request: (
                len(session.clock) >= 6 * n
                and all(len(m) >= 5 * n for name, m in session.topics().items() if name != "/clock")
            ),
            f"the messages of request {request}",
        )
    session.settle()
    first, last = stamp_ns(session.clock[0]), stamp_ns(session.clock[119])

    def in_second(name: str) -> int:
        return sum(1 for m in session.topics()[name] if first <= _stamp_of(m) <= last)

    # Topics are separate DDS writers: wait for each to deliver its share, then for any extra.
    for name in session.topics():
        if name != "/clock":
            session.ros.wait_until(lambda name=name: in_second(name) >= 100, f"100 messages on {name}")
    session.ros.spin_for(0.3)
    assert {name: in_second(name) for name in session.topics() if name != "/clock"} == {
        name: 100 for name in session.topics() if name != "/clock"
    }
    assert len(session.clock) == 120


def _stamp_of(message: Any) -> int:
    if isinstance(message, TFMessage):
        return stamp_ns(message.transforms[0])
    return stamp_ns(message)


def test_frames_are_those_of_msg_profiles(session: Session) -> None:
    expected = {name: PROFILES.topic("polaris", name).frame for name in session.topics() if name != "/clock"}
    assert session.odom[-1].header.frame_id == expected["/vehicle/odom"] == "utm"
    assert session.odom[-1].child_frame_id == "base_footprint"
    assert session.truth[-1].header.frame_id == expected["/sim/ground_truth/odom"]
    assert session.imu[-1].header.frame_id == expected["/oxts/imu"] == "imu_link"
    assert session.velocity[-1].header.frame_id == expected["/oxts/velocity"] == "oxts_link"
    assert session.fix[-1].header.frame_id == expected["/oxts/fix"] == "navsat_link"
    transform = session.tf[-1].transforms[0]
    assert (transform.header.frame_id, transform.child_frame_id) == ("utm", "base_footprint")


def test_qos_on_the_wire_is_that_of_msg_profiles(session: Session) -> None:
    names = [*session.topics(), "/sim/episode"]
    for name in names:
        table = "session" if name == "/sim/episode" else "polaris"
        spec = PROFILES.topic(table, name).qos
        assert spec is not None
        infos = session.ros.node.get_publishers_info_by_topic(name)
        assert infos, f"no publisher of {name}"
        for info in infos:
            reliability = (
                ReliabilityPolicy.RELIABLE
                if spec.reliability == "reliable"
                else ReliabilityPolicy.BEST_EFFORT
            )
            durability = (
                DurabilityPolicy.TRANSIENT_LOCAL
                if spec.durability == "transient_local"
                else DurabilityPolicy.VOLATILE
            )
            assert info.qos_profile.reliability == reliability, name
            assert info.qos_profile.durability == durability, name


def test_a_subscription_asking_for_an_incompatible_qos_is_told_on_its_side(session: Session) -> None:
    # The bridge's publishers have no QoS-event handlers (acres_bridge.publisher_events): the
    # subscription that asks for more than a topic offers reports it, as rclpy and rclcpp do.
    events: list[Any] = []
    callbacks = SubscriptionEventCallbacks(incompatible_qos=events.append)
    durable = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)  # /clock is volatile
    subscription = session.ros.node.create_subscription(
        Clock, "/clock", lambda _message: None, durable, event_callbacks=callbacks
    )
    try:
        session.ros.wait_until(lambda: events, "the incompatible-QoS event of the subscription")
    finally:
        session.ros.node.destroy_subscription(subscription)
    assert events[0].last_policy_kind == QoSPolicyKind.DURABILITY


def test_ins_values_within_the_error_model_of_ground_truth(session: Session) -> None:
    pairs = {stamp_ns(m): m for m in session.truth}
    checked = 0
    for odom in session.odom:
        truth = pairs.get(stamp_ns(odom))
        if truth is None:
            continue
        covariance = odom.pose.covariance
        for axis, index in (("x", 0), ("y", 7), ("z", 14)):
            sigma = math.sqrt(covariance[index])
            error = getattr(odom.pose.pose.position, axis) - getattr(truth.pose.pose.position, axis)
            assert sigma > 0
            assert abs(error) < 6 * sigma, (axis, error, sigma)
        checked += 1
    assert checked >= 50
    # Units of /oxts/velocity: deg/s about the body axes; /oxts/imu: rad/s about x left, y forward, z down.
    imu = {stamp_ns(m): m for m in session.imu}
    paired = [v for v in session.velocity if stamp_ns(v) in imu]
    assert len(paired) >= 50
    for velocity in paired:
        rate = imu[stamp_ns(velocity)].angular_velocity
        assert velocity.twist.angular.z == pytest.approx(-math.degrees(rate.z), abs=1e-9)
        assert velocity.twist.angular.x == pytest.approx(math.degrees(rate.y), abs=1e-9)
    # At rest or rolling on flat ground the specific force points up: z of the IMU (down) is about -9.81.
    assert sum(m.linear_acceleration.z for m in session.imu) / len(session.imu) == pytest.approx(
        -9.81, abs=0.5
    )
    fix = session.fix[-1]
    assert fix.status.status == 2
    assert fix.position_covariance_type == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    assert 40.0 < fix.latitude < 41.0
    assert -87.5 < fix.longitude < -86.5


def test_episode_reaches_a_late_transient_local_subscriber(session: Session) -> None:
    episodes = session.ros.collect(Episode, "/sim/episode", LATCHED)
    session.ros.wait_until(lambda: episodes, "the latched /sim/episode")
    episode = episodes[-1]
    assert episode.episode_id == f"{START}-{episode.episode:04d}"
    assert episode.source == "unreal"
    assert episode.map == "V03ACRE"
    assert list(episode.agents) == ["polaris"]
    assert episode.lockstep is True
    assert episode.seed == 42
    assert episode.state == 2


START = "20261002T072309"


def test_simulation_state_and_features(session: Session) -> None:
    ros = session.ros
    features = ros.call(GetSimulatorFeatures, "/get_simulator_features", GetSimulatorFeatures.Request())
    assert set(features.features.features) == {
        SimulatorFeatures.SIMULATION_RESET,
        SimulatorFeatures.SIMULATION_RESET_STATE,
        SimulatorFeatures.SIMULATION_RESET_SPAWNED,
        SimulatorFeatures.SIMULATION_STATE_GETTING,
        SimulatorFeatures.SIMULATION_STATE_SETTING,
        SimulatorFeatures.SIMULATION_STATE_PAUSE,
        SimulatorFeatures.STEP_SIMULATION_SINGLE,
        SimulatorFeatures.STEP_SIMULATION_MULTIPLE,
        SimulatorFeatures.STEP_SIMULATION_ACTION,
    }
    play = SetSimulationState.Request()
    play.state.state = SimulationState.STATE_PLAYING
    refused = ros.call(SetSimulationState, "/set_simulation_state", play)
    assert refused.result.result == SetSimulationState.Response.INCORRECT_TRANSITION
    assert "lockstep" in refused.result.error_message
    pause = SetSimulationState.Request()
    pause.state.state = SimulationState.STATE_PAUSED
    already = ros.call(SetSimulationState, "/set_simulation_state", pause)
    assert already.result.result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    zero = ros.call(StepSimulation, "/step_simulation", StepSimulation.Request(steps=0))
    assert zero.result.result == Result.RESULT_OPERATION_FAILED
    # A trillion steps would hold the simulator for days: refused at once, with the maximum.
    huge = ros.call(StepSimulation, "/step_simulation", StepSimulation.Request(steps=10**12))
    assert huge.result.result == Result.RESULT_OPERATION_FAILED
    assert huge.result.error_message.startswith("steps must be at most 36000 (5 simulated minutes) per call")


def test_reset_starts_a_new_episode(session: Session) -> None:
    ros = session.ros
    episodes = ros.collect(Episode, "/sim/episode", LATCHED)
    session.ros.wait_until(lambda: episodes, "/sim/episode")
    before = episodes[-1].episode
    time_only = ros.call(
        ResetSimulation,
        "/reset_simulation",
        ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_TIME),
    )
    assert time_only.result.result == Result.RESULT_FEATURE_UNSUPPORTED
    done = ros.call(
        ResetSimulation, "/reset_simulation", ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_ALL)
    )
    assert done.result.result == Result.RESULT_OK
    session.ros.wait_until(lambda: episodes[-1].episode == before + 1, "the next episode")
    assert episodes[-1].episode_time_s == 0.0
    assert episodes[-1].episode_id.endswith(f"-{before + 1:04d}")
    session.step(12)  # the session still steps, paused, after the reset
