"""Reading serialised messages without deserialising them: the header, and the padding walk that lets two
Fast CDR serialisations be compared. The padding found is checked against rosbags, which zeroes its
padding: rclpy's bytes with the found padding zeroed must equal rosbags' bytes."""

from __future__ import annotations

import struct
from typing import Any

import ds_dbw_msgs.msg as dbw
import numpy as np
import pytest
from geometry_msgs.msg import TransformStamped
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import serialize_message
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import CameraInfo, JointState, NavSatFix, PointCloud2, PointField
from std_msgs.msg import Bool, Empty, Header
from tf2_msgs.msg import TFMessage

from acres_bridge.tools.cdr import (
    CdrLayout,
    cdr_layout,
    first_difference,
    header_frame,
    header_stamp_ns,
)
from acres_bridge.tools.errors import CdrError
from acres_bridge.tools.msgdef import definition_text, parse_definition

FAST = settings(max_examples=40, deadline=None, database=None)

DBW_TYPES = [
    "SteeringCmd",
    "SteeringReport",
    "ThrottleCmd",
    "ThrottleReport",
    "BrakeCmd",
    "BrakeReport",
    "GearCmd",
    "GearReport",
    "UlcCmd",
    "UlcReport",
    "VehicleVelocity",
]

frame_ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=24)
stamps = st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(0, 999_999_999))
FIELD_VALUES = {
    "boolean": st.booleans(),
    "uint8": st.integers(0, 255),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "uint32": st.integers(0, 2**32 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
}


def layout_of(type_name: str) -> Any:
    return parse_definition(definition_text(type_name), type_name)


def fill(message: Any, draw: Any) -> Any:
    """Every field of a ds_dbw_msgs message from hypothesis, nested enum types and the header included."""
    for name, kind in message.get_fields_and_field_types().items():
        if kind == "std_msgs/Header":
            header = getattr(message, name)
            header.frame_id = draw(frame_ids)
            header.stamp.sec, header.stamp.nanosec = draw(stamps)
        elif kind in FIELD_VALUES:
            setattr(message, name, draw(FIELD_VALUES[kind]))
        else:
            fill(getattr(message, name), draw)
    return message


def rosbags_bytes(raw: bytes, type_name: str) -> bytes:
    """rosbags' serialisation of the message; it refuses more than 3 bytes after the last field."""
    store = get_typestore(Stores.EMPTY)
    store.register(layout_of(type_name))
    return bytes(store.serialize_cdr(store.deserialize_cdr(raw, type_name), type_name))


def assert_padding_is_exact(raw: bytes, type_name: str) -> None:
    layout = cdr_layout(raw, type_name, layout_of(type_name))
    zeroed = np.frombuffer(raw, dtype=np.uint8).copy()
    zeroed[layout.padding] = 0
    theirs = rosbags_bytes(raw[: layout.end], type_name)
    assert len(theirs) == layout.end
    assert zeroed[: layout.end].tobytes() == theirs
    assert layout.padding[layout.end :].all()


@FAST
@given(name=st.sampled_from(DBW_TYPES), data=st.data())
def test_the_padding_of_every_dbw_message_is_exactly_what_rosbags_zeroes(
    name: str, data: st.DataObject
) -> None:
    message = fill(getattr(dbw, name)(), data.draw)
    assert_padding_is_exact(serialize_message(message), f"ds_dbw_msgs/msg/{name}")


@FAST
@given(name=st.sampled_from(DBW_TYPES), data=st.data())
def test_garbage_in_the_padding_is_no_difference_and_any_other_changed_byte_is(
    name: str, data: st.DataObject
) -> None:
    raw = serialize_message(fill(getattr(dbw, name)(), data.draw))
    type_name = f"ds_dbw_msgs/msg/{name}"
    layout = cdr_layout(raw, type_name, layout_of(type_name))
    noisy = np.frombuffer(raw, dtype=np.uint8).copy()
    noise = np.frombuffer(data.draw(st.binary(min_size=len(raw), max_size=len(raw))), dtype=np.uint8)
    noisy[layout.padding] = noise[layout.padding]
    assert first_difference(raw, noisy.tobytes(), layout, layout) is None
    payload = [i for i in range(4, layout.end) if not layout.padding[i]]
    offset = data.draw(st.sampled_from(payload))
    changed = bytearray(raw)
    changed[offset] ^= data.draw(st.integers(1, 255))
    assert first_difference(raw, bytes(changed), layout, layout) == offset


def point_cloud() -> PointCloud2:
    cloud = PointCloud2()
    cloud.header.frame_id = "lidar"
    cloud.height, cloud.width, cloud.point_step, cloud.row_step = 2, 3, 16, 48
    cloud.fields = [
        PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1) for i, n in enumerate("xyz")
    ]
    cloud.data = bytes(range(96))
    return cloud


