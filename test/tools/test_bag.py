"""Bags written as rosbag2 writes MCAP files, and read back: one contract run over both readers (the mcap
library and rosbags), what rosbag2 and Foxglove look for in the file, real-vehicle rosbag2 bags
(sqlite3), and every bad path or file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from mcap.reader import make_reader
from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap.writer import IndexType, Writer
from mcap_ros2.decoder import DecoderFactory
from rclpy.serialization import serialize_message
from rosbags.highlevel import AnyReader
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import Writer as RosbagsWriter
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import Imu
from std_msgs.msg import Bool

from acres_bridge.tools.bag import (
    READERS,
    BagWriter,
    Compression,
    McapBagReader,
    RosbagsBagReader,
    open_bag,
)
from acres_bridge.tools.errors import BagError, DefinitionError, QosYamlError
from acres_bridge.tools.msgdef import definition_text, type_hash
from acres_bridge.tools.qos import dump_offered_qos, parse_offered_qos

from .bags import BEST_EFFORT, LATCHED, RELIABLE, Topic, imu, write_bag

TOPICS = {
    "/oxts/imu": Topic("sensor_msgs/msg/Imu", imu(steps=4)),
    "/vehicle/dbw_enabled": Topic(
        "std_msgs/msg/Bool", [Bool(data=True), Bool(data=False)], (RELIABLE, BEST_EFFORT)
    ),
    "/tf_static": Topic("tf2_msgs/msg/TFMessage", [], (LATCHED,)),
}


@pytest.fixture
def bag(tmp_path: Path) -> Path:
    return write_bag(tmp_path / "session.mcap", TOPICS)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_both_readers_give_the_topics_as_written(bag: Path, reader: str) -> None:
    with READERS[reader](bag) as opened:
        topics = opened.topics()
        assert list(topics) == list(TOPICS)
        for name, written in TOPICS.items():
            assert topics[name].type_name == written.type_name
            assert topics[name].offered_qos == tuple(written.offers)
            assert topics[name].message_count == len(written.messages)
            assert topics[name].definition == definition_text(written.type_name)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_both_readers_give_the_bytes_as_written_in_log_time_order(bag: Path, reader: str) -> None:
    with READERS[reader](bag) as opened:
        messages = list(opened.messages())
        imu_only = list(opened.messages(["/oxts/imu"]))
    expected = [(name, data) for name, t in TOPICS.items() for data in t.raw]
    assert [(m.topic, m.data) for m in messages] == expected
    assert [m.log_time_ns for m in messages] == sorted(m.log_time_ns for m in messages)
    assert [m.data for m in imu_only] == TOPICS["/oxts/imu"].raw


def test_the_publish_time_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "times.mcap"
    with BagWriter(path) as writer:
        writer.add_topic("/oxts/imu", "sensor_msgs/msg/Imu", offered_qos=[RELIABLE])
        writer.write("/oxts/imu", serialize_message(Imu()), log_time_ns=2_000, publish_time_ns=1_500)
        writer.write("/oxts/imu", serialize_message(Imu()), log_time_ns=3_000)
        assert writer.message_count("/oxts/imu") == 2
    with McapBagReader(path) as reader:
        assert [(m.log_time_ns, m.publish_time_ns) for m in reader.messages()] == [
            (2_000, 1_500),
            (3_000, 3_000),
        ]


def test_the_file_has_what_rosbag2_and_foxglove_read(bag: Path) -> None:
    with bag.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == Profile.ROS2
        summary = reader.get_summary()
        assert summary is not None
        schemas = {s.name: s for s in summary.schemas.values()}
        assert set(schemas) == {t.type_name for t in TOPICS.values()}
        assert {s.encoding for s in schemas.values()} == {SchemaEncoding.ROS2}
        channels = {c.topic: c for c in summary.channels.values()}
        assert {c.message_encoding for c in channels.values()} == {MessageEncoding.CDR}
        imu_channel = channels["/oxts/imu"]
        assert imu_channel.metadata["offered_qos_profiles"] == dump_offered_qos([RELIABLE])
        assert imu_channel.metadata["topic_type_hash"] == type_hash("sensor_msgs/msg/Imu")
        decoded = [d for _s, _c, _m, d in reader.iter_decoded_messages(topics=["/oxts/imu"])]
        assert [d.header.frame_id for d in decoded] == ["imu_link"] * 4


def test_the_rosbag2_metadata_record_describes_the_bag(bag: Path) -> None:
    with McapBagReader(bag) as reader:
        (record,) = reader.metadata("rosbag2")
    metadata = yaml.safe_load(record["serialized_metadata"])
    assert metadata["version"] == 9
    assert metadata["storage_identifier"] == "mcap"
    assert metadata["relative_file_paths"] == ["session.mcap"]
    assert metadata["message_count"] == 6
    assert metadata["duration"]["nanoseconds"] == 5_000_000
    assert metadata["starting_time"]["nanoseconds_since_epoch"] == 1_000_000
    topics = {t["topic_metadata"]["name"]: t for t in metadata["topics_with_message_count"]}
    assert {name: t["message_count"] for name, t in topics.items()} == {
        n: len(t.messages) for n, t in TOPICS.items()
    }
    dbw = topics["/vehicle/dbw_enabled"]["topic_metadata"]
    assert dbw["type"] == "std_msgs/msg/Bool"
    assert dbw["serialization_format"] == "cdr"
    assert parse_offered_qos(dbw["offered_qos_profiles"]) == (RELIABLE, BEST_EFFORT)


def test_metadata_version_8_writes_the_qos_as_numbers_for_humble(tmp_path: Path) -> None:
    path = write_bag(tmp_path / "humble.mcap", {"/oxts/imu": TOPICS["/oxts/imu"]}, metadata_version=8)
    with McapBagReader(path) as reader:
        (record,) = reader.metadata("rosbag2")
        assert reader.topics()["/oxts/imu"].offered_qos == (RELIABLE,)
    metadata = yaml.safe_load(record["serialized_metadata"])
    assert metadata["version"] == 8
    text = metadata["topics_with_message_count"][0]["topic_metadata"]["offered_qos_profiles"]
    assert isinstance(text, str)
    assert yaml.safe_load(text)[0]["reliability"] == 1


def test_rosbags_deserialises_every_message_and_accepts_the_type_hashes(bag: Path) -> None:
    with AnyReader([bag]) as reader:
        frames = [
            reader.deserialize(raw, connection.msgtype).header.frame_id  # type: ignore[attr-defined]
            for connection, _time, raw in reader.messages()
            if connection.topic == "/oxts/imu"
        ]
    assert frames == ["imu_link"] * 4


@pytest.mark.parametrize("compression", list(Compression))
def test_every_compression_reads_back(tmp_path: Path, compression: Compression) -> None:
    path = tmp_path / f"{compression.value}.mcap"
    raw = Topic("sensor_msgs/msg/Imu", imu(steps=3)).raw
    with BagWriter(path, compression=compression) as writer:
        writer.add_topic("/oxts/imu", "sensor_msgs/msg/Imu", offered_qos=[RELIABLE])
        for data in raw:
            writer.write("/oxts/imu", data, log_time_ns=1)
    with open_bag(path) as reader:
        assert [m.data for m in reader.messages()] == raw


def rosbags_qos(reliability: QosReliability) -> Qos:
    forever = QosTime(9_223_372_036, 854_775_807)
    return Qos(
        QosHistory.UNKNOWN,
        0,
        reliability,
        QosDurability.VOLATILE,
        forever,
        forever,
        QosLiveliness.AUTOMATIC,
        forever,
        False,
    )


VEHICLE_IMU = Topic("sensor_msgs/msg/Imu", imu(steps=3))


def vehicle_bag(path: Path) -> Path:
    """A rosbag2 sqlite3 bag as the real vehicle's Humble recorder writes one (metadata version 8)."""
    store = get_typestore(Stores.ROS2_HUMBLE)
    with RosbagsWriter(path, version=8) as writer:
        connection = writer.add_connection(
            "/oxts/imu",
            "sensor_msgs/msg/Imu",
            typestore=store,
            offered_qos_profiles=[rosbags_qos(QosReliability.BEST_EFFORT)],
        )
        for step, data in enumerate(VEHICLE_IMU.raw):
            writer.write(connection, 1_000 + step, data)
    return path


