"""Which decoder reads which frame kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from acres_bridge.wire import dbw, perception
from acres_bridge.wire import maxxum as mx
from acres_bridge.wire import messages as m
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.frames import Frame, FrameKind

__all__ = ["DECODERS", "decode"]

DECODERS: dict[FrameKind, Callable[[bytes], object]] = {
    FrameKind.HELLO: m.decode_hello,
    FrameKind.CLIENT_HELLO: m.decode_client_hello,
    FrameKind.ERROR: m.decode_error,
    FrameKind.EPISODE: m.decode_episode,
    FrameKind.CLOCK: m.decode_clock,
    FrameKind.STEP_REQUEST: m.decode_step_request,
    FrameKind.STEP_DONE: m.decode_step_done,
    FrameKind.SET_STATE: m.decode_set_state,
    FrameKind.RESET_SESSION: m.decode_reset_session,
    FrameKind.AGENT_RESET: m.decode_agent_reset,
    FrameKind.SENSOR_META: m.decode_sensor_meta,
    FrameKind.INS: m.decode_ins,
    FrameKind.LIDAR: perception.decode_lidar,
    FrameKind.CAMERA: perception.decode_camera,
    FrameKind.STREAM_MARK: m.decode_stream_mark,
    FrameKind.DBW_REPORT: dbw.decode_dbw_report,
    FrameKind.DBW_COMMAND: dbw.decode_dbw_command,
    FrameKind.MAXXUM_OBSERVATION: mx.decode_maxxum_observation,
    FrameKind.MAXXUM_COMMAND: mx.decode_maxxum_command,
}


def decode(frame: Frame) -> object:
    """The message of a frame; ProtocolError for a kind without a decoder or a bad payload."""
    decoder = DECODERS.get(frame.kind)
    if decoder is None:
        raise ProtocolError(f"{frame.kind.name}: no decoder for this frame kind in this version")
    # Only the decoders of bulk kinds get an array payload (FrameReader), and they take arrays.
    return decoder(cast(bytes, frame.payload))
