"""The tractor's parameter groups: the 13 status frames it sends every 0.1 s and the four command
frames it accepts (docs/can.md has the table)."""

from __future__ import annotations

from typing import Final

from acres_bridge.wire.can import CanFrame
from acres_sim.vehicles.j1939.codec import (
    BRAKES_ADDRESS,
    ENGINE_ADDRESS,
    GLOBAL_ADDRESS,
    TRACTOR_ADDRESS,
    DecodedFrame,
    FrameSpec,
    Signal,
    decode_frame,
)

__all__ = ["COMMAND_FRAMES", "GROUP_SIZE", "STATUS_FRAMES", "decode", "frame_spec"]

GROUP_SIZE: Final = 13


def _state(name: str, byte: int, bit: int) -> Signal:
    """A J1939 2-bit state: 00 off, 01 on (10 error, 11 not available)."""
    return Signal(name, byte, bit, 2, max_raw=1)


def _code(name: str, byte: int, bit: int, length: int, max_raw: int) -> Signal:
    return Signal(name, byte, bit, length, max_raw=max_raw)


def _percent(name: str, byte: int) -> Signal:
    return Signal(name, byte, scale=0.4, unit="%")


def _torque(name: str, byte: int) -> Signal:
    return Signal(name, byte, scale=1.0, offset=-125.0, unit="%")


def _speed(name: str) -> Signal:
    return Signal(name, 1, length=16, scale=0.001, unit="m/s")


def _distance(name: str) -> Signal:
    return Signal(name, 3, length=32, scale=0.001, unit="m")


def _direction(byte: int, bit: int) -> Signal:
    """ISO 11783-7 A.7: 00 reverse, 01 forward."""
    return _state("direction", byte, bit)


STATUS_FRAMES: Final = (
    FrameSpec(
        "EEC1",
        "Electronic engine controller 1",
        0xF004,
        3,
        ENGINE_ADDRESS,
        (
            _code("torque_mode", 1, 1, 4, 14),
            _torque("drivers_demand_torque_pct", 2),
            _torque("actual_torque_pct", 3),
            Signal("engine_speed_rpm", 4, length=16, scale=0.125, unit="r/min"),
            _torque("engine_demand_torque_pct", 8),
        ),
    ),
    FrameSpec(
        "EEC2",
        "Electronic engine controller 2",
        0xF003,
        3,
        ENGINE_ADDRESS,
        (
            _percent("accelerator_pedal_pct", 2),
            Signal("engine_load_pct", 3, unit="%"),
            _percent("remote_accelerator_pct", 4),
        ),
    ),
    FrameSpec(
        "EBC1",
        "Electronic brake controller 1",
        0xF001,
        6,
        BRAKES_ADDRESS,
        (_percent("brake_pedal_pct", 2),),
    ),
    FrameSpec(
        "WBSD",
        "Wheel-based speed and distance",
        0xFE48,
        3,
        TRACTOR_ADDRESS,
        (
            _speed("wheel_speed_mps"),
            _distance("wheel_distance_m"),
            _direction(8, 1),
            _state("key_switch", 8, 3),
            _state("start_stop", 8, 5),
            _state("operator_direction_reversed", 8, 7),
        ),
    ),
    FrameSpec(
        "GBSD",
        "Ground-based speed and distance",
        0xFE49,
        3,
        TRACTOR_ADDRESS,
        (_speed("ground_speed_mps"), _distance("ground_distance_m"), _direction(8, 1)),
    ),
    FrameSpec(
        "MSS",
        "Machine selected speed",
        0xF022,
        3,
        TRACTOR_ADDRESS,
        (
            _speed("selected_speed_mps"),
            _distance("selected_distance_m"),
            _code("exit_code", 7, 1, 6, 61),
            _direction(8, 1),
            _code("speed_source", 8, 3, 3, 6),
            _code("limit_status", 8, 6, 3, 6),
        ),
    ),
    FrameSpec(
        "RHS",
        "Primary or rear hitch status",
        0xFE45,
        3,
        TRACTOR_ADDRESS,
        (
            _percent("hitch_position_pct", 1),
            _code("limit_status", 2, 4, 3, 6),
            _state("in_work", 2, 7),
            Signal("lower_link_force_pct", 3, scale=0.8, offset=-100.0, unit="%"),
            Signal("draft_n", 4, length=16, scale=10.0, offset=-320_000.0, unit="N"),
            _code("exit_code", 6, 1, 6, 61),
        ),
    ),
    FrameSpec(
        "RPTO",
        "Primary or rear PTO output shaft",
        0xFE43,
        3,
        TRACTOR_ADDRESS,
        (
            Signal("pto_speed_rpm", 1, length=16, scale=0.125, unit="r/min"),
            Signal("pto_set_point_rpm", 3, length=16, scale=0.125, unit="r/min"),
            _state("engagement_request_status", 5, 1),
            _state("economy_mode", 5, 3),
            _state("mode_1000", 5, 5),
            _state("engagement", 5, 7),
            _code("exit_code", 7, 1, 6, 61),
        ),
    ),
    FrameSpec(
        "GMS",
        "Guidance machine status",
        0xAC00,
        3,
        TRACTOR_ADDRESS,
        (
            Signal("estimated_curvature_1pm", 1, length=16, scale=0.00025, offset=-8.032, unit="1/m"),
            _state("mechanical_lockout", 3, 1),
            _state("steering_ready", 3, 3),
            _state("steering_input_position", 3, 5),
            _state("request_reset", 3, 7),
            _code("limit_status", 4, 6, 3, 6),
            _code("exit_code", 5, 1, 6, 61),
        ),
    ),
    FrameSpec(
        "DRIVE",
        "Drive state (proprietary)",
        0xFF12,
        6,
        TRACTOR_ADDRESS,
        (
            _percent("pedal_pct", 1),
            _percent("brake_pct", 2),
            _percent("hand_throttle_pct", 3),
            _code("difflock", 4, 1, 2, 2),
            _state("safety_brake", 4, 3),
            Signal("accel_mps2", 5, length=16, scale=0.001, offset=-32.0, unit="m/s^2"),
            Signal("engine_set_rpm", 7, length=16, scale=0.125, unit="r/min"),
        ),
    ),
    FrameSpec(
        "STEER",
        "Steering state (proprietary)",
        0xFF13,
        6,
        TRACTOR_ADDRESS,
        (
            Signal("road_wheel_angle_rad", 1, length=16, scale=0.0001, offset=-3.2, unit="rad"),
            Signal("road_wheel_target_rad", 3, length=16, scale=0.0001, offset=-3.2, unit="rad"),
            Signal("curvature_command_1pm", 5, length=16, scale=0.0001, offset=-3.2, unit="1/m"),
            _state("at_angle_limit", 7, 1),
        ),
    ),
    FrameSpec(
        "HITCH",
        "Hitch and implement state (proprietary)",
        0xFF14,
        6,
        TRACTOR_ADDRESS,
        (
            Signal("lift_deg", 1, length=16, scale=1.0 / 128.0, offset=-200.0, unit="deg"),
            _percent("lever_pct", 3),
            _code("hitch_mode", 4, 1, 2, 2),
            _state("raise_command", 4, 3),
            _state("raised", 4, 5),
            Signal("working_depth_m", 5, length=16, scale=0.0001, unit="m"),
            Signal("depth_stop_m", 7, length=16, scale=0.0001, unit="m"),
        ),
    ),
    FrameSpec(
        "POWER",
        "Power and implement (proprietary)",
        0xFF15,
        6,
        TRACTOR_ADDRESS,
        (
            Signal("pto_power_kw", 1, length=16, scale=0.01, unit="kW"),
            Signal("drawbar_power_kw", 3, length=16, scale=0.01, unit="kW"),
            Signal("engine_power_kw", 5, length=16, scale=0.01, unit="kW"),
            _percent("wheel_slip_pct", 7),
            Signal("implement_code", 8),
        ),
    ),
)

