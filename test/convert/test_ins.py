"""INS sample -> odometry, IMU, velocity, fix, ground truth and /tf, as the spec says."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped, TwistStamped
from hypothesis import given, settings
from hypothesis import strategies as st
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, NavSatFix

from acres_bridge.convert.frame_names import FrameNames, frame_names
from acres_bridge.convert.ins import (
    ground_truth_odometry,
    imu,
    navsat_fix,
    odometry,
    oxts_velocity,
    stamp,
    transform,
)
from acres_bridge.wire import ProtocolError, Vehicle, encode
from acres_bridge.wire.binary_codecs import decode_ins
from acres_bridge.wire.json_fields import MAX_STAMP_NS
from acres_bridge.wire.messages import InsSample

G = 9.81
ROLL, PITCH, YAW = math.radians(2.0), math.radians(-3.0), math.radians(30.0)
STAMP_NS = 27_250_001_421  # the spec's /vehicle/odom example: sec 27, nanosec 250001421

# ---- rotations, written here independently of the code under test ---------------------------------


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of the rotation yaw about z, then pitch about y, then roll about x (body-fixed)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    )


def rotation_matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    """The matrix that maps vectors of the rotated frame into the reference frame."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return rz @ ry @ rx


def quat(message_quaternion) -> tuple[float, float, float, float]:
    return (message_quaternion.x, message_quaternion.y, message_quaternion.z, message_quaternion.w)


def vec(message_vector) -> np.ndarray:
    return np.array([message_vector.x, message_vector.y, message_vector.z])


EAST_X = np.array([1.0, 0.0, 0.0])
NORTH_Y = np.array([0.0, 1.0, 0.0])
UP_Z = np.array([0.0, 0.0, 1.0])


def test_helpers_agree_with_each_other():
    for angles in [(ROLL, PITCH, YAW), (0.3, -0.2, 2.5), (0.0, 0.0, -1.0)]:
        np.testing.assert_allclose(
            rotation_matrix(quaternion_from_rpy(*angles)), rpy_matrix(*angles), atol=1e-12
        )
    # yaw is counter-clockwise from grid east: 90 deg faces north.
    np.testing.assert_allclose(rpy_matrix(0, 0, math.pi / 2) @ EAST_X, NORTH_Y, atol=1e-12)


# ---- the sample ----------------------------------------------------------------------------------


def make_sample(
    *,
    rpy: tuple[float, float, float] = (ROLL, PITCH, YAW),
    velocity: tuple[float, float, float] = (2.5, 0.1, -0.05),
    angular_rate: tuple[float, float, float] = (0.01, -0.02, 0.3),
    specific_force: tuple[float, float, float] = (0.4, -0.2, 9.7),
    true_speed: float = 2.45,
    stamp_ns: int = STAMP_NS,
    angular_rate_variance: tuple[float, float, float] = (1e-6, 4e-6, 9e-6),
    specific_force_variance: tuple[float, float, float] = (1e-4, 2.5e-4, 6.4e-4),
) -> InsSample:
    return InsSample(
        step=3270,
        stamp_ns=stamp_ns,
        has_position=True,
        position=(500438.12220755406, 4479963.951710937, 181.76825509173662),
        latitude_deg=40.4699,
        longitude_deg=-86.9952,
        orientation=quaternion_from_rpy(*rpy),
        velocity=velocity,
        angular_rate=angular_rate,
        specific_force=specific_force,
        position_variance=(0.0004, 0.0009, 0.0025),
        velocity_variance=(0.0001, 0.0002, 0.0003),
        attitude_variance=(1e-6, 2e-6, 5e-6),
        true_position=(500438.1, 4479963.9, 181.7),
        true_orientation=quaternion_from_rpy(0.0, 0.0, YAW + 0.001),
        true_speed=true_speed,
        angular_rate_variance=angular_rate_variance,
        specific_force_variance=specific_force_variance,
    )


@pytest.fixture
def sample() -> InsSample:
    return make_sample()


POLARIS = frame_names(vehicle="polaris")
POLARIS2 = frame_names(vehicle="polaris", frame_prefix="polaris2/")
MAXXUM2 = frame_names(vehicle="maxxum", frame_prefix="polaris2/")


