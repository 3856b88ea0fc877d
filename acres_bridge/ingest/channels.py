"""The internal ingest channels: the one table of what the ingest relays, and both ends of a channel.

A channel is both a key on the in-process SampleBus and a real ROS topic under
`<bridge namespace>/_acres_ingest/`, so a subsystem node in another process gets the same samples.
The leading underscore makes them hidden topics, by the ROS convention: `ros2 topic list` shows
only the vehicle's topics, `--include-hidden-topics` these too. A channel of one vehicle's
subsystems (the drive-by-wire, the Maxxum's commands, CAN) exists only for an agent of that vehicle.
Its type is an acres_interfaces message, or, for the Maxxum, the message the wire already defines:
std_msgs/String with the JSON object of MAXXUM_OBSERVATION or MAXXUM_COMMAND, can_msgs/Frame for a
CAN frame (the conversions are in `acres_bridge.convert.internal`).

`CHANNELS` is the table the ingest node builds its ends from: a channel that flows from the
simulator gets a `SampleOutlet` (per agent where its suffix names one), fed with every sample of
its `sample_type` that the link hands over; one that flows to the simulator gets a
`SampleSubscription` whose samples the link sends. `SampleSubscription` subscribes a node to a
channel through whichever of the two is right: the bus when the ingest runs in this process, the
ROS topic otherwise, and it switches to the bus if an ingest appears in this process later; a
message of the topic that does not decode (a peer in another process is outside this process's
checks) is dropped and counted.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import Enum
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

from acres_bridge.convert import internal
from acres_bridge.convert.can import checked_frame, frame_message
from acres_bridge.convert.session import episode as episode_message
from acres_bridge.errors import CommandRefusedError
from acres_bridge.ingest.bus import BUS, BusSubscription, SampleBus
from acres_bridge.ingest.command_gate import CommandGate
from acres_bridge.names import normalize_namespace
from acres_bridge.wire import (
    AgentReset,
    CameraImage,
    Clock,
    DbwCommand,
    DbwReport,
    EpisodeInfo,
    Hello,
    InsSample,
    LidarScan,
    ProtocolError,
    SensorMeta,
)
from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.json_codecs import decode_hello, decode_sensor_meta
from acres_bridge.wire.maxxum import MaxxumCommand, MaxxumObservation
from acres_bridge.wire.vocabulary import Vehicle

__all__ = [
    "AGENT_RESET",
    "CAMERA",
    "CAN_RX",
    "CAN_TX",
    "CHANNELS",
    "CLOCK",
    "DBW_COMMAND",
    "DBW_REPORT",
    "EPISODE",
    "INGEST_TOKEN",
    "INS",
    "LIDAR",
    "MAXXUM_COMMAND",
    "MAXXUM_OBSERVATION",
    "SESSION",
    "CommandOutlet",
    "Flow",
    "IngestChannel",
    "SampleOutlet",
    "SampleSubscription",
    "Session",
    "channel_key",
]

S = TypeVar("S")
_SUBSCRIBER_CHECK_S = 0.1
INGEST_TOKEN = "_acres_ingest"  # hidden: a name token with a leading underscore
_POLARIS = (Vehicle.POLARIS,)
_MAXXUM = (Vehicle.MAXXUM,)


@dataclass(frozen=True)
class Session:
    """The simulator session as the ingest knows it: HELLO and each agent's SENSOR_META."""

    connected: bool
    hello: Hello | None
    sensor_meta: tuple[SensorMeta | None, ...] = ()

    def meta(self, agent: int) -> SensorMeta | None:
        """The SENSOR_META of an agent, None until it came (or for an agent the session lacks)."""
        return self.sensor_meta[agent] if 0 <= agent < len(self.sensor_meta) else None


class Flow(Enum):
    """Which way a channel's samples go."""

    FROM_SIMULATOR = "from the simulator"  # the ingest publishes them to the subsystem nodes
    TO_SIMULATOR = "to the simulator"  # subsystem nodes publish them; the ingest sends them


@dataclass(frozen=True, kw_only=True)
class IngestChannel(Generic[S]):
    """One internal channel: its samples, where it lives and how they become ROS messages and back."""

    suffix: str  # "clock", "episode", "session", "agent_{agent}/ins"
    sample_type: type[S]
    message_type: type
    to_message: Callable[[S], Any]
    from_message: Callable[[Any], S]
    flow: Flow = Flow.FROM_SIMULATOR
    latched: bool = False
    depth: int
    vehicles: tuple[Vehicle, ...] = tuple(Vehicle)  # the vehicles whose agents have this channel

    @property
    def per_agent(self) -> bool:
        """Whether each agent has a channel of its own (its suffix names the agent)."""
        return "{agent}" in self.suffix

    def key(self, namespace: str, agent: int = 0) -> str:
        return channel_key(namespace, self.suffix.format(agent=agent))

    def qos(self) -> QoSProfile:
        return QoSProfile(
            depth=self.depth,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if self.latched else DurabilityPolicy.VOLATILE,
        )


