"""Vehicle parameters: the Polaris utility vehicle and the Maxxum tractor, with their sensor mounts.

All values are in SI units (m, kg, rad, s). Mount poses are relative to ``base_footprint``, the point
on the ground below the centre of the rear axle, x forward, y left, z up, unless a mount names another
parent frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from acres_bridge.geo.rotation import Quaternion, Vec3, quaternion_from_rpy
from acres_bridge.wire.vocabulary import Vehicle
from acres_sim.errors import ParamsError, require_finite

__all__ = ["MAXXUM", "POLARIS", "MaxxumParams", "MountPose", "PolarisParams", "VehicleParams"]

_HALF_PI: Final = 0.5 * math.pi


@dataclass(frozen=True, kw_only=True)
class MountPose:
    """The pose of a sensor frame ``frame`` in its ``parent`` frame: translation in m, rpy in rad."""

    frame: str
    parent: str = "base_footprint"
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0

    @property
    def translation(self) -> Vec3:
        """(x, y, z) of the frame origin in the parent frame, in m."""
        return self.x, self.y, self.z

    @property
    def rotation(self) -> Quaternion:
        """The rotation of the frame in the parent frame as a quaternion (x, y, z, w)."""
        return quaternion_from_rpy(self.roll, self.pitch, self.yaw)


@dataclass(frozen=True, kw_only=True)
class VehicleParams:
    """What the kinematic model and the sensor rig need to know about a vehicle.

    ``max_steer_rad`` is the largest road-wheel angle (of the equivalent bicycle's front wheel),
    ``max_steer_rate_radps`` the fastest it can change. Speeds are limits of the signed forward speed;
    ``max_brake_decel_mps2`` bounds a deceleration towards standstill, ``max_accel_mps2`` every other
    change of speed.
    """

    vehicle: Vehicle
    wheelbase_m: float
    track_m: float
    mass_kg: float
    tyre_radius_front_m: float
    tyre_radius_rear_m: float
    max_steer_rad: float
    max_steer_rate_radps: float
    max_speed_mps: float
    max_reverse_speed_mps: float
    max_accel_mps2: float
    max_brake_decel_mps2: float
    mounts: tuple[MountPose, ...] = ()

    def __post_init__(self) -> None:
        """Reject values that would make the model meaningless (zero wheelbase, negative limits)."""
        require_finite(
            self,
            positive=(
                "wheelbase_m",
                "track_m",
                "mass_kg",
                "tyre_radius_front_m",
                "tyre_radius_rear_m",
                "max_steer_rate_radps",
                "max_speed_mps",
                "max_accel_mps2",
                "max_brake_decel_mps2",
            ),
        )
        if not (0.0 < self.max_steer_rad < _HALF_PI):
            raise ParamsError(
                f"{type(self).__name__}.max_steer_rad: expected 0 < value < pi/2, got {self.max_steer_rad!r}"
            )
        require_finite(self, non_negative=("max_reverse_speed_mps",))
        frames = [m.frame for m in self.mounts]
        if len(set(frames)) != len(frames):
            raise ParamsError(f"{type(self).__name__}.mounts: frame names must be unique, got {frames}")

    @property
    def min_turn_radius_m(self) -> float:
        """The radius of the tightest circle base_footprint can drive, in m."""
        return self.wheelbase_m / math.tan(self.max_steer_rad)

    def mount(self, frame: str) -> MountPose:
        """The mount pose of sensor frame ``frame``; KeyError names the known frames when it has none."""
        for m in self.mounts:
            if m.frame == frame:
                return m
        raise KeyError(f"{self.vehicle} has no mount {frame!r}; known: {[m.frame for m in self.mounts]}")


def _optical_frame(camera: str) -> MountPose:
    """The optical frame ``<camera>_optical`` of the camera frame ``camera``: z forward, x right, y down."""
    return MountPose(frame=f"{camera}_optical", parent=camera, roll=-_HALF_PI, pitch=0.0, yaw=-_HALF_PI)


# Polaris Ranger XP 1000-class UTV with the Dataspeed drive-by-wire kit.
# - wheelbase 81 in (2.06 m) and 27 in tyres (27x9-12 front, 27x11-12 rear, radius 0.343 m): the
#   manufacturer's published dimensions for the Ranger XP 1000.
# - track 1.32 m: assumed from the 62.5 in overall width minus a tyre width.
# - mass 900 kg: curb weight (about 800 kg) plus the drive-by-wire kit, sensors and rack; assumed.
# - steering: 487 deg at the steering wheel and 1000 deg/s are the limits the drive-by-wire reports
#   carry (the spec); 0.61 rad (35 deg) is the assumed road-wheel lock, giving a ratio of about 13.9.
# - speeds and accelerations: a governed top speed of 18 m/s, 5 m/s in reverse, 3 m/s^2 of
#   acceleration and 6 m/s^2 (0.6 g, loose surface) of braking; assumed.
# - mounts: the camera position is the spec's; the LiDAR on the roof rack and the OxTS unit above the
#   rear axle are assumed. imu_link has the OxTS axes (x left, y forward, z down), the spec's frame.
_POLARIS_MAX_STEER_RAD: Final = 0.61
_POLARIS_STEERING_WHEEL_MAX_DEG: Final = 487.0
_POLARIS_STEERING_WHEEL_RATE_DEGPS: Final = 1000.0

_POLARIS_MOUNTS: Final = (
    MountPose(frame="lidar", x=1.2, y=0.0, z=1.95),
    MountPose(frame="reolink_camera", x=2.745, y=0.606, z=1.887),
    _optical_frame("reolink_camera"),
    MountPose(frame="imu_link", x=0.0, y=0.0, z=0.9, roll=math.pi, pitch=0.0, yaw=_HALF_PI),
)


@dataclass(frozen=True, kw_only=True)
class PolarisParams(VehicleParams):
    """The Polaris Ranger-class UTV. The road-wheel rate limit follows from the steering wheel's.

    ``max_steer_rate_radps`` is not an argument: it is the steering-wheel rate limit divided by the
    steering ratio, the ratio being the steering-wheel limit over the road-wheel limit.
    """

    vehicle: Vehicle = Vehicle.POLARIS
    wheelbase_m: float = 2.06
    track_m: float = 1.32
    mass_kg: float = 900.0
    tyre_radius_front_m: float = 0.343
    tyre_radius_rear_m: float = 0.343
    max_steer_rad: float = _POLARIS_MAX_STEER_RAD
    max_steer_rate_radps: float = field(init=False, default=1.0)
    max_speed_mps: float = 18.0
    max_reverse_speed_mps: float = 5.0
    max_accel_mps2: float = 3.0
    max_brake_decel_mps2: float = 6.0
    mounts: tuple[MountPose, ...] = _POLARIS_MOUNTS
    steering_wheel_max_deg: float = _POLARIS_STEERING_WHEEL_MAX_DEG
    steering_wheel_rate_max_degps: float = _POLARIS_STEERING_WHEEL_RATE_DEGPS

    def __post_init__(self) -> None:
        """Derive the road-wheel rate limit, then validate everything."""
        require_finite(self, positive=("steering_wheel_max_deg", "steering_wheel_rate_max_degps"))
        object.__setattr__(
            self,
            "max_steer_rate_radps",
            math.radians(self.steering_wheel_rate_max_degps) / self.steering_ratio,
        )
        super().__post_init__()

    @property
    def steering_ratio(self) -> float:
        """Steering-wheel angle per road-wheel angle (dimensionless), about 13.9."""
        return self.steering_wheel_max_deg / math.degrees(self.max_steer_rad)

    def steering_wheel_deg(self, road_wheel_rad: float) -> float:
        """The steering-wheel angle in degrees for a road-wheel angle in radians."""
        return math.degrees(road_wheel_rad) * self.steering_ratio

    def road_wheel_rad(self, steering_wheel_deg: float) -> float:
        """The road-wheel angle in radians for a steering-wheel angle in degrees."""
        return math.radians(steering_wheel_deg / self.steering_ratio)


# Case IH Maxxum-class tractor (six-cylinder, 4WD). Assumed, of the order of the published figures of
# the class: wheelbase 2.9 m, track 1.9 m, 6500 kg, front 420/85R28 (radius 0.71 m) and rear
# 520/85R38 (radius 0.925 m) tyres, 40 km/h (11 m/s) top speed, 0.7 rad steering lock at 0.5 rad/s,
# 1 m/s^2 of acceleration and 3 m/s^2 of braking. Mounts (cab roof LiDAR and camera, IMU on the chassis,
# GNSS antenna on the roof) are assumed; all use the body axes x forward, y left, z up.
_MAXXUM_MOUNTS: Final = (
    MountPose(frame="lidar", x=1.0, y=0.0, z=3.0),
    MountPose(frame="camera", x=1.2, y=0.0, z=2.9),
    _optical_frame("camera"),
    MountPose(frame="imu_link", x=0.5, y=0.0, z=1.2),
    MountPose(frame="gnss_link", x=0.5, y=0.0, z=3.1),
)


@dataclass(frozen=True, kw_only=True)
class MaxxumParams(VehicleParams):
    """The Maxxum tractor."""

    vehicle: Vehicle = Vehicle.MAXXUM
    wheelbase_m: float = 2.9
    track_m: float = 1.9
    mass_kg: float = 6500.0
    tyre_radius_front_m: float = 0.71
    tyre_radius_rear_m: float = 0.925
    max_steer_rad: float = 0.7
    max_steer_rate_radps: float = 0.5
    max_speed_mps: float = 11.0
    max_reverse_speed_mps: float = 5.0
    max_accel_mps2: float = 1.0
    max_brake_decel_mps2: float = 3.0
    mounts: tuple[MountPose, ...] = _MAXXUM_MOUNTS


POLARIS: Final = PolarisParams()
MAXXUM: Final = MaxxumParams()
