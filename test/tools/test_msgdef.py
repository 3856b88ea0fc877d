"""Message definitions: the full ros2msg text rosbag2 stores, read back by rosbags and mcap_ros2 (both
independent of rclpy), the installed type hash, and every bad name or missing file."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory
from nav_msgs.msg import Odometry
from rclpy.serialization import serialize_message
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from acres_bridge.tools.errors import DefinitionError
from acres_bridge.tools.msgdef import (
    DEFINITION_SEPARATOR,
    MAX_DEPTH,
    TypeName,
    definition_file,
    definition_text,
    message_class,
    message_dependencies,
    parse_definition,
    parse_type_name,
    type_hash,
)


def msg_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("MSG: ")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pkg/msg/Name", TypeName("pkg", "msg", "Name")),
        ("pkg/Name", TypeName("pkg", "msg", "Name")),
        ("ds_dbw_msgs/msg/SteeringReport", TypeName("ds_dbw_msgs", "msg", "SteeringReport")),
    ],
)
def test_type_names_in_both_forms(text: str, expected: TypeName) -> None:
    name = parse_type_name(text)
    assert name == expected
    assert name.full == f"{expected.package}/msg/{expected.name}"
    assert name.short == f"{expected.package}/{expected.name}"


@pytest.mark.parametrize(
    "text", ["", "Name", "pkg/", "/pkg/Name", "pkg/msg/Name/x", "1pkg/Name", "pkg/Na me"]
)
def test_a_malformed_type_name_is_refused(text: str) -> None:
    with pytest.raises(DefinitionError, match="a message type looks like pkg/msg/Name or pkg/Name; found"):
        parse_type_name(text)


def test_dependencies_are_every_non_primitive_field_type_once_sorted() -> None:
    text = (
        "# a comment with Words in it\n"
        "uint8 CONSTANT=3\n"
        "std_msgs/Header header\n"
        "Gear gear\n"
        "Gear cmd\n"
        "float64[9] covariance\n"
        "geometry_msgs/Point[] points\n"
        "string<=5 short\n"
    )
    assert message_dependencies(text, "ds_dbw_msgs") == [
        "ds_dbw_msgs/Gear",
        "geometry_msgs/Point",
        "std_msgs/Header",
    ]


def test_the_full_text_is_the_root_then_each_dependency_once_depth_first() -> None:
    text = definition_text("nav_msgs/msg/Odometry")
    assert text.startswith(definition_file("nav_msgs/msg/Odometry").read_text())
    assert msg_lines(text) == [
        "MSG: geometry_msgs/PoseWithCovariance",
        "MSG: geometry_msgs/Pose",
        "MSG: geometry_msgs/Point",
        "MSG: geometry_msgs/Quaternion",
        "MSG: geometry_msgs/TwistWithCovariance",
        "MSG: geometry_msgs/Twist",
        "MSG: geometry_msgs/Vector3",
        "MSG: std_msgs/Header",
        "MSG: builtin_interfaces/Time",
    ]
    assert text.count(f"\n{DEFINITION_SEPARATOR}\nMSG: ") == 9


def test_rosbags_parses_the_text_to_the_layout_of_its_own_jazzy_store() -> None:
    jazzy = get_typestore(Stores.ROS2_JAZZY)
    for type_name in ("nav_msgs/msg/Odometry", "sensor_msgs/msg/PointCloud2", "tf2_msgs/msg/TFMessage"):
        parsed = get_types_from_msg(definition_text(type_name), type_name)
        assert parsed, type_name
        for name, (_consts, fields) in parsed.items():
            assert fields == jazzy.fielddefs[name][1], name


def test_mcap_ros2_decodes_a_message_with_the_text() -> None:
    odom = Odometry()
    odom.header.frame_id = "utm"
    odom.child_frame_id = "base_footprint"
    odom.pose.pose.position.x = 500438.1
    schema = Schema(
        id=1,
        name="nav_msgs/msg/Odometry",
        encoding="ros2msg",
        data=definition_text("nav_msgs/msg/Odometry").encode(),
    )
    decode = DecoderFactory().decoder_for("cdr", schema)
    assert decode is not None
    decoded = decode(serialize_message(odom))
    assert decoded.header.frame_id == "utm"
    assert decoded.child_frame_id == "base_footprint"
    assert decoded.pose.pose.position.x == 500438.1


def test_the_type_hash_is_that_of_the_installed_description_and_of_rosbags() -> None:
    digest = type_hash("ds_dbw_msgs/msg/SteeringReport")
    assert digest.startswith("RIHS01_")
    store = get_typestore(Stores.EMPTY)
    store.register(
        parse_definition(definition_text("ds_dbw_msgs/msg/SteeringReport"), "ds_dbw_msgs/msg/SteeringReport")
    )
    assert store.hash_rihs01("ds_dbw_msgs/msg/SteeringReport") == digest


def test_the_message_class_is_the_generated_class() -> None:
    assert message_class("nav_msgs/msg/Odometry") is Odometry
    assert message_class("nav_msgs/Odometry") is Odometry


@pytest.mark.parametrize(
    ("type_name", "match"),
    [
        ("no_such_pkg/msg/Thing", "unknown type no_such_pkg/msg/Thing: package no_such_pkg is not installed"),
        ("std_msgs/msg/NoSuchType", "unknown type std_msgs/msg/NoSuchType: std_msgs.msg has no NoSuchType"),
    ],
)
def test_an_unknown_type_has_no_class(type_name: str, match: str) -> None:
    with pytest.raises(DefinitionError, match=match):
        message_class(type_name)


def test_a_type_without_an_installed_file_has_no_definition() -> None:
    with pytest.raises(
        DefinitionError, match=r"no NoSuchType\.msg of type std_msgs/msg/NoSuchType in .*share/std_msgs/msg"
    ):
        definition_text("std_msgs/msg/NoSuchType")


def write_msg(prefix: Path, type_name: str, text: str) -> None:
    name = parse_type_name(type_name)
    folder = prefix / "share" / name.package / "msg"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name.name}.msg").write_text(text)


def test_a_missing_dependency_names_the_dependency(tmp_path: Path) -> None:
    write_msg(tmp_path, "demo/msg/Outer", "demo/Inner inner\n")
    with pytest.raises(DefinitionError, match=r"no Inner\.msg of type demo/msg/Inner"):
        definition_text("demo/msg/Outer", prefixes=[tmp_path])


def test_a_chain_of_types_deeper_than_rosbag2_allows_is_refused(tmp_path: Path) -> None:
    for level in range(MAX_DEPTH + 1):
        write_msg(tmp_path, f"demo/msg/Level{level}", f"demo/Level{level + 1} next\n")
    write_msg(tmp_path, f"demo/msg/Level{MAX_DEPTH + 1}", "uint8 value\n")
    with pytest.raises(DefinitionError, match=f"nests message types more than {MAX_DEPTH} levels deep"):
        definition_text("demo/msg/Level0", prefixes=[tmp_path])
    assert len(msg_lines(definition_text("demo/msg/Level2", prefixes=[tmp_path]))) == MAX_DEPTH - 1


def test_a_type_without_a_description_has_an_empty_hash(tmp_path: Path) -> None:
    write_msg(tmp_path, "demo/msg/Plain", "uint8 value\n")
    assert type_hash("demo/msg/Plain", prefixes=[tmp_path]) == ""


def test_a_broken_type_description_is_refused(tmp_path: Path) -> None:
    write_msg(tmp_path, "demo/msg/Plain", "uint8 value\n")
    (tmp_path / "share" / "demo" / "msg" / "Plain.json").write_text("{not json")
    with pytest.raises(DefinitionError, match=r"Plain\.json is not a type description"):
        type_hash("demo/msg/Plain", prefixes=[tmp_path])


def test_a_definition_that_does_not_parse_is_refused() -> None:
    with pytest.raises(DefinitionError, match="the definition of demo/msg/Bad does not parse"):
        parse_definition("uint8[ broken\n", "demo/msg/Bad")
