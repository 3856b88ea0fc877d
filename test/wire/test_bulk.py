"""FrameReader's large payloads: assembled in a buffer of their own, received straight into it."""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acres_bridge.wire import Clock, FrameKind, FrameReader, decode, encode
from acres_bridge.wire.frames import BULK_PAYLOAD, HEADER
from acres_bridge.wire.perception import LidarScan, encode_lidar_frame

POINTS = np.arange(300 * 16 * 4, dtype=np.float32).reshape(300, 16, 4)  # 76,800 bytes: a bulk payload
CLOUD = encode_lidar_frame(step=12, stamp_ns=100_000_000, sensor=0, columns=300, rings=16, points=POINTS)
CLOCK = encode(Clock(step=12, stamp_ns=100_000_000))


def test_the_cloud_is_large_enough_to_be_assembled_apart():
    assert len(CLOUD) - HEADER.size >= BULK_PAYLOAD


@pytest.mark.parametrize("chunk", [1000, 65536, 1 << 20])
def test_a_large_frame_between_small_ones_arrives_whole_and_in_order(chunk):
    reader = FrameReader()
    frames = reader.receive(CLOCK + CLOUD + CLOCK + CLOUD, piece=chunk)
    assert [f.kind for f in frames] == [FrameKind.CLOCK, FrameKind.LIDAR, FrameKind.CLOCK, FrameKind.LIDAR]
    scan = decode(frames[1])
    assert isinstance(scan, LidarScan)
    assert bytes(scan.points) == POINTS.tobytes()
    assert reader.frames_read == 4
    assert reader.buffered == 0
    assert reader.bulk_space() is None


def test_a_large_payload_goes_into_a_buffer_of_its_size_that_is_received_into():
    reader = FrameReader()
    reader.feed(CLOUD[:1000])
    assert list(reader.frames()) == []
    space = reader.bulk_space()
    assert space is not None
    assert len(space) == len(CLOUD) - 1000
    assert reader.buffered == 1000 - HEADER.size
    space[:] = CLOUD[1000:]
    reader.bulk_received(len(space))
    (frame,) = list(reader.frames())
    assert isinstance(frame.payload, array)
    assert bytes(frame.payload) == CLOUD[HEADER.size :]


def test_feed_fills_the_large_payload_first_then_buffers_the_rest():
    reader = FrameReader()
    reader.feed(CLOUD[:500])
    assert list(reader.frames()) == []
    reader.feed(CLOUD[500:] + CLOCK)
    assert [f.kind for f in reader.frames()] == [FrameKind.LIDAR, FrameKind.CLOCK]


def test_an_incomplete_large_payload_yields_nothing_yet():
    reader = FrameReader()
    reader.feed(CLOUD[:-1])
    assert list(reader.frames()) == []
    assert list(reader.frames()) == []
    reader.feed(CLOUD[-1:])
    assert len(list(reader.frames())) == 1


def test_bulk_received_refuses_what_does_not_fit():
    reader = FrameReader()
    with pytest.raises(ValueError, match=r"bulk_received\(10\) does not fit"):
        reader.bulk_received(10)
    reader.feed(CLOUD[:100])
    list(reader.frames())
    with pytest.raises(ValueError, match="does not fit"):
        reader.bulk_received(len(CLOUD))


@settings(max_examples=60, deadline=None, database=None)
@given(
    order=st.lists(st.booleans(), min_size=1, max_size=5),
    chunk=st.integers(1, 40_000),
)
def test_any_chunking_of_large_and_small_frames_gives_the_same_frames(order, chunk):
    stream = b"".join(CLOUD if large else CLOCK for large in order)
    reader = FrameReader()
    frames = reader.receive(stream, piece=chunk)
    assert [f.kind for f in frames] == [FrameKind.LIDAR if large else FrameKind.CLOCK for large in order]
    assert all(
        bytes(f.payload) == (CLOUD if f.kind is FrameKind.LIDAR else CLOCK)[HEADER.size :] for f in frames
    )


def test_a_large_frame_fed_whole_is_an_array_too_and_a_small_or_other_kind_is_bytes():
    reader = FrameReader()
    reader.feed(CLOUD + CLOCK)
    cloud, clock = list(reader.frames())
    assert isinstance(cloud.payload, array)
    assert isinstance(clock.payload, bytes)
    assert bytes(cloud.payload) == CLOUD[HEADER.size :]


def test_the_decoder_takes_the_array_over_and_the_reader_reuses_it_only_once_it_is_free():
    reader = FrameReader()
    reader.feed(CLOUD)
    (frame,) = list(reader.frames())
    payload = frame.payload
    scan = decode(frame)
    assert scan.points is payload  # no copy: the array lost its trailer in place
    assert len(scan.points) == POINTS.nbytes
    del frame, payload
    other = np.full_like(POINTS, 7.0)
    reader.feed(
        encode_lidar_frame(step=24, stamp_ns=200_000_000, sensor=0, columns=300, rings=16, points=other)
    )
    second = decode(next(iter(reader.frames())))
    assert second.points is not scan.points  # the first scan still holds its array
    assert bytes(scan.points) == POINTS.tobytes()
    kept = id(second.points)
    del second
    reader.feed(CLOUD)
    third = decode(next(iter(reader.frames())))
    assert id(third.points) == kept  # free again: reused, its length restored
    assert bytes(third.points) == POINTS.tobytes()
