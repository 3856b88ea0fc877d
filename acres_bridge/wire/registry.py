"""The one table of the protocol's messages: each frame kind, its message class and its codec.

`encode` and `decode` are derived from it, and so is the ingest's relay (a sample's class names
its channel), so a new message is a row here beside its dataclass (wire.messages) and its two functions
(wire.json_codecs or wire.binary_codecs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from acres_bridge.wire import binary_codecs, dbw, json_codecs, perception
from acres_bridge.wire import maxxum as mx
from acres_bridge.wire import messages as m
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.frames import Frame, FrameKind, encode_frame

__all__ = ["DECODERS", "MESSAGES", "SAMPLE_TYPES", "MessageSpec", "decode", "encode", "spec_of"]

M = TypeVar("M")


@dataclass(frozen=True, kw_only=True)
class MessageSpec(Generic[M]):
    """One message of the protocol: its frame kind, its class, and its payload codec."""

    kind: FrameKind
    message_type: type[M]
    encode: Callable[[M], bytes]  # the payload, without the frame header
    decode: Callable[[bytes], M]  # ProtocolError for a payload that does not match
    sample: bool = False  # a sample the simulator streams for the bridge's nodes (the link relays it)


MESSAGES: tuple[MessageSpec[Any], ...] = (
    MessageSpec(
        kind=FrameKind.HELLO,
        message_type=m.Hello,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_hello,
    ),
    MessageSpec(
        kind=FrameKind.CLIENT_HELLO,
        message_type=m.ClientHello,
        encode=json_codecs.encode_client_hello,
        decode=json_codecs.decode_client_hello,
    ),
    MessageSpec(
        kind=FrameKind.ERROR,
        message_type=m.ErrorReply,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_error,
    ),
    MessageSpec(
        kind=FrameKind.EPISODE,
        message_type=m.EpisodeInfo,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_episode,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.CLOCK,
        message_type=m.Clock,
        encode=binary_codecs.encode_clock,
        decode=binary_codecs.decode_clock,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.STEP_REQUEST,
        message_type=m.StepRequest,
        encode=binary_codecs.encode_step_request,
        decode=binary_codecs.decode_step_request,
    ),
    MessageSpec(
        kind=FrameKind.STEP_DONE,
        message_type=m.StepDone,
        encode=binary_codecs.encode_step_done,
        decode=binary_codecs.decode_step_done,
    ),
    MessageSpec(
        kind=FrameKind.SET_STATE,
        message_type=m.SetState,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_set_state,
    ),
    MessageSpec(
        kind=FrameKind.RESET_SESSION,
        message_type=m.ResetSession,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_reset_session,
    ),
    MessageSpec(
        kind=FrameKind.AGENT_RESET,
        message_type=m.AgentReset,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_agent_reset,
    ),
    MessageSpec(
        kind=FrameKind.SENSOR_DEMAND,
        message_type=m.SensorDemand,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_sensor_demand,
    ),
    MessageSpec(
        kind=FrameKind.SENSOR_META,
        message_type=m.SensorMeta,
        encode=json_codecs.encode_json,
        decode=json_codecs.decode_sensor_meta,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.INS,
        message_type=m.InsSample,
        encode=binary_codecs.encode_ins,
        decode=binary_codecs.decode_ins,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.LIDAR,
        message_type=perception.LidarScan,
        encode=perception.encode_lidar,
        decode=perception.decode_lidar,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.CAMERA,
        message_type=perception.CameraImage,
        encode=perception.encode_camera,
        decode=perception.decode_camera,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.STREAM_MARK,
        message_type=m.StreamMark,
        encode=binary_codecs.encode_stream_mark,
        decode=binary_codecs.decode_stream_mark,
    ),
    MessageSpec(
        kind=FrameKind.DBW_REPORT,
        message_type=dbw.DbwReport,
        encode=dbw.encode_dbw_report,
        decode=dbw.decode_dbw_report,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.DBW_COMMAND,
        message_type=dbw.DbwCommand,
        encode=dbw.encode_dbw_command,
        decode=dbw.decode_dbw_command,
    ),
    MessageSpec(
        kind=FrameKind.MAXXUM_OBSERVATION,
        message_type=mx.MaxxumObservation,
        encode=mx.encode_maxxum_observation,
        decode=mx.decode_maxxum_observation,
        sample=True,
    ),
    MessageSpec(
        kind=FrameKind.MAXXUM_COMMAND,
        message_type=mx.MaxxumCommand,
        encode=mx.encode_maxxum_command,
        decode=mx.decode_maxxum_command,
    ),
)

DECODERS: dict[FrameKind, Callable[[bytes], object]] = {spec.kind: spec.decode for spec in MESSAGES}
_BY_TYPE: dict[type, MessageSpec[Any]] = {spec.message_type: spec for spec in MESSAGES}
SAMPLE_TYPES: frozenset[type] = frozenset(spec.message_type for spec in MESSAGES if spec.sample)


def spec_of(message_type: type) -> MessageSpec[Any]:
    """The table row of a message class; TypeError for a class that is no message of the protocol."""
    spec = _BY_TYPE.get(message_type)
    if spec is None:
        raise TypeError(f"no frame kind for {message_type.__name__}")
    return spec


def encode(message: object) -> bytes:
    """The whole frame (header and payload) of a message."""
    spec = spec_of(type(message))
    return encode_frame(spec.kind, spec.encode(message))


def decode(frame: Frame) -> object:
    """The message of a frame; ProtocolError for a kind without a decoder or a bad payload."""
    decoder = DECODERS.get(frame.kind)
    if decoder is None:
        raise ProtocolError(f"{frame.kind.name}: no decoder for this frame kind in this version")
    # Only the decoders of bulk kinds get an array payload (FrameReader), and they take arrays.
    return decoder(cast(bytes, frame.payload))
