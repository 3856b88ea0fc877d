"""Framing of the TCP channels between the simulator and the bridge.

Every frame is a 16-byte little-endian header followed by its payload:

    magic   4 bytes  b"ACRS"
    version uint16   PROTOCOL_VERSION of the sender
    kind    uint16   FrameKind
    length  uint32   payload bytes, at most MAX_PAYLOAD
    check   uint32   CRC-32 of the 12 bytes before it

`FrameReader` turns a byte stream into frames. A header with a bad magic or check, an unknown
version, an unknown kind or an oversized length is dropped and counted; the reader then
searches the stream for the next magic, so garbage between frames never costs the frames
after it. The check guards the length field: a corrupted length cannot swallow good frames.
Payloads are not checksummed (TCP already does); their decoders validate sizes and values.
"""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "HEADER",
    "MAGIC",
    "MAX_PAYLOAD",
    "PROTOCOL_VERSION",
    "Frame",
    "FrameKind",
    "FrameReader",
    "encode_frame",
]

MAGIC = b"ACRS"
PROTOCOL_VERSION = 1
HEADER = struct.Struct("<4sHHII")
_HEAD = struct.Struct("<4sHHI")
MAX_PAYLOAD = 64 * 1024 * 1024


class FrameKind(IntEnum):
    """What a frame carries. Ranges: 1-19 control, 20-39 sensor stream, 40-59 vehicle bridge."""

    HELLO = 1  # simulator -> bridge, JSON: the session
    CLIENT_HELLO = 2  # bridge -> simulator, JSON: who connects, which agent
    ERROR = 3  # either way, JSON: a refusal with its reason; the sender then closes
    EPISODE = 4  # simulator -> bridge, JSON: the episode clock
    CLOCK = 5  # simulator -> bridge, binary: one physics step
    STEP_REQUEST = 6  # bridge -> simulator, binary: run N steps (lockstep)
    STEP_DONE = 7  # simulator -> bridge, binary: those steps are done and their data sent
    SET_STATE = 8  # bridge -> simulator, JSON: play, pause, stop
    RESET_SESSION = 9  # bridge -> simulator, JSON: new episode for the whole session
    AGENT_RESET = 10  # bridge -> simulator, JSON: move one agent to a pose
    SENSOR_META = 20  # simulator -> bridge, JSON: the sensor rig of an agent
    INS = 21  # simulator -> bridge, binary: one INS sample
    LIDAR = 22  # simulator -> bridge, binary: one LiDAR cloud
    CAMERA = 23  # simulator -> bridge, binary: one camera image
    STREAM_MARK = 39  # simulator -> bridge, binary: all data through a step has been sent
    DBW_REPORT = 40  # simulator -> bridge, binary: the Polaris report line
    DBW_COMMAND = 41  # bridge -> simulator, binary: a drive-by-wire command
    MAXXUM_OBSERVATION = 50  # simulator -> bridge, JSON: the tractor's observation
    MAXXUM_COMMAND = 51  # bridge -> simulator, JSON: tractor commands


_KINDS = frozenset(int(kind) for kind in FrameKind)


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame: its kind and its payload (a view into the reader's buffer copy)."""

    kind: FrameKind
    payload: bytes


def encode_frame(kind: FrameKind, payload: bytes | bytearray | memoryview = b"") -> bytes:
    """Header plus payload, ready to send."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds MAX_PAYLOAD ({MAX_PAYLOAD})")
    head = _HEAD.pack(MAGIC, PROTOCOL_VERSION, int(kind), len(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + bytes(payload)


class FrameReader:
    """Incremental decoder of a frame stream; counts what it drops, by reason.

    feed() takes whatever bytes arrived; frames() yields every complete frame. A peer of
    another protocol version is reported through `version_mismatch` (the version it spoke),
    so the owner can refuse it with a clear message instead of treating it as noise.
    """

    def __init__(self, *, max_payload: int = MAX_PAYLOAD) -> None:
        self._buffer = bytearray()
        self._max_payload = max_payload
        self.dropped: Counter[str] = Counter()
        self.version_mismatch: int | None = None
        self.frames_read = 0
        self._skipping = False  # inside a dropped stretch that may go on in the next feed

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        self._buffer += data

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def frames(self) -> Iterator[Frame]:
        buffer = self._buffer
        start = 0
        try:
            while len(buffer) - start >= HEADER.size:
                magic, version, kind, length, check = HEADER.unpack_from(buffer, start)
                reason = None
                if magic != MAGIC:
                    reason = "bad magic"
                elif check != zlib.crc32(buffer[start : start + _HEAD.size]):
                    reason = "bad header check"
                elif version != PROTOCOL_VERSION:
                    reason = "protocol version"
                    self.version_mismatch = version
                elif kind not in _KINDS:
                    reason = "unknown kind"
                elif length > self._max_payload:
                    reason = "oversized"
                if reason is not None:
                    if not self._skipping or magic == MAGIC:  # one count per dropped stretch
                        self.dropped[reason] += 1
                    self._skipping = True
                    start = self._resync(buffer, start + 1)
                    continue
                self._skipping = False
                end = start + HEADER.size + length
                if len(buffer) < end:
                    break
                with memoryview(buffer) as view:
                    payload = bytes(view[start + HEADER.size : end])
                start = end
                self.frames_read += 1
                yield Frame(FrameKind(kind), payload)
        finally:
            del buffer[:start]

    @staticmethod
    def _resync(buffer: bytearray, position: int) -> int:
        """The offset of the next magic; without one, of a partial magic at the very end, else the end."""
        found = buffer.find(MAGIC, position)
        if found >= 0:
            return found
        for keep in range(len(MAGIC) - 1, 0, -1):
            start = len(buffer) - keep
            if start >= position and buffer[start:] == MAGIC[:keep]:
                return start
        return len(buffer)