def survives_serialisation(message: object) -> None:
    """The message is valid for its ROS type: it serialises and comes back equal."""
    assert deserialize_message(serialize_message(message), type(message)) == message


# ---- /vehicle/odom -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frames", "child"),
    [
        (POLARIS, "base_footprint"),
        (POLARIS2, "polaris2/base_footprint"),
        (MAXXUM2, "polaris2/base_footprint"),
    ],
    ids=["polaris", "polaris2", "maxxum_prefixed"],
)
def test_odometry_frames(sample, frames, child):
    message = odometry(sample, frames)
    assert message.header.frame_id == "utm"
    assert message.child_frame_id == child


def test_odometry_in_a_renamed_utm_frame(sample):
    message = odometry(sample, frame_names(vehicle="polaris", frame_prefix="polaris2/", utm_frame="utm_16n"))
    assert message.header.frame_id == "utm_16n"
    assert message.child_frame_id == "polaris2/base_footprint"


def test_odometry_pose(sample):
    message = odometry(sample, POLARIS)
    position = message.pose.pose.position
    assert (position.x, position.y, position.z) == sample.position
    assert quat(message.pose.pose.orientation) == sample.orientation
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (27, 250001421)


def test_odometry_pose_covariance_is_the_east_north_up_diagonal(sample):
    covariance = list(odometry(sample, POLARIS).pose.covariance)
    assert len(covariance) == 36
    assert (covariance[0], covariance[7], covariance[14]) == sample.position_variance
    assert all(value == 0.0 for index, value in enumerate(covariance) if index not in (0, 7, 14))


def test_odometry_twist_is_the_body_velocity_and_rate(sample):
    twist = odometry(sample, POLARIS).twist.twist
    assert tuple(vec(twist.linear)) == sample.velocity
    assert tuple(vec(twist.angular)) == sample.angular_rate


def test_odometry_orientation_heads_along_the_yaw(sample):
    forward = rotation_matrix(quat(odometry(sample, POLARIS).pose.pose.orientation)) @ EAST_X
    heading = math.degrees(math.atan2(forward[1], forward[0]))
    assert heading == pytest.approx(30.0)


# ---- /oxts/imu (Polaris, OxTS axes) and imu/data (Maxxum, body axes) -----------------------------


def test_oxts_imu_frame_and_stamp(sample):
    message = imu(sample, POLARIS2.imu, oxts_axes=True)
    assert message.header.frame_id == "imu_link"
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (27, 250001421)


def test_oxts_imu_angular_velocity_in_oxts_axes(sample):
    wx, wy, wz = sample.angular_rate
    message = imu(sample, "imu_link", oxts_axes=True)
    assert tuple(vec(message.angular_velocity)) == (wy, wx, -wz)


def test_oxts_imu_specific_force_in_oxts_axes(sample):
    fx, fy, fz = sample.specific_force
    message = imu(sample, "imu_link", oxts_axes=True)
    assert tuple(vec(message.linear_acceleration)) == (fy, fx, -fz)


def test_oxts_imu_at_rest_reads_minus_g_on_z():
    at_rest = make_sample(
        rpy=(0.0, 0.0, YAW), velocity=(0, 0, 0), angular_rate=(0, 0, 0), specific_force=(0, 0, G)
    )
    message = imu(at_rest, "imu_link", oxts_axes=True)
    assert tuple(vec(message.linear_acceleration)) == (0.0, 0.0, -G)
    assert tuple(vec(message.angular_velocity)) == (0.0, 0.0, 0.0)


def test_oxts_imu_orientation_points_y_forward_x_left_z_down(sample):
    imu_to_enu = rotation_matrix(quat(imu(sample, "imu_link", oxts_axes=True).orientation))
    body_to_enu = rpy_matrix(ROLL, PITCH, YAW)
    forward, left, up = body_to_enu @ EAST_X, body_to_enu @ NORTH_Y, body_to_enu @ UP_Z
    np.testing.assert_allclose(imu_to_enu @ NORTH_Y, forward, atol=1e-12)
    np.testing.assert_allclose(imu_to_enu @ EAST_X, left, atol=1e-12)
    np.testing.assert_allclose(imu_to_enu @ UP_Z, -up, atol=1e-12)


