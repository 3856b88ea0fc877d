"""The internal ingest channels: their keys, ROS topics, message types and conversions.

A channel is both a key on the in-process SampleBus and a real ROS topic under
`<bridge namespace>/acres_ingest/`, so a subsystem node in another process gets the same samples.
Its type is an acres_interfaces message, or, for the Maxxum, the message the wire already defines:
std_msgs/String with the JSON object of MAXXUM_OBSERVATION or MAXXUM_COMMAND, can_msgs/Frame for a
CAN frame. `SampleSource` subscribes a node to a channel through whichever of the two is right:
the bus when the ingest runs in this process, the ROS topic otherwise, and it switches to the bus
if an ingest appears in this process later; a message of the topic that does not decode (a peer
in another process is outside this process's checks) is dropped and counted.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, Generic, TypeVar

from acres_interfaces.msg import AgentReset as AgentResetMessage
from acres_interfaces.msg import CameraFrame as CameraFrameMessage
from acres_interfaces.msg import DbwCommandLine, DbwReportLine
from acres_interfaces.msg import Episode as EpisodeMessage
from acres_interfaces.msg import InsSample as InsSampleMessage
from acres_interfaces.msg import LidarScan as LidarScanMessage
from acres_interfaces.msg import SessionInfo as SessionInfoMessage
from acres_interfaces.msg import SimStep as SimStepMessage
from can_msgs.msg import Frame as CanFrameMessage
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from acres_bridge.convert.can import checked_frame, frame_message
from acres_bridge.convert.dbw import CommandRefusedError
from acres_bridge.convert.ins import stamp
from acres_bridge.convert.session import episode as episode_message
from acres_bridge.ingest.bus import BUS, BusSubscription, SampleBus
from acres_bridge.wire import (
    AgentReset,
    Clock,
    DbwCommand,
    DbwReport,
    EpisodeInfo,
    Hello,
    InsSample,
    ProtocolError,
    SensorMeta,
    encode,
)
from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.frames import HEADER
from acres_bridge.wire.maxxum import (
    MaxxumCommand,
    MaxxumObservation,
    decode_maxxum_command,
    decode_maxxum_observation,
)
from acres_bridge.wire.messages import decode_hello, decode_sensor_meta
from acres_bridge.wire.perception import CameraImage, ImageEncoding, LidarScan

__all__ = [
    "AGENT_RESET",
    "CAMERA",
    "CAN_RX",
    "CAN_TX",
    "CLOCK",
    "DBW_COMMAND",
    "DBW_REPORT",
    "EPISODE",
    "INS",
    "LIDAR",
    "MAXXUM_COMMAND",
    "MAXXUM_OBSERVATION",
    "SESSION",
    "IngestChannel",
    "SampleOutlet",
    "SampleSource",
    "Session",
    "channel_key",
    "normalize_namespace",
]

S = TypeVar("S")
_NS_PER_S = 1_000_000_000
_SUBSCRIBER_CHECK_S = 0.1


@dataclass(frozen=True)
class Session:
    """The simulator session as the ingest knows it: HELLO and each agent's SENSOR_META."""

    connected: bool
    hello: Hello | None
    sensor_meta: tuple[SensorMeta | None, ...] = ()


@dataclass(frozen=True)
class IngestChannel(Generic[S]):
    """One internal channel: where it lives and how its samples become ROS messages and back."""

    suffix: str  # "clock", "episode", "session", "agent_{agent}/ins"
    message_type: type
    to_message: Callable[[S], Any]
    from_message: Callable[[Any], S]
    latched: bool
    depth: int

    def key(self, namespace: str, agent: int = 0) -> str:
        return channel_key(namespace, self.suffix.format(agent=agent))

    def qos(self) -> QoSProfile:
        return QoSProfile(
            depth=self.depth,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if self.latched else DurabilityPolicy.VOLATILE,
        )


