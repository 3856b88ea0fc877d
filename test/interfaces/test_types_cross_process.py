"""Every message type the bridge uses imports, and crosses a process boundary over Fast DDS intact.

The test process publishes one message of each type (transient local, so the late subscriber still gets
it); echo_types.py, started as a separate process, subscribes to all of them and reports a digest of each
message it receives. A type that does not import, does not match or does not arrive, and a message whose
content changes on the way, fails the test.
"""

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message

pytestmark = pytest.mark.integration

ECHO_SCRIPT = Path(__file__).with_name("echo_types.py")
ECHO_TIMEOUT_S = 60.0

STD_TYPES = [
    "rosgraph_msgs/msg/Clock",
    "tf2_msgs/msg/TFMessage",
    "nav_msgs/msg/Odometry",
    "nav_msgs/msg/Path",
    "sensor_msgs/msg/Imu",
    "sensor_msgs/msg/NavSatFix",
    "sensor_msgs/msg/PointCloud2",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CameraInfo",
    "geometry_msgs/msg/TwistStamped",
    "geometry_msgs/msg/Twist",
    "geometry_msgs/msg/PoseStamped",
    "std_msgs/msg/Bool",
    "std_msgs/msg/Empty",
    "std_msgs/msg/Float32",
    "std_msgs/msg/String",
    "can_msgs/msg/Frame",
]
DBW_NAMES = ["SteeringReport", "ThrottleReport", "BrakeReport", "GearReport", "UlcReport", "VehicleVelocity"]
DBW_NAMES += ["SteeringCmd", "ThrottleCmd", "BrakeCmd", "GearCmd", "UlcCmd"]
ACRES_NAMES = ["Episode", "Agents", "AgentStates", "FarmStamps", "FarmEvents", "Conditions", "VehicleShifts"]
ACRES_NAMES += ["TaskStatus", "FieldState"]
TYPES = (
    STD_TYPES
    + [f"ds_dbw_msgs/msg/{name}" for name in DBW_NAMES]
    + [f"acres_interfaces/msg/{name}" for name in ACRES_NAMES]
)
EMPTY_TYPES = {"std_msgs/msg/Empty"}  # no field to fill


