"""The maxxum node in one process with a real rclpy context: state topics, /tf_static, the 20 Hz
controller on the clock, the command timeout, settings, refusals and the fence.

Samples go in on the process's SampleBus, as the ingest hands them over; the MAXXUM_COMMANDs come
out on the bus, where the ingest would take them; the topics are real ROS topics of a probe node.
"""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import rclpy
import samples
from geometry_msgs.msg import Twist
from rclpy.context import Context
from rclpy.parameter import Parameter
from std_msgs.msg import Bool, Float32, String

from acres_bridge.convert.speed_controller import PiState, SpeedControllerParams, control
from acres_bridge.ingest.channels import CLOCK, INS, MAXXUM_COMMAND, MAXXUM_OBSERVATION, SESSION, Session
from acres_bridge.nodes.maxxum import Maxxum
from acres_bridge.wire import (
    Clock,
    Hello,
    InsSample,
    SensorMeta,
    SensorMount,
    Vehicle,
)
from acres_bridge.wire.maxxum import Difflock, HitchMode, ImplementControls, MaxxumCommand, MaxxumObservation
from nodes.node_rig import NodeRig, node_rig

TIMEOUT = 10.0
NS_PER_STEP = 1_000_000_000 / 120

HELLO = samples.hello(samples.agent(0, Vehicle.MAXXUM, sensor_port=1, vehicle_port=2, can_port=3), seed=42)


def _mount(frame: str, kind: str = "frame", parent: str = "base_footprint") -> SensorMount:
    return SensorMount(
        name=frame,
        kind=kind,
        frame=frame,
        parent=parent,
        xyz_m=(0.5, 0.0, 3.1),
        rpy_rad=(0.0, 0.0, 0.0),
        rate_hz=0.0,
        settings={},
    )


META = SensorMeta(
    agent=0,
    vehicle="maxxum",
    utm_epsg=32616,
    world_origin_utm=(500400.0, 4479900.0, 181.5),
    sensors=(
        _mount("lidar"),
        _mount("camera"),
        _mount("camera_optical", parent="camera"),
        _mount("imu_link", "ins"),
        _mount("gnss_link"),
    ),
)
OBSERVATION = MaxxumObservation(
    step=12,
    stamp_ns=100_000_000,
    implement="chisel_plow",
    implement_depth_m=0.0,
    pto_kw=0.0,
    pto_on=False,
    pto_rpm=0.0,
    hitch_lever=0.4,
    hitch_lift_deg=21.5,
    hitch_mode=HitchMode.POSITION,
    raised=True,
    draft_n=0.0,
    difflock=Difflock.REAR,
    engine_rpm=796.25,
    stale=True,
    steering_angle_rad=0.0625,
)


def ins(step: int, speed: float) -> InsSample:
    """A Maxxum's INS sample (no fix) at ``speed`` straight ahead."""
    return samples.ins_sample(
        step,
        has_position=False,
        stamp_ns=round(step * NS_PER_STEP),
        velocity=(speed, 0.0, 0.0),
        true_speed=speed,
    )


@dataclasses.dataclass
class Rig:
    """The maxxum node in its rig: the tractor's topics received, a publisher per command topic."""

    nodes: NodeRig
    received: dict[str, list[Any]]
    publishers: dict[str, Any]
    step: int = 0

    @property
    def node(self) -> Maxxum:
        node: Maxxum = self.nodes.node
        return node

    @property
    def commands(self) -> list[MaxxumCommand]:
        return self.nodes.sent

    def spin_until(self, condition: Callable[[], object], what: str) -> None:
        self.nodes.spin_until(condition, what)

    def feed(self, channel: Any, sample: Any) -> None:
        self.nodes.feed(channel, sample)

    def session(self, hello: Hello | None = HELLO, meta: SensorMeta | None = META) -> None:
        self.feed(SESSION, Session(connected=hello is not None, hello=hello, sensor_meta=(meta,)))

    def publish(self, topic: str, message: Any) -> None:
        """Publish on a command topic and wait until the node has taken or refused it."""

        def handled() -> int:
            return self.node.accepted[topic] + sum(self.node.refused.values())

        before = handled()
        self.publishers[topic].publish(message)
        self.spin_until(lambda: handled() > before, f"the node on {topic}")

    def run(self, steps: int, speed: float = 0.0, *, ins_first: bool = True) -> None:
        """Physics steps as the ingest delivers them: an INS sample of each step and its clock."""
        for _ in range(steps):
            self.step += 1
            clock = Clock(step=self.step, stamp_ns=round(self.step * NS_PER_STEP))
            if ins_first:
                self.feed(INS, ins(self.step, speed))
            self.feed(CLOCK, clock)
            if not ins_first:
                self.feed(INS, ins(self.step, speed))


