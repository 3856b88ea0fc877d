"""An episode's track from its episode log: where agent 0 drove, how fast, how it steered, and how
far from the route, at 10 Hz of simulated time. Pure reading and numpy; no plotting.

The episode log (docs/episode_log.md) is what ``acres_sim --episode-log`` writes and what each
scenario episode keeps as ``episode_log.mcap``: /sim/agent_states has every agent's exact state
after each physics step. Only every twelfth step (10 Hz) is decoded, so a long episode is read in
proportion to its length at a tenth of the cost.

The log is data from elsewhere: it is read once, in the order written, from its start to the end
of its data section, with the CRC of each chunk and of the whole data section checked, a chunk
decompressed within a bound whatever its header claims. A file that is cut, corrupt or of other
messages gives TrackReadError naming why, never another error and never a wrong track.
"""

from __future__ import annotations

import io
import math
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, BinaryIO, Final, cast

import lz4.frame  # type: ignore[import-untyped]
import numpy as np
import numpy.typing as npt
import zstandard
from mcap.exceptions import EndOfFile, McapError
from mcap.records import Channel, Chunk, DataEnd, Footer, Message, Schema, Statistics
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap_ros2.decoder import DecoderFactory

from acres_bridge.geo.route import Route, acre_loop
from acres_bridge.report.files import open_regular

__all__ = [
    "AGENT_STATES",
    "MAX_CHUNK_BYTES",
    "MAX_EPISODE_LOG_BYTES",
    "EpisodeTrack",
    "TrackReadError",
    "cross_track_m",
    "read_track",
]

AGENT_STATES: Final = "/sim/agent_states"
SAMPLE_NS: Final = 100_000_000  # 10 Hz of simulated time
MAX_EPISODE_LOG_BYTES: Final = 4 * 1024**3  # a day of one agent (its log grows by about 165 MB an hour)
MAX_CHUNK_BYTES: Final = 256 * 1024**2  # a chunk's records, uncompressed (the writers' are 1 MiB)
MAX_STATE_MAGNITUDE: Final = 1e9  # m, m/s, rad: a state beyond it is no vehicle's (and would not plot)
MAX_AGENT_NAME: Final = 100  # characters of agent 0's name kept for the plan's legend
_CHUNK: Final = 2048  # points per block of the route projection (bounds its memory)
# What the MCAP framing and the decompressors raise on bytes that are not a whole MCAP file.
_FRAMING_ERRORS: Final = (
    McapError,
    ValueError,  # the CRCs' CRCValidationError, text that is no UTF-8
    struct.error,
    KeyError,
    IndexError,
    OverflowError,
    EOFError,
    zstandard.ZstdError,
    RuntimeError,  # lz4's error for a bad frame
)

FloatArray = npt.NDArray[np.float64]
Row = tuple[float, float, float, float, float]


class TrackReadError(ValueError):
    """An episode log that gives no track: not a regular file inside its folder, not a whole MCAP
    file (its CRCs do not match, a record is cut), or no agent states that decode. The message
    starts with the file's name."""


@dataclass(frozen=True)
class EpisodeTrack:
    """Agent 0's track: ``t`` simulated s from the log's first state; ``x``, ``y`` world (tile) m;
    ``speed`` m/s (signed); ``steering`` road-wheel angle rad; ``cross_track`` m from the route."""

    agent: str
    t: FloatArray
    x: FloatArray
    y: FloatArray
    speed: FloatArray
    steering: FloatArray
    cross_track: FloatArray

    @property
    def distance_m(self) -> float:
        """The path length driven."""
        return float(np.hypot(np.diff(self.x), np.diff(self.y)).sum()) if self.x.size > 1 else 0.0


