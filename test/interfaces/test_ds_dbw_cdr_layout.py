"""Byte layout of the ds_dbw_msgs 2.3.11 messages the bridge uses.

Each expected layout below is an ordered list of (field, CDR type, value) written out by hand from the
upstream 2.3.11 field lists, not derived from the .msg files in this repository. A small CDR writer
turns that list into the bytes a 2.3.11 peer puts on the wire (little-endian XCDR1), and the test
compares them with what rclpy serialises for a message filled with the same values.

Fast CDR leaves alignment padding uninitialised, so the comparison skips the padding offsets. Because a
field that the .msg adds could hide inside such a gap, the field names, order and types are also
compared with the message's own description.
"""

import struct
from dataclasses import dataclass, field
from typing import Any

import ds_dbw_msgs.msg as dbw
import pytest
from rclpy.serialization import deserialize_message, serialize_message

# (dotted field path, CDR type, value). Nested ds_dbw_msgs enum types are one uint8 at their position;
# their CDR type is written as the enum's name so that the nested type is checked as well.
Field = tuple[str, str, Any]

ENUM_TYPES = frozenset({"CmdSrc", "Gear", "GearManual", "GearReject", "BrakeInfDur"})
STRUCT_FORMATS = {"bool": "?", "uint8": "B", "int32": "i", "uint32": "I", "float32": "f"}
ROSIDL_TYPES = {"bool": "boolean", "uint8": "uint8", "int32": "int32", "uint32": "uint32", "float32": "float"}
ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR_LE, options 0


def header(sec: int, nanosec: int, frame_id: str) -> list[Field]:
    """std_msgs/Header inlined: int32 sec, uint32 nanosec, string frame_id."""
    return [
        ("header.stamp.sec", "int32", sec),
        ("header.stamp.nanosec", "uint32", nanosec),
        ("header.frame_id", "string", frame_id),
    ]


