"""A lockstep session of the reference simulator and the bridge (without perception), driven through
the drive-by-wire as the spec's example node does, recorded with acres_record; then the tools on that
recording, each run as a user runs it.

One session serves every test of the module: the recording is read, never changed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ds_dbw_msgs.msg import GearCmd, SteeringCmd, SteeringReport, UlcCmd
from integration.conftest import Processes, Ros, free_port
from mcap.reader import make_reader
from nav_msgs.msg import Odometry
from rclpy.duration import Duration
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.highlevel import AnyReader
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Empty

from acres_bridge.msg_profiles import QosSpec, load_profiles
from acres_bridge.tools.bag import BagWriter, McapBagReader, open_bag
from acres_bridge.tools.check_msg_defs import main as check_msg_defs
from acres_bridge.tools.check_topic_parity import main as check_topic_parity
from acres_bridge.tools.qos import Durability, OfferedQos, Reliability, parse_offered_qos

from .conftest import REPO, recorder

pytestmark = pytest.mark.integration

PROFILES = load_profiles()
TIMEOUT_S = 30.0
NS = 1_000_000_000
STEPS_PER_TICK = (2, 3, 2, 3, 2)  # 12 steps per 5 ticks: 50 Hz on the 120 Hz physics clock
WARM_UP_TICKS = 10  # ticks before the drive, while DDS matches the recorder to the bridge (acknowledged)
DRIVE_TICKS = 100  # 2 s of simulation time
COMMANDS = ("/vehicle/enable", "/vehicle/gear/cmd", "/vehicle/steering/cmd", "/vehicle/ulc/cmd")
REPORTS = (
    "/vehicle/steering/report",
    "/vehicle/throttle/report",
    "/vehicle/brake/report",
    "/vehicle/gear/report",
    "/vehicle/ulc/report",
    "/vehicle/vehicle_velocity",
)
NUMBERED_COMMANDS = {
    "/vehicle/gear/cmd": GearCmd,
    "/vehicle/steering/cmd": SteeringCmd,
    "/vehicle/ulc/cmd": UlcCmd,
}
EXPECTED = ("/clock", "/tf", "/vehicle/odom", "/oxts/imu", "/oxts/velocity", "/oxts/fix", *REPORTS, *COMMANDS)


@dataclass(frozen=True)
class Session:
    bag: Path
    steps: int  # the physics steps of the whole session
    sent: dict[str, int]  # commands published per topic, one a tick
    output: str  # what the recorder printed


def commands(tick: int) -> tuple[tuple[str, Any], ...]:
    """The spec's example: enable, low gear, a curvature and a ULC speed, each in base_footprint and
    numbered by its tick in the stamp's nanoseconds (the bridge does not read command stamps)."""
    gear = GearCmd()
    gear.cmd.value = GearCmd().cmd.LOW
    steering = SteeringCmd(cmd=0.02, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True)
    ulc = UlcCmd(cmd=1.5, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)
    for message in (gear, steering, ulc):
        message.header.frame_id = "base_footprint"
        message.header.stamp.nanosec = tick
    return (
        ("/vehicle/enable", Empty()),
        ("/vehicle/gear/cmd", gear),
        ("/vehicle/steering/cmd", steering),
        ("/vehicle/ulc/cmd", ulc),
    )


# Both ends of a command topic keep the whole session's samples: a KEEP_LAST writer that runs ahead
# of a recorder short of CPU drops what the recorder has not acknowledged, and a reader's queue what
# it has not taken. How soon the recorder gets the CPU is the machine's; what it records is not.
SESSION_DEPTH = 10 * (WARM_UP_TICKS + DRIVE_TICKS)


def whole_session(qos: QosSpec | None) -> QoSProfile:
    """A topic's profile QoS (reliable, volatile for the commands) keeping SESSION_DEPTH samples."""
    profile = qos.to_rclpy() if qos else QoSProfile(depth=SESSION_DEPTH)
    profile.depth = SESSION_DEPTH
    return profile


