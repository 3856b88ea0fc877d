"""The Maxxum's CAN bus through the bridge (spec: CAN Bus): can/rx and can/tx as processes see them.

The simulator runs in lockstep, so the counts are exact: each 0.1 s of simulation time brings one
group of 13 frames, stamped with the step that made it, and no barrier. The frames decode with
acres_sim.vehicles.j1939 to what the other topics show at the same step.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from can_msgs.msg import Frame
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from std_msgs.msg import Float32

from acres_bridge.convert.can import frame_message
from acres_bridge.processes import free_udp_port
from acres_bridge.wire.can import BARRIER_ID, CanFrame
from acres_sim.vehicles import j1939

from .conftest import Processes, Ros, free_port, wait_for_line
from .test_maxxum import NS_PER_S, Driver, qos, spec_example, stamp_ns, twist

pytestmark = pytest.mark.integration

GROUP_IDS = {
    0x0CF00400,
    0x0CF00300,
    0x18F0010B,
    0x0CFE4880,
    0x0CFE4980,
    0x0CF02280,
    0x0CFE4580,
    0x0CFE4380,
    0x0CACFF80,
    0x18FF1280,
    0x18FF1380,
    0x18FF1480,
    0x18FF1580,
}


class Bus(Driver):
    """The driver of test_maxxum with can/rx collected and a can/tx publisher."""

    def __init__(self, ros: Ros) -> None:
        super().__init__(ros)
        self.rx = ros.collect(Frame, "can/rx", qos("can/rx"))
        self.tx = ros.node.create_publisher(Frame, "can/tx", qos("can/tx", 500))

    def wait_for_bridge(self) -> None:
        super().wait_for_bridge()
        self.ros.wait_until(lambda: self.tx.get_subscription_count() > 0, "the bridge on can/tx")

    def send(self, frame: CanFrame) -> None:
        self.tx.publish(frame_message(frame))


@pytest.fixture
def bus(processes: Processes, ros: Ros) -> Bus:
    port = free_port()
    processes.simulator(port, "--vehicle", "maxxum")
    processes.bridge(port, vehicle="maxxum")
    bus = Bus(ros)
    bus.wait_for_bridge()
    return bus


def as_frame(message: Frame) -> CanFrame:
    return CanFrame(
        can_id=message.id,
        data=bytes(message.data[: message.dlc]),
        dlc=message.dlc,
        is_extended=message.is_extended,
        stamp_ns=stamp_ns(message),
    )


def test_can_rx_has_13_frames_each_0_1_s_that_decode_to_the_tractor_state(bus: Bus) -> None:
    for _ in range(60):  # 3 simulated seconds of the spec's example
        bus.tick(*spec_example())
    bus.settle()
    assert len(bus.rx) == 30 * 13
    per_stamp = Counter(stamp_ns(m) for m in bus.rx)
    assert per_stamp == {k * NS_PER_S // 10: 13 for k in range(1, 31)}  # steps 12, 24, ..., 360
    assert BARRIER_ID not in {m.id for m in bus.rx}
    assert {m.id for m in bus.rx} == GROUP_IDS
    assert {(m.header.frame_id, m.is_extended, m.dlc) for m in bus.rx} == {("can", True, 8)}
    decoded = [(stamp_ns(m), j1939.decode(as_frame(m))) for m in bus.rx]
    assert all(d is not None for _, d in decoded)
    rpm = {(i + 1) * NS_PER_S // 10: m.data for i, m in enumerate(bus.rpm)}
    states = {(i + 1) * NS_PER_S // 10: json.loads(m.data) for i, m in enumerate(bus.state)}
    truth = {stamp_ns(m): m.twist.twist.linear.x for m in bus.truth}  # samples with a fix
    compared: Counter[str] = Counter()
    for time_ns, frame in decoded:
        assert frame is not None
        signals = frame.signals
        if frame.name == "EEC1":  # 0.125 r/min per bit
            assert signals["engine_speed_rpm"] == pytest.approx(rpm[time_ns], abs=0.07)
            compared["rpm"] += 1
        elif frame.name == "GBSD" and time_ns in truth:  # 1 mm/s per bit
            assert signals["ground_speed_mps"] == pytest.approx(abs(truth[time_ns]), abs=0.0006)
            compared["speed"] += 1
        elif frame.name == "HITCH":
            assert signals["lift_deg"] == pytest.approx(states[time_ns]["hitch_lift_deg"], abs=0.01)
            compared["lift"] += 1
    assert compared["rpm"] == compared["lift"] == 30
    assert compared["speed"] >= 20  # every group once the INS has its fix
    speeds = [d.signals["ground_speed_mps"] for _, d in decoded if d is not None and d.name == "GBSD"]
    assert speeds[-1] > 1.0  # the tractor is moving: the frames follow it


def test_can_rx_and_can_tx_have_the_type_and_qos_of_ros2_socketcan(bus: Bus) -> None:
    (publisher,) = bus.ros.node.get_publishers_info_by_topic("/can/rx")
    # can/tx: the reliable reader of ros2_socketcan's sender, and a best-effort one beside it, so
    # that a best-effort publisher is taken too (spec: QoS Profiles).
    reliable, best_effort = sorted(
        bus.ros.node.get_subscriptions_info_by_topic("/can/tx"), key=lambda e: e.qos_profile.reliability
    )
    for endpoint in (publisher, reliable, best_effort):
        assert endpoint.topic_type == "can_msgs/msg/Frame"
        assert endpoint.qos_profile.durability == DurabilityPolicy.VOLATILE
    assert publisher.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert reliable.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert best_effort.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT


def hitch_lever(bus: Bus) -> float:
    value: float = json.loads(bus.state[-1].data)["hitch_lever"]
    return value


def test_a_frame_on_can_tx_reaches_the_tractor(bus: Bus) -> None:
    for _ in range(4):
        bus.tick()
    bus.settle()
    assert hitch_lever(bus) == 0.0  # the parked tractor's lever
    # A controller's hitch command (ISO 11783-7 HPC): the rear hitch to 60 %.
    bus.send(j1939.encode_frame(j1939.frame_spec("HPC"), {"rear_hitch_pct": 60.0}, source=0x1C))
    for _ in range(40):  # UDP is not ordered with the step requests: give it up to 2 simulated s
        bus.ros.spin_for(0.02)
        bus.tick()
        bus.settle()
        if hitch_lever(bus) == pytest.approx(0.6):
            break
    assert hitch_lever(bus) == pytest.approx(0.6)
    # A frame the bridge refuses never reaches the tractor: the same command to 20 %, with dlc 9.
    refused = frame_message(
        j1939.encode_frame(j1939.frame_spec("HPC"), {"rear_hitch_pct": 20.0}, source=0x1C)
    )
    refused.dlc = 9
    bus.tx.publish(refused)
    for _ in range(10):
        bus.ros.spin_for(0.02)
        bus.tick()
    bus.settle()
    assert hitch_lever(bus) == pytest.approx(0.6)


def test_engine_rpm_is_a_float32_in_r_min(bus: Bus) -> None:
    rpm = bus.ros.collect(Float32, "engine_rpm", qos("engine_rpm"))
    bus.tick()
    bus.tick()
    bus.settle()
    assert rpm
    assert 700.0 < rpm[-1].data < 900.0  # idle (spec example: 796.3)


def steer_command(bus: Bus) -> float:
    """The curvature command in force, from the last STEER frame on can/rx (1/m, positive left)."""
    steer = [j1939.decode(as_frame(m)) for m in bus.rx if m.id == 0x18FF1380]
    assert steer[-1] is not None
    value = steer[-1].signals["curvature_command_1pm"]
    assert value is not None
    return value


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (twist(1.0, 2.0), 0.5),  # 2 rad/s at 1 m/s: 2 1/m, clamped
        (twist(0.0, -0.01), -0.1),  # at standstill: over 0.1 m/s
        (("guidance/curvature_cmd", Float32(data=-0.8)), -0.5),
    ],
    ids=["cmd_vel-clamped", "cmd_vel-standstill", "curvature_cmd-clamped"],
)
def test_the_curvature_reaches_the_tractor_within_its_limits(
    bus: Bus, command: tuple[str, Any], expected: float
) -> None:
    for _ in range(4):
        bus.tick(command)
    bus.settle()
    assert steer_command(bus) == pytest.approx(expected, abs=1e-4)


def test_with_can_udp_port_the_bridge_uses_a_can_transport_the_simulator_does_not_announce(
    processes: Processes, ros: Ros
) -> None:
    port, can_port = free_port(), free_udp_port()
    processes.simulator(port, "--vehicle", "maxxum", "--can-udp-port", str(can_port))
    processes.bridge(port, vehicle="maxxum", can_udp_port=can_port)
    bus = Bus(ros)
    bus.wait_for_bridge()
    for _ in range(10):  # 0.5 simulated s: five groups
        bus.tick()
    bus.settle()
    assert len(bus.rx) == 5 * 13
    assert {m.id for m in bus.rx} == GROUP_IDS


def test_the_bridge_is_the_can_controller_from_its_hello_and_no_datagram_is_foreign(
    processes: Processes, ros: Ros
) -> None:
    port = free_port()
    simulator = processes.simulator(port, "--vehicle", "maxxum")
    processes.bridge(port, vehicle="maxxum")
    bus = Bus(ros)
    bus.wait_for_bridge()
    for _ in range(4):  # 0.2 simulated s: two groups, the first one included
        bus.tick()
    bus.settle()
    assert len(bus.rx) == 2 * 13
    wait_for_line(simulator, "as its bridge announced")
    assert "not the session's controller" not in simulator.output