def normalize_namespace(namespace: str) -> str:
    """'' for the root namespace, else '/a/b' without a trailing slash."""
    stripped = namespace.strip("/")
    return f"/{stripped}" if stripped else ""


def channel_key(namespace: str, suffix: str) -> str:
    """The bus key and the absolute ROS topic of a channel of the ingest in `namespace`."""
    return f"{normalize_namespace(namespace)}/acres_ingest/{suffix}"


def _time_ns(time: Any) -> int:
    return int(time.sec) * _NS_PER_S + int(time.nanosec)


# ---- conversions -----------------------------------------------------------------------------


def _clock_to_message(sample: Clock) -> SimStepMessage:
    return SimStepMessage(stamp=stamp(sample.stamp_ns), step=sample.step)


def _clock_from_message(message: SimStepMessage) -> Clock:
    return Clock(step=message.step, stamp_ns=_time_ns(message.stamp))


def _episode_from_message(message: EpisodeMessage) -> EpisodeInfo:
    return EpisodeInfo(
        episode_id=message.episode_id,
        episode=message.episode,
        reset_epoch=message.reset_epoch,
        step=message.step,
        stamp_ns=_time_ns(message.header.stamp),
        episode_time_s=message.episode_time_s,
        state=message.state,
        lockstep=message.lockstep,
        seed=message.seed,
        source=message.source,
        map=message.map,
        agents=tuple(message.agents),
    )


def _xyz(vector: Any, values: tuple[float, float, float]) -> None:
    vector.x, vector.y, vector.z = values


def _xyzw(quaternion: Any, values: tuple[float, float, float, float]) -> None:
    quaternion.x, quaternion.y, quaternion.z, quaternion.w = values


def _ins_to_message(sample: InsSample) -> InsSampleMessage:
    message = InsSampleMessage(
        step=sample.step,
        has_position=sample.has_position,
        latitude_deg=sample.latitude_deg,
        longitude_deg=sample.longitude_deg,
        true_speed_mps=sample.true_speed,
    )
    message.header.stamp = stamp(sample.stamp_ns)
    message.header.frame_id = "utm"
    _xyz(message.position, sample.position)
    _xyzw(message.orientation, sample.orientation)
    _xyz(message.velocity, sample.velocity)
    _xyz(message.angular_rate, sample.angular_rate)
    _xyz(message.specific_force, sample.specific_force)
    _xyz(message.position_variance, sample.position_variance)
    _xyz(message.velocity_variance, sample.velocity_variance)
    _xyz(message.attitude_variance, sample.attitude_variance)
    _xyz(message.true_position, sample.true_position)
    _xyzw(message.true_orientation, sample.true_orientation)
    _xyz(message.angular_rate_variance, sample.angular_rate_variance)
    _xyz(message.specific_force_variance, sample.specific_force_variance)
    return message


def _v(vector: Any) -> tuple[float, float, float]:
    return (vector.x, vector.y, vector.z)


def _q(quaternion: Any) -> tuple[float, float, float, float]:
    return (quaternion.x, quaternion.y, quaternion.z, quaternion.w)


def _ins_from_message(message: InsSampleMessage) -> InsSample:
    return InsSample(
        step=message.step,
        stamp_ns=_time_ns(message.header.stamp),
        has_position=message.has_position,
        position=_v(message.position),
        latitude_deg=message.latitude_deg,
        longitude_deg=message.longitude_deg,
        orientation=_q(message.orientation),
        velocity=_v(message.velocity),
        angular_rate=_v(message.angular_rate),
        specific_force=_v(message.specific_force),
        position_variance=_v(message.position_variance),
        velocity_variance=_v(message.velocity_variance),
        attitude_variance=_v(message.attitude_variance),
        true_position=_v(message.true_position),
        true_orientation=_q(message.true_orientation),
        true_speed=message.true_speed_mps,
        angular_rate_variance=_v(message.angular_rate_variance),
        specific_force_variance=_v(message.specific_force_variance),
    )


