"""check_topic_parity: the report a user reads, the exit status a script reads, and the allow file.

Bags are written here with the bridge's topics; a wrong QoS, frame or type is put in on purpose and
must be reported."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap.writer import Writer as McapWriter
from rosbags.interfaces import QosReliability
from rosbags.rosbag2 import Writer
from rosbags.typesys import Stores, get_typestore
from std_msgs.msg import Bool

from acres_bridge.tools.check_topic_parity import (
    Allowance,
    Check,
    Comparison,
    TopicSide,
    compare,
    format_report,
    load_allow_file,
    main,
    merge_sides,
)
from acres_bridge.tools.errors import AllowFileError

from .bags import BEST_EFFORT, Topic, clock, dbw, imu, polaris, tf, write_bag
from .test_bag import rosbags_qos

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, list[str]]:
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().out.splitlines()


def line_of(lines: list[str], topic: str) -> str:
    (line,) = [x for x in lines if re.match(rf"^(OK|DIFF)\s+{re.escape(topic)}\s", x)]
    return line


def test_a_bag_as_the_bridge_publishes_it_matches_the_polaris_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = write_bag(tmp_path / "sim.mcap", polaris())
    status, lines = run(capsys, bag, "--vehicle", "polaris")
    assert status == 0
    assert re.fullmatch(
        r"OK   /oxts/imu\s+sensor_msgs/msg/Imu\s+qos \(1, 2\) / \(1, 2\)  "
        r"frames \['imu_link'\] / \['imu_link'\]",
        line_of(lines, "/oxts/imu"),
    )
    assert line_of(lines, "/tf").endswith("frames ['utm->base_footprint'] / ['utm->base_footprint']")
    assert line_of(lines, "/vehicle/brake/report").endswith("frames [''] / ['']")
    assert line_of(lines, "/clock").endswith("frames [] / []")
    assert lines[-1] == "6 common topic checks, 0 differences"


def wrong_bag(tmp_path: Path) -> Path:
    """/oxts/imu offered best effort, /tf from map, /vehicle/dbw_enabled of another type."""
    return write_bag(
        tmp_path / "wrong.mcap",
        polaris(
            {
                "/oxts/imu": Topic("sensor_msgs/msg/Imu", imu(), (BEST_EFFORT,)),
                "/tf": Topic("tf2_msgs/msg/TFMessage", tf(parent="map")),
                "/vehicle/dbw_enabled": Topic("sensor_msgs/msg/Imu", imu(frame="dbw")),
            }
        ),
    )


def test_a_wrong_qos_frame_or_type_is_reported_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run(capsys, wrong_bag(tmp_path), "--vehicle", "polaris")
    assert status == 1
    assert re.fullmatch(
        r"DIFF /oxts/imu\s+sensor_msgs/msg/Imu\s+qos \(2, 2\) / \(1, 2\)  "
        r"frames \['imu_link'\] / \['imu_link'\]  differs: qos",
        line_of(lines, "/oxts/imu"),
    )
    assert line_of(lines, "/tf").endswith(
        "frames ['map->base_footprint'] / ['utm->base_footprint']  differs: frames"
    )
    assert "type std_msgs/msg/Bool  differs: type, frames" in line_of(lines, "/vehicle/dbw_enabled")
    assert line_of(lines, "/clock").startswith("OK ")
    assert lines[-2:] == ["6 common topic checks, 3 differences", "0 allowed, 3 unexpected"]


def write_allow(path: Path, *entries: tuple[str, str, str]) -> Path:
    lines = ["allow:"]
    for topic, check, reason in entries:
        lines += [f"  - topic: {topic}", f"    check: {check}", f"    reason: {reason}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_allow_file_silences_the_differences_it_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    allow = write_allow(
        tmp_path / "allow.yaml",
        ("/oxts/imu", "qos", "the test bag offers best effort"),
        ("/tf", "frames", "the vehicle's driver publishes from map"),
        ("/vehicle/dbw_enabled", "type", "a test of the type check"),
        ("/vehicle/dbw_enabled", "frames", "follows from the type"),
    )
    status, lines = run(capsys, wrong_bag(tmp_path), "--vehicle", "polaris", "--allow", allow)
    assert status == 0
    assert line_of(lines, "/oxts/imu").endswith("allowed (qos): the test bag offers best effort")
    assert lines[-2:] == ["6 common topic checks, 3 differences", "3 allowed, 0 unexpected"]


def test_an_allowance_of_another_check_does_not_silence_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    allow = write_allow(tmp_path / "allow.yaml", ("/oxts/imu", "frames", "not the difference there is"))
    status, lines = run(capsys, wrong_bag(tmp_path), "--vehicle", "polaris", "--allow", allow)
    assert status == 1
    assert line_of(lines, "/oxts/imu").endswith("differs: qos")


def test_an_allowance_that_covers_nothing_is_pointed_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    allow = write_allow(tmp_path / "allow.yaml", ("/oxts/imu", "qos", "no longer needed"))
    status, lines = run(
        capsys, write_bag(tmp_path / "sim.mcap", polaris()), "--vehicle", "polaris", "--allow", allow
    )
    assert status == 0
    assert lines[-1] == "not needed: the allowance of qos on /oxts/imu"


def test_a_bag_against_reference_bags_merges_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = write_bag(tmp_path / "sim.mcap", polaris())
    direct = write_bag(
        tmp_path / "dbw_direct_test_01.mcap", {"/oxts/imu": Topic("sensor_msgs/msg/Imu", imu())}
    )
    human = write_bag(
        tmp_path / "human.mcap",
        {
            "/oxts/imu": Topic("sensor_msgs/msg/Imu", imu()),
            "/tf": Topic("tf2_msgs/msg/TFMessage", tf() + tf(parent="map", child="oxts_link")),
            "/vehicle/steering/cmd": dbw()["/vehicle/steering/cmd"],
        },
    )
    status, lines = run(capsys, sim, direct, human)
    assert status == 1
    assert line_of(lines, "/oxts/imu").startswith("OK ")
    assert "frames ['utm->base_footprint'] / ['map->oxts_link', 'utm->base_footprint']" in line_of(
        lines, "/tf"
    )
    assert lines[-2:] == ["2 common topic checks, 1 differences", "0 allowed, 1 unexpected"]


def test_a_rosbag2_sqlite3_bag_of_the_vehicle_is_a_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vehicle = tmp_path / "human_20260813_172445"
    with Writer(vehicle, version=8) as writer:
        connection = writer.add_connection(
            "/oxts/imu",
            "sensor_msgs/msg/Imu",
            typestore=get_typestore(Stores.ROS2_HUMBLE),
            offered_qos_profiles=[rosbags_qos(QosReliability.RELIABLE)],
        )
        for step, data in enumerate(Topic("sensor_msgs/msg/Imu", imu()).raw):
            writer.write(connection, step, data)
    status, lines = run(capsys, write_bag(tmp_path / "sim.mcap", polaris()), vehicle)
    assert status == 0
    assert lines[-1] == "1 common topic checks, 0 differences"


def test_a_bridge_in_a_namespace_is_compared_with_its_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = write_bag(
        tmp_path / "polaris2.mcap",
        {
            "/clock": Topic("rosgraph_msgs/msg/Clock", clock()),
            "/polaris2/oxts/imu": Topic("sensor_msgs/msg/Imu", imu()),
        },
    )
    status, lines = run(capsys, bag, "--vehicle", "polaris", "--namespace", "/polaris2")
    assert status == 0
    assert line_of(lines, "/polaris2/oxts/imu").startswith("OK ")
    assert lines[-1] == "2 common topic checks, 0 differences"


def test_a_topic_without_messages_has_no_frames_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = write_bag(tmp_path / "sim.mcap", {"/lidar/points": Topic("sensor_msgs/msg/PointCloud2", [])})
    status, lines = run(capsys, bag, "--vehicle", "polaris")
    assert status == 0
    assert line_of(lines, "/lidar/points").endswith("frames - / -")


def test_a_message_whose_frame_cannot_be_read_is_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = Topic("sensor_msgs/msg/Imu", [], raw=[b"\x00\x01\x00\x00" + bytes(8) + b"\xff\x00\x00\x00"])
    status, lines = run(
        capsys, write_bag(tmp_path / "sim.mcap", {"/oxts/imu": broken}), "--vehicle", "polaris"
    )
    assert status == 1
    assert "frames ['<unreadable>'] / ['imu_link']" in line_of(lines, "/oxts/imu")


def test_nothing_in_common_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = write_bag(tmp_path / "sim.mcap", {"/flag": Topic("std_msgs/msg/Bool", [Bool()])})
    status, lines = run(capsys, bag, "--vehicle", "polaris")
    assert status == 1
    assert lines[-2:] == [
        "0 common topic checks, 0 differences",
        "no topic is on both sides: nothing was compared",
    ]


def test_the_lines_have_the_form_of_the_spec() -> None:
    side = TopicSide(type_name="ds_dbw_msgs/msg/BrakeReport", qos=frozenset({(1, 2)}), frames=frozenset({""}))
    static = TopicSide(
        type_name="tf2_msgs/msg/TFMessage",
        qos=frozenset({(1, 1)}),
        frames=frozenset({"base_footprint->lidar", "base_footprint->reolink_camera", "a->b", "c->d"}),
    )
    route = TopicSide(
        type_name="tf2_msgs/msg/TFMessage",
        qos=frozenset({(1, 1)}),
        frames=frozenset({"utm->demo_route_origin"}),
    )
    lines = format_report(
        [
            Comparison("/vehicle/brake/report", side, side, (), ()),
            Comparison("/tf_static", static, route, (Check.FRAMES,), ()),
        ]
    )
    assert lines == [
        "OK   /vehicle/brake/report  ds_dbw_msgs/msg/BrakeReport  qos (1, 2) / (1, 2)  frames [''] / ['']",
        "DIFF /tf_static             tf2_msgs/msg/TFMessage       qos (1, 1) / (1, 1)  "
        "frames ['a->b', 'base_footprint->lidar', 'base_footprint->reolink_camera', ...] / "
        "['utm->demo_route_origin']  differs: frames",
        "2 common topic checks, 1 differences",
        "0 allowed, 1 unexpected",
    ]


def test_unknown_qos_is_not_compared_and_several_offers_are_shown() -> None:
    unknown = TopicSide(type_name="std_msgs/msg/Bool", qos=frozenset(), frames=frozenset())
    both = TopicSide(type_name="std_msgs/msg/Bool", qos=frozenset({(1, 2), (2, 2)}), frames=frozenset())
    (comparison,) = compare({"/flag": unknown}, {"/flag": both})
    assert comparison.differences == ()
    assert "qos ? / [(1, 2), (2, 2)]" in format_report([comparison])[0]


def test_merging_unites_offers_and_frames_and_keeps_known_frames() -> None:
    a = TopicSide(type_name="t/msg/A", qos=frozenset({(1, 2)}), frames=frozenset({"x"}))
    b = TopicSide(type_name="t/msg/A", qos=frozenset({(2, 2)}), frames=None)
    c = TopicSide(type_name="t/msg/A", qos=frozenset({(1, 2)}), frames=frozenset({"y"}))
    merged = merge_sides([{"/t": a}, {"/t": b}, {"/t": c}])["/t"]
    assert merged.qos == {(1, 2), (2, 2)}
    assert merged.frames == {"x", "y"}


def test_allowances_are_matched_by_topic_and_check() -> None:
    sim = {"/a": TopicSide(type_name="t/msg/A", qos=frozenset({(2, 2)}), frames=frozenset({"x"}))}
    ref = {"/a": TopicSide(type_name="t/msg/A", qos=frozenset({(1, 2)}), frames=frozenset({"y"}))}
    allow = (Allowance("/a", Check.QOS, "why"), Allowance("/b", Check.FRAMES, "other topic"))
    (comparison,) = compare(sim, ref, allow)
    assert comparison.differences == (Check.QOS, Check.FRAMES)
    assert comparison.unexpected == (Check.FRAMES,)


def test_the_allow_file_format(tmp_path: Path) -> None:
    path = write_allow(tmp_path / "allow.yaml", ("/tf_static", "frames", "  no Polaris description  "))
    assert load_allow_file(path) == (Allowance("/tf_static", Check.FRAMES, "no Polaris description"),)
    empty = tmp_path / "empty.yaml"
    empty.write_text("allow: []\n")
    assert load_allow_file(empty) == ()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("allow: [", "allow.yaml: not readable YAML"),
        ("- topic: /a", "allow.yaml: expected a mapping with one key 'allow' holding a list"),
        ("allow: {topic: /a}", "expected a mapping with one key 'allow' holding a list"),
        ("allow: []\nextra: 1", "expected a mapping with one key 'allow'"),
        (
            "allow:\n  - {topic: /a, check: qos}",
            "allow.yaml, entry 1: expected exactly the keys topic, check and reason",
        ),
        ("allow:\n  - {topic: /a, check: qos, reason: r, note: n}", "entry 1: expected exactly the keys"),
        (
            "allow:\n  - {topic: a, check: qos, reason: r}",
            "entry 1: topic must be an absolute topic name; found 'a'",
        ),
        (
            "allow:\n  - {topic: /a, check: qos, reason: r}\n  - {topic: /b, check: rate, reason: r}",
            "entry 2: check must be one of type, qos, frames; found 'rate'",
        ),
        (
            "allow:\n  - {topic: /a, check: qos, reason: ' '}",
            "entry 1: reason must say why the difference is expected",
        ),
    ],
)
def test_a_malformed_allow_file_is_refused(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "allow.yaml"
    path.write_text(text)
    with pytest.raises(AllowFileError, match=match):
        load_allow_file(path)


def test_a_missing_allow_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AllowFileError, match=r"nothing\.yaml: file not found"):
        load_allow_file(tmp_path / "nothing.yaml")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["missing.mcap", "--vehicle", "polaris"], r"bag '.*missing\.mcap' does not exist"),
        (["{bag}", "--vehicle", "tractor"], r"no msg_profiles table 'tractor'; there are \["),
        (["{bag}", "--vehicle", "polaris", "--allow", "nothing.yaml"], r"nothing\.yaml: file not found"),
        (["{bag}", "--vehicle", "polaris", "--profiles", "no_dir"], r"qos\.yaml: file not found"),
    ],
)
def test_what_cannot_be_read_exits_with_2_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], match: str
) -> None:
    bag = write_bag(tmp_path / "sim.mcap", polaris())
    args = [
        a.format(bag=bag) if "{" in a else str(tmp_path / a) if a.endswith((".mcap", ".yaml", "_dir")) else a
        for a in argv
    ]
    assert main(args) == 2
    assert re.search(match, capsys.readouterr().err)


def test_a_reference_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([str(write_bag(tmp_path / "sim.mcap", polaris()))])
    assert exit_info.value.code == 2
    assert "give reference bags, --vehicle TABLE, or both" in capsys.readouterr().err


def test_the_module_runs_as_a_command(tmp_path: Path) -> None:
    wrong = wrong_bag(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "acres_bridge.tools.check_topic_parity", str(wrong), "--vehicle", "polaris"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "6 common topic checks, 3 differences" in done.stdout


def test_a_type_known_neither_to_the_bag_nor_here_has_no_frames_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "foreign.mcap"
    with path.open("wb") as stream:
        writer = McapWriter(stream)
        writer.start(profile=Profile.ROS2)
        schema = writer.register_schema(
            "demo_msgs/msg/Thing", SchemaEncoding.ROS2IDL, b"module demo_msgs {};"
        )
        channel = writer.register_channel("/thing", MessageEncoding.CDR, schema, {})
        writer.add_message(channel, 1, b"\x00\x01\x00\x00\x01", 1)
        writer.finish()
    status, lines = run(capsys, path, path)
    assert status == 0
    assert line_of(lines, "/thing") == "OK   /thing  demo_msgs/msg/Thing  qos ? / ?            frames - / -"