def channel_key(namespace: str, suffix: str) -> str:
    """The bus key and the absolute ROS topic of a channel of the ingest in `namespace`."""
    return f"{normalize_namespace(namespace)}/{INGEST_TOKEN}/{suffix}"


# ---- the session: HELLO and each agent's SENSOR_META, as the ingest knows them ----------------


def session_to_message(session: Session) -> SessionInfoMessage:
    return SessionInfoMessage(
        connected=session.connected,
        hello_json=json.dumps(asdict(session.hello)) if session.hello else "",
        sensor_meta_json=[json.dumps(asdict(meta)) if meta else "" for meta in session.sensor_meta],
    )


def session_from_message(message: SessionInfoMessage) -> Session:
    hello = decode_hello(message.hello_json.encode()) if message.hello_json else None
    metas = tuple(decode_sensor_meta(text.encode()) if text else None for text in message.sensor_meta_json)
    return Session(connected=message.connected, hello=hello, sensor_meta=metas)


CLOCK: IngestChannel[Clock] = IngestChannel(
    suffix="clock",
    sample_type=Clock,
    message_type=SimStepMessage,
    to_message=internal.clock_to_message,
    from_message=internal.clock_from_message,
    depth=100,
)
EPISODE: IngestChannel[EpisodeInfo] = IngestChannel(
    suffix="episode",
    sample_type=EpisodeInfo,
    message_type=EpisodeMessage,
    to_message=episode_message,
    from_message=internal.episode_from_message,
    latched=True,
    depth=1,
)
SESSION: IngestChannel[Session] = IngestChannel(
    suffix="session",
    sample_type=Session,
    message_type=SessionInfoMessage,
    to_message=session_to_message,
    from_message=session_from_message,
    latched=True,
    depth=1,
)
INS: IngestChannel[InsSample] = IngestChannel(
    suffix="agent_{agent}/ins",
    sample_type=InsSample,
    message_type=InsSampleMessage,
    to_message=internal.ins_to_message,
    from_message=internal.ins_from_message,
    depth=100,
)
DBW_REPORT: IngestChannel[DbwReport] = IngestChannel(
    suffix="agent_{agent}/dbw_report",
    sample_type=DbwReport,
    message_type=DbwReportLine,
    to_message=internal.dbw_report_to_message,
    from_message=internal.dbw_report_from_message,
    depth=100,
    vehicles=_POLARIS,
)
# Clouds and images: a few in flight are enough (the perception node queues 4 per sensor).
LIDAR: IngestChannel[LidarScan] = IngestChannel(
    suffix="agent_{agent}/lidar",
    sample_type=LidarScan,
    message_type=LidarScanMessage,
    to_message=internal.lidar_to_message,
    from_message=internal.lidar_from_message,
    depth=4,
)
CAMERA: IngestChannel[CameraImage] = IngestChannel(
    suffix="agent_{agent}/camera",
    sample_type=CameraImage,
    message_type=CameraFrameMessage,
    to_message=internal.camera_to_message,
    from_message=internal.camera_from_message,
    depth=4,
)
# The Maxxum: its observation (10 Hz), its commands (to the ingest), its CAN bus both ways. A CAN
# group is 13 frames each 0.1 s: the depth holds several groups.
MAXXUM_OBSERVATION: IngestChannel[MaxxumObservation] = IngestChannel(
    suffix="agent_{agent}/maxxum_observation",
    sample_type=MaxxumObservation,
    message_type=String,
    to_message=internal.maxxum_observation_to_message,
    from_message=internal.maxxum_observation_from_message,
    depth=10,
    vehicles=_MAXXUM,
)
# A CAN frame on the internal topic carries no step (0 when it arrives from there).
CAN_RX: IngestChannel[CanFrame] = IngestChannel(
    suffix="agent_{agent}/can_rx",
    sample_type=CanFrame,
    message_type=CanFrameMessage,
    to_message=frame_message,
    from_message=checked_frame,
    depth=500,
    vehicles=_MAXXUM,
)
# The channels that run the other way: from subsystem nodes to the ingest, to the simulator.
DBW_COMMAND: IngestChannel[DbwCommand] = IngestChannel(
    suffix="agent_{agent}/dbw_command",
    sample_type=DbwCommand,
    message_type=DbwCommandLine,
    to_message=internal.dbw_command_to_message,
    from_message=internal.dbw_command_from_message,
    flow=Flow.TO_SIMULATOR,
    depth=100,
    vehicles=_POLARIS,
)
AGENT_RESET: IngestChannel[AgentReset] = IngestChannel(
    suffix="agent_{agent}/reset",
    sample_type=AgentReset,
    message_type=AgentResetMessage,
    to_message=internal.reset_to_message,
    from_message=internal.reset_from_message,
    flow=Flow.TO_SIMULATOR,
    depth=10,
)
MAXXUM_COMMAND: IngestChannel[MaxxumCommand] = IngestChannel(
    suffix="agent_{agent}/maxxum_command",
    sample_type=MaxxumCommand,
    message_type=String,
    to_message=internal.maxxum_command_to_message,
    from_message=internal.maxxum_command_from_message,
    flow=Flow.TO_SIMULATOR,
    depth=100,
    vehicles=_MAXXUM,
)
CAN_TX: IngestChannel[CanFrame] = IngestChannel(
    suffix="agent_{agent}/can_tx",
    sample_type=CanFrame,
    message_type=CanFrameMessage,
    to_message=frame_message,
    from_message=checked_frame,
    flow=Flow.TO_SIMULATOR,
    depth=500,
    vehicles=_MAXXUM,
)