def _lidar_to_message(scan: LidarScan) -> LidarScanMessage:
    message = LidarScanMessage(
        check_fields=True, step=scan.step, sensor=scan.sensor, columns=scan.columns, rings=scan.rings
    )
    message.header.stamp = stamp(scan.stamp_ns)
    message.points = scan.points
    return message


def _lidar_from_message(message: LidarScanMessage) -> LidarScan:
    return LidarScan(
        step=message.step,
        stamp_ns=_time_ns(message.header.stamp),
        sensor=message.sensor,
        columns=message.columns,
        rings=message.rings,
        points=message.points,
    )


def _camera_to_message(image: CameraImage) -> CameraFrameMessage:
    message = CameraFrameMessage(
        check_fields=True,
        step=image.step,
        sensor=image.sensor,
        encoding=int(image.encoding),
        width=image.width,
        height=image.height,
    )
    message.header.stamp = stamp(image.stamp_ns)
    message.pixels = image.pixels
    return message


def _camera_from_message(message: CameraFrameMessage) -> CameraImage:
    return CameraImage(
        step=message.step,
        stamp_ns=_time_ns(message.header.stamp),
        sensor=message.sensor,
        encoding=ImageEncoding(message.encoding),
        width=message.width,
        height=message.height,
        pixels=message.pixels,
    )


def _session_to_message(session: Session) -> SessionInfoMessage:
    return SessionInfoMessage(
        connected=session.connected,
        hello_json=json.dumps(asdict(session.hello)) if session.hello else "",
        sensor_meta_json=[json.dumps(asdict(meta)) if meta else "" for meta in session.sensor_meta],
    )


def _session_from_message(message: SessionInfoMessage) -> Session:
    hello = decode_hello(message.hello_json.encode()) if message.hello_json else None
    metas = tuple(decode_sensor_meta(text.encode()) if text else None for text in message.sensor_meta_json)
    return Session(connected=message.connected, hello=hello, sensor_meta=metas)


# The report line's fields that DbwReportLine carries by the same name (step and the stamp go apart).
_REPORT_FIELDS = tuple(f.name for f in fields(DbwReport) if f.name not in ("step", "stamp_ns"))


def _report_to_message(report: DbwReport) -> DbwReportLine:
    message = DbwReportLine(step=report.step, **{name: getattr(report, name) for name in _REPORT_FIELDS})
    message.header.stamp = stamp(report.stamp_ns)
    return message


def _report_from_message(message: DbwReportLine) -> DbwReport:
    return DbwReport(
        step=message.step,
        stamp_ns=_time_ns(message.header.stamp),
        **{name: getattr(message, name) for name in _REPORT_FIELDS},
    )


def _command_to_message(command: DbwCommand) -> DbwCommandLine:
    return DbwCommandLine(
        target=command.target,
        cmd_type=command.cmd_type,
        flags=command.flags,
        cmd=command.cmd,
        limit_1=command.limit_1,
        limit_2=command.limit_2,
    )


def _command_from_message(message: DbwCommandLine) -> DbwCommand:
    return DbwCommand(
        0, message.target, message.cmd_type, message.flags, message.cmd, message.limit_1, message.limit_2
    )


def _reset_to_message(reset: AgentReset) -> AgentResetMessage:
    return AgentResetMessage(x_m=reset.x_m, y_m=reset.y_m, yaw_rad=reset.yaw_rad)


def _reset_from_message(message: AgentResetMessage) -> AgentReset:
    return AgentReset(agent=0, x_m=message.x_m, y_m=message.y_m, yaw_rad=message.yaw_rad)


def _payload(message: object) -> str:
    """The JSON payload of a wire message, as its frame carries it."""
    return encode(message)[HEADER.size :].decode()


def _observation_to_message(observation: MaxxumObservation) -> String:
    return String(data=_payload(observation))


def _observation_from_message(message: String) -> MaxxumObservation:
    return decode_maxxum_observation(message.data.encode())


