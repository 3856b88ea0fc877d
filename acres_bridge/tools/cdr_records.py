"""Writing plain CDR (little endian) by precompiled struct layouts: for messages written at a high rate
(the episode log's per-step channels), where building message objects for a generic serialiser
would cost more than the step. The tests hold it byte for byte against rosbags and mcap_ros2."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

from acres_bridge.wire.clock import NS_PER_S

__all__ = ["CDR_LE", "CdrRecord", "cdr_string", "pack_stamped_sequence"]

CDR_LE: Final = b"\x00\x01\x00\x00"  # the encapsulation header of little-endian plain CDR
_ALIGNMENT: Final = {"?": 1, "B": 1, "I": 4, "i": 4, "Q": 8, "d": 8}


class CdrRecord:
    """The plain CDR (little endian) of a run of fields, packed by one struct.

    ``codes`` are struct codes of primitives and "s" for a string (its length with the NUL as a
    uint32, then its UTF-8 bytes and the NUL). Each primitive aligns to its size, counted from the
    end of the encapsulation header, so the layout depends on where the run starts (modulo 8) and
    on its strings' lengths: each layout met is compiled once.
    """

    def __init__(self, codes: str) -> None:
        self._codes = codes
        self._layouts: dict[tuple[int, tuple[int, ...]], tuple[struct.Struct, int]] = {}

    def _layout(self, start: int, lengths: tuple[int, ...]) -> tuple[struct.Struct, int]:
        key = (start % 8, lengths)
        layout = self._layouts.get(key)
        if layout is None:
            position = start % 8
            codes = ["<"]
            strings = iter(lengths)
            for code in self._codes:
                if code == "s":
                    size = next(strings)
                    pad = -position % 4
                    codes.append(f"{pad}xI{size}s")
                    position += pad + 4 + size
                else:
                    size = _ALIGNMENT[code]
                    pad = -position % size
                    codes.append(f"{pad}x{code}")
                    position += pad + size
            layout = (struct.Struct("".join(codes)), position - start % 8)
            self._layouts[key] = layout
        return layout

    def pack(self, start: int, lengths: tuple[int, ...], values: Sequence[object]) -> tuple[bytes, int]:
        """The bytes of the run starting at offset ``start``, and the offset after it. ``values`` hold
        each string as its length and its bytes (with the NUL); ``lengths`` those lengths."""
        layout, size = self._layout(start, lengths)
        return layout.pack(*values), start + size


_SEQUENCE_HEADER: Final = CdrRecord("iIsQI")  # header (stamp, frame_id), step, the sequence's count


def cdr_string(value: str) -> bytes:
    """A string's CDR bytes: UTF-8 and the NUL."""
    return value.encode() + b"\x00"


def pack_stamped_sequence(
    stamp_ns: int,
    step: int,
    record: CdrRecord,
    items: Sequence[tuple[tuple[int, ...], Sequence[object]]],
    frame: bytes = cdr_string("world"),
) -> bytes:
    """A message of a std_msgs/Header, a uint64 step and a sequence (e.g. AgentStates, FarmStamps,
    FarmEvents): the header, the step, then ``items`` as (string lengths, values) of ``record``."""
    sec, nanosec = divmod(stamp_ns, NS_PER_S)
    head, position = _SEQUENCE_HEADER.pack(
        0, (len(frame),), (sec, nanosec, len(frame), frame, step, len(items))
    )
    parts = [CDR_LE, head]
    for lengths, values in items:
        data, position = record.pack(position, lengths, values)
        parts.append(data)
    return b"".join(parts)