def camera_info(distortion: list[float]) -> CameraInfo:
    info = CameraInfo()
    info.header.frame_id = "reolink_camera_optical"
    info.distortion_model = "plumb_bob"
    info.d = distortion
    info.k[0] = 599.5
    return info


def transforms() -> TFMessage:
    one = TransformStamped()
    one.header.frame_id = "utm"
    one.child_frame_id = "base_footprint"
    two = TransformStamped()
    two.header.frame_id = "base_footprint"
    two.child_frame_id = "lidar"
    return TFMessage(transforms=[one, two])


@pytest.mark.parametrize(
    ("message", "type_name"),
    [
        (point_cloud(), "sensor_msgs/msg/PointCloud2"),
        (PointCloud2(), "sensor_msgs/msg/PointCloud2"),
        (camera_info([-0.55, 0.41, -0.01, 0.004, -0.17]), "sensor_msgs/msg/CameraInfo"),
        # An empty sequence of float64 adds no alignment for its elements, wherever its count ends.
        *((JointState(name=["j" * n], velocity=[1.0]), "sensor_msgs/msg/JointState") for n in range(1, 9)),
        (NavSatFix(), "sensor_msgs/msg/NavSatFix"),
        (transforms(), "tf2_msgs/msg/TFMessage"),
        (TFMessage(), "tf2_msgs/msg/TFMessage"),
        (Bool(data=True), "std_msgs/msg/Bool"),
        (Empty(), "std_msgs/msg/Empty"),
    ],
)
def test_sequences_arrays_nested_and_empty_messages_walk_like_rosbags(message: Any, type_name: str) -> None:
    assert_padding_is_exact(serialize_message(message), type_name)


@FAST
@given(frame=frame_ids, stamp=stamps)
def test_the_header_is_read_from_the_bytes(frame: str, stamp: tuple[int, int]) -> None:
    message = dbw.UlcReport()
    message.header.frame_id = frame
    message.header.stamp.sec, message.header.stamp.nanosec = stamp
    raw = serialize_message(message)
    assert header_frame(raw) == frame
    assert header_stamp_ns(raw) == stamp[0] * 1_000_000_000 + stamp[1]


def test_a_big_endian_header_is_read_too() -> None:
    raw = b"\x00\x00\x00\x00" + struct.pack(">iII", 12, 34, 4) + b"utm\x00"
    assert header_stamp_ns(raw) == 12 * 1_000_000_000 + 34
    assert header_frame(raw) == "utm"


def test_a_header_alone_has_its_frame() -> None:
    header = Header(frame_id="imu_link")
    assert header_frame(serialize_message(header)) == "imu_link"


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"\x00\x01", "4-byte encapsulation header; found 2 bytes"),
        (b"\x00\x03\x00\x00" + bytes(16), "encapsulation 0003 is not plain CDR"),
        (b"\x00\x01\x00\x00" + bytes(4), "a header stamp needs 12 bytes; the message has 8"),
    ],
)
def test_bytes_that_hold_no_header_stamp_are_refused(raw: bytes, match: str) -> None:
    with pytest.raises(CdrError, match=match):
        header_stamp_ns(raw)


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"\x00\x01\x00\x00" + bytes(8), "a header frame_id needs at least 16 bytes; the message has 12"),
        (
            b"\x00\x01\x00\x00" + bytes(8) + struct.pack("<I", 50) + b"ab",
            "frame_id length 50 runs past the end",
        ),
    ],
)
def test_bytes_that_hold_no_header_frame_are_refused(raw: bytes, match: str) -> None:
    with pytest.raises(CdrError, match=match):
        header_frame(raw)