def _maxxum_command_to_message(command: MaxxumCommand) -> String:
    """The MAXXUM_COMMAND object without its seq: the ingest numbers commands when it sends them."""
    data = json.loads(_payload(dataclasses.replace(command, seq=1)))
    del data["seq"]
    return String(data=json.dumps(data, separators=(",", ":")))


def _maxxum_command_from_message(message: String) -> MaxxumCommand:
    try:
        data = json.loads(message.data)
    except json.JSONDecodeError as error:
        raise ProtocolError(f"MAXXUM_COMMAND on the internal topic: not JSON ({error})") from None
    if not isinstance(data, dict) or "seq" in data:
        raise ProtocolError("MAXXUM_COMMAND on the internal topic: expected a JSON object without seq")
    command = decode_maxxum_command(json.dumps({"seq": 1, **data}).encode())
    return dataclasses.replace(command, seq=0)


CLOCK: IngestChannel[Clock] = IngestChannel(
    "clock", SimStepMessage, _clock_to_message, _clock_from_message, latched=False, depth=100
)
EPISODE: IngestChannel[EpisodeInfo] = IngestChannel(
    "episode", EpisodeMessage, episode_message, _episode_from_message, latched=True, depth=1
)
SESSION: IngestChannel[Session] = IngestChannel(
    "session", SessionInfoMessage, _session_to_message, _session_from_message, latched=True, depth=1
)
INS: IngestChannel[InsSample] = IngestChannel(
    "agent_{agent}/ins", InsSampleMessage, _ins_to_message, _ins_from_message, latched=False, depth=100
)
DBW_REPORT: IngestChannel[DbwReport] = IngestChannel(
    "agent_{agent}/dbw_report",
    DbwReportLine,
    _report_to_message,
    _report_from_message,
    latched=False,
    depth=100,
)
# Clouds and images: a few in flight are enough (the perception node queues 4 per sensor).
LIDAR: IngestChannel[LidarScan] = IngestChannel(
    "agent_{agent}/lidar", LidarScanMessage, _lidar_to_message, _lidar_from_message, latched=False, depth=4
)
CAMERA: IngestChannel[CameraImage] = IngestChannel(
    "agent_{agent}/camera",
    CameraFrameMessage,
    _camera_to_message,
    _camera_from_message,
    latched=False,
    depth=4,
)
# The two channels that run the other way: from subsystem nodes to the ingest, to the simulator.
DBW_COMMAND: IngestChannel[DbwCommand] = IngestChannel(
    "agent_{agent}/dbw_command",
    DbwCommandLine,
    _command_to_message,
    _command_from_message,
    latched=False,
    depth=100,
)
AGENT_RESET: IngestChannel[AgentReset] = IngestChannel(
    "agent_{agent}/reset", AgentResetMessage, _reset_to_message, _reset_from_message, latched=False, depth=10
)
# The Maxxum: its observation (10 Hz), its commands (to the ingest), its CAN bus both ways. A CAN
# group is 13 frames each 0.1 s: the depth holds several groups.
MAXXUM_OBSERVATION: IngestChannel[MaxxumObservation] = IngestChannel(
    "agent_{agent}/maxxum_observation",
    String,
    _observation_to_message,
    _observation_from_message,
    latched=False,
    depth=10,
)
MAXXUM_COMMAND: IngestChannel[MaxxumCommand] = IngestChannel(
    "agent_{agent}/maxxum_command",
    String,
    _maxxum_command_to_message,
    _maxxum_command_from_message,
    latched=False,
    depth=100,
)
# A CAN frame on the internal topic carries no step (0 when it arrives from there).
CAN_RX: IngestChannel[CanFrame] = IngestChannel(
    "agent_{agent}/can_rx", CanFrameMessage, frame_message, checked_frame, latched=False, depth=500
)
CAN_TX: IngestChannel[CanFrame] = IngestChannel(
    "agent_{agent}/can_tx", CanFrameMessage, frame_message, checked_frame, latched=False, depth=500
)


