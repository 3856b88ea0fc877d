"""The tractor's side of its CAN bus: the status frames of an observation, and the command a
controller's frame gives (the mapping between the tractor model and acres_sim.vehicles.j1939.frames)."""

from __future__ import annotations

from typing import Final

from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.maxxum import MAX_DEPTH_STOP_M, Difflock, HitchMode
from acres_sim.vehicles.j1939.codec import GLOBAL_ADDRESS, TRACTOR_ADDRESS, encode_frame
from acres_sim.vehicles.j1939.frames import STATUS_FRAMES, decode
from acres_sim.vehicles.tractor import TractorCommand, TractorObservation

__all__ = ["command_from_frame", "frames_from_observation"]

# ISO 11783-7 codes shared by several groups.
_EXIT_ALL_CLEAR: Final = 0b000000
_EXIT_REMOTE_TIMEOUT: Final = 0b000101
_LIMIT_NONE: Final = 0b000
_LIMIT_HIGH: Final = 0b010
_LIMIT_LOW: Final = 0b011
_SPEED_SOURCE_GROUND: Final = 0b001
_DISTANCE_WRAP_M: Final = 4_211_081.216  # ISO 11783-7 A.6: the distance restarts at 0 after its maximum
_HITCH_MODE_CODES: Final = {HitchMode.POSITION: 0, HitchMode.DRAFT: 1, HitchMode.FLOAT: 2}
_HITCH_MODES_BY_CODE: Final = {code: mode for mode, code in _HITCH_MODE_CODES.items()}


def _on(flag: bool) -> int:
    return 1 if flag else 0


def _status_values(o: TractorObservation) -> dict[str, dict[str, float | None]]:
    """The signal values of each status group for an observation."""
    direction = _on(o.speed_mps >= 0.0)
    load_pct = 100.0 * o.engine_load
    exit_code = _EXIT_REMOTE_TIMEOUT if o.stale else _EXIT_ALL_CLEAR
    if not o.steering_at_limit:
        steering_limit = _LIMIT_NONE
    else:  # ISO counts right positive: a lock to the left limits the ISO curvature from below
        steering_limit = _LIMIT_LOW if o.steering_target_rad > 0.0 else _LIMIT_HIGH
    return {
        "EEC1": {
            "torque_mode": _on(max(o.pedal, o.hand_throttle) > 0.0),
            "drivers_demand_torque_pct": 100.0 * max(o.pedal, o.hand_throttle),
            "actual_torque_pct": load_pct,
            "engine_speed_rpm": o.engine_rpm,
            "engine_demand_torque_pct": load_pct,
        },
        "EEC2": {
            "accelerator_pedal_pct": 100.0 * o.pedal,
            "engine_load_pct": load_pct,
            "remote_accelerator_pct": 100.0 * o.hand_throttle,
        },
        "EBC1": {"brake_pedal_pct": 100.0 * o.brake},
        "WBSD": {
            "wheel_speed_mps": abs(o.wheel_speed_mps),
            "wheel_distance_m": o.wheel_distance_m % _DISTANCE_WRAP_M,
            "direction": direction,
            "key_switch": 1,
            "operator_direction_reversed": 0,
        },
        "GBSD": {
            "ground_speed_mps": abs(o.speed_mps),
            "ground_distance_m": o.distance_m % _DISTANCE_WRAP_M,
            "direction": direction,
        },
        "MSS": {
            "selected_speed_mps": abs(o.speed_mps),
            "selected_distance_m": o.distance_m % _DISTANCE_WRAP_M,
            "exit_code": exit_code,
            "direction": direction,
            "speed_source": _SPEED_SOURCE_GROUND,
            "limit_status": _LIMIT_NONE,
        },
        "RHS": {
            "hitch_position_pct": 100.0 * o.hitch_position,
            "limit_status": _LIMIT_NONE,
            "in_work": _on(o.implement_depth_m > 0.0),
            "lower_link_force_pct": 100.0 * o.lower_link_force,
            "draft_n": o.draft_n,
            "exit_code": _EXIT_ALL_CLEAR,
        },
        "RPTO": {
            "pto_speed_rpm": o.pto_rpm,
            "pto_set_point_rpm": float(o.pto_speed_rpm),
            "economy_mode": 0,
            "mode_1000": _on(o.pto_speed_rpm == 1000),
            "engagement": _on(o.pto_on),
            "exit_code": _EXIT_ALL_CLEAR,
        },
        "GMS": {
            "estimated_curvature_1pm": -o.curvature_1pm,
            "mechanical_lockout": 0,
            "steering_ready": 1,
            "steering_input_position": 1,
            "request_reset": 0,
            "limit_status": steering_limit,
            "exit_code": exit_code,
        },
        "DRIVE": {
            "pedal_pct": 100.0 * o.pedal,
            "brake_pct": 100.0 * o.brake,
            "hand_throttle_pct": 100.0 * o.hand_throttle,
            "difflock": int(o.difflock),
            "safety_brake": _on(o.stale),
            "accel_mps2": o.accel_mps2,
            "engine_set_rpm": o.engine_set_rpm,
        },
        "STEER": {
            "road_wheel_angle_rad": o.steering_angle_rad,
            "road_wheel_target_rad": o.steering_target_rad,
            "curvature_command_1pm": o.curvature_command_1pm,
            "at_angle_limit": _on(o.steering_at_limit),
        },
        "HITCH": {
            "lift_deg": o.hitch_lift_deg,
            "lever_pct": 100.0 * o.hitch_lever,
            "hitch_mode": _HITCH_MODE_CODES[o.hitch_mode],
            "raise_command": _on(o.hitch_raise),
            "raised": _on(o.raised),
            "working_depth_m": o.implement_depth_m,
            "depth_stop_m": o.depth_stop_m,
        },
        "POWER": {
            "pto_power_kw": o.pto_kw,
            "drawbar_power_kw": o.drawbar_kw,
            "engine_power_kw": o.engine_kw,
            "wheel_slip_pct": 100.0 * o.wheel_slip,
            "implement_code": o.implement_code,
        },
    }


