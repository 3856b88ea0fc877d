"""Framing of the TCP channels between the simulator and the bridge.

Every frame is a 16-byte little-endian header followed by its payload:

    magic   4 bytes  b"ACRS"
    version uint16   PROTOCOL_VERSION of the sender
    kind    uint16   FrameKind
    length  uint32   payload bytes, at most MAX_PAYLOAD
    check   uint32   CRC-32 of the 12 bytes before it

`FrameReader` turns a byte stream into frames. A header with a bad magic or check, an unknown
version, an unknown kind, a kind the channel does not carry (`kinds`: what the peer may send on
it) or a length beyond its kind's maximum (`MAX_PAYLOAD_OF`: only clouds and images may be large)
is dropped and counted before anything is allocated for it; the reader then
searches the stream for the next magic, so garbage between frames never costs the frames
after it. The check guards the length field: a corrupted length cannot swallow good frames.
Payloads are not checksummed (TCP already does); their decoders validate sizes and values.

A large payload of a bulk kind (a LiDAR cloud, a camera image) is assembled in a buffer of its
own, an `array.array('B')` of its exact size, instead of the stream buffer: `bulk_space()`
offers the rest of it to receive straight into (`socket.recv_into`), so its bytes are copied
once, by the kernel, and the array becomes the data of the ROS message as it is (its decoder
takes it over). Arrays are reused once nothing refers to them any more, so a steady stream of
clouds does not fault in fresh pages for every cloud.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "BULK_KINDS",
    "BULK_PAYLOAD",
    "FROM_SIMULATOR_KINDS",
    "HEADER",
    "MAGIC",
    "MAX_PAYLOAD",
    "MAX_PAYLOAD_OF",
    "PROTOCOL_VERSION",
    "SMALL_PAYLOAD",
    "TO_SIMULATOR_KINDS",
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
BULK_PAYLOAD = 64 * 1024  # bulk-kind payloads from this size on are assembled in an array of their own
_BULK_POOL = 8  # buffers of large payloads kept for reuse per reader
_UNREFERENCED = 3  # sys.getrefcount of a pooled buffer nothing else refers to: pool, loop, argument


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
    SENSOR_DEMAND = 11  # bridge -> simulator, JSON: the sensors of an agent whose frames are wanted
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
BULK_KINDS = frozenset({FrameKind.LIDAR, FrameKind.CAMERA})
SMALL_PAYLOAD = 64 * 1024  # every kind but clouds and images: JSON (MAX_JSON_BYTES) or a few numbers
MAX_PAYLOAD_OF: dict[int, int] = {
    int(kind): MAX_PAYLOAD if kind in BULK_KINDS else SMALL_PAYLOAD for kind in FrameKind
}
# What each side may send, on which channel (docs/protocol.md): a reader takes only those kinds.
TO_SIMULATOR_KINDS = frozenset(
    {
        FrameKind.CLIENT_HELLO,
        FrameKind.ERROR,
        FrameKind.STEP_REQUEST,
        FrameKind.SET_STATE,
        FrameKind.RESET_SESSION,
        FrameKind.AGENT_RESET,
        FrameKind.SENSOR_DEMAND,
        FrameKind.DBW_COMMAND,
        FrameKind.MAXXUM_COMMAND,
    }
)
FROM_SIMULATOR_KINDS: dict[str, frozenset[FrameKind]] = {
    "control": frozenset(
        {FrameKind.HELLO, FrameKind.ERROR, FrameKind.EPISODE, FrameKind.CLOCK, FrameKind.STEP_DONE}
    ),
    "sensor": frozenset(
        {
            FrameKind.ERROR,
            FrameKind.SENSOR_META,
            FrameKind.INS,
            FrameKind.LIDAR,
            FrameKind.CAMERA,
            FrameKind.STREAM_MARK,
        }
    ),
    "vehicle": frozenset(
        {FrameKind.ERROR, FrameKind.DBW_REPORT, FrameKind.MAXXUM_OBSERVATION, FrameKind.STREAM_MARK}
    ),
}


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: its kind and its payload: bytes, or for a large payload of a bulk kind the
    array('B') it was received into, which its decoder may take over."""

    kind: FrameKind
    payload: bytes | array[int]


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

    def __init__(self, *, max_payload: int = MAX_PAYLOAD, kinds: Iterable[FrameKind] | None = None) -> None:
        """`kinds`: the kinds this stream may carry (default: every kind)."""
        self._buffer = bytearray()
        self._max_payload = max_payload
        self._kinds = _KINDS if kinds is None else frozenset(int(kind) for kind in kinds)
        self.dropped: Counter[str] = Counter()
        self.version_mismatch: int | None = None
        self.frames_read = 0
        self._skipping = False  # inside a dropped stretch that may go on in the next feed
        self._bulk: array[int] | None = None  # the large payload being assembled
        self._bulk_kind = FrameKind.HELLO
        self._bulk_filled = 0
        self._pool: list[tuple[int, array[int]]] = []  # (size made for, array)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        bulk = self._bulk
        if bulk is not None:
            taken = min(len(data), len(bulk) - self._bulk_filled)
            memoryview(bulk)[self._bulk_filled : self._bulk_filled + taken] = data[:taken]
            self._bulk_filled += taken
            data = data[taken:]
        if data:
            self._buffer += data

    def bulk_space(self) -> memoryview | None:
        """The missing part of a large payload, to receive into directly; None when there is none.

        After receiving n bytes into it, call `bulk_received(n)`.
        """
        if self._bulk is None or self._bulk_filled == len(self._bulk):
            return None
        return memoryview(self._bulk)[self._bulk_filled :]

    def bulk_received(self, size: int) -> None:
        """`size` bytes were received into `bulk_space()`."""
        if self._bulk is None or not 0 <= size <= len(self._bulk) - self._bulk_filled:
            raise ValueError(f"bulk_received({size}) does not fit the payload being assembled")
        self._bulk_filled += size

    def receive(self, data: bytes | bytearray | memoryview, *, piece: int = 256 * 1024) -> list[Frame]:
        """Take a stream held in memory (a capture, a file) as a socket would deliver it: in pieces,
        the rest of a large payload straight into its array, the frames taken after each piece."""
        view = memoryview(data)
        frames: list[Frame] = []
        position = 0
        while position < len(view):
            space = self.bulk_space()
            if space is not None:
                size = min(len(space), piece, len(view) - position)
                space[:size] = view[position : position + size]
                self.bulk_received(size)
            else:
                size = min(piece, len(view) - position)
                self.feed(view[position : position + size])
            position += size
            frames.extend(self.frames())
        return frames

    @property
    def buffered(self) -> int:
        return len(self._buffer) + (self._bulk_filled if self._bulk is not None else 0)

    def frames(self) -> Iterator[Frame]:
        if self._bulk is not None:
            if self._bulk_filled < len(self._bulk):
                return
            bulk, self._bulk = self._bulk, None
            self.frames_read += 1
            yield Frame(self._bulk_kind, bulk)
        buffer = self._buffer
        start = 0
        try:
            while len(buffer) - start >= HEADER.size:
                magic, _version, kind, length, _check = HEADER.unpack_from(buffer, start)
                reason = self._refusal(buffer, start)
                if reason is not None:
                    if not self._skipping or magic == MAGIC:  # one count per dropped stretch
                        self.dropped[reason] += 1
                    self._skipping = True
                    start = self._resync(buffer, start + 1)
                    continue
                self._skipping = False
                end = start + HEADER.size + length
                is_bulk = length >= BULK_PAYLOAD and kind in BULK_KINDS
                if len(buffer) < end:
                    if is_bulk:
                        self._start_bulk(FrameKind(kind), length, buffer, start + HEADER.size)
                        start = len(buffer)
                    break
                payload: bytes | array[int]
                with memoryview(buffer) as view:
                    if is_bulk:
                        payload = self._free_array(length)
                        memoryview(payload)[:] = view[start + HEADER.size : end]
                    else:
                        payload = bytes(view[start + HEADER.size : end])
                start = end
                self.frames_read += 1
                yield Frame(FrameKind(kind), payload)
        finally:
            del buffer[:start]

    def _refusal(self, buffer: bytearray, start: int) -> str | None:
        """Why the header at `start` is dropped, or None when its frame is taken."""
        magic, version, kind, length, check = HEADER.unpack_from(buffer, start)
        if magic != MAGIC:
            return "bad magic"
        if check != zlib.crc32(buffer[start : start + _HEAD.size]):
            return "bad header check"
        if version != PROTOCOL_VERSION:
            self.version_mismatch = version
            return "protocol version"
        if kind not in _KINDS:
            return "unknown kind"
        if kind not in self._kinds:
            return "unexpected kind"
        if length > min(self._max_payload, MAX_PAYLOAD_OF[kind]):
            return "oversized"
        return None

    def _start_bulk(self, kind: FrameKind, length: int, buffer: bytearray, offset: int) -> None:
        """Move the buffered start of a large payload into a buffer of the payload's size."""
        bulk = self._free_array(length)
        received = len(buffer) - offset
        with memoryview(buffer) as view:
            memoryview(bulk)[:received] = view[offset:]
        self._bulk, self._bulk_kind, self._bulk_filled = bulk, kind, received

    def _free_array(self, length: int) -> array[int]:
        """A pooled array of `length` bytes that nothing refers to any more, else a new one.

        A decoder may have cut the end off an array it took over; it gets its length back here.
        """
        for made_for, pooled in self._pool:
            if made_for == length and sys.getrefcount(pooled) <= _UNREFERENCED:
                missing = length - len(pooled)
                if missing > 0:
                    pooled.frombytes(bytes(missing))
                elif missing < 0:
                    del pooled[length:]
                return pooled
        fresh = array("B", bytes(length))
        if len(self._pool) >= _BULK_POOL:
            self._pool.pop(0)
        self._pool.append((length, fresh))
        return fresh

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
