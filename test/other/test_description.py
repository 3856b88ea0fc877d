"""The Polaris description from the simulator's rig: URDF text and static transforms."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from builtin_interfaces.msg import Time

from acres_bridge.convert.frame_names import frame_names
from acres_bridge.convert.ins import quaternion_multiply
from acres_bridge.other.description import check_rig, static_transforms, tf_mounts, urdf
from acres_bridge.wire.messages import SensorMount
from acres_sim.vehicles.params import PolarisParams
from acres_sim.world.model import World
from acres_sim.world.wire import sensor_meta

RIG_FRAMES = {"lidar", "reolink_camera", "reolink_camera_optical", "imu_link"}


@pytest.fixture(scope="module")
def rig() -> tuple[SensorMount, ...]:
    """The rig exactly as the simulator sends it in SENSOR_META."""
    world = World(seed=42, start_utc=datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC))
    return sensor_meta(world, 0).sensors


def rotate(q: tuple[float, float, float, float], v: tuple[float, float, float]) -> tuple[float, ...]:
    conjugate = (-q[0], -q[1], -q[2], q[3])
    return quaternion_multiply(quaternion_multiply(q, (*v, 0.0)), conjugate)[:3]


def test_the_urdf_is_well_formed_with_base_footprint_as_root(rig: tuple[SensorMount, ...]) -> None:
    robot = ET.fromstring(urdf(rig))
    assert robot.tag == "robot"
    assert robot.get("name") == "polaris"
    links = {link.get("name") for link in robot.findall("link")}
    assert links == {"base_footprint", *RIG_FRAMES}
    joints = robot.findall("joint")
    children = {joint.find("child").get("link") for joint in joints}  # type: ignore[union-attr]
    assert children == RIG_FRAMES
    assert all(joint.get("type") == "fixed" for joint in joints)
    roots = links - children
    assert roots == {"base_footprint"}


def test_the_urdf_joints_are_the_mount_poses(rig: tuple[SensorMount, ...]) -> None:
    robot = ET.fromstring(urdf(rig))
    mounts = {m.frame: m for m in PolarisParams().mounts}
    for joint in robot.findall("joint"):
        child = joint.find("child").get("link")  # type: ignore[union-attr]
        parent = joint.find("parent").get("link")  # type: ignore[union-attr]
        origin = joint.find("origin")
        assert origin is not None
        xyz = tuple(float(v) for v in origin.get("xyz", "").split())
        rpy = tuple(float(v) for v in origin.get("rpy", "").split())
        mount = mounts[child]  # type: ignore[index]
        assert parent == mount.parent
        assert xyz == mount.translation  # exact: the text reads back as the same floats
        assert rpy == (mount.roll, mount.pitch, mount.yaw)
    camera = next(j for j in robot.findall("joint") if j.find("child").get("link") == "reolink_camera")  # type: ignore[union-attr]
    assert camera.find("origin").get("xyz") == "2.745 0.606 1.887"  # type: ignore[union-attr]


def test_static_transforms_are_the_spec_frames_and_equal_the_mounts(rig: tuple[SensorMount, ...]) -> None:
    transforms = static_transforms(rig, frames=frame_names(vehicle="polaris"), stamp=Time(sec=5))
    pairs = [(t.header.frame_id, t.child_frame_id) for t in transforms]
    assert sorted(pairs) == [
        ("base_footprint", "lidar"),
        ("base_footprint", "reolink_camera"),
        ("reolink_camera", "reolink_camera_optical"),
    ]
    mounts = {m.frame: m for m in PolarisParams().mounts}
    for transform in transforms:
        mount = mounts[transform.child_frame_id]
        t, r = transform.transform.translation, transform.transform.rotation
        assert (t.x, t.y, t.z) == mount.translation
        assert (r.x, r.y, r.z, r.w) == pytest.approx(mount.rotation, abs=1e-15)
        assert transform.header.stamp.sec == 5


def test_the_optical_frame_looks_forward_with_x_right_and_y_down(rig: tuple[SensorMount, ...]) -> None:
    transforms = static_transforms(rig, frames=frame_names(vehicle="polaris"), stamp=Time())
    optical = next(t for t in transforms if t.child_frame_id == "reolink_camera_optical")
    r = optical.transform.rotation
    q = (r.x, r.y, r.z, r.w)
    assert math.fsum(c * c for c in q) == pytest.approx(1.0)
    assert rotate(q, (0.0, 0.0, 1.0)) == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)  # z forward
    assert rotate(q, (1.0, 0.0, 0.0)) == pytest.approx((0.0, -1.0, 0.0), abs=1e-12)  # x right
    assert rotate(q, (0.0, 1.0, 0.0)) == pytest.approx((0.0, 0.0, -1.0), abs=1e-12)  # y down


def test_the_frame_prefix_goes_on_the_transforms_not_on_the_urdf(rig: tuple[SensorMount, ...]) -> None:
    frames = frame_names(vehicle="polaris", frame_prefix="polaris2/")
    transforms = static_transforms(rig, frames=frames, stamp=Time())
    assert {t.header.frame_id for t in transforms} == {"polaris2/base_footprint", "polaris2/reolink_camera"}
    assert all(t.child_frame_id.startswith("polaris2/") for t in transforms)
    assert "polaris2" not in urdf(rig)


def test_the_ins_frame_gets_no_static_transform(rig: tuple[SensorMount, ...]) -> None:
    assert "imu_link" not in {m.frame for m in tf_mounts(rig)}
    assert {m.frame for m in tf_mounts(rig)} == RIG_FRAMES - {"imu_link"}


def test_names_are_escaped_in_the_urdf(rig: tuple[SensorMount, ...]) -> None:
    text = urdf(rig, robot_name='a"<b>&')
    assert ET.fromstring(text).get("name") == 'a"<b>&'


def _mount(frame: str, parent: str = "base_footprint", **changes: object) -> SensorMount:
    mount = SensorMount(
        name=frame, kind="frame", frame=frame, xyz_m=(0.0, 0.0, 0.0), rpy_rad=(0.0, 0.0, 0.0), rate_hz=0.0
    )
    return replace(mount, parent=parent, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rig", "match"),
    [
        ((_mount("a"), _mount("a")), "frame 'a' is empty, the root or repeated"),
        ((_mount("base_footprint"),), "frame 'base_footprint' is empty, the root or repeated"),
        ((_mount(""),), "frame '' is empty"),
        ((_mount("a", "nowhere"),), "parent 'nowhere' is neither base_footprint nor a mount"),
        ((_mount("a", "b"), _mount("b", "a")), "their parents form a cycle"),
        ((_mount("a", xyz_m=(0.0, math.nan, 0.0)),), "is not finite"),
        ((_mount("a", rpy_rad=(0.0, 0.0, math.inf)),), "is not finite"),
    ],
)
def test_a_rig_that_is_no_tree_below_base_footprint_is_refused(
    rig: tuple[SensorMount, ...], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        check_rig(rig)
    with pytest.raises(ValueError, match=match):
        urdf(rig)
    with pytest.raises(ValueError, match=match):
        static_transforms(rig, frames=frame_names(vehicle="polaris"), stamp=Time())
