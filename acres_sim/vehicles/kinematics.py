"""A kinematic bicycle model about the rear axle, stepped exactly and deterministically.

The reference point is base_footprint (the ground below the centre of the rear axle), which moves
along the body x axis without slip. A step first moves the road-wheel angle towards the command
(angle and rate limits) and the speed by the commanded acceleration (acceleration, braking and speed
limits), then moves the pose along the arc of the new curvature by the distance the mean speed covers.
For a constant steering angle and acceleration this is the exact solution.

On a terrain other than flat, the vehicle's height, roll and pitch follow the ground under its wheels
(quasi-static: the roll and pitch rates and the vertical acceleration are neglected) and the planar
motion is that of the horizontal projection.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from acres_bridge.geo.rotation import Vec3, world_to_body, wrap_angle
from acres_bridge.geo.scalar import clamp, toward
from acres_sim.vehicles.params import VehicleParams

__all__ = [
    "STANDARD_GRAVITY",
    "BodyMotion",
    "Terrain",
    "VehicleState",
    "at_rest",
    "flat_terrain",
    "place",
    "step",
]

STANDARD_GRAVITY: Final = 9.80665  # m/s^2

Terrain = Callable[[float, float], float]
"""The ground height (m, world z) at a world position (x, y)."""


def flat_terrain(x: float, y: float) -> float:
    """Flat ground at world z = 0."""
    return 0.0


@dataclass(frozen=True, slots=True)
class VehicleState:
    """The state of base_footprint in the world frame.

    x, y, z in m; roll, pitch, yaw in rad (yaw counter-clockwise from grid east, in [-pi, pi]);
    ``speed`` the signed forward speed in m/s; ``steer`` the road-wheel angle in rad, positive left.
    """

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0
    speed: float = 0.0
    steer: float = 0.0


@dataclass(frozen=True, slots=True)
class BodyMotion:
    """The motion of base_footprint at the end of a step, in the body axes (x forward, y left, z up).

    ``velocity`` in m/s, ``angular_rate`` in rad/s, ``specific_force`` in m/s^2 (what an
    accelerometer measures: at rest (0, 0, +9.80665)); ``yaw_rate`` is the rate of the yaw about the
    world z axis in rad/s; ``accel`` the longitudinal acceleration that the step applied, in m/s^2.
    """

    velocity: Vec3
    angular_rate: Vec3
    specific_force: Vec3
    yaw_rate: float
    accel: float


def _attitude(terrain: Terrain, params: VehicleParams, x: float, y: float, yaw: float) -> Vec3:
    """(z, roll, pitch) of a vehicle standing at (x, y, yaw) on ``terrain``."""
    if terrain is flat_terrain:
        return 0.0, 0.0, 0.0
    c, s = math.cos(yaw), math.sin(yaw)
    half = 0.5 * params.track_m
    z = terrain(x, y)
    z_front = terrain(x + params.wheelbase_m * c, y + params.wheelbase_m * s)
    z_left = terrain(x - half * s, y + half * c)
    z_right = terrain(x + half * s, y - half * c)
    pitch = math.atan2(z - z_front, params.wheelbase_m)  # positive: nose down
    roll = math.atan2(z_left - z_right, params.track_m)  # positive: left side up
    return z, roll, pitch


def _motion(state: VehicleState, params: VehicleParams, accel: float) -> BodyMotion:
    """The body-frame motion of ``state`` when its speed changes at ``accel``."""
    v = state.speed
    yaw_rate = v * math.tan(state.steer) / params.wheelbase_m
    angular = world_to_body(state.roll, state.pitch, 0.0, (0.0, 0.0, yaw_rate))
    gravity = world_to_body(state.roll, state.pitch, 0.0, (0.0, 0.0, STANDARD_GRAVITY))
    return BodyMotion(
        velocity=(v, 0.0, 0.0),
        angular_rate=angular,
        specific_force=(accel + gravity[0], v * yaw_rate + gravity[1], gravity[2]),
        yaw_rate=yaw_rate,
        accel=accel,
    )


def place(
    params: VehicleParams, x: float, y: float, yaw: float, *, terrain: Terrain = flat_terrain
) -> VehicleState:
    """A vehicle standing still at world (x, y) with heading ``yaw``, on the ground, wheels straight."""
    z, roll, pitch = _attitude(terrain, params, x, y, yaw)
    return VehicleState(x=x, y=y, z=z, roll=roll, pitch=pitch, yaw=wrap_angle(yaw))


def at_rest(state: VehicleState, params: VehicleParams) -> BodyMotion:
    """The body-frame motion of ``state`` with no acceleration (the motion before the first step)."""
    return _motion(state, params, 0.0)


def step(
    state: VehicleState,
    params: VehicleParams,
    accel_cmd: float,
    steer_cmd: float,
    dt: float,
    *,
    terrain: Terrain = flat_terrain,
) -> tuple[VehicleState, BodyMotion]:
    """Advance ``state`` by ``dt`` seconds under an acceleration (m/s^2) and a road-wheel angle (rad).

    Returns the new state and its body-frame motion. The commands are clipped to the vehicle's limits;
    braking (an acceleration against the direction of travel) stops the vehicle and never reverses it
    within one step. The inputs must be finite (checked by the caller at its boundary).
    """
    # Steering: towards the clipped command, at most the rate limit.
    target = clamp(steer_cmd, -params.max_steer_rad, params.max_steer_rad)
    max_delta = params.max_steer_rate_radps * dt
    steer = toward(state.steer, target, max_delta)

    # Speed.
    v0 = state.speed
    braking = (v0 > 0.0 and accel_cmd < 0.0) or (v0 < 0.0 and accel_cmd > 0.0)
    limit = params.max_brake_decel_mps2 if braking else params.max_accel_mps2
    v1 = v0 + clamp(accel_cmd, -limit, limit) * dt
    if braking and (v1 > 0.0) != (v0 > 0.0):
        v1 = 0.0
    v1 = clamp(v1, -params.max_reverse_speed_mps, params.max_speed_mps)
    accel = (v1 - v0) / dt

    # Pose: along the arc of curvature tan(steer)/L, by the distance of the mean speed.
    distance = 0.5 * (v0 + v1) * dt
    half_turn = 0.5 * distance * math.tan(steer) / params.wheelbase_m
    chord = distance * (
        math.sin(half_turn) / half_turn if abs(half_turn) > 1e-6 else 1.0 - half_turn * half_turn / 6.0
    )
    heading = state.yaw + half_turn
    x = state.x + chord * math.cos(heading)
    y = state.y + chord * math.sin(heading)
    yaw = wrap_angle(state.yaw + 2.0 * half_turn)

    z, roll, pitch = _attitude(terrain, params, x, y, yaw)
    new = VehicleState(x=x, y=y, z=z, roll=roll, pitch=pitch, yaw=yaw, speed=v1, steer=steer)
    return new, _motion(new, params, accel)