@pytest.fixture(scope="module")
def session(
    module_processes: Processes, module_ros: Ros, tmp_path_factory: pytest.TempPathFactory
) -> Session:
    ros = module_ros
    port = free_port()
    module_processes.simulator(port)
    # Without perception: its LiDAR and camera load makes the bridge's KEEP_LAST writers drop messages
    # of other topics before any subscriber takes them (seen with a plain rclpy subscriber as well).
    module_processes.bridge(port, perception=False)
    publishers = {
        name: ros.node.create_publisher(spec.message_class(), spec.ros_name, whole_session(spec.qos))
        for name, spec in ((n, PROFILES.topic("polaris", n)) for n in COMMANDS)
    }
    for name, publisher in publishers.items():
        ros.wait_until(lambda p=publisher: p.get_subscription_count() > 0, f"the bridge on {name}")
    clocks: list[Clock] = []
    clock_qos = PROFILES.topic("polaris", "/clock").qos.to_rclpy()  # type: ignore[union-attr]
    clock_qos.depth = 5000
    ros.node.create_subscription(Clock, "/clock", clocks.append, clock_qos)

    bag = tmp_path_factory.mktemp("session") / "session.mcap"
    process = recorder(
        "acres_record",
        ["--profile", "polaris", "--topics", *COMMANDS, "--depth", str(SESSION_DEPTH), "-o", str(bag)],
    )
    module_processes.started.append(process)
    for name in EXPECTED:
        process.wait_for_line(f"recording {name} ", TIMEOUT_S)
    for name, publisher in publishers.items():  # the bridge and the recorder
        ros.wait_until(lambda p=publisher: p.get_subscription_count() > 1, f"the recorder on {name}")

    sent = dict.fromkeys(COMMANDS, 0)
    steps = 0
    for tick in range(WARM_UP_TICKS + DRIVE_TICKS):
        for name, message in commands(tick):
            publishers[name].publish(message)
            sent[name] += 1
        if tick == WARM_UP_TICKS - 1:
            # The writers' side of the match came first; a reliable sample is acknowledged only by
            # readers that have matched the writer too, so every command after this one is recorded.
            for publisher in publishers.values():
                assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT_S))
        ros.spin_for(0.002)
        ros.step(STEPS_PER_TICK[tick % len(STEPS_PER_TICK)])
        steps += STEPS_PER_TICK[tick % len(STEPS_PER_TICK)]
    last_ns = steps * NS // 120
    ros.wait_until(lambda: clocks and stamp_ns(clocks[-1]) == last_ns, "the clock of the last step")
    for publisher in publishers.values():
        assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT_S))
    ros.spin_for(0.3)
    assert process.stop() == 0, process.output
    return Session(bag=bag, steps=steps, sent=sent, output=process.output)


def stamp_ns(message: Any) -> int:
    stamp = message.clock if isinstance(message, Clock) else message.header.stamp
    return int(stamp.sec) * NS + int(stamp.nanosec)