# Floats are exact in float32 so that a round trip compares equal. Within a message, values of the same
# type differ wherever the type allows it; bools only have two values, so swapped bools with equal values
# are caught by the field-name check instead.
LAYOUTS: dict[str, list[Field]] = {
    "SteeringCmd": [
        *header(1_700_000_001, 111_000_001, "base_link"),
        ("cmd", "float32", 12.5),
        ("cmd_rate", "float32", 250.25),
        ("cmd_accel", "float32", 1000.75),
        ("cmd_type", "uint8", 3),
        ("enable", "bool", True),
        ("clear", "bool", False),
        ("ignore", "bool", True),
    ],
    "SteeringReport": [
        *header(1_700_000_002, 222_000_002, "steer"),
        ("steering_wheel_angle", "float32", -45.5),
        ("steering_column_torque", "float32", 2.125),
        ("cmd", "float32", 0.0625),
        ("cmd_type", "uint8", 4),
        ("limiting_value", "bool", True),
        ("limiting_rate", "bool", False),
        ("external_control", "bool", True),
        ("ready", "bool", True),
        ("enabled", "bool", False),
        ("override_active", "bool", True),
        ("override_other", "bool", False),
        ("override_latched", "bool", False),
        ("timeout", "bool", True),
        ("fault", "bool", False),
        ("bad_crc", "bool", True),
        ("bad_rc", "bool", False),
        ("degraded", "bool", True),
        ("hardware_disable", "bool", False),
        ("actuator_temp", "float32", -40.0),
        ("limit_rate", "float32", 1000.5),
        ("limit_value", "float32", 487.25),
        ("cmd_src", "CmdSrc", 2),
    ],
    "ThrottleCmd": [
        *header(1_700_000_003, 333_000_003, "throttle"),
        ("cmd", "float32", 33.5),
        ("rate_inc", "float32", 10.25),
        ("rate_dec", "float32", 20.75),
        ("cmd_type", "uint8", 13),
        ("enable", "bool", True),
        ("clear", "bool", True),
        ("ignore", "bool", False),
    ],
    "ThrottleReport": [
        *header(1_700_000_004, 444_000_004, "throttle_rep"),
        ("cmd_type", "uint8", 14),
        ("percent_input", "float32", 5.5),
        ("percent_cmd", "float32", 6.25),
        ("percent_output", "float32", 7.125),
        ("yield_request", "bool", True),
        ("limiting_value", "bool", False),
        ("limiting_rate", "bool", True),
        ("external_control", "bool", False),
        ("ready", "bool", True),
        ("enabled", "bool", True),
        ("override_active", "bool", False),
        ("override_other", "bool", True),
        ("override_latched", "bool", False),
        ("timeout", "bool", False),
        ("fault", "bool", True),
        ("bad_crc", "bool", False),
        ("bad_rc", "bool", True),
        ("degraded", "bool", False),
        ("hardware_disable", "bool", True),
        ("limit_value", "float32", 80.5),
        ("cmd_src", "CmdSrc", 1),
    ],
    "BrakeCmd": [
        *header(1_700_000_005, 555_000_005, "br"),
        ("cmd", "float32", 15.5),
        ("rate_inc", "float32", 100.25),
        ("rate_dec", "float32", 200.125),
        ("cmd_type", "uint8", 1),
        ("enable", "bool", True),
        ("clear", "bool", False),
        ("ignore", "bool", True),
        ("precharge_aeb", "uint8", 2),
    ],
    "BrakeReport": [
        *header(1_700_000_006, 666_000_006, "brake_report"),
        ("cmd_type", "uint8", 14),
        ("pressure_input", "float32", 1.5),
        ("pressure_cmd", "float32", 2.5),
        ("pressure_output", "float32", 3.5),
        ("torque_input", "float32", 4.25),
        ("torque_cmd", "float32", 5.25),
        ("torque_output", "float32", 6.25),
        ("accel_cmd", "float32", -1.75),
        ("accel_output", "float32", -2.75),
        ("percent_input", "float32", 10.125),
        ("percent_cmd", "float32", 20.125),
        ("percent_output", "float32", 30.125),
        ("btsi_cmd", "bool", True),
        ("yield_request", "bool", False),
        ("limiting_value", "bool", True),
        ("limiting_rate", "bool", True),
        ("external_control", "bool", False),
        ("ready", "bool", True),
        ("enabled", "bool", False),
        ("override_active", "bool", False),
        ("override_other", "bool", True),
        ("override_latched", "bool", True),
        ("timeout", "bool", False),
        ("fault", "bool", True),
        ("bad_crc", "bool", False),
        ("bad_rc", "bool", True),
        ("degraded", "bool", True),
        ("hardware_disable", "bool", False),
        ("limit_value", "float32", 90.5),
        ("brake_available_partial_inf", "BrakeInfDur", 3),
        ("brake_available_duration", "float32", 12.75),
        ("brake_available_full", "bool", True),
        ("req_shift_park", "bool", False),
        ("req_park_brake", "bool", True),
        ("external_button", "bool", False),
        ("comms_loss_armed", "bool", True),
        ("cmd_src", "CmdSrc", 4),
    ],
    "GearCmd": [
        *header(1_700_000_007, 777_000_007, "g"),
        ("cmd", "Gear", 5),
        ("cmd_manual", "GearManual", 7),
        ("return_to_park", "bool", True),
    ],
    "GearReport": [
        *header(1_700_000_008, 888_000_008, "gear"),
        ("gear", "Gear", 4),
        ("cmd", "Gear", 2),
        ("driver", "Gear", 3),
        ("reject", "GearReject", 6),
        ("gear_manual", "GearManual", 8),
        ("cmd_manual", "GearManual", 9),
        ("power_latched", "bool", True),
        ("external_control", "bool", False),
        ("ready", "bool", True),
        ("override_active", "bool", False),
        ("override_other", "bool", True),
        ("fault", "bool", True),
        ("bad_crc", "bool", False),
        ("degraded", "bool", True),
        ("actuator_temp", "float32", 55.5),
        ("support_cmd_manual", "bool", True),
        ("ready_to_calibrate", "bool", False),
        ("req_brake_cal", "bool", True),
        ("cmd_src", "CmdSrc", 6),
    ],
    "UlcCmd": [
        *header(1_700_000_009, 999_000_009, "ulc_link"),
        ("cmd", "float32", 1.5),
        ("limit_accel", "float32", 2.25),
        ("limit_decel", "float32", 3.125),
        ("limit_jerk_throttle", "float32", 4.5),
        ("limit_jerk_brake", "float32", 5.75),
        ("cmd_type", "uint8", 2),
        ("enable", "bool", True),
        ("clear", "bool", False),
        ("enable_shift", "bool", True),
        ("enable_shift_park", "bool", False),
        ("coast_decel", "bool", True),
    ],
    "UlcReport": [
        *header(1_700_000_010, 101_000_010, "ulc_rep"),
        ("cmd_type", "uint8", 1),
        ("vel_ref", "float32", 1.5),
        ("vel_meas", "float32", 1.375),
        ("accel_ref", "float32", 0.25),
        ("accel_meas", "float32", -0.125),
        ("coast_decel", "bool", True),
        ("ready", "bool", False),
        ("enabled", "bool", True),
        ("override_active", "bool", False),
        ("override_latched", "bool", True),
        ("preempted", "bool", False),
        ("timeout", "bool", True),
        ("bad_crc", "bool", False),
        ("bad_rc", "bool", True),
    ],
    "VehicleVelocity": [
        *header(1_700_000_011, 121_000_011, "velocity"),
        ("vehicle_velocity_brake", "float32", 4.5),
        ("vehicle_velocity_propulsion", "float32", 4.625),
        ("dir_src", "uint8", 2),
    ],
}


