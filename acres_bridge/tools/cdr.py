"""Reading serialised ROS 2 messages (XCDR1, as rmw puts them on the wire) without deserialising them.

* ``header_stamp_ns`` and ``header_frame``: the std_msgs/Header of a message whose first field it is
  (sec, nanosec and frame_id are the first bytes after the encapsulation header).
* ``cdr_layout``: which bytes of a message are alignment padding, walked from the message's field
  layout (rosbags' typesys form, parsed from the .msg definition) and the lengths in the bytes.
  Fast CDR does not zero its padding, so two serialisations of one message may differ only there;
  ``first_difference`` compares two serialisations with those bytes masked, and ``zero_padding``
  sets them to 0, so that one message always has the same bytes (a reproducible recording).

Alignment is counted from the end of the 4-byte encapsulation header; each primitive aligns to its
own size; a string or a sequence is a uint32 count, then its elements; an empty sequence adds no
alignment for its elements (though Fast CDR's size calculation does: see cdr_layout).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rosbags.interfaces import Nodetype
from rosbags.interfaces.typing import BaseDesc, FieldDesc, NameDesc, Typesdict

from acres_bridge.tools.errors import CdrError

__all__ = [
    "ENCAPSULATION_SIZE",
    "CdrLayout",
    "cdr_layout",
    "first_difference",
    "header_frame",
    "header_stamp_ns",
    "zero_padding",
]

ENCAPSULATION_SIZE = 4
_BYTE_ORDERS = {b"\x00\x00": ">", b"\x00\x01": "<"}  # CDR_BE, CDR_LE
_SIZES = {
    "bool": 1,
    "byte": 1,
    "char": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
}


def _byte_order(data: bytes) -> str:
    if len(data) < ENCAPSULATION_SIZE:
        raise CdrError(
            f"a CDR message has a {ENCAPSULATION_SIZE}-byte encapsulation header; found {len(data)} bytes"
        )
    try:
        return _BYTE_ORDERS[bytes(data[:2])]
    except KeyError:
        raise CdrError(
            f"encapsulation {bytes(data[:2]).hex()} is not plain CDR (0000 big endian or 0001 little endian)"
        ) from None


def header_stamp_ns(data: bytes) -> int:
    """The header stamp in ns of a message whose first field is a std_msgs/Header."""
    order = _byte_order(data)
    if len(data) < ENCAPSULATION_SIZE + 8:
        raise CdrError(f"a header stamp needs {ENCAPSULATION_SIZE + 8} bytes; the message has {len(data)}")
    sec, nanosec = struct.unpack_from(f"{order}iI", data, ENCAPSULATION_SIZE)
    return int(sec) * 1_000_000_000 + int(nanosec)


def header_frame(data: bytes) -> str:
    """The header frame_id of a message whose first field is a std_msgs/Header."""
    order = _byte_order(data)
    start = ENCAPSULATION_SIZE + 12
    if len(data) < start:
        raise CdrError(f"a header frame_id needs at least {start} bytes; the message has {len(data)}")
    (length,) = struct.unpack_from(f"{order}I", data, start - 4)
    if length > len(data) - start:
        raise CdrError(f"the frame_id length {length} runs past the end of the {len(data)}-byte message")
    return bytes(data[start : start + length]).rstrip(b"\x00").decode("utf-8", errors="replace")


@dataclass(frozen=True, eq=False)
class CdrLayout:
    """The padding bytes of one serialised message and where its last field ends."""

    padding: npt.NDArray[np.bool_]  # one flag per byte of the message; the bytes after `end` included
    end: int  # the offset after the last field


class _Walker:
    """Walks the fields of one serialised message and marks its alignment padding."""

    def __init__(self, data: bytes, types: Typesdict) -> None:
        self.data = data
        self.types = types
        self.order = _byte_order(data)
        self.pos = ENCAPSULATION_SIZE
        self.padding = np.zeros(len(data), dtype=np.bool_)

    def _need(self, size: int, what: str) -> None:
        if self.pos + size > len(self.data):
            raise CdrError(
                f"{what} needs {size} bytes at offset {self.pos}; the message ends at {len(self.data)}"
            )

    def align(self, size: int, what: str) -> None:
        aligned = ENCAPSULATION_SIZE + -(-(self.pos - ENCAPSULATION_SIZE) // size) * size
        self._need(aligned - self.pos, f"the alignment before {what}")
        self.padding[self.pos : aligned] = True
        self.pos = aligned

    def count(self, what: str) -> int:
        self.align(4, what)
        self._need(4, what)
        (value,) = struct.unpack_from(f"{self.order}I", self.data, self.pos)
        self.pos += 4
        return int(value)

    def primitives(self, name: str, number: int, what: str) -> None:
        if name in ("string", "wstring"):
            for _ in range(number):
                self.string(name, what)
            return
        size = _SIZES.get(name)
        if size is None:
            raise CdrError(f"{what}: primitive type {name!r} has no CDR size here")
        if number == 0:
            return
        self.align(size, what)
        self._need(size * number, what)
        self.pos += size * number

    def string(self, name: str, what: str) -> None:
        if name == "wstring":
            raise CdrError(f"{what}: wstring fields are not supported")
        length = self.count(what)
        self._need(length, what)
        self.pos += length

    def element(self, desc: BaseDesc | NameDesc, number: int, what: str) -> None:
        if desc[0] is Nodetype.BASE:
            name, _bound = desc[1]
            self.primitives(name, number, what)
        elif desc[0] is Nodetype.NAME:
            for _ in range(number):
                self.message(desc[1], what)
        else:
            raise CdrError(f"{what}: nested arrays are not valid in a message definition")

    def field(self, desc: FieldDesc, what: str) -> None:
        if desc[0] is Nodetype.ARRAY or desc[0] is Nodetype.SEQUENCE:
            inner, size = desc[1]
            number = size if desc[0] is Nodetype.ARRAY else self.count(what)
            self.element(inner, number, what)
        else:
            self.element(desc, 1, what)

    def message(self, type_name: str, what: str) -> None:
        try:
            _constants, fields = self.types[type_name]
        except KeyError:
            raise CdrError(f"{what}: the layout has no type {type_name}") from None
        if not fields:  # rosidl gives an empty message a one-byte placeholder
            self.primitives("uint8", 1, f"{what} (empty {type_name})")
        for name, desc in fields:
            self.field(desc, f"{what}.{name}" if what else name)


def cdr_layout(data: bytes, type_name: str, types: Typesdict) -> CdrLayout:
    """The padding of one serialised message of `type_name`, whose layout (and that of every type it
    embeds) `types` gives. The bytes after the last field count as padding: Fast CDR sizes a message
    by a calculation that also aligns for the elements of empty sequences, and leaves the bytes that
    calculation adds unwritten. Raises CdrError when the bytes are too short for the layout."""
    walker = _Walker(data, types)
    walker.message(type_name, "")
    walker.padding[walker.pos :] = True
    return CdrLayout(padding=walker.padding, end=walker.pos)


def first_difference(original: bytes, again: bytes, layout: CdrLayout, again_layout: CdrLayout) -> int | None:
    """The first offset at which two serialisations of a message differ, None if they do not.

    Bytes that either layout marks as padding, and the options bytes of the encapsulation header,
    are not compared. When the last fields end at different offsets, the earlier end differs.
    """
    end = min(layout.end, again_layout.end)
    a = np.frombuffer(original, dtype=np.uint8, count=end)
    b = np.frombuffer(again, dtype=np.uint8, count=end)
    differs = (a != b) & ~layout.padding[:end] & ~again_layout.padding[:end]
    differs[2:ENCAPSULATION_SIZE] = False  # the options of the encapsulation header
    found = np.flatnonzero(differs)
    if found.size:
        return int(found[0])
    return None if layout.end == again_layout.end else end


def zero_padding(data: bytes, type_name: str, types: Typesdict) -> bytes:
    """The serialised message with its alignment padding (and whatever follows its last field) set
    to 0: the bytes of a message then depend on its values alone. CdrError as cdr_layout."""
    layout = cdr_layout(data, type_name, types)
    cleared = np.frombuffer(data, dtype=np.uint8).copy()
    cleared[layout.padding] = 0
    return cleared.tobytes()