def _load_echo() -> ModuleType:
    spec = spec_from_file_location("acres_test_echo_types", ECHO_SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


echo = _load_echo()


def make(type_name: str, values: dict[str, Any] | None = None) -> Any:
    """A message of type_name with each dotted field path in values set."""
    msg = echo.import_type(type_name)()
    for path, value in (values or {}).items():
        *parents, leaf = path.split(".")
        target = msg
        for part in parents:
            target = getattr(target, part)
        setattr(target, leaf, value)
    return msg


def header(frame_id: str, sec: int) -> dict[str, Any]:
    return {"header.stamp.sec": sec, "header.stamp.nanosec": 1000 * sec + 7, "header.frame_id": frame_id}


def build_messages() -> dict[str, Any]:
    """One message per type in TYPES, each with non-default content (float32 values exact in binary)."""
    geo, dbw, acres = "geometry_msgs/msg/", "ds_dbw_msgs/msg/", "acres_interfaces/msg/"
    poses = [
        make(
            f"{geo}PoseStamped",
            {**header("map", 10 + i), "pose.position.x": 1.5 * i, "pose.orientation.w": 1.0},
        )
        for i in range(1, 3)
    ]
    point = {"position.x": 12.5, "position.y": -7.25, "position.z": 0.5}
    messages = {
        "rosgraph_msgs/msg/Clock": make(
            "rosgraph_msgs/msg/Clock", {"clock.sec": 137, "clock.nanosec": 183_300_000}
        ),
        "tf2_msgs/msg/TFMessage": make(
            "tf2_msgs/msg/TFMessage",
            {
                "transforms": [
                    make(
                        f"{geo}TransformStamped",
                        {
                            **header("odom", 1),
                            "child_frame_id": "base_footprint",
                            "transform.translation.x": 3.25,
                            "transform.rotation.w": 1.0,
                        },
                    )
                ]
            },
        ),
        "nav_msgs/msg/Odometry": make(
            "nav_msgs/msg/Odometry",
            {
                **header("utm", 2),
                "child_frame_id": "base_footprint",
                "pose.pose.position.x": 612_345.5,
                "pose.covariance": [0.25 * i for i in range(36)],
                "twist.twist.linear.x": 1.25,
            },
        ),
        "nav_msgs/msg/Path": make("nav_msgs/msg/Path", {**header("map", 3), "poses": poses}),
        "sensor_msgs/msg/Imu": make(
            "sensor_msgs/msg/Imu",
            {
                **header("imu_link", 4),
                "orientation.w": 1.0,
                "angular_velocity.z": 0.125,
                "linear_acceleration.z": -9.75,
                "orientation_covariance": [0.5] * 9,
            },
        ),
        "sensor_msgs/msg/NavSatFix": make(
            "sensor_msgs/msg/NavSatFix",
            {
                **header("gnss", 5),
                "status.status": 2,
                "status.service": 1,
                "latitude": 40.0625,
                "longitude": -88.1875,
                "altitude": 220.5,
                "position_covariance_type": 2,
            },
        ),
        "sensor_msgs/msg/PointCloud2": make(
            "sensor_msgs/msg/PointCloud2",
            {
                **header("lidar", 6),
                "height": 1,
                "width": 2,
                "fields": [
                    make("sensor_msgs/msg/PointField", {"name": "x", "offset": 0, "datatype": 7, "count": 1})
                ],
                "point_step": 4,
                "row_step": 8,
                "data": bytes([0, 0, 128, 63, 0, 0, 0, 64]),
                "is_dense": True,
            },
        ),
        "sensor_msgs/msg/Image": make(
            "sensor_msgs/msg/Image",
            {
                **header("camera", 7),
                "height": 2,
                "width": 3,
                "encoding": "mono8",
                "step": 3,
                "data": bytes(range(1, 7)),
            },
        ),
        "sensor_msgs/msg/CameraInfo": make(
            "sensor_msgs/msg/CameraInfo",
            {
                **header("camera_optical", 8),
                "height": 512,
                "width": 896,
                "distortion_model": "plumb_bob",
                "d": [-0.5, 0.375, 0.0, 0.0, -0.125],
                "k": [600.0, 0.0, 440.5, 0.0, 592.25, 270.75, 0.0, 0.0, 1.0],
            },
        ),
        "geometry_msgs/msg/TwistStamped": make(
            f"{geo}TwistStamped", {**header("base_link", 9), "twist.linear.x": 2.5, "twist.angular.z": -0.25}
        ),
        "geometry_msgs/msg/Twist": make(f"{geo}Twist", {"linear.x": 0.75, "angular.z": 0.0625}),
        "geometry_msgs/msg/PoseStamped": poses[0],
        "std_msgs/msg/Bool": make("std_msgs/msg/Bool", {"data": True}),
        "std_msgs/msg/Empty": make("std_msgs/msg/Empty"),
        "std_msgs/msg/Float32": make("std_msgs/msg/Float32", {"data": 3.25}),
        "std_msgs/msg/String": make("std_msgs/msg/String", {"data": "1FTFW1E50PFA00001"}),
        "can_msgs/msg/Frame": make(
            "can_msgs/msg/Frame",
            {
                **header("can0", 11),
                "id": 0x18FF_1234,
                "is_extended": True,
                "dlc": 8,
                "data": list(range(1, 9)),
            },
        ),
    }
    dbw_values: dict[str, dict[str, Any]] = {
        "SteeringReport": {"steering_wheel_angle": 45.5, "cmd_type": 2, "enabled": True, "cmd_src.value": 1},
        "ThrottleReport": {"percent_input": 5.5, "percent_output": 12.25, "ready": True, "cmd_src.value": 2},
        "BrakeReport": {"pressure_output": 20.5, "brake_available_partial_inf.value": 3, "timeout": True},
        "GearReport": {"gear.value": 4, "cmd.value": 5, "reject.value": 6, "gear_manual.value": 7},
        "UlcReport": {"cmd_type": 1, "vel_ref": 1.5, "vel_meas": 1.375, "enabled": True},
        "VehicleVelocity": {
            "vehicle_velocity_brake": 4.5,
            "vehicle_velocity_propulsion": 4.625,
            "dir_src": 2,
        },
        "SteeringCmd": {"cmd": 0.0625, "cmd_type": 3, "enable": True},
        "ThrottleCmd": {"cmd": 30.5, "cmd_type": 14, "enable": True},
        "BrakeCmd": {"cmd": 15.5, "cmd_type": 1, "enable": True, "precharge_aeb": 2},
        "GearCmd": {"cmd.value": 5, "cmd_manual.value": 3, "return_to_park": True},
        "UlcCmd": {"cmd": 1.5, "limit_accel": 0.75, "cmd_type": 1, "enable": True, "coast_decel": True},
    }
    for index, (name, values) in enumerate(dbw_values.items()):
        messages[f"{dbw}{name}"] = make(f"{dbw}{name}", {**header(f"dbw_{name}", 20 + index), **values})

    agent_info = {"name": "agent 0", "index": 0, "vehicle": "polaris", "implement": "none", "mass_kg": 1100.5}
    agent_state = {
        "name": "agent 0",
        "pose.position.x": 1.5,
        "twist.linear.x": 2.25,
        "gear": 4,
        "dbw_enabled": True,
        "energy": make(f"{acres}EnergyLedger", {"fuel_used_l": 0.125, "engine_work_j": 5000.5}),
    }
    shift = {"agent": "agent 0", "mass_offset_kg": 50.5, "lidar_mount_offset.translation.z": 0.0625}
    messages |= {
        f"{acres}Episode": make(
            f"{acres}Episode",
            {
                **header("", 40),
                "episode_id": "20261002T072309-0000",
                "episode": 3,
                "reset_epoch": 2,
                "step": 1200,
                "episode_time_s": 10.0,
                "state": 1,
                "lockstep": True,
                "seed": 42,
                "source": "core",
                "map": "V03ACRE",
                "agents": ["agent 0", "agent 1"],
            },
        ),
        f"{acres}Agents": make(
            f"{acres}Agents",
            {**header("", 41), "episode_id": "ep-1", "agents": [make(f"{acres}AgentInfo", agent_info)]},
        ),
        f"{acres}AgentStates": make(
            f"{acres}AgentStates",
            {**header("world", 42), "step": 77, "agents": [make(f"{acres}AgentState", agent_state)]},
        ),
        f"{acres}FarmStamps": make(
            f"{acres}FarmStamps",
            {
                **header("world", 43),
                "step": 78,
                "stamps": [
                    make(f"{acres}FarmStamp", {"agent": "agent 0", "part": 2, "sinkage_m": 0.03125, **point})
                ],
            },
        ),
        f"{acres}FarmEvents": make(
            f"{acres}FarmEvents",
            {
                **header("world", 44),
                "step": 79,
                "events": [
                    make(f"{acres}FarmEvent", {"kind": 3, "agent": "agent 0", "unit": "kg/m^3", **point})
                ],
            },
        ),
        f"{acres}Conditions": make(
            f"{acres}Conditions",
            {
                **header("", 45),
                "local_time.sec": 1_790_000_000,
                "air_temperature_c": 18.5,
                "soil_water_pct": 27.25,
            },
        ),
        f"{acres}VehicleShifts": make(
            f"{acres}VehicleShifts", {**header("", 46), "shifts": [make(f"{acres}VehicleShift", shift)]}
        ),
        f"{acres}TaskStatus": make(
            f"{acres}TaskStatus",
            {
                **header("", 47),
                "task": "follow_path",
                "agent": "agent 0",
                "status": 1,
                "progress": 0.5,
                "reward": 1.25,
                "reward_term_names": ["progress", "effort"],
                "reward_terms": [1.5, -0.25],
                "message": "running",
            },
        ),
        f"{acres}FieldState": make(
            f"{acres}FieldState",
            {
                **header("world", 48),
                "origin_x_m": -100.5,
                "resolution_m": 0.5,
                "rows": 2,
                "columns": 2,
                "crop_height_m": [0.5, 0.75, 1.0, 1.25],
                "rut_depth_m": [0.0, 0.125, 0.0, 0.0625],
            },
        ),
    }
    return messages


@pytest.fixture
def ros_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep DDS discovery on this host, for this process and the processes it starts."""
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.fixture
def node(ros_env: None) -> Iterator[Node]:
    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("acres_test_types_publisher", context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.fixture
def start_echo(ros_env: None) -> Iterator[Callable[[list[str]], subprocess.Popen[str]]]:
    """Starts echo_types.py; whatever is still running at teardown is terminated, then killed."""
    processes: list[subprocess.Popen[str]] = []

    def start(types: list[str]) -> subprocess.Popen[str]:
        command = [sys.executable, str(ECHO_SCRIPT), "--timeout", str(ECHO_TIMEOUT_S), *types]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ
        )
        processes.append(process)
        return process

    try:
        yield start
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def received_form(msg: Any) -> tuple[str, int]:
    """(digest, CDR length) that a receiver must report: the message after its own CDR round trip."""
    data = serialize_message(msg)
    return echo.digest(deserialize_message(data, type(msg))), len(data)


@pytest.mark.parametrize("type_name", TYPES)
def test_type_imports(type_name: str) -> None:
    assert echo.import_type(type_name).__name__ == type_name.rsplit("/", 1)[1]


def test_test_messages_are_complete_and_non_default() -> None:
    messages = build_messages()
    assert sorted(messages) == sorted(TYPES)
    defaults = [t for t, msg in messages.items() if t not in EMPTY_TYPES and msg == type(msg)()]
    assert not defaults, f"messages left at their defaults: {defaults}"
    assert len({echo.digest(msg) for msg in messages.values()}) == len(messages)


def test_digest_sees_nested_and_array_changes() -> None:
    messages = build_messages()
    changes: list[tuple[str, Callable[[Any], None]]] = [
        ("acres_interfaces/msg/AgentStates", lambda m: setattr(m.agents[0].energy, "engine_work_j", 5000.25)),
        ("acres_interfaces/msg/FieldState", lambda m: m.crop_height_m.__setitem__(3, 1.5)),
        ("can_msgs/msg/Frame", lambda m: m.data.__setitem__(7, 9)),
        ("sensor_msgs/msg/Image", lambda m: setattr(m, "data", bytes(range(2, 8)))),
        ("ds_dbw_msgs/msg/GearCmd", lambda m: setattr(m.cmd, "value", 4)),
        ("std_msgs/msg/String", lambda m: setattr(m, "data", "1FTFW1E50PFA00002")),
    ]
    for type_name, change in changes:
        msg = messages[type_name]
        before = echo.digest(msg)
        change(msg)
        assert echo.digest(msg) != before, type_name


def test_every_type_reaches_another_process(
    node: Node, start_echo: Callable[..., subprocess.Popen[str]]
) -> None:
    messages = build_messages()
    expected = {type_name: received_form(msg) for type_name, msg in messages.items()}
    for type_name, msg in messages.items():
        node.create_publisher(type(msg), echo.topic_for(type_name), echo.QOS).publish(msg)

    process = start_echo(TYPES)
    try:
        out, err = process.communicate(timeout=ECHO_TIMEOUT_S + 30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"echo_types.py did not finish in time\nstdout:\n{out}\nstderr:\n{err}")

    reports = [json.loads(line) for line in out.splitlines() if line.strip()]
    received = {r["type"]: (r["sha256"], r["cdr_len"]) for r in reports}
    missing = [t for t in TYPES if t not in received]
    assert not missing, f"not received by the other process: {missing}\nstderr:\n{err}"
    changed = [t for t in TYPES if received[t] != expected[t]]
    assert not changed, f"content differs after crossing processes: {changed}"
    assert len(reports) == len(TYPES), f"unexpected reports: {out}"
    assert process.returncode == 0, err