def test_a_rosbag2_sqlite3_bag_of_the_vehicle_reads_like_our_mcap(tmp_path: Path) -> None:
    path = vehicle_bag(tmp_path / "human_20260813_172445")
    with open_bag(path) as reader:
        assert isinstance(reader, RosbagsBagReader)
        topic = reader.topics()["/oxts/imu"]
        assert topic.offered_qos[0].pair == (2, 2)
        assert topic.message_count == 3
        assert [m.data for m in reader.messages()] == VEHICLE_IMU.raw
    (database,) = path.glob("*.db3")
    with open_bag(database) as reader:
        assert reader.topics()["/oxts/imu"].type_name == "sensor_msgs/msg/Imu"


def test_an_mcap_file_without_a_summary_is_scanned(tmp_path: Path) -> None:
    path = tmp_path / "bare.mcap"
    with path.open("wb") as stream:
        writer = Writer(
            stream,
            index_types=IndexType.NONE,
            use_statistics=False,
            use_summary_offsets=False,
            repeat_channels=False,
            repeat_schemas=False,
        )
        writer.start(profile=Profile.ROS2)
        schema = writer.register_schema("std_msgs/msg/Bool", SchemaEncoding.ROS2, b"bool data\n")
        channel = writer.register_channel(
            "/flag", MessageEncoding.CDR, schema, {"offered_qos_profiles": dump_offered_qos([RELIABLE])}
        )
        for _ in range(3):
            writer.add_message(channel, 5, serialize_message(Bool(data=True)), 5)
        writer.finish()
    with open_bag(path) as reader:
        topic = reader.topics()["/flag"]
        assert (topic.type_name, topic.message_count, topic.offered_qos) == (
            "std_msgs/msg/Bool",
            3,
            (RELIABLE,),
        )
        assert len(list(reader.messages())) == 3