COMMAND_TOPICS = (
    "cmd_vel",
    "guidance/curvature_cmd",
    "speed_cmd",
    "hitch/lever_cmd",
    "hitch/raise_cmd",
    "pto/cmd",
    "hand_throttle_cmd",
    "implement/cmd",
)


@contextmanager
def maxxum_rig(monkeypatch: pytest.MonkeyPatch, *, fenced: bool = True, **parameters: Any) -> Iterator[Rig]:
    def unfence() -> None:  # after init: the context itself stays on this machine
        for name in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
            monkeypatch.delenv(name, raising=False)

    with node_rig(
        Maxxum,
        vehicle="maxxum",
        parameters=[Parameter(name, value=value) for name, value in parameters.items()],
        feeds=(SESSION, CLOCK, INS, MAXXUM_OBSERVATION),
        sends=(MAXXUM_COMMAND,),
        before_node=None if fenced else unfence,
    ) as nodes:
        received = {
            topic: nodes.received("maxxum", topic)
            for topic in ("engine_rpm", "steering_angle", "implement/state")
        }
        received["tf"] = nodes.received("maxxum", "/tf_static")
        publishers = {topic: nodes.publisher("maxxum", topic) for topic in COMMAND_TOPICS}
        rig = Rig(nodes, received, publishers)
        rig.session()
        yield rig