@dataclass
class HandCdr:
    """Little-endian XCDR1 writer that remembers which field (or padding) owns each byte."""

    data: bytearray = field(default_factory=lambda: bytearray(ENCAPSULATION))
    owners: list[str] = field(default_factory=lambda: ["encapsulation header"] * len(ENCAPSULATION))
    padding: set[int] = field(default_factory=set)

    def _put(self, owner: str, raw: bytes, alignment: int) -> None:
        while (len(self.data) - len(ENCAPSULATION)) % alignment:
            self.padding.add(len(self.data))
            self.data.append(0)
            self.owners.append(f"padding before {owner}")
        self.data += raw
        self.owners += [owner] * len(raw)

    def write(self, name: str, cdr_type: str, value: Any) -> None:
        if cdr_type == "string":
            encoded = value.encode() + b"\x00"
            self._put(f"{name} (length)", struct.pack("<I", len(encoded)), 4)
            self._put(name, encoded, 1)
            return
        fmt = "<" + STRUCT_FORMATS["uint8" if cdr_type in ENUM_TYPES else cdr_type]
        self._put(name, struct.pack(fmt, value), struct.calcsize(fmt))


def hand_cdr(fields: list[Field]) -> HandCdr:
    cdr = HandCdr()
    for name, cdr_type, value in fields:
        cdr.write(name, cdr_type, value)
    return cdr


def _parent(msg: Any, path: str, cdr_type: str) -> tuple[Any, str]:
    *parents, leaf = path.split(".")
    for part in parents:
        msg = getattr(msg, part)
    if cdr_type in ENUM_TYPES:
        return getattr(msg, leaf), "value"
    return msg, leaf


def set_field(msg: Any, path: str, cdr_type: str, value: Any) -> None:
    target, attr = _parent(msg, path, cdr_type)
    setattr(target, attr, value)


def get_field(msg: Any, path: str, cdr_type: str) -> Any:
    target, attr = _parent(msg, path, cdr_type)
    return getattr(target, attr)


def layout_diff(actual: bytes, expected: HandCdr) -> str:
    """Empty if the bytes agree outside padding; otherwise a field-by-field listing of both."""
    bad = [
        i
        for i in range(min(len(actual), len(expected.data)))
        if i not in expected.padding and actual[i] != expected.data[i]
    ]
    if not bad and len(actual) == len(expected.data):
        return ""
    lines = [f"serialised {len(actual)} bytes, hand-written {len(expected.data)} bytes"]
    if bad:
        lines.append(f"first mismatch at offset {bad[0]}, in {expected.owners[bad[0]]}")
    start = 0
    for end in range(1, len(expected.data) + 1):
        if end < len(expected.data) and expected.owners[end] == expected.owners[start]:
            continue
        mark = "!!" if any(start <= i < end for i in bad) else "  "
        lines.append(
            f"{mark} {start:4d}..{end - 1:<4d} {expected.owners[start]:<40} "
            f"expected {expected.data[start:end].hex(' '):<24} got {actual[start:end].hex(' ')}"
        )
        start = end
    if len(actual) > len(expected.data):
        lines.append(f"!! extra bytes: {actual[len(expected.data) :].hex(' ')}")
    return "\n".join(lines)