class SampleOutlet(Generic[S]):
    """The sending end of a channel: the bus of this process, and the ROS topic while another
    process subscribes (latched channels always, so a late subscriber gets the last sample)."""

    def __init__(
        self, node: Node, channel: IngestChannel[S], *, namespace: str, agent: int = 0, bus: SampleBus = BUS
    ) -> None:
        self.key = channel.key(namespace, agent)
        self._bus = bus
        self._to_message = channel.to_message
        self._publisher = node.create_publisher(channel.message_type, self.key, channel.qos())
        self._latched = channel.latched
        self._remote = False
        self._checked_at = -1.0
        bus.register_producer(self.key, latched=channel.latched)

    def _remote_subscribers(self) -> bool:
        """Whether another process subscribes; asked of DDS at most every 0.1 s, not per sample."""
        now = time.monotonic()
        if now - self._checked_at > _SUBSCRIBER_CHECK_S:
            self._remote = self._publisher.get_subscription_count() > 0
            self._checked_at = now
        return self._remote

    def publish(self, sample: S) -> None:
        self._bus.publish(self.key, sample)
        if self._latched or self._remote_subscribers():
            self._publisher.publish(self._to_message(sample))

    def close(self) -> None:
        self._bus.unregister_producer(self.key)


class SampleSource(Generic[S]):
    """Delivers one channel's samples to a node's callback, in-process when possible.

    With the ingest in this process the callback runs in the ingest's I/O thread, with the very
    sample object. Otherwise it runs in the node's executor, with the sample rebuilt from the
    internal ROS topic.
    """

    def __init__(
        self,
        node: Node,
        channel: IngestChannel[S],
        callback: Callable[[S], None],
        *,
        namespace: str,
        agent: int = 0,
        bus: SampleBus = BUS,
    ) -> None:
        self._node = node
        self._channel = channel
        self._callback = callback
        self._bus = bus
        self.key = channel.key(namespace, agent)
        self._lock = threading.Lock()
        self.dropped = 0  # messages of the internal topic that did not decode
        self._bus_subscription: BusSubscription | None = None
        self._ros_subscription: Any = None
        self._unwatch = bus.watch_producers(self._on_producer)
        self._attach(local=bus.has_producer(self.key))

    @property
    def in_process(self) -> bool:
        return self._bus_subscription is not None

    def _on_producer(self, key: str, present: bool) -> None:
        if key == self.key:
            self._attach(local=present)

    def _attach(self, *, local: bool) -> None:
        with self._lock:
            if local and self._bus_subscription is None:
                if self._ros_subscription is not None:
                    self._node.destroy_subscription(self._ros_subscription)
                    self._ros_subscription = None
                self._bus_subscription = self._bus.subscribe(self.key, self._callback)
            elif not local and self._ros_subscription is None:
                if self._bus_subscription is not None:
                    self._bus_subscription.close()
                    self._bus_subscription = None
                self._ros_subscription = self._node.create_subscription(
                    self._channel.message_type, self.key, self._on_message, self._channel.qos()
                )

    def _on_message(self, message: Any) -> None:
        """A sample from the internal topic; one that does not decode is dropped and counted (a peer
        in another process is outside this process's checks, and must not end its executor)."""
        try:
            sample = self._channel.from_message(message)
        except (ProtocolError, CommandRefusedError, ValueError) as error:
            self.dropped += 1
            self._node.get_logger().warning(
                f"{self.key}: dropped a message of the internal topic ({self.dropped} so far): {error}",
                throttle_duration_sec=5.0,
            )
            return
        self._callback(sample)

    def close(self) -> None:
        self._unwatch()
        with self._lock:
            if self._bus_subscription is not None:
                self._bus_subscription.close()
                self._bus_subscription = None
            if self._ros_subscription is not None:
                self._node.destroy_subscription(self._ros_subscription)
                self._ros_subscription = None