def test_oxts_imu_y_axis_is_the_heading_when_level():
    level = make_sample(rpy=(0.0, 0.0, YAW))
    imu_to_enu = rotation_matrix(quat(imu(level, "imu_link", oxts_axes=True).orientation))
    np.testing.assert_allclose(imu_to_enu @ NORTH_Y, [math.cos(YAW), math.sin(YAW), 0.0], atol=1e-12)
    np.testing.assert_allclose(imu_to_enu @ UP_Z, [0.0, 0.0, -1.0], atol=1e-12)


def test_oxts_imu_orientation_is_a_unit_quaternion(sample):
    q = np.array(quat(imu(sample, "imu_link", oxts_axes=True).orientation))
    assert np.linalg.norm(q) == pytest.approx(1.0)


def test_oxts_imu_vectors_are_the_body_vectors_in_enu(sample):
    """Rotated into ENU, the IMU's rate and force are the body rate and force rotated into ENU."""
    message = imu(sample, "imu_link", oxts_axes=True)
    imu_to_enu = rotation_matrix(quat(message.orientation))
    body_to_enu = rotation_matrix(sample.orientation)
    np.testing.assert_allclose(
        imu_to_enu @ vec(message.angular_velocity), body_to_enu @ np.array(sample.angular_rate), atol=1e-12
    )
    np.testing.assert_allclose(
        imu_to_enu @ vec(message.linear_acceleration),
        body_to_enu @ np.array(sample.specific_force),
        atol=1e-12,
    )


def test_oxts_imu_at_rest_tilted_feels_gravity_up_in_enu():
    body_to_enu = rpy_matrix(ROLL, PITCH, YAW)
    force = tuple(body_to_enu.T @ np.array([0.0, 0.0, G]))
    tilted = make_sample(velocity=(0, 0, 0), angular_rate=(0, 0, 0), specific_force=force)
    message = imu(tilted, "imu_link", oxts_axes=True)
    in_enu = rotation_matrix(quat(message.orientation)) @ vec(message.linear_acceleration)
    np.testing.assert_allclose(in_enu, [0.0, 0.0, G], atol=1e-9)


def test_oxts_imu_attitude_covariance_is_in_the_imu_axes(sample):
    message = imu(sample, "imu_link", oxts_axes=True)
    body_to_imu = rotation_matrix(quat(message.orientation)).T @ rotation_matrix(sample.orientation)
    in_imu_axes = body_to_imu @ np.diag(sample.attitude_variance) @ body_to_imu.T
    np.testing.assert_allclose(np.reshape(message.orientation_covariance, (3, 3)), in_imu_axes, atol=1e-15)


def test_oxts_imu_rate_and_force_covariances_are_in_the_imu_axes(sample):
    message = imu(sample, "imu_link", oxts_axes=True)
    body_to_imu = rotation_matrix(quat(message.orientation)).T @ rotation_matrix(sample.orientation)
    for covariance, variance in (
        (message.angular_velocity_covariance, sample.angular_rate_variance),
        (message.linear_acceleration_covariance, sample.specific_force_variance),
    ):
        in_imu_axes = body_to_imu @ np.diag(variance) @ body_to_imu.T
        np.testing.assert_allclose(np.reshape(covariance, (3, 3)), in_imu_axes, atol=1e-15)


def test_oxts_imu_covariances_swap_x_and_y():
    rate_var, force_var = (1.0, 2.0, 3.0), (4.0, 5.0, 6.0)
    message = imu(
        make_sample(angular_rate_variance=rate_var, specific_force_variance=force_var),
        "imu_link",
        oxts_axes=True,
    )
    assert list(message.angular_velocity_covariance) == [2.0, 0, 0, 0, 1.0, 0, 0, 0, 3.0]
    assert list(message.linear_acceleration_covariance) == [5.0, 0, 0, 0, 4.0, 0, 0, 0, 6.0]
    roll_var, pitch_var, yaw_var = make_sample().attitude_variance
    assert list(message.orientation_covariance) == [pitch_var, 0, 0, 0, roll_var, 0, 0, 0, yaw_var]


@pytest.mark.parametrize("oxts_axes", [True, False], ids=["oxts", "body"])
def test_imu_covariances_of_default_variances_are_zero(oxts_axes):
    """An InsSample made without the rate and force variances gives all-zero covariances."""
    sample = make_sample()
    given = {
        f.name: getattr(sample, f.name)
        for f in fields(InsSample)
        if f.name not in ("angular_rate_variance", "specific_force_variance")
    }
    message = imu(InsSample(**given), "imu_link", oxts_axes=oxts_axes)
    assert list(message.angular_velocity_covariance) == [0.0] * 9
    assert list(message.linear_acceleration_covariance) == [0.0] * 9


