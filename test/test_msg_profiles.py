"""msg_profiles holds every row of the spec's topic tables, and bad files give clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rclpy.qos import DurabilityPolicy, HistoryPolicy, ReliabilityPolicy

from acres_bridge.errors import ProfileError
from acres_bridge.msg_profiles import Direction, MsgProfiles, RateKind, load_profiles

PROFILE_DIR = Path(__file__).resolve().parent.parent / "msg_profiles"

# Rows per table of the spec: Polaris 26, Maxxum 24, Episode Clock 1, episode log 8, other nodes 7.
EXPECTED_ROWS = {"polaris": 26, "maxxum": 24, "session": 1, "episode_log": 8, "other_nodes": 7}

V, TF, ST, LA, CAN = "vehicle", "tf", "static", "latched", "can"
INLINE = "inline"

# (name, type, direction, rate, qos profile, frame), transcribed from the spec's tables.
POLARIS = [
    ("/clock", "rosgraph_msgs/msg/Clock", "publish", 120, V, None),
    ("/tf", "tf2_msgs/msg/TFMessage", "publish", 100, TF, "utm"),
    ("/tf_static", "tf2_msgs/msg/TFMessage", "publish", "once", ST, None),
    ("/vehicle/odom", "nav_msgs/msg/Odometry", "publish", 100, V, "utm"),
    ("/oxts/imu", "sensor_msgs/msg/Imu", "publish", 100, V, "imu_link"),
    ("/oxts/velocity", "geometry_msgs/msg/TwistStamped", "publish", 100, V, "oxts_link"),
    ("/oxts/fix", "sensor_msgs/msg/NavSatFix", "publish", 100, V, "navsat_link"),
    ("/sim/ground_truth/odom", "nav_msgs/msg/Odometry", "publish", 100, V, "utm"),
    ("/lidar/points", "sensor_msgs/msg/PointCloud2", "publish", 10, V, "lidar"),
    ("/camera/image_raw", "sensor_msgs/msg/Image", "publish", 10, V, "reolink_camera_optical"),
    ("/camera/camera_info", "sensor_msgs/msg/CameraInfo", "publish", 10, V, "reolink_camera_optical"),
    ("/vehicle/steering/report", "ds_dbw_msgs/msg/SteeringReport", "publish", 50, V, None),
    ("/vehicle/throttle/report", "ds_dbw_msgs/msg/ThrottleReport", "publish", 50, V, None),
    ("/vehicle/brake/report", "ds_dbw_msgs/msg/BrakeReport", "publish", 50, V, None),
    ("/vehicle/gear/report", "ds_dbw_msgs/msg/GearReport", "publish", 50, V, None),
    ("/vehicle/ulc/report", "ds_dbw_msgs/msg/UlcReport", "publish", 50, V, None),
    ("/vehicle/vehicle_velocity", "ds_dbw_msgs/msg/VehicleVelocity", "publish", 50, V, None),
    ("/vehicle/dbw_enabled", "std_msgs/msg/Bool", "publish", 50, V, None),
    ("/vehicle/steering/cmd", "ds_dbw_msgs/msg/SteeringCmd", "subscribe", None, V, None),
    ("/vehicle/throttle/cmd", "ds_dbw_msgs/msg/ThrottleCmd", "subscribe", None, V, None),
    ("/vehicle/brake/cmd", "ds_dbw_msgs/msg/BrakeCmd", "subscribe", None, V, None),
    ("/vehicle/gear/cmd", "ds_dbw_msgs/msg/GearCmd", "subscribe", None, V, None),
    ("/vehicle/ulc/cmd", "ds_dbw_msgs/msg/UlcCmd", "subscribe", None, V, None),
    ("/vehicle/enable", "std_msgs/msg/Empty", "subscribe", None, V, None),
    ("/vehicle/disable", "std_msgs/msg/Empty", "subscribe", None, V, None),
    ("/sim/reset", "geometry_msgs/msg/PoseStamped", "subscribe", None, V, "utm"),
]
MAXXUM = [
    ("/clock", "rosgraph_msgs/msg/Clock", "publish", 120, V, None),
    ("/tf", "tf2_msgs/msg/TFMessage", "publish", 100, TF, "utm"),
    ("/tf_static", "tf2_msgs/msg/TFMessage", "publish", "once", ST, None),
    ("odom", "nav_msgs/msg/Odometry", "publish", 100, V, "utm"),
    ("ground_truth/odom", "nav_msgs/msg/Odometry", "publish", 100, V, "utm"),
    ("imu/data", "sensor_msgs/msg/Imu", "publish", 100, V, "imu_link"),
    ("gnss/fix", "sensor_msgs/msg/NavSatFix", "publish", 100, V, "gnss_link"),
    ("lidar/points", "sensor_msgs/msg/PointCloud2", "publish", 10, V, "lidar"),
    ("camera/image_raw", "sensor_msgs/msg/Image", "publish", 10, V, "camera_optical"),
    ("camera/camera_info", "sensor_msgs/msg/CameraInfo", "publish", 10, V, "camera_optical"),
    ("engine_rpm", "std_msgs/msg/Float32", "publish", 10, V, None),
    ("steering_angle", "std_msgs/msg/Float32", "publish", 10, V, None),
    ("implement/state", "std_msgs/msg/String", "publish", 10, V, None),
    ("can/rx", "can_msgs/msg/Frame", "publish", 130, CAN, "can"),
    ("cmd_vel", "geometry_msgs/msg/Twist", "subscribe", None, V, None),
    ("guidance/curvature_cmd", "std_msgs/msg/Float32", "subscribe", None, V, None),
    ("speed_cmd", "std_msgs/msg/Float32", "subscribe", None, V, None),
    ("hitch/lever_cmd", "std_msgs/msg/Float32", "subscribe", None, V, None),
    ("hitch/raise_cmd", "std_msgs/msg/Bool", "subscribe", None, V, None),
    ("pto/cmd", "std_msgs/msg/Bool", "subscribe", None, V, None),
    ("hand_throttle_cmd", "std_msgs/msg/Float32", "subscribe", None, V, None),
    ("implement/cmd", "std_msgs/msg/String", "subscribe", None, V, None),
    ("sim/reset", "geometry_msgs/msg/PoseStamped", "subscribe", None, V, "utm"),
    ("can/tx", "can_msgs/msg/Frame", "subscribe", None, CAN, "can"),
]
SESSION = [("/sim/episode", "acres_interfaces/msg/Episode", "publish", "on_change", LA, None)]
EPISODE_LOG = [
    ("/sim/episode", "acres_interfaces/msg/Episode", "file_and_topic", "on_change", LA, None),
    ("/sim/agents", "acres_interfaces/msg/Agents", "file", "per_episode", None, None),
    ("/sim/agent_states", "acres_interfaces/msg/AgentStates", "file", 120, None, "world"),
    ("/sim/farm_stamps", "acres_interfaces/msg/FarmStamps", "file", "steps_with_contacts", None, "world"),
    ("/sim/farm_events", "acres_interfaces/msg/FarmEvents", "file", "steps_with_events", None, "world"),
    ("/sim/conditions", "acres_interfaces/msg/Conditions", "file", "on_change_and_1hz", None, None),
    ("/sim/shifts", "acres_interfaces/msg/VehicleShifts", "file", "on_change", None, None),
    ("/sim/task", "acres_interfaces/msg/TaskStatus", "file", "by_task", None, None),
]
OTHER_NODES = [
    ("/robot_description", "std_msgs/msg/String", "publish", "once", LA, None),
    ("/tf_static", "tf2_msgs/msg/TFMessage", "publish", "once", ST, None),
    ("/vehicle/odom/path", "nav_msgs/msg/Path", "publish", 100, INLINE, "odom_origin"),
    ("/Demo/route", "nav_msgs/msg/Path", "publish", "once", LA, "demo_route_origin"),
    ("/Demo/status", "std_msgs/msg/String", "publish", 50, INLINE, None),
    ("/safety_stop", "std_msgs/msg/Bool", "publish", 20, INLINE, None),
    ("/obstacle_speed_limit_mps", "std_msgs/msg/Float32", "publish", 20, INLINE, None),
]
SPEC_TABLES = {
    "polaris": POLARIS,
    "maxxum": MAXXUM,
    "session": SESSION,
    "episode_log": EPISODE_LOG,
    "other_nodes": OTHER_NODES,
}

# The five profiles of the spec: (reliability, durability, history, depth).
SPEC_QOS = {
    "vehicle": ("reliable", "volatile", "keep_last", 10),
    "tf": ("reliable", "volatile", "keep_last", 100),
    "static": ("reliable", "transient_local", "keep_last", 1),
    "latched": ("reliable", "transient_local", "keep_last", 1),
    "can": ("reliable", "volatile", "keep_last", 500),
}


@pytest.fixture(scope="module")
def profiles() -> MsgProfiles:
    return load_profiles(PROFILE_DIR)


def test_transcription_matches_the_expected_counts() -> None:
    assert {table: len(rows) for table, rows in SPEC_TABLES.items()} == EXPECTED_ROWS


@pytest.mark.parametrize("table", sorted(EXPECTED_ROWS))
def test_table_has_every_row_of_the_spec(profiles: MsgProfiles, table: str) -> None:
    rows = profiles.table(table)
    assert len(rows) == EXPECTED_ROWS[table]
    got = []
    for spec in rows:
        if spec.rate_kind is RateKind.PERIODIC:
            rate: object = int(spec.rate_hz) if spec.rate_hz is not None else None
        elif spec.rate_kind is RateKind.NONE:
            rate = None
        else:
            rate = spec.rate_kind.value
        got.append(
            (
                spec.name,
                spec.type_name,
                spec.direction.value,
                rate,
                spec.qos.name if spec.qos else None,
                spec.frame,
            )
        )
    assert got == SPEC_TABLES[table]


def test_named_qos_profiles_are_the_spec_profiles(profiles: MsgProfiles) -> None:
    got = {
        name: (spec.reliability, spec.durability, spec.history, spec.depth)
        for name, spec in profiles.qos_profiles.items()
    }
    assert got == SPEC_QOS


def test_inline_qos_of_the_other_nodes_is_reliable_depth_10(profiles: MsgProfiles) -> None:
    path = profiles.topic("other_nodes", "/vehicle/odom/path")
    assert path.qos is not None
    assert (path.qos.reliability, path.qos.durability, path.qos.depth) == ("reliable", "volatile", 10)


def test_can_rx_comes_in_bursts_of_13(profiles: MsgProfiles) -> None:
    rx = profiles.topic("maxxum", "can/rx")
    assert (rx.rate_hz, rx.burst) == (130.0, 13)


def test_qos_converts_to_rclpy(profiles: MsgProfiles) -> None:
    latched = profiles.qos("latched").to_rclpy()
    assert latched.reliability == ReliabilityPolicy.RELIABLE
    assert latched.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert latched.history == HistoryPolicy.KEEP_LAST
    assert latched.depth == 1
    assert profiles.qos("can").to_rclpy().depth == 500
    assert profiles.qos("tf").pair == (1, 2)
    assert profiles.qos("static").pair == (1, 1)


def test_every_type_resolves_to_its_message_class(profiles: MsgProfiles) -> None:
    for spec in profiles:
        cls = spec.message_class()
        package, _, name = spec.type_name.split("/")
        assert cls.__name__ == name
        assert cls.__module__.startswith(f"{package}.msg")


def test_lookup_errors_name_what_exists(profiles: MsgProfiles) -> None:
    with pytest.raises(KeyError, match="no msg_profiles table 'tractor'"):
        profiles.table("tractor")
    with pytest.raises(KeyError, match="has no topic '/vehicle/odometry'"):
        profiles.topic("polaris", "/vehicle/odometry")
    assert profiles.topic("polaris", "/vehicle/odom").direction is Direction.PUBLISH


# ---- bad files -------------------------------------------------------------------------------


@pytest.fixture
def profile_copy(tmp_path: Path) -> Path:
    target = tmp_path / "msg_profiles"
    shutil.copytree(PROFILE_DIR, target)
    return target


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        pytest.param(
            "polaris.yaml",
            "type: nav_msgs/msg/Odometry, direction: publish, rate: 100, qos: vehicle, frame: utm}",
            "type: nav_msgs/msg/Odometry, direction: publish, rate: 100, qos: vehicl, frame: utm}",
            r"polaris\.yaml, row 4 \(/vehicle/odom\): unknown QoS profile 'vehicl'; known: can, latched",
            id="unknown-profile",
        ),
        pytest.param(
            "maxxum.yaml",
            "type: std_msgs/msg/Float32, direction: publish",
            "type: std_msgs/msg/Float33, direction: publish",
            r"maxxum\.yaml, row 11 \(engine_rpm\): unknown type 'std_msgs/msg/Float33'",
            id="unknown-type",
        ),
        pytest.param(
            "maxxum.yaml",
            "type: nav_msgs/msg/Odometry, direction: publish, rate: 100, qos: vehicle, frame: utm}",
            "type: nav_msgs.Odometry, direction: publish, rate: 100, qos: vehicle, frame: utm}",
            r"maxxum\.yaml, row 4 \(odom\): type must look like package/msg/Name, found 'nav_msgs\.Odometry'",
            id="malformed-type",
        ),
        pytest.param(
            "polaris.yaml",
            "name: /oxts/fix,",
            "name: /oxts/imu,",
            r"polaris\.yaml, row 7 \(/oxts/imu\): duplicate topic, first given in row 5",
            id="duplicate-topic",
        ),
        pytest.param(
            "session.yaml",
            "direction: publish",
            "direction: publishes",
            r"session\.yaml, row 1 \(/sim/episode\): direction must be one of publish, subscribe",
            id="bad-direction",
        ),
        pytest.param(
            "polaris.yaml",
            "rate: 120",
            "rate: -120",
            r"polaris\.yaml, row 1 \(/clock\): rate must be a positive frequency in Hz, found -120",
            id="negative-rate",
        ),
        pytest.param(
            "polaris.yaml",
            "direction: subscribe, rate: null",
            "direction: subscribe, rate: 20",
            r"polaris\.yaml, row 19 \(/vehicle/steering/cmd\): a subscription has no rate",
            id="rate-on-subscription",
        ),
        pytest.param(
            "qos.yaml",
            "depth: 500",
            "depth: many",
            r"qos\.yaml: QoS 'can' depth must be a positive integer, found 'many'",
            id="bad-depth",
        ),
        pytest.param(
            "qos.yaml",
            "reliability: reliable",
            "reliability: always",
            r"qos\.yaml: QoS 'vehicle' reliability must be one of reliable, best_effort; found 'always'",
            id="bad-reliability",
        ),
        pytest.param(
            "other_nodes.yaml",
            "node: lab_stubs}",
            "node: lab_stubs, colour: red}",
            r"other_nodes\.yaml, row 6 \(/safety_stop\): unknown keys \['colour'\]",
            id="unknown-key",
        ),
        pytest.param(
            "polaris.yaml",
            "topics:",
            "topics: [",
            r"polaris\.yaml: not valid YAML",
            id="not-yaml",
        ),
    ],
)
def test_bad_profile_file_is_refused_with_file_and_row(
    profile_copy: Path, file: str, old: str, new: str, message: str
) -> None:
    _replace(profile_copy / file, old, new)
    with pytest.raises(ProfileError, match=message):
        load_profiles(profile_copy)


def test_missing_qos_file_is_named(profile_copy: Path) -> None:
    (profile_copy / "qos.yaml").unlink()
    with pytest.raises(ProfileError, match=r"qos\.yaml: file not found"):
        load_profiles(profile_copy)


def test_table_defined_twice_is_refused(profile_copy: Path) -> None:
    shutil.copy(profile_copy / "session.yaml", profile_copy / "session_again.yaml")
    with pytest.raises(ProfileError, match="table 'session' is defined twice"):
        load_profiles(profile_copy)
