"""check_msg_defs: every ds_dbw_msgs message of a bag comes back byte for byte through our definitions,
and a message or a definition that does not is reported with where it differs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ds_dbw_msgs.msg import SteeringReport
from rclpy.serialization import serialize_message
from rosbags.interfaces import QosReliability
from rosbags.interfaces.typing import Typesdict
from rosbags.rosbag2 import Writer
from std_msgs.msg import Bool

from acres_bridge.tools.bag import BagWriter
from acres_bridge.tools.check_msg_defs import SHOWN_MISMATCHES, definition_difference, main
from acres_bridge.tools.msgdef import definition_text, parse_definition, type_hash

from .bags import RELIABLE, Topic, dbw, imu, stamped, write_bag
from .test_bag import rosbags_qos


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, list[str]]:
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().out.splitlines()


def test_every_message_of_a_drive_by_wire_session_round_trips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = dbw(steps=4)
    status, lines = run(
        capsys,
        write_bag(tmp_path / "drive.mcap", {**topics, "/oxts/imu": Topic("sensor_msgs/msg/Imu", imu())}),
    )
    assert status == 0
    assert lines == [
        "/vehicle/steering/report  ds_dbw_msgs/msg/SteeringReport  4 messages",
        "/vehicle/brake/report  ds_dbw_msgs/msg/BrakeReport  4 messages",  # NaN torques included
        "/vehicle/steering/cmd  ds_dbw_msgs/msg/SteeringCmd  4 messages",
        "MATCH: 12/12 messages round-trip byte-exactly",
    ]


def steering_reports(count: int = 3) -> list[bytes]:
    return [serialize_message(stamped(SteeringReport(enabled=True), "", step)) for step in range(count)]


BOOL_OFFSET = 33  # limiting_value of a SteeringReport with an empty frame_id


def test_a_corrupted_message_is_caught_with_its_topic_index_and_offset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = steering_reports()
    corrupted = bytearray(raw[1])
    corrupted[BOOL_OFFSET] = 0x07  # a bool that is neither 0 nor 1: ours reads true and writes 01
    raw[1] = bytes(corrupted)
    bag = write_bag(
        tmp_path / "corrupt.mcap",
        {"/vehicle/steering/report": Topic("ds_dbw_msgs/msg/SteeringReport", [], raw=raw)},
    )
    status, lines = run(capsys, bag)
    assert status == 1
    assert lines[-2:] == [
        f"MISMATCH /vehicle/steering/report #1 ds_dbw_msgs/msg/SteeringReport at byte {BOOL_OFFSET}: "
        "the bag has 07, ours 01 (61 / 61 bytes)",
        "MISMATCH: 2/3 messages round-trip byte-exactly",
    ]


def test_a_truncated_message_does_not_fit_the_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = steering_reports()
    raw[2] = raw[2][:40]
    bag = write_bag(
        tmp_path / "cut.mcap",
        {"/vehicle/steering/report": Topic("ds_dbw_msgs/msg/SteeringReport", [], raw=raw)},
    )
    status, lines = run(capsys, bag)
    assert status == 1
    assert re.fullmatch(
        r"MISMATCH /vehicle/steering/report #2 ds_dbw_msgs/msg/SteeringReport: "
        r"the bytes do not fit the layout: \S+ needs \d+ bytes at offset \d+; the message ends at 40",
        lines[-2],
    )


def test_a_definition_that_differs_from_ours_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = definition_text("ds_dbw_msgs/msg/SteeringReport").replace(
        "bool limiting_value", "bool limiting_val", 1
    )
    path = tmp_path / "renamed.mcap"
    with BagWriter(path) as writer:
        writer.add_topic(
            "/vehicle/steering/report",
            "ds_dbw_msgs/msg/SteeringReport",
            offered_qos=[RELIABLE],
            definition=theirs,
        )
        for data in steering_reports():
            writer.write("/vehicle/steering/report", data, log_time_ns=1)
    status, lines = run(capsys, path)
    assert status == 1
    assert lines[1] == (
        "MISMATCH /vehicle/steering/report ds_dbw_msgs/msg/SteeringReport: "
        "the bag's definition differs from ours: field 6 of ds_dbw_msgs/msg/SteeringReport: "
        "the bag has bool limiting_val, ours bool limiting_value"
    )
    assert lines[-1] == "MISMATCH: 3/3 messages round-trip byte-exactly"


def test_a_type_missing_from_our_package_fails_every_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "newer.mcap"
    with BagWriter(path) as writer:
        writer.add_topic(
            "/vehicle/x/report",
            "ds_dbw_msgs/msg/NewReport",
            offered_qos=[RELIABLE],
            definition="bool ready\n",
            topic_type_hash="",
        )
        writer.write("/vehicle/x/report", serialize_message(Bool(data=True)), log_time_ns=1)
    status, lines = run(capsys, path)
    assert status == 1
    assert (
        "MISMATCH /vehicle/x/report #0 ds_dbw_msgs/msg/NewReport: not in our package: unknown type"
        in lines[1]
    )


def test_many_mismatches_are_summed_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = [data[:30] for data in steering_reports(SHOWN_MISMATCHES + 5)]
    bag = write_bag(
        tmp_path / "bad.mcap",
        {"/vehicle/steering/report": Topic("ds_dbw_msgs/msg/SteeringReport", [], raw=raw)},
    )
    status, lines = run(capsys, bag)
    assert status == 1
    assert lines[-2:] == [
        "... and 5 more mismatches",
        f"MISMATCH: 0/{SHOWN_MISMATCHES + 5} messages round-trip byte-exactly",
    ]


def test_a_bag_without_drive_by_wire_messages_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = write_bag(
        tmp_path / "ins.mcap",
        {
            "/oxts/imu": Topic("sensor_msgs/msg/Imu", imu()),
            "/vehicle/steering/report": Topic("ds_dbw_msgs/msg/SteeringReport", []),
        },
    )
    status, lines = run(capsys, bag)
    assert status == 1
    assert lines[-1] == f"NO MESSAGES: {bag} holds no ds_dbw_msgs message"


def test_another_package_can_be_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = write_bag(
        tmp_path / "flag.mcap", {"/vehicle/dbw_enabled": Topic("std_msgs/msg/Bool", [Bool(data=True)] * 2)}
    )
    status, lines = run(capsys, bag, "--package", "std_msgs")
    assert status == 0
    assert lines[-1] == "MATCH: 2/2 messages round-trip byte-exactly"


def test_a_rosbag2_sqlite3_bag_of_the_vehicle_is_checked_with_its_own_definitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dbw_direct_test_01"
    with Writer(path, version=9) as writer:
        connection = writer.add_connection(
            "/vehicle/steering/report",
            "ds_dbw_msgs/msg/SteeringReport",
            msgdef=definition_text("ds_dbw_msgs/msg/SteeringReport"),
            rihs01=type_hash("ds_dbw_msgs/msg/SteeringReport"),
            offered_qos_profiles=[rosbags_qos(QosReliability.RELIABLE)],
        )
        for step, data in enumerate(steering_reports()):
            writer.write(connection, step, data)
    status, lines = run(capsys, path)
    assert status == 0, lines
    assert lines[-1] == "MATCH: 3/3 messages round-trip byte-exactly"


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("missing.mcap", None, r"bag '.*missing\.mcap' does not exist"),
        ("notes.mcap", b"notes\n", r"notes\.mcap is not an MCAP file"),
    ],
)
def test_a_bag_that_cannot_be_read_exits_with_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes | None, match: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main([str(path)]) == 2
    assert re.search(match, capsys.readouterr().err)


@pytest.mark.parametrize(
    ("bag_text", "our_text", "difference"),
    [
        ("float64[9] k\n", "float64[9] k\n", None),
        ("uint8 A=1\nfloat64[9] k\n", "uint8 A=2\nfloat64[9] k\n", None),  # constants are not on the wire
        (
            "float64[9] k\n",
            "float64[] k\n",
            "field 1 of demo/msg/T: the bag has float64[9] k, ours float64[] k",
        ),
        ("float64 a\n", "float64 a\nuint8 b\n", "field 2 of demo/msg/T: the bag has nothing, ours uint8 b"),
        (
            "demo/Inner i\n",
            "float64 i\n",
            "field 1 of demo/msg/T: the bag has demo/msg/Inner i, ours float64 i",
        ),
    ],
)
def test_definitions_differ_where_a_field_does(bag_text: str, our_text: str, difference: str | None) -> None:
    def layout(text: str) -> Typesdict:
        types = parse_definition(text, "demo/msg/T")
        types.setdefault("demo/msg/Inner", ([], []))
        return types

    assert definition_difference(layout(bag_text), layout(our_text)) == difference


def test_a_type_on_one_side_only_is_a_difference() -> None:
    ours = parse_definition("float64 a\n", "demo/msg/T")
    theirs = {**ours, "demo/msg/Extra": ([], [])}
    assert definition_difference(theirs, ours) == "demo/msg/Extra is missing from ours"
    assert definition_difference(ours, theirs) == "demo/msg/Extra is missing from the bag"