def test_maxxum_imu_keeps_the_body_axes(sample):
    message = imu(sample, MAXXUM2.imu, oxts_axes=False)
    assert message.header.frame_id == "polaris2/imu_link"
    assert quat(message.orientation) == sample.orientation
    assert tuple(vec(message.angular_velocity)) == sample.angular_rate
    assert tuple(vec(message.linear_acceleration)) == sample.specific_force
    assert (
        np.reshape(message.orientation_covariance, (3, 3)).tolist()
        == np.diag(sample.attitude_variance).tolist()
    )
    assert (
        np.reshape(message.angular_velocity_covariance, (3, 3)).tolist()
        == np.diag(sample.angular_rate_variance).tolist()
    )
    assert (
        np.reshape(message.linear_acceleration_covariance, (3, 3)).tolist()
        == np.diag(sample.specific_force_variance).tolist()
    )


def test_maxxum_imu_at_rest_reads_plus_g_on_z():
    at_rest = make_sample(
        rpy=(0.0, 0.0, YAW), velocity=(0, 0, 0), angular_rate=(0, 0, 0), specific_force=(0, 0, G)
    )
    message = imu(at_rest, "imu_link", oxts_axes=False)
    assert tuple(vec(message.linear_acceleration)) == (0.0, 0.0, G)


# ---- /oxts/velocity ------------------------------------------------------------------------------


def test_oxts_velocity(sample):
    message = oxts_velocity(sample, POLARIS2.oxts)
    assert message.header.frame_id == "oxts_link"
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (27, 250001421)
    assert tuple(vec(message.twist.linear)) == sample.velocity
    np.testing.assert_allclose(vec(message.twist.angular), np.degrees(sample.angular_rate), rtol=1e-15)
    assert message.twist.angular.z == pytest.approx(17.188733853924695)  # 0.3 rad/s


# ---- /oxts/fix and gnss/fix ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "expected"), [(POLARIS2.navsat, "polaris2/navsat_link"), (MAXXUM2.gnss, "polaris2/gnss_link")]
)
def test_navsat_fix(sample, frame, expected):
    message = navsat_fix(sample, frame)
    assert message.header.frame_id == expected
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (27, 250001421)
    assert message.status.status == 2
    assert (message.latitude, message.longitude) == (sample.latitude_deg, sample.longitude_deg)
    assert message.altitude == sample.position[2]
    east, north, up = sample.position_variance
    assert list(message.position_covariance) == [east, 0, 0, 0, north, 0, 0, 0, up]
    assert message.position_covariance_type == 2 == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN


# ---- /sim/ground_truth/odom ----------------------------------------------------------------------


@pytest.mark.parametrize("true_speed", [2.45, -1.25, 0.0])
def test_ground_truth_odometry(true_speed):
    sample = make_sample(true_speed=true_speed)
    message = ground_truth_odometry(sample, POLARIS2)
    assert message.header.frame_id == "utm"
    assert message.child_frame_id == "polaris2/base_footprint"
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (27, 250001421)
    position = message.pose.pose.position
    assert (position.x, position.y, position.z) == sample.true_position
    assert quat(message.pose.pose.orientation) == sample.true_orientation
    twist = message.twist.twist
    assert twist.linear.x == true_speed
    assert (twist.linear.y, twist.linear.z) == (0.0, 0.0)
    assert tuple(vec(twist.angular)) == (0.0, 0.0, 0.0)
    assert not any(message.twist.covariance)


def test_ground_truth_is_not_the_ins_estimate(sample):
    truth = ground_truth_odometry(sample, POLARIS)
    estimate = odometry(sample, POLARIS)
    assert truth.pose.pose.position != estimate.pose.pose.position
    assert truth.pose.pose.orientation != estimate.pose.pose.orientation


