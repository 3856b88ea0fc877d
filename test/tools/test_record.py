"""acres_record: its options, and the recorder as a process against publishers of the test: the QoS it
subscribes with follows the offers (a latched message is recorded), and every way it ends leaves a
complete file."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.conftest import Processes, Ros
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from std_msgs.msg import Bool, String

from acres_bridge.msg_profiles import load_profiles
from acres_bridge.processes import ChildProcess
from acres_bridge.tools.bag import Compression, McapBagReader, open_bag
from acres_bridge.tools.qos import Durability, Reliability
from acres_bridge.tools.record import DEFAULT_DEPTH, parse_options, profile_topics, subscription_qos

from .bags import BEST_EFFORT, LATCHED, RELIABLE
from .conftest import recorder

PROFILES = load_profiles()
TIMEOUT_S = 30.0


def test_the_polaris_profile_is_every_topic_the_bridge_publishes() -> None:
    topics = profile_topics(PROFILES, "polaris")
    assert topics[:3] == ("/clock", "/tf", "/tf_static")
    assert "/vehicle/dbw_enabled" in topics
    assert "/vehicle/steering/cmd" not in topics  # the bridge subscribes to it
    assert len(topics) == 18


def test_a_namespace_moves_every_name_but_the_absolute_four() -> None:
    topics = profile_topics(PROFILES, "polaris", "/polaris2")
    assert topics[:4] == ("/clock", "/tf", "/tf_static", "/polaris2/vehicle/odom")


def test_options_unite_the_profile_and_the_topics_once_each(tmp_path: Path) -> None:
    options = parse_options(
        ["--profile", "polaris", "--topics", "vehicle/steering/cmd", "/clock", "-o", str(tmp_path / "x.mcap")]
    )
    assert options.topics[:3] == ("/vehicle/steering/cmd", "/clock", "/tf")
    assert options.topics.count("/clock") == 1
    assert len(options.topics) == 19
    assert options.duration_s is None
    assert (options.compression, options.depth, options.metadata_version) == (
        Compression.NONE,
        DEFAULT_DEPTH,
        9,
    )


def test_options_of_a_timed_compressed_humble_recording(tmp_path: Path) -> None:
    options = parse_options(
        [
            "--topics",
            "/clock",
            "--duration",
            "2.5",
            "--compression",
            "zstd",
            "--depth",
            "5",
            "--metadata-version",
            "8",
            "-o",
            "x.mcap",
        ]
    )
    assert (options.duration_s, options.compression, options.depth, options.metadata_version) == (
        2.5,
        Compression.ZSTD,
        5,
        8,
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-o", "x.mcap"], "name the topics to record with --topics and/or --profile"),
        (["--profile", "tractor", "-o", "x.mcap"], "no msg_profiles table 'tractor'"),
        (
            ["--profile", "polaris", "--profiles", "/no/such/dir", "-o", "x.mcap"],
            r"qos\.yaml: file not found",
        ),
        (["--topics", "/a", "--duration", "0", "-o", "x.mcap"], "--duration: must be above 0, found 0"),
        (["--topics", "/a", "--depth", "0", "-o", "x.mcap"], "--depth: must be 1 or more, found 0"),
        (["--topics", "/a", "--metadata-version", "7", "-o", "x.mcap"], "invalid choice: 7"),
        (["--topics", "/a"], "the following arguments are required: -o/--output"),
    ],
)
def test_unusable_options_exit_with_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_options(argv)
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize(
    ("offers", "reliability", "durability"),
    [
        ([RELIABLE], ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE),
        ([LATCHED], ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL),
        ([LATCHED, BEST_EFFORT], ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE),
    ],
)
def test_the_subscription_qos_follows_the_offers(
    offers: list[object], reliability: ReliabilityPolicy, durability: DurabilityPolicy
) -> None:
    qos = subscription_qos(offers, 7)  # type: ignore[arg-type]
    assert (qos.reliability, qos.durability, qos.depth) == (reliability, durability, 7)


@pytest.fixture
def other_ros() -> Iterator[Ros]:
    """A second node of the test, in a participant of its own."""
    node = Ros()
    yield node
    node.shutdown()


def wait_for(process: ChildProcess, text: str) -> None:
    process.wait_for_line(text, TIMEOUT_S)


def stop(process: ChildProcess, how: signal.Signals = signal.SIGINT) -> int:
    process.popen.send_signal(how)
    return process.popen.wait(TIMEOUT_S)


@pytest.mark.integration
def test_a_latched_and_a_best_effort_topic_are_recorded_with_their_offers(
    tmp_path: Path, ros: Ros, other_ros: Ros, processes: Processes
) -> None:
    latched = ros.node.create_publisher(
        String,
        "/acres_test/latched",
        QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        ),
    )
    latched.publish(String(data="sent before the recording"))
    flag = ros.node.create_publisher(
        Bool, "/acres_test/flag", QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    )
    ros.node.create_publisher(Bool, "/acres_test/mixed", 10)
    other_ros.node.create_publisher(String, "/acres_test/mixed", 10)  # one participant has one type a topic
    output = tmp_path / "latched.mcap"
    process = recorder(
        "acres_record",
        ["--topics", "/acres_test/latched", "/acres_test/flag", "/acres_test/mixed", "-o", str(output)],
    )
    processes.started.append(process)
    wait_for(
        process,
        "recording /acres_test/latched std_msgs/msg/String (reliable, transient_local) from 1 publisher",
    )
    wait_for(process, "recording /acres_test/flag std_msgs/msg/Bool (best_effort, volatile) from 1 publisher")
    ros.wait_until(lambda: flag.get_subscription_count() > 0, "the recorder on /acres_test/flag")
    ros.wait_until(lambda: latched.get_subscription_count() > 0, "the recorder on /acres_test/latched")
    assert latched.wait_for_all_acked(Duration(seconds=TIMEOUT_S))  # the recorder holds the latched message
    for value in (True, False, True):
        flag.publish(Bool(data=value))
    wait_for(
        process, "/acres_test/mixed is published with types ['std_msgs/msg/Bool', 'std_msgs/msg/String']"
    )
    ros.node.create_publisher(String, "/acres_test/latched", 10)  # volatile: the recording cannot get it
    wait_for(process, "a publisher of /acres_test/latched offers less than this recording requested")
    ros.spin_for(0.3)
    assert stop(process) == 0
    assert "stopped by SIGINT" in process.output
    assert "no publisher appeared" not in process.output

    with open_bag(output) as bag:
        topics = bag.topics()
        assert [q.pair for q in topics["/acres_test/latched"].offered_qos] == [(1, 1)]
        assert [(q.reliability, q.durability) for q in topics["/acres_test/flag"].offered_qos] == [
            (Reliability.BEST_EFFORT, Durability.VOLATILE)
        ]
        messages = list(bag.messages())
    latched_messages = [
        deserialize_message(m.data, String).data for m in messages if m.topic == "/acres_test/latched"
    ]
    assert latched_messages == ["sent before the recording"]
    flags = [deserialize_message(m.data, Bool).data for m in messages if m.topic == "/acres_test/flag"]
    assert flags == [True, False, True]
    for message in messages:  # no header: the publish time is when the publisher sent it
        assert 0 < message.publish_time_ns <= message.log_time_ns


@pytest.mark.integration
def test_a_timed_recording_ends_by_itself_with_a_complete_file(tmp_path: Path, processes: Processes) -> None:
    output = tmp_path / "timed.mcap"
    process = recorder(
        "acres_record", ["--topics", "/acres_test/nothing", "--duration", "0.5", "-o", str(output)]
    )
    processes.started.append(process)
    assert process.popen.wait(TIMEOUT_S) == 0
    process.wait_for_line("no publisher appeared on /acres_test/nothing", TIMEOUT_S)
    assert "stopped by duration after" in process.output
    with McapBagReader(output) as bag:
        assert bag.topics() == {}
        (record,) = bag.metadata("rosbag2")
    assert "message_count: 0" in record["serialized_metadata"]


@pytest.mark.integration
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_recording_with_a_complete_file(
    tmp_path: Path, processes: Processes, how: signal.Signals
) -> None:
    output = tmp_path / "stopped.mcap"
    process = recorder("acres_record", ["--topics", "/acres_test/nothing", "-o", str(output)])
    processes.started.append(process)
    wait_for(process, "recording 1 topic into")
    assert stop(process, how) == 0
    assert f"stopped by {how.name} after" in process.output
    with McapBagReader(output) as bag:
        assert bag.metadata("rosbag2")


@pytest.mark.integration
def test_an_existing_output_is_never_overwritten(tmp_path: Path, processes: Processes) -> None:
    output = tmp_path / "kept.mcap"
    output.write_bytes(b"keep me")
    process = recorder("acres_record", ["--topics", "/clock", "-o", str(output)])
    processes.started.append(process)
    assert process.popen.wait(TIMEOUT_S) == 2
    process.wait_for_line("kept.mcap exists already; choose another output file", TIMEOUT_S)
    assert output.read_bytes() == b"keep me"
