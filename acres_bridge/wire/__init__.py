"""The wire protocol between the simulator and the bridge: framing and messages.

The one place that knows the bytes; both acres_sim and the bridge's ingest use it.
See docs/protocol.md.
"""

from acres_bridge.wire.dbw import DbwCommand, DbwReport, DbwTarget, ReportFlags
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.frames import MAGIC, PROTOCOL_VERSION, Frame, FrameKind, FrameReader, encode_frame
from acres_bridge.wire.messages import (
    AgentEntry,
    AgentReset,
    ClientHello,
    Clock,
    EpisodeInfo,
    ErrorReply,
    Hello,
    InsSample,
    ResetSession,
    SensorDemand,
    SensorMeta,
    SensorMount,
    SetState,
    StepDone,
    StepRequest,
    StreamMark,
)
from acres_bridge.wire.perception import (
    CameraImage,
    CameraIntrinsics,
    ImageEncoding,
    LidarLayout,
    LidarScan,
    camera_intrinsics,
    lidar_layout,
)
from acres_bridge.wire.registry import DECODERS, MESSAGES, SAMPLE_TYPES, MessageSpec, decode, encode, spec_of
from acres_bridge.wire.vocabulary import ClientRole, SensorKind, SimState, Source, StepStatus, Vehicle

__all__ = [
    "DECODERS",
    "MAGIC",
    "MESSAGES",
    "PROTOCOL_VERSION",
    "SAMPLE_TYPES",
    "AgentEntry",
    "AgentReset",
    "CameraImage",
    "CameraIntrinsics",
    "ClientHello",
    "ClientRole",
    "Clock",
    "DbwCommand",
    "DbwReport",
    "DbwTarget",
    "EpisodeInfo",
    "ErrorReply",
    "Frame",
    "FrameKind",
    "FrameReader",
    "Hello",
    "ImageEncoding",
    "InsSample",
    "LidarLayout",
    "LidarScan",
    "MessageSpec",
    "ProtocolError",
    "ReportFlags",
    "ResetSession",
    "SensorDemand",
    "SensorKind",
    "SensorMeta",
    "SensorMount",
    "SetState",
    "SimState",
    "Source",
    "StepDone",
    "StepRequest",
    "StepStatus",
    "StreamMark",
    "Vehicle",
    "camera_intrinsics",
    "decode",
    "encode",
    "encode_frame",
    "lidar_layout",
    "spec_of",
]
