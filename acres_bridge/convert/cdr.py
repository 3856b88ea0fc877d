"""Messages serialized straight to CDR: a fixed layout per publisher, one struct.pack a message.

rclpy publishes a message object by reading it field by field into C and serializing that; for
the small messages of every INS sample this, with building the object, costs several times what
packing the same values does. A publisher whose strings never change (a header's frame id, a
child frame) has a fixed layout, and rclpy publishes bytes as they are (``Publisher.publish``
of ``bytes``). This module builds such layouts: plain CDR, little endian, as rmw_fastrtps
serializes ROS 2 messages: the 4-byte encapsulation header, then each value aligned to its own
size counted from the end of that header; a string is its length with the NUL (uint32), its
bytes and the NUL. Padding is written as zeros (Fast CDR leaves it as it finds it: readers skip
it). Pure: no ROS here; acres_bridge.convert.ins_cdr has the INS messages' layouts.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from typing import Final

from acres_bridge.wire.clock import NS_PER_S

__all__ = ["ENCAPSULATION", "StampedLayout", "time_message"]

ENCAPSULATION: Final = b"\x00\x01\x00\x00"  # CDR, little endian, no options
_ALIGNMENT: Final = {"b": 1, "B": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "f": 4, "d": 8, "q": 8, "Q": 8}
_ITEM: Final = re.compile(r"(\d*)([a-zA-Z?])")
_STAMP: Final = struct.Struct("<iI")  # builtin_interfaces/Time: sec, nanosec


def _aligned(codes: str, offset: int) -> tuple[str, int]:
    """`codes` (struct codes with counts, no padding) with the CDR padding put in, as a
    little-endian format, for data that starts `offset` bytes into the payload; and the offset
    after it."""
    parts = ["<"]
    position = 0
    for count_text, code in _ITEM.findall(codes.replace(" ", "")):
        if code not in _ALIGNMENT:
            raise ValueError(f"no CDR alignment for struct code {code!r}")
        size = _ALIGNMENT[code]
        pad = -(offset + position) % size
        if pad:
            parts.append(f"{pad}x")
        count = int(count_text or 1)
        parts.append(f"{count}{code}")
        position += pad + count * size
    return "".join(parts), offset + position


def _string(text: str, offset: int) -> tuple[bytes, int]:
    """A CDR string at `offset` into the payload, its padding before it; and the offset after it."""
    data = text.encode()
    if b"\x00" in data:
        raise ValueError(f"a CDR string holds no NUL: {text!r}")
    pad = -offset % 4
    encoded = bytes(pad) + struct.pack("<I", len(data) + 1) + data + b"\x00"
    return encoded, offset + len(encoded)


def _time(stamp_ns: int) -> bytes:
    """A builtin_interfaces/Time of integer nanoseconds (acres_bridge.convert.stamps.stamp's)."""
    return _STAMP.pack(stamp_ns // NS_PER_S, stamp_ns % NS_PER_S)


def time_message(stamp_ns: int) -> bytes:
    """A message that is one builtin_interfaces/Time (rosgraph_msgs/Clock), serialized."""
    return ENCAPSULATION + _time(stamp_ns)


class StampedLayout:
    """The layout of a message that starts with a std_msgs/Header whose frame id never changes,
    then any further fixed strings (`strings`, e.g. a child frame id), then numbers only
    (`body`: struct codes with counts, in field order, e.g. ``"3d 4d 36d"``).

    With `sequence_of_one`, the message is a sequence holding one such element (the length 1
    before it), as tf2_msgs/TFMessage with one transform."""

    def __init__(
        self, frame_id: str, body: str, strings: Sequence[str] = (), *, sequence_of_one: bool = False
    ) -> None:
        self._lead = ENCAPSULATION + (struct.pack("<I", 1) if sequence_of_one else b"")
        offset = len(self._lead) - len(ENCAPSULATION) + _STAMP.size
        fixed = b""
        for text in (frame_id, *strings):
            encoded, offset = _string(text, offset)
            fixed += encoded
        self._fixed = fixed
        body_format, self._end = _aligned(body, offset)
        self._body = struct.Struct(body_format)

    @property
    def size(self) -> int:
        """Bytes of every message of this layout, the encapsulation header included."""
        return len(ENCAPSULATION) + self._end

    def pack(self, stamp_ns: int, *values: float | int) -> bytes:
        """The serialized message: stamp_ns as the header's stamp, `values` in `body`'s order."""
        return self._lead + _time(stamp_ns) + self._fixed + self._body.pack(*values)
