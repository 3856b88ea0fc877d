"""CAN conversions: a frame of the tractor to can/rx, a can/tx message to a checked frame."""

from __future__ import annotations

import numpy as np
import pytest
from can_msgs.msg import Frame
from hypothesis import given
from hypothesis import strategies as st

from acres_bridge.convert.can import (
    CAN_FRAME_ID,
    CanFrameRefusedError,
    checked_frame,
    frame_message,
    is_published,
)
from acres_bridge.errors import CommandRefusedError
from acres_bridge.wire.can import CanFrame, barrier_frame, decode_datagram, encode_datagram
from acres_bridge.wire.json_fields import MAX_STAMP_NS

# The spec's example: POWER 0x18FF1580 at 34.991668492 s.
POWER = CanFrame(
    can_id=0x18FF1580,
    data=bytes([58, 250, 250, 79, 250, 128, 250, 250]),
    dlc=8,
    stamp_ns=34_991_668_492,
    step=4199,
)


def message(
    *, can_id: int = 0x0CFF30FF, dlc: int = 8, extended: bool = True, rtr: bool = False, data: bytes = b""
) -> Frame:
    frame = Frame(id=can_id, dlc=dlc, is_extended=extended, is_rtr=rtr)
    frame.data = np.frombuffer(data.ljust(8, b"\x00")[:8], dtype=np.uint8)
    return frame


def test_a_frame_of_the_tractor_becomes_the_spec_example_on_can_rx() -> None:
    m = frame_message(POWER)
    assert (m.header.stamp.sec, m.header.stamp.nanosec) == (34, 991_668_492)
    assert m.header.frame_id == CAN_FRAME_ID == "can"
    assert (m.id, m.is_rtr, m.is_extended, m.is_error, m.dlc) == (419370368, False, True, False, 8)
    assert list(m.data) == [58, 250, 250, 79, 250, 128, 250, 250]


def test_a_short_frame_is_padded_with_zeros_and_a_remote_request_has_no_data() -> None:
    short = frame_message(CanFrame(can_id=0x123, data=b"\x01\x02", dlc=2, is_extended=False))
    assert (short.dlc, list(short.data), short.is_extended) == (2, [1, 2, 0, 0, 0, 0, 0, 0], False)
    remote = frame_message(CanFrame(can_id=0x123, dlc=4, is_extended=False, is_rtr=True))
    assert (remote.dlc, remote.is_rtr, list(remote.data)) == (4, True, [0] * 8)


def test_the_barrier_is_not_published_and_the_frames_of_the_group_are() -> None:
    assert not is_published(barrier_frame(step=12, stamp_ns=100_000_000, frames_sent=13))
    assert is_published(POWER)
    # The barrier's identifier as a standard frame's is another frame (it cannot be: 11 bits), and a
    # remote request with the barrier's identifier is no barrier either.
    assert is_published(CanFrame(can_id=0x1CFFFF80, dlc=8, is_rtr=True))


def test_a_can_tx_frame_keeps_id_flags_dlc_and_the_first_dlc_bytes() -> None:
    frame = checked_frame(message(dlc=3, data=b"\x0a\x0b\x0c\x0d\x0e"))
    assert (frame.can_id, frame.dlc, frame.data, frame.is_extended, frame.step) == (
        0x0CFF30FF,
        3,
        b"\x0a\x0b\x0c",
        True,
        0,
    )
    remote = checked_frame(message(can_id=0x7FF, dlc=8, extended=False, rtr=True, data=b"\xff" * 8))
    assert (remote.can_id, remote.is_rtr, remote.data, remote.dlc) == (0x7FF, True, b"", 8)


def test_the_stamp_of_a_can_tx_frame_is_kept_when_it_is_a_simulation_time_else_0() -> None:
    m = message()
    m.header.stamp.sec, m.header.stamp.nanosec = 12, 500
    assert checked_frame(m).stamp_ns == 12_000_000_500
    m.header.stamp.sec = 2**31 - 1
    assert checked_frame(m).stamp_ns == (2**31 - 1) * 1_000_000_000 + 500 <= MAX_STAMP_NS
    m.header.stamp.sec = -5  # before the session: no simulation time
    assert checked_frame(m).stamp_ns == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dlc": 9}, r"can/tx: dlc 9 is above 8"),
        ({"dlc": 255}, r"can/tx: dlc 255 is above 8"),
        ({"can_id": 1 << 29}, r"id 0x20000000 is beyond the 29 bits of an extended identifier"),
        ({"can_id": 0xFFFFFFFF}, r"id 0xffffffff is beyond the 29 bits"),
        ({"can_id": 0x800, "extended": False}, r"id 0x800 is beyond the 11 bits of a standard \(is_extended"),
    ],
    ids=["dlc-9", "dlc-255", "id-30-bits", "id-32-bits", "standard-id-12-bits"],
)
def test_a_bad_can_tx_frame_is_refused_naming_the_field(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(CanFrameRefusedError, match=match):
        checked_frame(message(**kwargs))  # type: ignore[arg-type]


def test_a_refused_frame_is_a_refused_command() -> None:
    assert issubclass(CanFrameRefusedError, CommandRefusedError)


@st.composite
def tx_messages(draw: st.DrawFn) -> Frame:
    """Any can/tx message: every id of 32 bits, every dlc of 8 bits, every flag, every stamp (with
    the valid ids and dlcs drawn as often as the others)."""
    m = message(
        can_id=draw(st.one_of(st.integers(0, 0x7FF), st.integers(0, 2**29 - 1), st.integers(0, 2**32 - 1))),
        dlc=draw(st.one_of(st.integers(0, 8), st.integers(0, 255))),
        extended=draw(st.booleans()),
        rtr=draw(st.booleans()),
        data=draw(st.binary(min_size=8, max_size=8)),
    )
    m.is_error = draw(st.booleans())
    m.header.stamp.sec = draw(st.integers(-(2**31), 2**31 - 1))
    m.header.stamp.nanosec = draw(st.integers(0, 999_999_999))
    return m


@given(tx_messages())
def test_can_tx_accepts_exactly_what_a_datagram_carries(m: Frame) -> None:
    valid = m.dlc <= 8 and m.id < (1 << (29 if m.is_extended else 11))
    if not valid:
        with pytest.raises(CanFrameRefusedError, match="can/tx: "):
            checked_frame(m)
        return
    frame = checked_frame(m)
    assert 0 <= frame.stamp_ns <= MAX_STAMP_NS
    assert frame.data == (b"" if m.is_rtr else bytes(m.data[: m.dlc]))
    # It goes on the wire and comes back the same, and can/rx would show it as it was sent.
    (back,) = decode_datagram(encode_datagram([frame]))
    assert back == frame
    shown = frame_message(back)
    assert (shown.id, shown.dlc, shown.is_extended, shown.is_rtr, shown.is_error) == (
        m.id,
        m.dlc,
        m.is_extended,
        m.is_rtr,
        m.is_error,
    )
    assert bytes(shown.data[: len(frame.data)]) == frame.data