def run_tool(module: str, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"acres_bridge.tools.{module}", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_the_recorder_says_what_it_records_and_how_it_stopped(session: Session) -> None:
    assert "recording /clock rosgraph_msgs/msg/Clock (reliable, volatile) from 1 publisher" in session.output
    assert re.search(
        r"stopped by SIGINT after [\d.]+ s: \d+ messages on \d+ topics in .*session\.mcap", session.output
    )


def test_every_step_after_discovery_is_recorded_in_order(session: Session) -> None:
    warm_up_steps = sum(STEPS_PER_TICK[t % len(STEPS_PER_TICK)] for t in range(WARM_UP_TICKS))
    with open_bag(session.bag) as bag:
        clock = [stamp_ns(deserialize_message(m.data, Clock)) for m in bag.messages(["/clock"])]
        odom = list(bag.messages(["/vehicle/odom"]))
        enables = bag.topics()["/vehicle/enable"].message_count
        ticks = {
            name: [stamp_ns(deserialize_message(m.data, kind)) for m in bag.messages([name])]
            for name, kind in NUMBERED_COMMANDS.items()
        }
        all_messages = list(bag.messages())
    steps = [round(ns * 120 / NS) for ns in clock]
    assert steps == list(range(steps[0], session.steps + 1))  # none lost, none twice, the last one there
    assert steps[0] <= warm_up_steps + 1
    # A reader can miss what a writer sent before the reader had discovered it (the writer's side of
    # the match comes first): every command from the first recorded one on, all after the warm-up.
    ticks_sent = session.sent["/vehicle/enable"]
    assert DRIVE_TICKS <= enables <= ticks_sent
    for name, numbers in ticks.items():
        assert numbers == list(range(numbers[0], ticks_sent)), name
        assert numbers[0] <= WARM_UP_TICKS, name
    log_times = [m.log_time_ns for m in all_messages]
    assert log_times == sorted(log_times)
    assert odom
    for message in odom:  # publish_time is the header stamp
        assert message.publish_time_ns == stamp_ns(deserialize_message(message.data, Odometry))


def test_the_recording_matches_the_polaris_table(session: Session) -> None:
    done = run_tool("check_topic_parity", session.bag, "--vehicle", "polaris")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.search(r"^\d+ common topic checks, 0 differences$", lines[-1])
    assert any(
        re.fullmatch(
            r"OK   /oxts/imu\s+sensor_msgs/msg/Imu\s+qos \(1, 2\) / \(1, 2\)  "
            r"frames \['imu_link'\] / \['imu_link'\]",
            x,
        )
        for x in lines
    )
    assert any(
        re.fullmatch(r"OK   /vehicle/brake/report\s+\S+\s+qos \(1, 2\) / \(1, 2\)  frames \[''\] / \[''\]", x)
        for x in lines
    )


def test_the_file_opens_with_the_mcap_reader_and_with_rosbags(session: Session) -> None:
    with session.bag.open("rb") as stream:
        reader = make_reader(stream)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
        assert summary is not None
        assert summary.statistics is not None
        channels = {c.topic: c for c in summary.channels.values()}
        offers = parse_offered_qos(channels["/vehicle/odom"].metadata["offered_qos_profiles"])
        assert [o.pair for o in offers] == [(1, 2)]
        assert summary.schemas[channels["/vehicle/odom"].schema_id].name == "nav_msgs/msg/Odometry"
        total = summary.statistics.message_count
    with McapBagReader(session.bag) as bag:
        (record,) = bag.metadata("rosbag2")
    assert f"message_count: {total}\n" in record["serialized_metadata"]
    with AnyReader([session.bag]) as reader:  # rosbags checks the type hashes and decodes every message
        decoded = [reader.deserialize(raw, c.msgtype) for c, _time, raw in reader.messages()]
    assert len(decoded) == total


def test_every_drive_by_wire_message_round_trips_through_our_definitions(session: Session) -> None:
    done = run_tool("check_msg_defs", session.bag)
    assert done.returncode == 0, done.stdout + done.stderr
    with open_bag(session.bag) as bag:
        expected = sum(
            t.message_count for t in bag.topics().values() if t.type_name.startswith("ds_dbw_msgs/")
        )
    assert expected >= len(REPORTS) * DRIVE_TICKS
    assert done.stdout.splitlines()[-1] == f"MATCH: {expected}/{expected} messages round-trip byte-exactly"


def copy_topics(
    source: Path,
    target: Path,
    names: Sequence[str],
    change: Any = None,
    offers: Mapping[str, Sequence[OfferedQos]] | None = None,
) -> Path:
    """Some topics of a bag into a new bag; `change(topic, index, data)` may replace a message's bytes
    and `offers` the offered QoS of a topic."""
    with open_bag(source) as bag, BagWriter(target) as writer:
        topics = bag.topics()
        counts: dict[str, int] = {}
        for name in names:
            offered = (offers or {}).get(name, topics[name].offered_qos)
            writer.add_topic(name, topics[name].type_name, offered_qos=offered)
        for message in bag.messages(names):
            index = counts[message.topic] = counts.get(message.topic, -1) + 1
            data = change(message.topic, index, message.data) if change else message.data
            writer.write(message.topic, data, log_time_ns=message.log_time_ns)
    return target


def test_a_corrupted_report_of_the_session_is_caught(
    session: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def corrupt(topic: str, index: int, data: bytes) -> bytes:
        if topic != "/vehicle/steering/report" or index != 5:
            return data
        report = deserialize_message(data, SteeringReport)
        offset = 4 + 8 + 4 + len(report.header.frame_id) + 1  # after the header ...
        offset += -(offset - 4) % 4 + 12 + 1  # ... three float32 and cmd_type: limiting_value
        changed = bytearray(data)
        changed[offset] = 0x07
        return bytes(changed)

    bag = copy_topics(
        session.bag, tmp_path / "corrupted.mcap", ["/vehicle/steering/report", "/vehicle/ulc/report"], corrupt
    )
    assert check_msg_defs([str(bag)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(
        r"MISMATCH /vehicle/steering/report #5 ds_dbw_msgs/msg/SteeringReport at byte \d+: "
        r"the bag has 07, ours 01 .*",
        lines[-2],
    )
    assert re.fullmatch(r"MISMATCH: (\d+)/(\d+) messages round-trip byte-exactly", lines[-1])


def test_a_vehicle_bag_with_another_qos_and_frame_is_reported_and_the_allow_file_silences_it(
    session: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def reframe(topic: str, _index: int, data: bytes) -> bytes:
        if topic != "/vehicle/odom":
            return data
        odom = deserialize_message(data, Odometry)
        odom.header.frame_id = "map"
        return serialize_message(odom)

    best_effort = OfferedQos(reliability=Reliability.BEST_EFFORT, durability=Durability.VOLATILE)
    vehicle = copy_topics(
        session.bag,
        tmp_path / "vehicle.mcap",
        ["/vehicle/odom", "/oxts/imu"],
        reframe,
        {"/oxts/imu": [best_effort]},
    )
    assert check_topic_parity([str(session.bag), str(vehicle)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(
        x.startswith("DIFF /vehicle/odom") and x.endswith("frames ['utm'] / ['map']  differs: frames")
        for x in lines
    )
    assert any(x.startswith("DIFF /oxts/imu") and "qos (1, 2) / (2, 2)" in x for x in lines)
    allow = tmp_path / "allow.yaml"
    allow.write_text(
        "allow:\n"
        "  - {topic: /vehicle/odom, check: frames, reason: the vehicle's odometry is in map}\n"
        "  - {topic: /oxts/imu, check: qos, reason: the vehicle's driver publishes best effort}\n"
    )
    assert check_topic_parity([str(session.bag), str(vehicle), "--allow", str(allow)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 allowed, 0 unexpected"
