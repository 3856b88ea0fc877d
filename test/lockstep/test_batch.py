"""Sorting a request's messages into its steps, from the bridge's delivery report (pure)."""

from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

from acres_bridge.lockstep.batch import message_stamp_ns, shortfall, sort_into_steps
from acres_bridge.wire.clock import step_stamp_ns

PHYSICS_HZ = 120


def stamp(step: int) -> Time:
    ns = step_stamp_ns(step, PHYSICS_HZ)
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def clock(step: int) -> Clock:
    return Clock(clock=stamp(step))


def tf(step: int, child: str) -> TFMessage:
    transform = TransformStamped(child_frame_id=child)
    transform.header.stamp = stamp(step)
    return TFMessage(transforms=[transform])


def test_the_stamp_of_each_kind_of_message() -> None:
    assert message_stamp_ns(clock(3)) == step_stamp_ns(3, PHYSICS_HZ)
    assert message_stamp_ns(tf(5, "a")) == step_stamp_ns(5, PHYSICS_HZ)
    assert message_stamp_ns(TFMessage()) is None
    assert message_stamp_ns(Bool()) is None


def test_stamped_messages_of_two_writers_go_to_their_steps_whatever_the_arrival_order() -> None:
    arrived = [tf(2, "a"), tf(3, "a"), tf(2, "b"), tf(3, "b")]  # agent a's writer, then agent b's
    batch = sort_into_steps(2, 3, {"/tf": [2, 2, 3, 3]}, {"/tf": arrived})
    assert [s.step for s in batch.steps] == [2, 3]
    assert [m.transforms[0].child_frame_id for m in batch.steps[0]["/tf"]] == ["a", "b"]
    assert all(message_stamp_ns(m) == step_stamp_ns(3, PHYSICS_HZ) for m in batch.steps[1]["/tf"])


def test_unstamped_messages_take_the_reported_steps_in_arrival_order() -> None:
    arrived = [Bool(data=True), Bool(data=False)]
    batch = sort_into_steps(1, 5, {"/vehicle/dbw_enabled": [3, 5]}, {"/vehicle/dbw_enabled": arrived})
    assert [s.step for s in batch.steps] == [1, 2, 3, 4, 5]
    assert [m.data for m in batch.steps[2]["/vehicle/dbw_enabled"]] == [True]
    assert [m.data for m in batch.steps[4]["/vehicle/dbw_enabled"]] == [False]
    assert batch.steps[0]["/vehicle/dbw_enabled"] == ()
    assert batch.count("/vehicle/dbw_enabled") == 2


def test_messages_from_before_the_request_are_left_out() -> None:
    arrived = [clock(1), clock(2), clock(3)]  # clock 1 was published before the request of 2..3
    batch = sort_into_steps(2, 3, {"/clock": [2, 3]}, {"/clock": arrived})
    assert [message_stamp_ns(m) for m in batch.messages("/clock")] == [
        step_stamp_ns(2, PHYSICS_HZ),
        step_stamp_ns(3, PHYSICS_HZ),
    ]


def test_the_shortfall_names_each_topic_still_short() -> None:
    due = {"/clock": [1, 2, 3], "/vehicle/odom": [2], "/lidar/points": []}
    assert shortfall(due, {"/clock": [clock(1)], "/vehicle/odom": [object()]}) == {"/clock": 2}
    assert shortfall(due, {"/clock": [clock(1), clock(2), clock(3)], "/vehicle/odom": [object()]}) == {}
