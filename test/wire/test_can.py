"""The CAN-over-UDP datagram codec: layout, round trips, every refusal, the barrier, and fuzzing."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acres_bridge.wire import ProtocolError
from acres_bridge.wire.can import (
    BARRIER_ID,
    CAN_MAGIC,
    CAN_VERSION,
    MAX_FRAMES_PER_DATAGRAM,
    Barrier,
    CanFlags,
    CanFrame,
    barrier_frame,
    decode_barrier,
    decode_datagram,
    encode_datagram,
    is_barrier,
)
from acres_bridge.wire.json_fields import MAX_STAMP_NS

FUZZ = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
HEADER = 8
RECORD = 32

SPEC_FRAME = CanFrame(
    can_id=0x18FF1580,
    data=bytes([58, 250, 250, 79, 250, 128, 250, 250]),
    dlc=8,
    stamp_ns=34_991_668_492,
    step=4199,
)


def frame(**changes: object) -> CanFrame:
    values: dict[str, object] = {
        "can_id": 0x0CF00400,
        "data": bytes(range(8)),
        "dlc": 8,
        "stamp_ns": 1_000_000_000,
        "step": 120,
    }
    values.update(changes)
    return CanFrame(**values)


def record_at(datagram: bytes, index: int) -> bytearray:
    start = HEADER + index * RECORD
    return bytearray(datagram[start : start + RECORD])


def with_record(datagram: bytes, index: int, record: bytes) -> bytes:
    start = HEADER + index * RECORD
    return datagram[:start] + bytes(record) + datagram[start + RECORD :]


# ---- layout and round trips ----------------------------------------------------------------------


def test_layout_of_the_spec_frame():
    datagram = encode_datagram([SPEC_FRAME])
    assert len(datagram) == HEADER + RECORD
    assert datagram[:HEADER] == CAN_MAGIC + bytes([CAN_VERSION, 0]) + struct.pack("<H", 1)
    can_id, flags, dlc, pad, data, stamp_ns, step = struct.unpack("<IBB2s8sqQ", datagram[HEADER:])
    assert can_id == 419370368  # the spec's can/rx example: 0x18FF1580
    assert flags == CanFlags.EXTENDED
    assert dlc == 8
    assert pad == b"\x00\x00"
    assert list(data) == [58, 250, 250, 79, 250, 128, 250, 250]
    assert (stamp_ns, step) == (34_991_668_492, 4199)


def test_round_trip_of_a_group():
    frames = tuple(frame(can_id=0x0CF00400 + k, step=k, stamp_ns=k * 1000) for k in range(13))
    assert decode_datagram(encode_datagram(frames)) == frames


@pytest.mark.parametrize(
    ("changes", "flags"),
    [
        ({}, CanFlags.EXTENDED),
        ({"is_extended": False, "can_id": 0x7FF}, 0),
        ({"is_rtr": True, "data": b"", "dlc": 4}, CanFlags.EXTENDED | CanFlags.RTR),
        ({"is_error": True}, CanFlags.EXTENDED | CanFlags.ERROR),
        ({"data": b"\x01\x02", "dlc": 2}, CanFlags.EXTENDED),
        ({"data": b"", "dlc": 0}, CanFlags.EXTENDED),
    ],
)
def test_round_trip_of_every_flag_and_dlc(changes, flags):
    original = frame(**changes)
    datagram = encode_datagram([original])
    assert datagram[HEADER + 4] == flags
    assert datagram[HEADER + 5] == original.dlc
    assert datagram[HEADER + 8 : HEADER + 16] == original.data.ljust(8, b"\x00")
    assert decode_datagram(datagram) == (original,)


def test_extremes_round_trip():
    original = frame(can_id=(1 << 29) - 1, stamp_ns=MAX_STAMP_NS, step=(1 << 64) - 1)
    assert decode_datagram(encode_datagram([original])) == (original,)


def test_a_full_datagram_round_trips_and_decodes_from_a_memoryview():
    frames = [frame(step=k) for k in range(MAX_FRAMES_PER_DATAGRAM)]
    datagram = encode_datagram(frames)
    assert decode_datagram(memoryview(datagram)) == tuple(frames)
    assert decode_datagram(bytearray(datagram)) == tuple(frames)


frames_strategy = st.builds(
    lambda extended, rtr, error, can_id, data, dlc, stamp_ns, step: CanFrame(
        can_id=can_id & ((1 << 29) - 1 if extended else (1 << 11) - 1),
        data=b"" if rtr else data,
        dlc=dlc if rtr else len(data),
        is_extended=extended,
        is_rtr=rtr,
        is_error=error,
        stamp_ns=stamp_ns,
        step=step,
    ),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.integers(0, (1 << 29) - 1),
    st.binary(max_size=8),
    st.integers(0, 8),
    st.integers(0, MAX_STAMP_NS),
    st.integers(0, (1 << 64) - 1),
)


@FUZZ
@given(frames=st.lists(frames_strategy, min_size=1, max_size=MAX_FRAMES_PER_DATAGRAM))
def test_round_trip_property(frames):
    datagram = encode_datagram(frames)
    assert len(datagram) == HEADER + RECORD * len(frames)
    assert decode_datagram(datagram) == tuple(frames)


# ---- refusals of the decoder ---------------------------------------------------------------------

GOOD = encode_datagram([frame(), frame(step=121)])


@pytest.mark.parametrize("size", [0, 1, 7])
def test_refuses_a_datagram_shorter_than_the_header(size):
    with pytest.raises(ProtocolError, match=rf"CAN datagram: {size} bytes, shorter than the 8-byte header"):
        decode_datagram(GOOD[:size])


def test_refuses_a_bad_magic():
    with pytest.raises(ProtocolError, match=r"magic b'ACRS', expected b'ACAN'"):
        decode_datagram(b"ACRS" + GOOD[4:])


def test_refuses_another_version_and_names_it():
    with pytest.raises(ProtocolError, match=r"speaks CAN transport version 2, this side speaks 1") as error:
        decode_datagram(GOOD[:4] + b"\x02" + GOOD[5:])
    assert error.value.version_mismatch == 2


def test_refuses_a_non_zero_reserved_byte():
    with pytest.raises(ProtocolError, match=r"reserved header byte must be 0, found 7"):
        decode_datagram(GOOD[:5] + b"\x07" + GOOD[6:])


@pytest.mark.parametrize("count", [0, MAX_FRAMES_PER_DATAGRAM + 1, 0xFFFF])
def test_refuses_a_count_out_of_range(count):
    with pytest.raises(ProtocolError, match=rf"frame count {count}, expected 1 \.\. 64"):
        decode_datagram(GOOD[:6] + struct.pack("<H", count) + GOOD[8:])


@pytest.mark.parametrize("delta", [-1, 1, -RECORD, RECORD])
def test_refuses_a_size_that_does_not_match_the_count(delta):
    data = GOOD[:delta] if delta < 0 else GOOD + bytes(delta)
    with pytest.raises(ProtocolError, match=rf"2 frames need 72 bytes, found {len(data)}"):
        decode_datagram(data)


@pytest.mark.parametrize("flags", [0x08, 0x80, 0xFF])
def test_refuses_unknown_flag_bits(flags):
    record = record_at(GOOD, 1)
    record[4] = flags
    with pytest.raises(ProtocolError, match=rf"frame 1: unknown flag bits {flags:#04x}"):
        decode_datagram(with_record(GOOD, 1, record))


@pytest.mark.parametrize("dlc", [9, 15, 255])
def test_refuses_a_dlc_above_8(dlc):
    record = record_at(GOOD, 0)
    record[5] = dlc
    with pytest.raises(ProtocolError, match=rf"frame 0: dlc {dlc}, expected 0\.\.8"):
        decode_datagram(with_record(GOOD, 0, record))


@pytest.mark.parametrize("can_id", [1 << 29, 0xFFFFFFFF])
def test_refuses_an_identifier_beyond_29_bits(can_id):
    record = record_at(GOOD, 0)
    record[0:4] = struct.pack("<I", can_id)
    with pytest.raises(ProtocolError, match=rf"identifier {can_id:#x} is beyond 29 bits"):
        decode_datagram(with_record(GOOD, 0, record))


def test_refuses_a_standard_identifier_beyond_11_bits():
    datagram = encode_datagram([frame(is_extended=False, can_id=0x7FF)])
    record = record_at(datagram, 0)
    record[0:4] = struct.pack("<I", 0x800)
    with pytest.raises(ProtocolError, match=r"identifier 0x800 is beyond 11 bits"):
        decode_datagram(with_record(datagram, 0, record))


def test_refuses_non_zero_pad_bytes():
    record = record_at(GOOD, 0)
    record[7] = 1
    with pytest.raises(ProtocolError, match=r"frame 0: pad bytes must be 0, found 0001"):
        decode_datagram(with_record(GOOD, 0, record))


@pytest.mark.parametrize(
    ("changes", "used"), [({"data": b"\x01", "dlc": 1}, 1), ({"is_rtr": True, "data": b""}, 0)]
)
def test_refuses_data_after_the_dlc(changes, used):
    datagram = encode_datagram([frame(**changes)])
    record = record_at(datagram, 0)
    record[15] = 0x55
    with pytest.raises(ProtocolError, match=rf"data bytes after the first {used} must be 0"):
        decode_datagram(with_record(datagram, 0, record))


@pytest.mark.parametrize("stamp_ns", [-1, MAX_STAMP_NS + 1, -(1 << 63)])
def test_refuses_a_stamp_out_of_range(stamp_ns):
    record = record_at(GOOD, 1)
    record[16:24] = struct.pack("<q", stamp_ns)
    with pytest.raises(
        ProtocolError, match=rf"frame 1: stamp_ns must be in 0 \.\. {MAX_STAMP_NS}, found {stamp_ns}"
    ):
        decode_datagram(with_record(GOOD, 1, record))


# ---- refusals of the encoder and of CanFrame -----------------------------------------------------


@pytest.mark.parametrize("count", [0, MAX_FRAMES_PER_DATAGRAM + 1])
def test_encode_refuses_no_frames_or_too_many(count):
    with pytest.raises(ValueError, match=rf"carries 1 \.\. 64 frames, got {count}"):
        encode_datagram([frame()] * count)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"can_id": 1 << 29}, r"can_id 0x20000000: expected a 29-bit identifier"),
        ({"can_id": -1}, r"can_id -0x1: expected a 29-bit identifier"),
        ({"can_id": 0x800, "is_extended": False}, r"can_id 0x800: expected a 11-bit identifier"),
        ({"dlc": 9, "data": bytes(9)}, r"dlc 9: expected 0\.\.8"),
        ({"dlc": 8, "data": bytes(7)}, r"data has 7 bytes: dlc is 8"),
        (
            {"is_rtr": True, "dlc": 2, "data": b"\x00\x00"},
            r"data has 2 bytes: a remote request carries no data",
        ),
        ({"stamp_ns": -1}, r"stamp_ns -1: expected 0"),
        ({"stamp_ns": MAX_STAMP_NS + 1}, r"stamp_ns \d+: expected 0"),
        ({"step": -1}, r"step -1: expected a 64-bit unsigned integer"),
        ({"step": 1 << 64}, r"step \d+: expected a 64-bit unsigned integer"),
    ],
)
def test_can_frame_refuses_what_no_datagram_carries(changes, message):
    with pytest.raises(ValueError, match=message):
        frame(**changes)


# ---- the barrier ---------------------------------------------------------------------------------


def test_barrier_frame_layout():
    barrier = barrier_frame(step=(1 << 32) + 7, stamp_ns=2_000_000_000, frames_sent=14)
    assert barrier.can_id == BARRIER_ID == 0x1CFFFF80
    assert barrier.is_extended
    assert barrier.dlc == 8
    assert barrier.data == struct.pack("<IHH", 7, 14, 0xFFFF)
    assert (barrier.step, barrier.stamp_ns) == ((1 << 32) + 7, 2_000_000_000)
    assert is_barrier(barrier)
    assert decode_barrier(barrier) == Barrier(step_low32=7, frames_sent=14)
    assert decode_datagram(encode_datagram([barrier])) == (barrier,)


@pytest.mark.parametrize(("sent", "carried"), [(-3, 0), (0, 0), (70_000, 0xFFFF)])
def test_barrier_frame_count_saturates(sent, carried):
    assert decode_barrier(barrier_frame(step=1, stamp_ns=0, frames_sent=sent)).frames_sent == carried


@pytest.mark.parametrize(
    "other",
    [
        SPEC_FRAME,
        CanFrame(can_id=BARRIER_ID, is_rtr=True, dlc=8),
        CanFrame(can_id=BARRIER_ID & 0x7FF, is_extended=False, data=bytes(8), dlc=8),
    ],
)
def test_other_frames_are_no_barrier(other):
    assert not is_barrier(other)
    with pytest.raises(ProtocolError, match=r"is not the barrier 0x1cffff80"):
        decode_barrier(other)


def test_decode_barrier_refuses_a_short_payload():
    with pytest.raises(ProtocolError, match=r"CAN barrier: expected 8 data bytes, found 4"):
        decode_barrier(CanFrame(can_id=BARRIER_ID, data=bytes(4), dlc=4))


def test_decode_barrier_refuses_a_bad_fill():
    with pytest.raises(ProtocolError, match=r"bytes 7 and 8 must be 0xFF, found 0x0000"):
        decode_barrier(CanFrame(can_id=BARRIER_ID, data=bytes(8), dlc=8))


# ---- fuzz: nothing but ProtocolError escapes ------------------------------------------------------


def decode_or_refuse(data: bytes) -> tuple[CanFrame, ...] | None:
    try:
        return decode_datagram(data)
    except ProtocolError:
        return None


@FUZZ
@given(data=st.binary(max_size=600))
def test_random_bytes_only_raise_protocol_error(data):
    decode_or_refuse(data)


@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes_after_a_valid_header_only_raise_protocol_error(data):
    count = max(1, min(len(data) // RECORD, MAX_FRAMES_PER_DATAGRAM))
    decode_or_refuse(CAN_MAGIC + bytes([CAN_VERSION, 0]) + struct.pack("<H", count) + data)


@FUZZ
@given(spots=st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_datagrams_decode_to_valid_frames_or_are_refused(spots):
    data = bytearray(GOOD)
    for position, value in spots:
        data[position] = value
    frames = decode_or_refuse(bytes(data))
    if frames is not None:
        assert decode_datagram(encode_datagram(frames)) == frames