def foreign_mcap(path: Path, channels: list[tuple[str, str, dict[str, str]]]) -> Path:
    with path.open("wb") as stream:
        writer = Writer(stream)
        writer.start(profile=Profile.ROS2)
        for topic, type_name, metadata in channels:
            schema = writer.register_schema(type_name, SchemaEncoding.ROS2, b"bool data\n")
            writer.register_channel(topic, MessageEncoding.CDR, schema, metadata)
        writer.finish()
    return path


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda d: d / "missing.mcap", r"bag '.*missing\.mcap' does not exist"),
        (
            lambda d: _write(d / "notes.mcap", b"# not a bag\n"),
            r"notes\.mcap is not an MCAP file: it starts with b'# not a ",
        ),
        (lambda d: _write(d / "empty.mcap", b""), r"empty\.mcap is not an MCAP file: it starts with b''"),
        (
            lambda d: _write(d / "session.bag", b"#ROSBAG V2.0\n"),
            r"a bag is an \.mcap file, a \.db3 file or a rosbag2 directory; found '\.bag'",
        ),
        (lambda d: _mkdir(d / "folder"), r"folder is a directory without metadata\.yaml, not a rosbag2 bag"),
        (lambda d: _write(d / "broken.db3", b"not sqlite"), r"broken\.db3 is not a readable rosbag2 bag"),
        (
            lambda d: foreign_mcap(
                d / "qos.mcap",
                [
                    (
                        "/flag",
                        "std_msgs/msg/Bool",
                        {"offered_qos_profiles": "- {reliability: often, durability: volatile}"},
                    )
                ],
            ),
            r"qos\.mcap, topic /flag: profile 1: reliability 'often' is not one of",
        ),
        (
            lambda d: foreign_mcap(
                d / "two.mcap", [("/flag", "std_msgs/msg/Bool", {}), ("/flag", "std_msgs/msg/Byte", {})]
            ),
            r"topic /flag has channels of two types, std_msgs/msg/Bool and std_msgs/msg/Byte",
        ),
    ],
)
def test_a_path_that_is_no_readable_bag_is_refused(tmp_path: Path, make: object, match: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(BagError, match=match):
        open_bag(path)


def test_a_truncated_mcap_file_is_refused(bag: Path, tmp_path: Path) -> None:
    cut = _write(tmp_path / "cut.mcap", bag.read_bytes()[:-40])
    with pytest.raises(BagError, match=r"cut\.mcap is not a complete MCAP file"):
        McapBagReader(cut)


def test_the_mcap_reader_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(BagError, match="is a directory, not an MCAP file"):
        McapBagReader(tmp_path)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def test_the_writer_never_overwrites(bag: Path) -> None:
    with pytest.raises(BagError, match=r"session\.mcap exists already; choose another output file"):
        BagWriter(bag)


def test_the_writer_names_an_output_it_cannot_create(tmp_path: Path) -> None:
    with pytest.raises(BagError, match=r"cannot create .*no_such_dir/x\.mcap: No such file or directory"):
        BagWriter(tmp_path / "no_such_dir" / "x.mcap")


def test_the_writer_refuses_an_unknown_metadata_version(tmp_path: Path) -> None:
    with pytest.raises(QosYamlError, match="rosbag2 metadata version must be one of 8, 9; found 7"):
        BagWriter(tmp_path / "x.mcap", metadata_version=7)


def test_the_writer_refuses_topics_and_messages_it_cannot_place(tmp_path: Path) -> None:
    with BagWriter(tmp_path / "x.mcap") as writer:
        writer.add_topic("/oxts/imu", "sensor_msgs/msg/Imu", offered_qos=[RELIABLE])
        with pytest.raises(BagError, match=r"topic /oxts/imu is in .*x\.mcap already"):
            writer.add_topic("/oxts/imu", "sensor_msgs/msg/Imu", offered_qos=[RELIABLE])
        with pytest.raises(BagError, match=r"topic /nowhere was not added to"):
            writer.write("/nowhere", b"", log_time_ns=1)
        with pytest.raises(BagError, match="log time must be >= 0 ns; found -5 on /oxts/imu"):
            writer.write("/oxts/imu", b"", log_time_ns=-5)
        with pytest.raises(DefinitionError, match=r"no NoSuchType\.msg of type std_msgs/msg/NoSuchType"):
            writer.add_topic("/odd", "std_msgs/msg/NoSuchType", offered_qos=[])
    with open_bag(tmp_path / "x.mcap") as reader:
        assert list(reader.topics()) == ["/oxts/imu"]