# ---- /tf -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frames", "child"),
    [(POLARIS, "base_footprint"), (POLARIS2, "polaris2/base_footprint")],
    ids=["bare", "prefixed"],
)
def test_transform_utm_to_base_footprint(sample, frames, child):
    message = transform(sample, frames)
    assert message.header.frame_id == "utm"
    assert message.child_frame_id == child
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (27, 250001421)
    assert tuple(vec(message.transform.translation)) == sample.position
    assert quat(message.transform.rotation) == sample.orientation


# ---- stamps --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stamp_ns", "sec", "nanosec"),
    [
        (25_741_668_009, 25, 741_668_009),
        (27_250_001_421, 27, 250_001_421),
        (0, 0, 0),
        (999_999_999, 0, 999_999_999),
        (1_000_000_000, 1, 0),
        (1405 * 1_000_000_000 // 120, 11, 708_333_333),
        (MAX_STAMP_NS, 2**31 - 1, 999_999_999),
    ],
)
def test_stamp_splits_integer_nanoseconds(stamp_ns, sec, nanosec):
    assert stamp(stamp_ns) == Time(sec=sec, nanosec=nanosec)


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(min_value=0, max_value=MAX_STAMP_NS))
def test_stamp_is_exact(stamp_ns):
    time = stamp(stamp_ns)
    assert 0 <= time.nanosec < 1_000_000_000
    assert time.sec * 1_000_000_000 + time.nanosec == stamp_ns


CONVERTERS: list[Callable[[InsSample], object]] = [
    lambda s: odometry(s, POLARIS),
    lambda s: ground_truth_odometry(s, POLARIS),
    lambda s: imu(s, "imu_link", oxts_axes=True),
    lambda s: imu(s, "imu_link", oxts_axes=False),
    lambda s: oxts_velocity(s, "oxts_link"),
    lambda s: navsat_fix(s, "navsat_link"),
    lambda s: transform(s, POLARIS),
]
CONVERTER_IDS = ["odometry", "ground_truth", "oxts_imu", "body_imu", "velocity", "fix", "transform"]


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_every_message_carries_the_sample_stamp(convert):
    message = convert(make_sample(stamp_ns=25_741_668_009))
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (25, 741_668_009)


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_every_message_is_valid_for_its_type(convert, sample):
    message = convert(sample)
    assert isinstance(message, Odometry | Imu | TwistStamped | NavSatFix | TransformStamped)
    survives_serialisation(message)


def test_the_largest_accepted_stamp_fits_an_int32_second():
    """stamp() does no range check of its own: the decoders keep stamp_ns within MAX_STAMP_NS."""
    assert MAX_STAMP_NS == 2**31 * 1_000_000_000 - 1
    time = stamp(MAX_STAMP_NS)
    assert (time.sec, time.nanosec) == (2**31 - 1, 999_999_999)
    again = deserialize_message(serialize_message(time), Time)
    assert (again.sec, again.nanosec) == (2**31 - 1, 999_999_999)
    assert again.sec * 1_000_000_000 + again.nanosec == MAX_STAMP_NS


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_every_message_of_the_latest_decodable_sample_keeps_its_stamp(convert):
    payload = encode(make_sample(stamp_ns=MAX_STAMP_NS))[16:]
    message = convert(decode_ins(payload))
    again = deserialize_message(serialize_message(message), type(message))
    assert (again.header.stamp.sec, again.header.stamp.nanosec) == (2**31 - 1, 999_999_999)


def test_a_sample_one_nanosecond_later_does_not_decode():
    payload = encode(make_sample(stamp_ns=MAX_STAMP_NS + 1))[16:]
    with pytest.raises(ProtocolError, match=rf"INS: stamp_ns must be in 0 \.\. {MAX_STAMP_NS} "):
        decode_ins(payload)


def test_frame_names_come_from_the_frame_names_object(sample):
    frames = FrameNames(
        vehicle=Vehicle.POLARIS,
        utm="u",
        base_footprint="b",
        imu="i",
        oxts="o",
        navsat="n",
        gnss="g",
        lidar="l",
        camera_optical="c",
        world="w",
        can="x",
    )
    assert (odometry(sample, frames).header.frame_id, odometry(sample, frames).child_frame_id) == ("u", "b")
    assert (transform(sample, frames).header.frame_id, transform(sample, frames).child_frame_id) == ("u", "b")
    truth = ground_truth_odometry(sample, frames)
    assert (truth.header.frame_id, truth.child_frame_id) == ("u", "b")