COMMAND_FRAMES: Final = (
    FrameSpec(
        "GSC",
        "Guidance system command",
        0xAD00,
        3,
        GLOBAL_ADDRESS,
        (
            Signal("curvature_1pm", 1, length=16, scale=0.00025, offset=-8.032, unit="1/m"),
            _state("curvature_status", 3, 1),
        ),
        destination=TRACTOR_ADDRESS,
    ),
    FrameSpec(
        "HPC",
        "Hitch and PTO commands",
        0xFE42,
        3,
        GLOBAL_ADDRESS,
        (
            _percent("front_hitch_pct", 1),
            _percent("rear_hitch_pct", 2),
            Signal("front_pto_set_point_rpm", 3, length=16, scale=0.125, unit="r/min"),
            Signal("rear_pto_set_point_rpm", 5, length=16, scale=0.125, unit="r/min"),
            _state("rear_pto_engagement", 7, 5),
            _state("front_pto_engagement", 7, 7),
            _state("rear_pto_economy", 8, 1),
            _state("front_pto_economy", 8, 3),
            _state("rear_pto_mode_1000", 8, 5),
            _state("front_pto_mode_1000", 8, 7),
        ),
    ),
    FrameSpec(
        "DRIVE_CMD",
        "Drive command (proprietary)",
        0xFF30,
        3,
        GLOBAL_ADDRESS,
        (
            _percent("pedal_pct", 1),
            _percent("brake_pct", 2),
            _percent("hand_throttle_pct", 3),
            _code("difflock", 4, 1, 2, 2),
        ),
    ),
    FrameSpec(
        "IMPLEMENT_CMD",
        "Implement command (proprietary)",
        0xFF31,
        3,
        GLOBAL_ADDRESS,
        (
            _state("raise", 1, 1),
            _code("hitch_mode", 1, 3, 2, 2),
            Signal("depth_stop_m", 2, length=16, scale=0.0001, unit="m"),
        ),
    ),
)

_BY_PGN: Final = {spec.pgn: spec for spec in (*STATUS_FRAMES, *COMMAND_FRAMES)}
_BY_NAME: Final = {spec.name: spec for spec in (*STATUS_FRAMES, *COMMAND_FRAMES)}


def frame_spec(name: str) -> FrameSpec:
    """The group ``name`` (e.g. "EEC1", "GSC"); KeyError names the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no CAN group {name!r}; known: {sorted(_BY_NAME)}") from None


def decode(frame: CanFrame) -> DecodedFrame | None:
    """The signals of a frame of the tables; None for any other frame (unknown PGN, 11-bit, remote, error).

    ParamsError for a frame of a known group with other than 8 data bytes.
    """
    return decode_frame(frame, _BY_PGN)