def expected_description(fields: list[Field]) -> list[tuple[str, str]]:
    """(name, rosidl type) of each top-level field, in order, as the hand-written layout implies."""
    description: list[tuple[str, str]] = []
    for path, cdr_type, _ in fields:
        name = path.split(".")[0]
        if name == "header":
            rosidl_type = "std_msgs/Header"
        elif cdr_type in ENUM_TYPES:
            rosidl_type = f"ds_dbw_msgs/{cdr_type}"
        else:
            rosidl_type = ROSIDL_TYPES.get(cdr_type, cdr_type)
        if not description or description[-1][0] != name:
            description.append((name, rosidl_type))
    return description


@pytest.mark.parametrize("name", sorted(LAYOUTS), ids=sorted(LAYOUTS))
def test_field_names_order_and_types(name: str) -> None:
    msg_type = getattr(dbw, name)
    assert list(msg_type.get_fields_and_field_types().items()) == expected_description(LAYOUTS[name])


@pytest.mark.parametrize("name", sorted(LAYOUTS), ids=sorted(LAYOUTS))
def test_serialised_bytes_match_hand_written_cdr(name: str) -> None:
    fields = LAYOUTS[name]
    msg_type = getattr(dbw, name)
    msg = msg_type()
    for path, cdr_type, value in fields:
        set_field(msg, path, cdr_type, value)
    assert msg != msg_type(), "the test message must differ from the default message"
    expected = hand_cdr(fields)
    # frame_id lengths are chosen so that padding follows; GearCmd has only 1-byte fields after its header
    body_types = {t for p, t, _ in fields if not p.startswith("header.")}
    aligned = bool(body_types - ENUM_TYPES - {"bool", "uint8"})
    assert expected.padding or not aligned, "choose a frame_id length that forces padding"

    report = layout_diff(serialize_message(msg), expected)
    if report:
        pytest.fail(f"{name} CDR layout differs:\n{report}")

    decoded = deserialize_message(bytes(expected.data), msg_type)
    got = {path: get_field(decoded, path, cdr_type) for path, cdr_type, _ in fields}
    assert got == {path: value for path, _, value in fields}
    assert decoded == msg


def test_hand_writer_aligns_from_after_the_encapsulation_header() -> None:
    cdr = hand_cdr([("a", "uint8", 1), ("b", "float32", 1.0), ("c", "string", "ab"), ("d", "Gear", 4)])
    assert bytes(cdr.data) == bytes.fromhex("00010000 01 000000 0000803f 03000000 616200 04")
    assert cdr.padding == {5, 6, 7}
    assert cdr.owners[12] == "c (length)"
    shifted = bytes.fromhex("00010000 01 0000803f 03000000 616200 04")  # float not aligned
    assert "first mismatch at offset 8, in b" in layout_diff(shifted, cdr)


CONSTANTS = [
    ("SteeringCmd", "CMD_NONE", 0),
    ("SteeringCmd", "CMD_ANGLE", 2),
    ("SteeringCmd", "CMD_CURVATURE", 3),
    ("SteeringCmd", "CMD_YAW_RATE", 4),
    ("SteeringCmd", "CMD_PERCENT", 14),
    ("ThrottleCmd", "CMD_NONE", 0),
    ("ThrottleCmd", "CMD_PEDAL_RAW", 13),
    ("ThrottleCmd", "CMD_PERCENT", 14),
    ("BrakeCmd", "CMD_NONE", 0),
    ("BrakeCmd", "CMD_PRESSURE", 1),
    ("BrakeCmd", "CMD_PERCENT", 14),
    ("UlcCmd", "CMD_NONE", 0),
    ("UlcCmd", "CMD_VELOCITY", 1),
    ("UlcCmd", "CMD_ACCEL", 2),
    ("Gear", "NONE", 0),
    ("Gear", "PARK", 1),
    ("Gear", "REVERSE", 2),
    ("Gear", "NEUTRAL", 3),
    ("Gear", "DRIVE", 4),
    ("Gear", "LOW", 5),
]


@pytest.mark.parametrize(
    ("type_name", "constant", "value"), CONSTANTS, ids=[f"{t}.{c}" for t, c, _ in CONSTANTS]
)
def test_constant_values(type_name: str, constant: str, value: int) -> None:
    assert getattr(getattr(dbw, type_name), constant) == value