@pytest.fixture
def rig(monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    with maxxum_rig(monkeypatch) as made:
        yield made


# ---- state ---------------------------------------------------------------------------------------


def test_an_observation_gives_engine_rpm_steering_angle_and_implement_state(rig: Rig) -> None:
    rig.feed(MAXXUM_OBSERVATION, OBSERVATION)
    rig.spin_until(lambda: rig.received["implement/state"], "implement/state")
    rig.spin_until(lambda: rig.received["engine_rpm"] and rig.received["steering_angle"], "the two floats")
    assert rig.received["engine_rpm"][0].data == 796.25
    assert rig.received["steering_angle"][0].data == 0.0625
    state = json.loads(rig.received["implement/state"][0].data)
    assert list(state)[-2:] == ["rpm", "stale"]
    assert (state["rpm"], state["stale"], state["difflock"], state["hitch_mode"]) == (
        796.2,  # to 0.1 r/min
        True,
        1,
        "position",
    )


def test_the_rig_goes_on_tf_static_once_per_rig(rig: Rig) -> None:
    rig.spin_until(lambda: rig.received["tf"], "/tf_static")
    (message,) = rig.received["tf"]
    pairs = {(t.header.frame_id, t.child_frame_id) for t in message.transforms}
    assert pairs == {
        ("base_footprint", "lidar"),
        ("base_footprint", "camera"),
        ("camera", "camera_optical"),
        ("base_footprint", "imu_link"),
        ("base_footprint", "gnss_link"),
    }
    rig.session()  # the same rig again (another SENSOR_META of the session): nothing new
    rig.nodes.executor.spin_once(timeout_sec=0.2)
    assert len(rig.received["tf"]) == 1


def test_a_frame_prefix_prefixes_the_rig(monkeypatch: pytest.MonkeyPatch) -> None:
    with maxxum_rig(monkeypatch, frame_prefix="maxxum2/") as prefixed:
        prefixed.spin_until(lambda: prefixed.received["tf"], "/tf_static")
        frames = {t.child_frame_id for t in prefixed.received["tf"][0].transforms}
        assert frames == {
            f"maxxum2/{f}" for f in ("lidar", "camera", "camera_optical", "imu_link", "gnss_link")
        }


# ---- the controller ------------------------------------------------------------------------------


def test_the_spec_example_sends_one_command_per_tick_with_the_pi_drive(rig: Rig) -> None:
    rig.feed(MAXXUM_OBSERVATION, OBSERVATION)
    rig.publish("guidance/curvature_cmd", Float32(data=0.05))
    rig.publish("speed_cmd", Float32(data=2.0))
    rig.publish("hitch/raise_cmd", Bool(data=False))
    rig.run(5, speed=0.5)
    assert rig.commands == []  # the first tick is step 6
    rig.run(7, speed=0.5)
    assert len(rig.commands) == 2  # steps 6 and 12: 20 Hz
    first, second = rig.commands
    drive, state = control(SpeedControllerParams(), PiState(), setpoint_mps=2.0, measured_mps=0.5)
    assert (first.pedal, first.brake) == pytest.approx((drive.pedal, drive.brake))
    drive, _ = control(SpeedControllerParams(), state, setpoint_mps=2.0, measured_mps=0.5)
    assert second.pedal == pytest.approx(drive.pedal)
    assert first.curvature_1pm == pytest.approx(0.05)  # unchanged (a Float32's 0.05)
    assert (first.hitch_raise, first.hitch_lever, first.difflock) == (False, 0.4, Difflock.REAR)
    assert first.seq == 0  # the ingest numbers it


def test_a_tick_waits_for_the_ins_sample_of_its_step(rig: Rig) -> None:
    rig.publish("speed_cmd", Float32(data=2.0))
    rig.run(5, speed=1.0)
    rig.step += 1
    rig.feed(
        CLOCK, Clock(step=6, stamp_ns=round(6 * NS_PER_STEP))
    )  # the clock of step 6 before its INS sample
    assert rig.commands == []
    rig.feed(INS, ins(6, 1.9))
    (command,) = rig.commands
    drive, _ = control(SpeedControllerParams(), PiState(), setpoint_mps=2.0, measured_mps=1.9)
    assert command.pedal == pytest.approx(drive.pedal)  # the speed of step 6, not of step 5


def test_commands_stop_0_5_s_of_simulation_time_after_the_last_guidance(rig: Rig) -> None:
    rig.run(6)
    rig.publish("speed_cmd", Float32(data=1.0))  # at step 6: 0.05 s
    rig.run(60)  # to step 66: 0.55 s, the tick of 0.55 s is the last within 0.5 s
    assert len(rig.commands) == 10
    rig.run(120)
    assert len(rig.commands) == 10  # stopped
    rig.publish("cmd_vel", Twist())  # guidance again: commands again
    rig.run(6)
    assert len(rig.commands) == 11


def test_cmd_vel_with_a_negative_speed_brakes_fully_and_steers_straight(rig: Rig) -> None:
    message = Twist()
    message.linear.x, message.angular.z = -0.5, 0.2
    rig.publish("cmd_vel", message)
    rig.run(6, speed=1.5)
    (command,) = rig.commands
    assert (command.pedal, command.brake, command.curvature_1pm) == (0.0, 1.0, 0.0)


def test_a_setting_without_guidance_is_sent_once_with_the_tractor_held(rig: Rig) -> None:
    rig.publish("pto/cmd", Bool(data=True))
    rig.publish("implement/cmd", String(data='{"hitch_mode": "float"}'))
    rig.run(12)
    (command,) = rig.commands
    assert (command.pedal, command.brake, command.pto_on) == (0.0, 1.0, True)
    assert command.implement == ImplementControls(hitch_mode=HitchMode.FLOAT)
    rig.publish("pto/cmd", Bool(data=True))  # no change: nothing to send
    rig.run(12)
    assert len(rig.commands) == 1
    rig.publish("hand_throttle_cmd", Float32(data=0.5))
    rig.publish("hitch/lever_cmd", Float32(data=0.7))
    rig.run(6)
    assert (rig.commands[-1].hand_throttle, rig.commands[-1].hitch_lever) == pytest.approx((0.5, 0.7))


def test_a_new_session_forgets_the_guidance(rig: Rig) -> None:
    rig.publish("speed_cmd", Float32(data=1.0))
    rig.run(6)
    assert len(rig.commands) == 1
    rig.session(hello=None)  # the simulator went away
    rig.session()  # and a new session starts at step 0
    rig.step = 0
    rig.run(12)
    assert len(rig.commands) == 1


@pytest.mark.parametrize(
    ("topic", "message", "match"),
    [
        ("speed_cmd", Float32(data=math.nan), "speed_cmd"),
        ("guidance/curvature_cmd", Float32(data=math.inf), "guidance/curvature_cmd"),
        ("hitch/lever_cmd", Float32(data=-math.inf), "hitch/lever_cmd"),
        ("hand_throttle_cmd", Float32(data=math.nan), "hand_throttle_cmd"),
        ("implement/cmd", String(data="{not json"), "implement/cmd"),
        ("implement/cmd", String(data='{"depth": 0.1}'), "implement/cmd"),
        ("implement/cmd", String(data="9" * 5000), "implement/cmd"),
        ("implement/cmd", String(data="[" * 100_000), "implement/cmd"),
        ("implement/cmd", String(data="[" * 60_000), "implement/cmd"),
    ],
    ids=[
        "speed-nan",
        "curvature-inf",
        "lever-inf",
        "throttle-nan",
        "broken-json",
        "unknown-key",
        "huge-integer",
        "long-text",
        "deep-nesting",
    ],
)
def test_a_bad_command_is_refused_counted_and_never_sent(
    rig: Rig, topic: str, message: Any, match: str
) -> None:
    bad = Twist()
    bad.linear.x = math.nan
    rig.publish("cmd_vel", bad)
    rig.publish(topic, message)
    assert rig.node.refused == {"cmd_vel": 1, match: 1}
    rig.run(24)
    assert rig.commands == []


def test_without_the_fence_every_command_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with maxxum_rig(monkeypatch, fenced=False) as unfenced:
        assert not unfenced.node.command_gate.allowed
        unfenced.publish("speed_cmd", Float32(data=1.0))
        unfenced.publish("pto/cmd", Bool(data=True))
        unfenced.run(24)
        assert unfenced.commands == []
        assert unfenced.node.refused == {"unfenced": 2}


def test_allow_unfenced_commands_forwards_them(monkeypatch: pytest.MonkeyPatch) -> None:
    with maxxum_rig(monkeypatch, fenced=False, allow_unfenced_commands=True) as unfenced:
        unfenced.publish("speed_cmd", Float32(data=1.0))
        unfenced.run(6)
        assert len(unfenced.commands) == 1


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        ({"vehicle": "polaris"}, "the maxxum node serves a Maxxum, not a polaris"),
        ({"cmd_timeout_s": 0.0}, r"cmd_timeout_s must be a finite number of seconds > 0, found 0.0"),
        ({"speed_kp": -1.0}, r"speed_kp: expected a finite value >= 0, got -1.0"),
        ({"max_speed_mps": 0.0}, r"max_speed_mps: expected a finite value > 0"),
    ],
)
def test_bad_parameters_are_refused_at_start(parameters: dict[str, Any], match: str) -> None:
    context = Context()
    rclpy.init(context=context, args=[])
    try:
        overrides = [Parameter("vehicle", value="maxxum")]
        overrides += [Parameter(name, value=value) for name, value in parameters.items()]
        with pytest.raises(ValueError, match=match):
            Maxxum(context=context, namespace=f"/bad_{uuid.uuid4().hex[:8]}", parameter_overrides=overrides)
    finally:
        context.try_shutdown()