def frames_from_observation(observation: TractorObservation) -> tuple[CanFrame, ...]:
    """The 13 frames of the tractor's group for an observation, stamped with its step and time."""
    values = _status_values(observation)
    return tuple(
        encode_frame(spec, values[spec.name], step=observation.step, stamp_ns=observation.stamp_ns)
        for spec in STATUS_FRAMES
    )


# ---- commands from the bus -----------------------------------------------------------------------


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else min(max(percent / 100.0, 0.0), 1.0)


def _flag(state: float | None) -> bool | None:
    return None if state is None else bool(state)


def command_from_frame(frame: CanFrame) -> TractorCommand | None:
    """The tractor command of a controller's frame; None for a frame that commands nothing.

    None also for a guidance command to another address or without "intended to steer", and for a
    command frame whose every signal says "don't care". ParamsError for a malformed command frame.
    """
    decoded = decode(frame)
    if decoded is None:
        return None
    s = decoded.signals
    command: TractorCommand | None = None
    if decoded.name == "GSC":
        aimed = decoded.destination in (TRACTOR_ADDRESS, GLOBAL_ADDRESS)
        curvature = s["curvature_1pm"]
        if aimed and s["curvature_status"] == 1 and curvature is not None:
            command = TractorCommand(curvature_1pm=-curvature)
    elif decoded.name == "HPC":
        command = TractorCommand(
            hitch_lever=_fraction(s["rear_hitch_pct"]), pto_on=_flag(s["rear_pto_engagement"])
        )
    elif decoded.name == "DRIVE_CMD":
        difflock = s["difflock"]
        command = TractorCommand(
            pedal=_fraction(s["pedal_pct"]),
            brake=_fraction(s["brake_pct"]),
            hand_throttle=_fraction(s["hand_throttle_pct"]),
            difflock=None if difflock is None else Difflock(int(difflock)),
        )
    elif decoded.name == "IMPLEMENT_CMD":
        mode = s["hitch_mode"]
        depth = s["depth_stop_m"]
        command = TractorCommand(
            hitch_raise=_flag(s["raise"]),
            hitch_mode=None if mode is None else _HITCH_MODES_BY_CODE[int(mode)],
            depth_stop_m=None if depth is None else min(depth, MAX_DEPTH_STOP_M),
        )
    if command is None or command == TractorCommand():
        return None
    return command
