"""The INS messages, /tf and /clock serialized straight to CDR read back, through rclpy, as the
reference messages of acres_bridge.convert, for any sample; and the layouts' own rules."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import samples
from geometry_msgs.msg import TwistStamped
from hypothesis import given, settings
from hypothesis import strategies as st
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, NavSatFix
from tf2_msgs.msg import TFMessage

from acres_bridge.convert import ins
from acres_bridge.convert.cdr import StampedLayout, time_message
from acres_bridge.convert.frame_names import FrameNames, frame_names
from acres_bridge.convert.ins_cdr import InsEncoders, TfEncoder
from acres_bridge.convert.session import clock
from acres_bridge.wire.json_fields import MAX_STAMP_NS
from acres_bridge.wire.messages import Clock, InsSample

POLARIS = frame_names(vehicle="polaris")
PREFIXED = frame_names(vehicle="polaris", frame_prefix="polaris2/", utm_frame="utm_16t")

# (name, message type, reference) of each message an encoder serializes.
MESSAGES: list[tuple[str, type, Callable[[InsSample, FrameNames, bool], Any]]] = [
    ("odometry", Odometry, lambda s, f, _oxts: ins.odometry(s, f)),
    ("ground_truth_odometry", Odometry, lambda s, f, _oxts: ins.ground_truth_odometry(s, f)),
    ("imu", Imu, lambda s, _f, oxts: ins.imu(s, "imu_link", oxts_axes=oxts)),
    ("oxts_velocity", TwistStamped, lambda s, _f, _oxts: ins.oxts_velocity(s, "oxts_link")),
    ("navsat_fix", NavSatFix, lambda s, _f, _oxts: ins.navsat_fix(s, "gps")),
]


def encoders(frames: FrameNames, *, oxts_axes: bool) -> InsEncoders:
    return InsEncoders(
        frames, imu_frame="imu_link", fix_frame="gps", velocity_frame="oxts_link", oxts_axes=oxts_axes
    )


def assert_same_message(data: bytes, reference: Any) -> None:
    """`data` reads back as `reference`, and is as long as rclpy's serialization of it (Fast CDR
    leaves padding bytes as it finds them, so the bytes themselves are not compared)."""
    assert deserialize_message(data, type(reference)) == reference
    assert len(data) == len(serialize_message(reference))


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
triple = st.tuples(finite, finite, finite)
quaternion = st.tuples(finite, finite, finite, finite)
variance = st.tuples(*(st.floats(min_value=0.0, max_value=1e6) for _ in range(3)))

ins_samples = st.builds(
    samples.ins_sample,
    step=st.integers(min_value=0, max_value=2**31 - 1),
    stamp_ns=st.integers(min_value=0, max_value=MAX_STAMP_NS),
    position=triple,
    latitude_deg=st.floats(min_value=-90.0, max_value=90.0),
    longitude_deg=st.floats(min_value=-180.0, max_value=180.0),
    orientation=quaternion,
    velocity=triple,
    angular_rate=triple,
    specific_force=triple,
    position_variance=variance,
    velocity_variance=variance,
    attitude_variance=variance,
    angular_rate_variance=variance,
    specific_force_variance=variance,
    true_position=triple,
    true_orientation=quaternion,
    true_speed=finite,
)


@settings(max_examples=150, deadline=None)
@given(sample=ins_samples, oxts_axes=st.booleans(), frames=st.sampled_from([POLARIS, PREFIXED]))
def test_every_message_reads_back_as_the_reference(
    sample: InsSample, oxts_axes: bool, frames: FrameNames
) -> None:
    fast = encoders(frames, oxts_axes=oxts_axes)
    for name, _message_type, reference in MESSAGES:
        assert_same_message(getattr(fast, name)(sample), reference(sample, frames, oxts_axes))


@pytest.mark.parametrize("oxts_axes", [True, False], ids=["oxts", "body"])
def test_the_imu_and_velocity_of_a_sample_without_a_fix(oxts_axes: bool) -> None:
    # Published for every sample; the position's NaNs are in none of their fields.
    sample = samples.ins_sample(has_position=False, angular_rate=(0.1, -0.2, 0.3))
    fast = encoders(POLARIS, oxts_axes=oxts_axes)
    assert_same_message(fast.imu(sample), ins.imu(sample, "imu_link", oxts_axes=oxts_axes))
    assert_same_message(fast.oxts_velocity(sample), ins.oxts_velocity(sample, "oxts_link"))


def test_nan_fields_stay_nan() -> None:
    sample = samples.ins_sample(true_speed=math.nan)
    message = deserialize_message(encoders(POLARIS, oxts_axes=True).ground_truth_odometry(sample), Odometry)
    assert math.isnan(message.twist.twist.linear.x)


@settings(max_examples=100, deadline=None)
@given(sample=ins_samples, frames=st.sampled_from([POLARIS, PREFIXED]))
def test_tf_reads_back_as_the_reference(sample: InsSample, frames: FrameNames) -> None:
    reference = TFMessage(transforms=[ins.transform(sample, frames)])
    assert_same_message(TfEncoder(frames).tf(sample), reference)


@given(stamp_ns=st.integers(min_value=0, max_value=MAX_STAMP_NS))
def test_clock_reads_back_as_the_reference(stamp_ns: int) -> None:
    reference = clock(Clock(step=1, stamp_ns=stamp_ns))
    assert_same_message(time_message(stamp_ns), reference)


def test_padding_is_written_as_zeros_and_the_size_is_fixed() -> None:
    # NavSatFix: stamp 8, "gps" 8, status int8 at 16, a pad byte, service uint16 at 18, four pad
    # bytes, then the doubles from 24 (offsets counted after the 4-byte encapsulation header).
    layout = StampedLayout("gps", "b H 3d 9d B")
    data = layout.pack(1_500_000_000, 2, 1, *range(12), 2)
    assert len(data) == layout.size == 4 + 24 + 12 * 8 + 1
    assert data[4 + 17] == 0
    assert data[4 + 20 : 4 + 24] == bytes(4)
    assert deserialize_message(data, NavSatFix).header.stamp.nanosec == 500_000_000


@pytest.mark.parametrize(
    ("frame_id", "body", "error"),
    [("a\x00b", "d", "holds no NUL"), ("gps", "2d 3e", "no CDR alignment")],
)
def test_a_layout_it_cannot_write_is_refused(frame_id: str, body: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        StampedLayout(frame_id, body)