def gear_report() -> bytes:
    report = dbw.GearReport()
    report.header.frame_id = "abc"  # padding follows the frame_id
    return serialize_message(report)


def test_truncated_bytes_do_not_fit_the_layout() -> None:
    raw = gear_report()
    with pytest.raises(CdrError, match=r"needs \d+ bytes at offset \d+; the message ends at 30"):
        cdr_layout(raw[:30], "ds_dbw_msgs/msg/GearReport", layout_of("ds_dbw_msgs/msg/GearReport"))


def test_bytes_after_the_last_field_are_padding() -> None:
    raw = gear_report()
    layout = cdr_layout(
        raw + bytes(12), "ds_dbw_msgs/msg/GearReport", layout_of("ds_dbw_msgs/msg/GearReport")
    )
    assert layout.end == len(raw)
    assert layout.padding[len(raw) :].all()


def test_an_empty_sequence_of_doubles_adds_no_alignment_but_fast_cdr_sizes_it_in() -> None:
    raw = serialize_message(JointState(name=["jjjj"], velocity=[1.0]))
    layout = cdr_layout(raw, "sensor_msgs/msg/JointState", layout_of("sensor_msgs/msg/JointState"))
    assert len(raw) - layout.end > 4  # unwritten bytes of Fast CDR's size calculation


def test_a_layout_without_the_type_is_refused() -> None:
    with pytest.raises(CdrError, match="header: the layout has no type std_msgs/msg/Header"):
        cdr_layout(
            gear_report(),
            "ds_dbw_msgs/msg/GearReport",
            {
                "ds_dbw_msgs/msg/GearReport": layout_of("ds_dbw_msgs/msg/GearReport")[
                    "ds_dbw_msgs/msg/GearReport"
                ]
            },
        )


@pytest.mark.parametrize(
    ("field", "match"),
    [
        ((Nodetype.BASE, ("wstring", 0)), "wstring fields are not supported"),
        ((Nodetype.BASE, ("float128", 0)), "primitive type 'float128' has no CDR size"),
        (
            (Nodetype.ARRAY, ((Nodetype.ARRAY, ((Nodetype.BASE, ("uint8", 0)), 2)), 2)),
            "nested arrays are not valid",
        ),
    ],
)
def test_fields_the_walk_cannot_size_are_refused(field: Any, match: str) -> None:
    types = {"demo/msg/Odd": ([], [("value", field)])}
    with pytest.raises(CdrError, match=match):
        cdr_layout(b"\x00\x01\x00\x00" + struct.pack("<I", 1) + bytes(16), "demo/msg/Odd", types)


def layout(raw: bytes) -> CdrLayout:
    return cdr_layout(raw, "ds_dbw_msgs/msg/GearReport", layout_of("ds_dbw_msgs/msg/GearReport"))


def test_last_fields_that_end_at_different_offsets_differ_at_the_earlier_end() -> None:
    raw = gear_report()
    longer = dbw.GearReport()
    longer.header.frame_id = "abcdefgh"
    other = serialize_message(longer)
    assert first_difference(raw, other, layout(raw), layout(other)) == 12  # the frame_id length
    short = dbw.GearReport()
    short.header.frame_id = "abc"
    same = serialize_message(short)
    assert first_difference(raw, same + bytes(8), layout(raw), layout(same + bytes(8))) is None


def test_the_encapsulation_options_are_no_difference_but_the_representation_is() -> None:
    raw = gear_report()
    options = raw[:2] + b"\x00\x03" + raw[4:]
    assert first_difference(raw, options, layout(raw), layout(options)) is None
    big_endian = b"\x00\x00" + raw[2:]
    assert first_difference(raw, big_endian, layout(raw), layout(raw)) == 1