def read_track(path: Path, route: Route | None = None) -> EpisodeTrack:
    """Agent 0's track of an episode log (`path` resolved, a regular file of at most
    MAX_EPISODE_LOG_BYTES); TrackReadError for anything else, never another error."""
    try:
        with open_regular(path, path.name, MAX_EPISODE_LOG_BYTES) as stream:
            rows, agent = _read_rows(_Capped(stream, os.fstat(stream.fileno()).st_size))
    except TrackReadError as error:
        raise TrackReadError(f"{path.name}: cannot be read: {error}") from None
    except ValueError as error:  # RunFileError: its message names the file
        raise TrackReadError(str(error)) from None
    except OSError as error:
        raise TrackReadError(f"{path.name}: cannot be read: {error.strerror}") from None
    if not rows:
        raise TrackReadError(f"{path.name}: no {AGENT_STATES} in it (an episode log of acres_sim?)")
    data = np.array(rows, dtype=np.float64)
    x, y = data[:, 1], data[:, 2]
    return EpisodeTrack(
        agent=agent,
        t=data[:, 0],
        x=x,
        y=y,
        speed=data[:, 3],
        steering=data[:, 4],
        cross_track=cross_track_m(route or acre_loop(), x, y),
    )


class _Capped(io.BufferedIOBase):
    """A file read through: a read never asks for more than is left of the file, for a corrupt
    length may claim exabytes and a read of that size is allocated before it is read."""

    def __init__(self, stream: BinaryIO, size: int) -> None:
        super().__init__()
        self._stream = stream
        self._left = size

    def read(self, size: int | None = -1) -> bytes:
        wanted = self._left if size is None or size < 0 else min(size, self._left)
        data = self._stream.read(wanted)
        self._left -= len(data)
        return data


def _read_rows(stream: _Capped) -> tuple[list[Row], str]:
    """(t, x, y, speed, steering) of agent 0 at 10 Hz, and its name, from an MCAP stream read
    once from its start to its data end, each CRC checked; TrackReadError naming what is wrong."""
    try:
        return _sampled_rows(_data_records(stream))
    except TrackReadError:
        raise
    except EndOfFile:
        raise TrackReadError("the file ends inside a record (cut short?)") from None
    except _FRAMING_ERRORS as error:
        raise TrackReadError(_why(error)) from None


def _why(error: BaseException) -> str:
    """An error of a reader as one short line."""
    text = str(error).replace("\n", " ")
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


def _data_records(stream: _Capped) -> Iterator[Schema | Channel | Message]:
    """The schemas, channels and messages of the data section, in the order written (those of
    each chunk decompressed within MAX_CHUNK_BYTES). The CRCs of the chunks (and of the data
    section, when its writer kept one) are checked, and the messages per channel must be those
    the summary's statistics count: a record whose framing was damaged (skipped as one of another
    kind) is found even where no CRC covers it. A file whose data section does not end is refused."""
    records = StreamReader(cast(IO[bytes], stream), emit_chunks=True, validate_crcs=True).records
    counts: dict[int, int] = {}
    for record in records:
        if isinstance(record, DataEnd):  # its CRC was checked before it was given
            break
        if isinstance(record, Footer):
            raise TrackReadError("no data end record: the file was not closed by its writer")
        inner: Iterable[Any] = (
            breakup_chunk(_inflated(record), validate_crc=True) if isinstance(record, Chunk) else (record,)
        )
        for item in inner:
            if isinstance(item, Message):
                counts[item.channel_id] = counts.get(item.channel_id, 0) + 1
            if isinstance(item, Schema | Channel | Message):
                yield item
    else:
        raise TrackReadError("no data end record: the file was not closed by its writer")
    statistics = [r for r in records if isinstance(r, Statistics)]  # the summary, to the file's end
    if statistics and {k: n for k, n in statistics[-1].channel_message_counts.items() if n} != counts:
        raise TrackReadError("its messages are not those its summary counts (a record was damaged)")


def _inflated(chunk: Chunk) -> Chunk:
    """The chunk with its records uncompressed, at most MAX_CHUNK_BYTES of them whatever its
    header claims (a compressed frame may claim any size)."""
    size = chunk.uncompressed_size
    if size > MAX_CHUNK_BYTES:
        raise TrackReadError(f"a chunk of {size} bytes uncompressed; at most {MAX_CHUNK_BYTES}")
    if chunk.compression == "":
        return chunk
    if chunk.compression == "zstd":
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(chunk.data))
        data = _read_at_most(reader.read, size + 1)
    elif chunk.compression == "lz4":
        data = lz4.frame.LZ4FrameDecompressor().decompress(chunk.data, max_length=size + 1)
    else:
        raise TrackReadError(f"a chunk of unknown compression {chunk.compression[:40]!r}")
    if len(data) != size:
        raise TrackReadError(f"a chunk whose records are not the {size} bytes its header says")
    return replace(chunk, compression="", data=data)


