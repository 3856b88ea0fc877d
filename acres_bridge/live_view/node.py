"""foxglove: a live view of the bridge for the Foxglove app, on foxglove-sdk's WebSocket server.

Open ``ws://localhost:8765`` in the Foxglove app (docs/foxglove.md). Every topic of the vehicle's
table and the session's is advertised as a channel with its ROS 2 schema; a topic is subscribed
to on DDS (raw: the CDR bytes as published, never decoded here) only while a viewer subscribes to
its channel, so a bridge without viewers pays nothing. ``/sim/scene`` is the session's static
scene (foxglove.SceneUpdate: ground, buildings, crop rows, the route) from the simulator's HELLO.
The server's time is the simulation clock.

A slow viewer never slows the bridge: each viewer has a bounded outbox (``foxglove_backlog``
messages); when it is full the server drops its oldest messages. The SDK's own log is kept out of
Python (sdk_log): forwarded, it took the GIL while the server held a viewer's lock, and a thread
sending on that viewer's channel held the GIL waiting for the lock, which froze the bridge.

Viewers' requests come on the server's threads and wait for the executor in ViewerRequests: every
subscribe and unsubscribe is applied (coalesced to each viewer's latest wish per channel, never
dropped), so no feed outlives its last viewer. A viewer's own messages (client publish)
are refused unless ``foxglove_allow_publish`` is true; then only the bridge's command topics, with
their own type, are taken, and each goes out as a ROS message through the fence's gate, to the
bridge's command subscriptions like any other command.

Parameters (besides those of every subsystem node): foxglove_host (default 127.0.0.1),
foxglove_port (8765; 0 takes a free port, logged), foxglove_allow_publish (false),
foxglove_backlog (256).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import foxglove
from foxglove import Channel, Schema
from foxglove.channels import SceneUpdateChannel
from foxglove.messages import SceneUpdate
from foxglove.websocket import Capability, ChannelView, Client, ClientChannel, WebSocketServer
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.subscription import Subscription

from acres_bridge.errors import ParameterError
from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.geo.route import acre_loop
from acres_bridge.ingest.channels import CLOCK, SESSION, Session
from acres_bridge.live_view.requests import ViewerRequests
from acres_bridge.live_view.scene import scene_update
from acres_bridge.live_view.sdk_log import keep_sdk_log_out_of_python
from acres_bridge.live_view.topics import MESSAGE_ENCODING, SCHEMA_ENCODING, ViewTopic, view_topics
from acres_bridge.nodes.base import SubsystemNode, profiles
from acres_bridge.nodes.publish_taps import TAPS
from acres_bridge.tools.cdr import header_stamp_ns
from acres_bridge.tools.errors import CdrError
from acres_bridge.tools.msgdef import definition_text
from acres_bridge.wire import Clock

__all__ = ["MAX_PENDING", "MAX_VIEWER_MESSAGE_BYTES", "SCENE_TOPIC", "LiveView"]

SCENE_TOPIC: Final = "/sim/scene"
MAX_VIEWER_MESSAGE_BYTES: Final = 65_536  # a command is a few dozen bytes
MAX_PENDING: Final = 1_024  # viewers' channels and messages waiting; beyond, refused and counted
TIME_BROADCAST_NS: Final = 50_000_000  # the server's time follows the clock in steps of 50 ms
_LOOPBACK: Final = ("127.0.0.1", "::1", "localhost")


class _Listener(foxglove.websocket.ServerListener):
    """The server's callbacks (its own thread): each is queued for the node's executor."""

    def __init__(self, view: LiveView) -> None:
        self._view = view

    def on_subscribe(self, client: Client, channel: ChannelView) -> None:
        self._view.requests.subscription(channel.topic, client.id, wanted=True)
        self._view.wake()

    def on_unsubscribe(self, client: Client, channel: ChannelView) -> None:
        self._view.requests.subscription(channel.topic, client.id, wanted=False)
        self._view.wake()

    def on_client_advertise(self, client: Client, channel: ClientChannel) -> None:
        item = ("advertise", client.id, channel.id, channel.topic, channel.schema_name, channel.encoding)
        self._view.requests.ordered(item, "viewer_publish")
        self._view.wake()

    def on_client_unadvertise(self, client: Client, client_channel_id: int) -> None:
        self._view.requests.ordered(("unadvertise", client.id, client_channel_id), "viewer_publish")
        self._view.wake()

    def on_message_data(self, client: Client, client_channel_id: int, data: bytes) -> None:
        if len(data) > MAX_VIEWER_MESSAGE_BYTES:
            self._view.requests.refuse(
                "viewer_message", f"{len(data)} bytes, at most {MAX_VIEWER_MESSAGE_BYTES}"
            )
        else:
            self._view.requests.ordered(("data", client.id, client_channel_id, bytes(data)), "viewer_backlog")
        self._view.wake()


class LiveView(SubsystemNode):
    """Serves the bridge's topics and the scene to Foxglove viewers."""

    DEFAULT_NODE_NAME = "foxglove"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        host = str(self.declare_parameter("foxglove_host", "127.0.0.1").value)
        port = int(self.declare_parameter("foxglove_port", 8765).value)
        self.allow_publish = bool(self.declare_parameter("foxglove_allow_publish", False).value)
        backlog = int(self.declare_parameter("foxglove_backlog", 256).value)
        if not 0 <= port < 65536:
            raise ParameterError(f"foxglove_port must be a TCP port (0 for any free one); found {port}")
        if not 1 <= backlog <= 100_000:
            raise ParameterError(f"foxglove_backlog must be 1 .. 100000 messages; found {backlog}")
        self.counts: Counter[str] = Counter()  # messages served, viewer commands, tap errors
        self.requests = ViewerRequests(MAX_PENDING)
        self._wake = self.create_guard_condition(self._serve_requests)
        self._server_context = foxglove.Context()
        self._topics = {t.name: t for t in view_topics(profiles(), str(self.vehicle), self.get_namespace())}
        self._channels = {name: self._channel(topic) for name, topic in self._topics.items()}
        self._scene_channel = SceneUpdateChannel(SCENE_TOPIC, context=self._server_context)
        self._scene: SceneUpdate | None = None
        self._feeds: dict[str, Callable[[], None]] = {}  # topic -> what stops its feed
        self._viewers: dict[str, set[int]] = {}
        self._last_latched: dict[str, bytes] = {}
        self._command_publishers: dict[str, Any] = {}
        self._client_channels: dict[tuple[int, int], ViewTopic] = {}
        self._stamp_ns = 0
        self._broadcast_ns = -TIME_BROADCAST_NS
        capabilities = [Capability.Time, *([Capability.ClientPublish] if self.allow_publish else [])]
        try:
            self.server: WebSocketServer = foxglove.start_server(
                name=f"acres_bridge {self.vehicle}",
                host=host,
                port=port,
                capabilities=capabilities,
                server_listener=_Listener(self),
                supported_encodings=[MESSAGE_ENCODING] if self.allow_publish else None,
                context=self._server_context,
                message_backlog_size=backlog,
            )
        except Exception as error:  # the SDK's error for a port in use or a bad host
            raise ParameterError(f"foxglove: cannot serve on {host}:{port}: {error}") from None
        keep_sdk_log_out_of_python()  # the first server of a process installs the SDK's logger
        self.samples(CLOCK, self._on_clock, agent=0)
        self.samples(SESSION, self._on_session, agent=0)
        self.get_logger().info(
            f"foxglove: {len(self._channels)} topics and {SCENE_TOPIC} on ws://{host}:{self.server.port}"
        )
        if host not in _LOOPBACK:
            self.get_logger().warning(
                f"foxglove: serving on {host}, reachable from other machines; the default is 127.0.0.1"
            )

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return int(self.server.port)

    def _channel(self, topic: ViewTopic) -> Channel:
        schema = Schema(
            name=topic.type_name, encoding=SCHEMA_ENCODING, data=definition_text(topic.type_name).encode()
        )
        return Channel(
            topic.name, schema=schema, message_encoding=MESSAGE_ENCODING, context=self._server_context
        )

    # ---- requests from the server's thread -------------------------------------------------------

    def wake(self) -> None:
        """Have the executor serve the waiting requests (from any thread)."""
        self._wake.trigger()

    def _serve_requests(self) -> None:
        taken = self.requests.take()
        for kind, (count, reason) in taken.refusals.items():
            self.refused[kind] += count - 1  # refuse() counts the last one and says why
            self.refuse(kind, "a viewer's request", reason)
        for wish in taken.subscriptions:
            if wish.wanted:
                self._apply("subscribe", self._on_subscribe, wish.topic, wish.client)
            else:
                self._apply("unsubscribe", self._on_unsubscribe, wish.topic, wish.client)
        for item in taken.ordered:
            self._apply(item[0], getattr(self, f"_on_{item[0]}"), *item[1:])

    def _apply(self, kind: str, handler: Callable[..., None], *arguments: Any) -> None:
        try:
            handler(*arguments)
        except Exception as error:  # one bad request must not end the bridge
            self.refuse("error", f"a viewer's {kind}", f"{type(error).__name__}: {str(error)[:200]}")

    def _on_subscribe(self, name: str, client: int) -> None:
        if name == SCENE_TOPIC:
            if self._scene is not None:
                self._scene_channel.log(self._scene, log_time=self._stamp_ns)
            return
        topic = self._topics.get(name)
        if topic is None:
            return
        viewers = self._viewers.setdefault(name, set())
        viewers.add(client)
        if name not in self._feeds:
            self._feeds[name] = self._feed(topic)
        elif name in self._last_latched:  # a late viewer of a latched topic gets its last message
            self._channels[name].log(self._last_latched[name], log_time=self._stamp_ns)

    def _on_unsubscribe(self, name: str, client: int) -> None:
        viewers = self._viewers.get(name)
        if viewers is None:
            return
        viewers.discard(client)
        if not viewers:
            del self._viewers[name]
            stop = self._feeds.pop(name, None)
            if stop is not None:
                stop()

    def _feed(self, topic: ViewTopic) -> Callable[[], None]:
        """Start sending a topic's messages to its channel; what stops it.

        A topic a publisher of this process sends (not latched) is tapped there: each message is
        serialised once more, in C, with no second trip through DDS and no executor callback.
        Any other topic (latched ones, whose last message a new viewer needs; commands; topics of
        other processes) is subscribed to on DDS with raw messages: reliable and transient local
        for a latched topic, best effort otherwise (matches every publisher, holds none back)."""
        channel = self._channels[topic.name]
        stamped, latched = topic.stamped, topic.latched

        def forward(data: bytes) -> None:
            stamp = self._stamp_ns
            if stamped:
                with contextlib.suppress(CdrError):  # too short for a stamp: the clock's
                    stamp = header_stamp_ns(data)
            if latched:
                self._last_latched[topic.name] = data
            channel.log(data, log_time=stamp)
            self.counts["served"] += 1

        if not latched and TAPS.published_here(topic.name):

            def tap(message: Any) -> None:
                try:
                    forward(serialize_message(message))
                except Exception:  # a tap must not fail the publisher
                    self.counts["tap_errors"] += 1

            TAPS.add(topic.name, tap)
            return lambda: TAPS.remove(topic.name, tap)

        assert topic.spec.qos is not None
        qos = topic.spec.qos.to_rclpy()
        if not latched:
            qos.reliability = ReliabilityPolicy.BEST_EFFORT
            qos.durability = DurabilityPolicy.VOLATILE
        subscription: Subscription = self.create_subscription(
            topic.spec.message_class(), topic.name, forward, qos, raw=True
        )

        def stop() -> None:
            self.destroy_subscription(subscription)

        return stop

    # ---- client publish ---------------------------------------------------------------------------

    def _on_advertise(self, client: int, channel: int, name: str, schema: str, encoding: str) -> None:
        topic = self._topics.get(name)
        if not self.allow_publish:
            self.refuse("viewer_publish", f"a viewer's channel {name!r}", "foxglove_allow_publish is false")
        elif topic is None or not topic.command:
            commands = sorted(t.name for t in self._topics.values() if t.command)
            self.refuse("viewer_publish", f"a viewer's channel {name!r}", f"not a command topic: {commands}")
        elif schema != topic.type_name or encoding != MESSAGE_ENCODING:
            self.refuse(
                "viewer_publish",
                f"a viewer's channel {name!r}",
                f"{schema!r} in {encoding!r}; the topic takes {topic.type_name} in {MESSAGE_ENCODING}",
            )
        else:
            self._client_channels[(client, channel)] = topic

    def _on_unadvertise(self, client: int, channel: int) -> None:
        self._client_channels.pop((client, channel), None)

    def _on_data(self, client: int, channel: int, data: bytes) -> None:
        topic = self._client_channels.get((client, channel))
        if topic is None:
            self.refuse("viewer_publish", "a viewer's message", "on a channel that was not accepted")
            return
        if not self.command_gate.admit(self.refused):
            return
        message = deserialize_message(data, topic.spec.message_class())
        publisher = self._command_publishers.get(topic.name)
        if publisher is None:
            publisher = self._command_publishers[topic.name] = topic.spec.create_publisher(self)
        publisher.publish(message)
        self.counts["viewer_commands"] += 1

    # ---- the clock and the scene --------------------------------------------------------------------

    def _on_clock(self, sample: Clock) -> None:
        self._stamp_ns = sample.stamp_ns
        if not 0 <= sample.stamp_ns - self._broadcast_ns < TIME_BROADCAST_NS:
            self._broadcast_ns = sample.stamp_ns
            self.server.broadcast_time(sample.stamp_ns)

    def _on_session(self, session: Session) -> None:
        if session.hello is None:
            return
        self._scene = scene_update(session.hello.scene, acre_loop(), ACRE_GEOREFERENCE, self.frames.utm)
        self._scene_channel.log(self._scene, log_time=self._stamp_ns)

    def destroy_node(self) -> None:
        self.server.stop()
        for stop in self._feeds.values():
            stop()
        self._feeds.clear()
        for channel in self._channels.values():
            channel.close()
        self._scene_channel.close()
        super().destroy_node()