CHANNELS: tuple[IngestChannel[Any], ...] = (
    CLOCK,
    EPISODE,
    SESSION,
    INS,
    DBW_REPORT,
    LIDAR,
    CAMERA,
    MAXXUM_OBSERVATION,
    CAN_RX,
    DBW_COMMAND,
    AGENT_RESET,
    MAXXUM_COMMAND,
    CAN_TX,
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

    def wanted(self) -> bool:
        """Whether anyone wants this channel's samples now: a node of this process that says so, or
        a subscriber of the internal topic in another process."""
        return self._bus.wanted(self.key) or self._publisher.get_subscription_count() > 0

    def publish(self, sample: S) -> None:
        self._bus.publish(self.key, sample)
        if self._latched or self._remote_subscribers():
            self._publisher.publish(self._to_message(sample))

    def close(self) -> None:
        self._bus.unregister_producer(self.key)


class CommandOutlet(Generic[S]):
    """A node's sending end of a channel to the simulator, behind its process's gate: a command
    goes out only when the gate admits it (else it is counted in `refused` under "unfenced"), and
    without the fence the channel's topic is not made at all."""

    def __init__(
        self,
        node: Node,
        channel: IngestChannel[S],
        *,
        namespace: str,
        gate: CommandGate,
        refused: Counter[str],
        agent: int = 0,
        bus: SampleBus = BUS,
    ) -> None:
        if channel.flow is not Flow.TO_SIMULATOR:
            raise ValueError(f"{channel.suffix} does not flow to the simulator")
        self._gate = gate
        self._refused = refused
        self._outlet = (
            SampleOutlet(node, channel, namespace=namespace, agent=agent, bus=bus) if gate.allowed else None
        )

    def publish(self, sample: S) -> bool:
        """Send a command on its way; whether the gate let it go."""
        if self._outlet is None:  # the gate is shut (it decides once, when the node starts)
            self._gate.admit(self._refused)  # counts the command, and says why at a limited rate
            return False
        self._outlet.publish(sample)
        return True

    def close(self) -> None:
        if self._outlet is not None:
            self._outlet.close()


class SampleSubscription(Generic[S]):
    """Delivers one channel's samples to a node's callback, in-process when possible.

    With the ingest in this process the callback runs in the ingest's I/O thread, with the very
    sample object. Otherwise it runs in the node's executor, with the sample rebuilt from the
    internal ROS topic; with `remote` false it never subscribes to the topic (the ingest's end of a
    command channel outside the fence takes no command from another process).
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
        remote: bool = True,
        wants: Callable[[], bool] | None = None,
    ) -> None:
        """`wants`: whether the node wants samples now (in-process only; from another process the
        subscription of the internal topic is the interest)."""
        self._node = node
        self._channel = channel
        self._remote = remote
        self._callback = callback
        self._wants = wants
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
                self._bus_subscription = self._bus.subscribe(self.key, self._callback, wants=self._wants)
            elif not local and self._ros_subscription is None:
                if self._bus_subscription is not None:
                    self._bus_subscription.close()
                    self._bus_subscription = None
                if not self._remote:
                    return
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