def _read_at_most(read: Callable[[int], bytes], limit: int) -> bytes:
    """Up to `limit` bytes of a stream, read in pieces."""
    pieces: list[bytes] = []
    left = limit
    while left > 0 and (piece := read(min(left, 1024**2))):
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


def _sampled_rows(records: Iterable[Schema | Channel | Message]) -> tuple[list[Row], str]:
    """Agent 0's rows every SAMPLE_NS of log time, from the records in the order written."""
    factory = DecoderFactory()
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    rows: list[Row] = []
    agent = ""
    first_ns: int | None = None
    next_ns = 0
    for record in records:
        if isinstance(record, Schema):
            schemas[record.id] = record
            continue
        if isinstance(record, Channel):
            channels[record.id] = record
            continue
        channel = channels.get(record.channel_id)
        if channel is None:
            raise TrackReadError(f"a message of channel {record.channel_id}, which the file does not define")
        if channel.topic != AGENT_STATES or record.log_time < next_ns:
            continue
        if first_ns is None:
            first_ns = record.log_time
        next_ns = record.log_time + SAMPLE_NS
        state = _agent_zero(factory, schemas.get(channel.schema_id), channel, record.data)
        if state is None:
            continue
        agent, row = state
        rows.append(((record.log_time - first_ns) / 1e9, *row))
    return rows, agent


def _agent_zero(
    factory: DecoderFactory, schema: Schema | None, channel: Channel, data: bytes
) -> tuple[str, tuple[float, float, float, float]] | None:
    """Agent 0's name and (x, y, speed, steering) in one AgentStates message, None when it has no
    agents; TrackReadError when the message does not decode to finite numbers."""
    if schema is None:
        raise TrackReadError(f"{AGENT_STATES}: no schema {channel.schema_id} in the file")
    try:
        decoder = factory.decoder_for(channel.message_encoding, schema)
        if decoder is None:
            raise TrackReadError(f"cannot decode {AGENT_STATES} ({channel.message_encoding[:40]})")
        states = decoder(data).agents
        if not states:
            return None
        state = states[0]
        p = state.pose.position
        row = (float(p.x), float(p.y), float(state.speed_mps), float(state.steering_angle_rad))
        name = str(state.name)[:MAX_AGENT_NAME]
    except TrackReadError:
        raise
    except Exception as error:  # the schema's text and the message's bytes are the file's: so is the error
        raise TrackReadError(f"{AGENT_STATES} does not decode: {_why(error)}") from None
    if not all(math.isfinite(v) and abs(v) <= MAX_STATE_MAGNITUDE for v in row):
        raise TrackReadError(
            f"{AGENT_STATES}: agent 0's state is beyond ±{MAX_STATE_MAGNITUDE:g} or not finite {row}"
        )
    return name, row


def cross_track_m(route: Route, x: FloatArray, y: FloatArray) -> FloatArray:
    """The distance of each point to the route (its closed polyline), in m."""
    start = route.xy
    seg = np.roll(route.xy, -1, axis=0) - start
    length2 = np.maximum((seg**2).sum(axis=1), 1e-12)
    out = np.empty(x.size, dtype=np.float64)
    for i in range(0, x.size, _CHUNK):
        px = x[i : i + _CHUNK, None] - start[None, :, 0]
        py = y[i : i + _CHUNK, None] - start[None, :, 1]
        u = np.clip((px * seg[None, :, 0] + py * seg[None, :, 1]) / length2[None, :], 0.0, 1.0)
        dx = px - u * seg[None, :, 0]
        dy = py - u * seg[None, :, 1]
        out[i : i + _CHUNK] = np.sqrt((dx * dx + dy * dy).min(axis=1))
    return out
