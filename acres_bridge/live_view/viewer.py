"""A viewer of the live view that speaks Foxglove's WebSocket protocol (subprotocol foxglove.sdk.v1)
as the Foxglove app does, for scripted checks and the benchmarks: it reads the server's info and
advertisements, subscribes to channels, receives message data on a thread of its own, and
decodes a ROS 2 channel's CDR with the ros2msg definition the server advertised (rosbags' CDR
reader). It can also advertise channels and publish on them (client publish).

    viewer = open_viewer(8765)
    viewer.subscribe(["/vehicle/odom"])
    odom = viewer.decode("/vehicle/odom", viewer.messages("/vehicle/odom")[-1].payload)

Binary frames (server to client): opcode 1 message data (u32 subscription id, u64 log time, the
payload), opcode 2 time (u64 ns). Client to server: opcode 1 message data (u32 channel id, the
payload). All little-endian.
"""

from __future__ import annotations

import contextlib
import json
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rosbags.typesys import Stores, get_typestore
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from acres_bridge.tools.msgdef import parse_definition

__all__ = ["Received", "Viewer", "open_viewer"]

CONNECT_S = 60.0
SUBPROTOCOL = "foxglove.sdk.v1"
MESSAGE_DATA = 1
TIME = 2


@dataclass(frozen=True)
class Received:
    """One message a channel brought: its log time and payload."""

    log_time: int
    payload: bytes


@dataclass
class Viewer:
    """A connection to a Foxglove WebSocket server on this machine."""

    port: int
    read: bool = True  # False: a stalled viewer that never reads what it is sent
    keep: bool = True  # False: count what comes without keeping it (a long benchmark)
    info: dict[str, Any] = field(default_factory=dict)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)  # by topic
    received: dict[str, list[Received]] = field(default_factory=dict)  # by topic
    counts: dict[str, int] = field(default_factory=dict)  # messages received, by topic
    bytes_received: int = 0
    times: list[int] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ws: ClientConnection = connect(
            f"ws://127.0.0.1:{self.port}",
            subprotocols=[Subprotocol(SUBPROTOCOL)],
            max_size=None,
            max_queue=16 if self.read else 1,  # a stalled viewer stops taking frames off its socket
            open_timeout=30,
            legacy=True,
        )
        self._subscriptions: dict[int, str] = {}
        self._last_subscription = 0  # ids are never used twice
        self._lock = threading.Lock()
        self._client_channels = 0
        self._stores: dict[str, Any] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def handshake(self, timeout_s: float = 30.0, settle_s: float = 0.5) -> None:
        """Read frames until the server's info and its first advertisement came, then for
        `settle_s` more (further advertisements may follow the first)."""
        deadline = time.monotonic() + timeout_s
        while not (self.info and self.channels):
            self._handle(self._ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        settled = time.monotonic() + settle_s
        with contextlib.suppress(TimeoutError):
            while (left := settled - time.monotonic()) > 0:
                self._handle(self._ws.recv(timeout=left))
        if self.read:
            self._thread = threading.Thread(target=self._reader, daemon=True)
            self._thread.start()

    def _reader(self) -> None:
        while not self._stop.is_set():
            try:
                self._handle(self._ws.recv(timeout=0.1))
            except TimeoutError:
                continue
            except Exception:  # the connection closed
                return

    def _handle(self, frame: str | bytes) -> None:
        if isinstance(frame, str):
            message = json.loads(frame)
            op = message.get("op")
            if op == "serverInfo":
                self.info = message
            elif op == "advertise":
                for channel in message["channels"]:
                    self.channels[channel["topic"]] = channel
            elif op == "status":
                self.statuses.append(message)
            return
        if frame[0] == MESSAGE_DATA:
            subscription, log_time = struct.unpack_from("<IQ", frame, 1)
            with self._lock:
                topic = self._subscriptions.get(subscription)
                if topic is not None:
                    self.counts[topic] = self.counts.get(topic, 0) + 1
                    self.bytes_received += len(frame)
                    if self.keep:
                        self.received.setdefault(topic, []).append(Received(log_time, bytes(frame[13:])))
        elif frame[0] == TIME:
            self.times.append(struct.unpack_from("<Q", frame, 1)[0])

    def subscribe(self, topics: Iterable[str]) -> None:
        """Subscribe to the channels of these topics."""
        subscriptions = []
        with self._lock:
            for topic in topics:
                self._last_subscription += 1
                number = self._last_subscription
                self._subscriptions[number] = topic
                subscriptions.append({"id": number, "channelId": self.channels[topic]["id"]})
        self._ws.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))

    def unsubscribe(self, topics: Iterable[str]) -> None:
        """End this viewer's subscriptions to the channels of these topics."""
        names = set(topics)
        with self._lock:
            ended = [number for number, topic in self._subscriptions.items() if topic in names]
            for number in ended:
                del self._subscriptions[number]
        self._ws.send(json.dumps({"op": "unsubscribe", "subscriptionIds": ended}))

    def messages(self, topic: str) -> list[Received]:
        """What the channel of `topic` brought so far (kept only with keep=True)."""
        with self._lock:
            return list(self.received.get(topic, []))

    def decode(self, topic: str, payload: bytes) -> Any:
        """A ROS 2 channel's message, decoded with the definition the server advertised."""
        channel = self.channels[topic]
        assert channel["encoding"] == "cdr"
        assert channel["schemaEncoding"] == "ros2msg"
        name = channel["schemaName"]
        store = self._stores.get(name)
        if store is None:
            store = self._stores[name] = get_typestore(Stores.EMPTY)
            store.register(parse_definition(channel["schema"], name))
        return store.deserialize_cdr(payload, name)

    def advertise(self, topic: str, schema_name: str, encoding: str = "cdr") -> int:
        """Advertise a client channel (client publish); its id."""
        self._client_channels += 1
        channel = {
            "id": self._client_channels,
            "topic": topic,
            "encoding": encoding,
            "schemaName": schema_name,
        }
        self._ws.send(json.dumps({"op": "advertise", "channels": [channel]}))
        return self._client_channels

    def publish(self, channel: int, payload: bytes) -> None:
        """Send a message on a client channel."""
        self._ws.send(struct.pack("<BI", MESSAGE_DATA, channel) + payload)

    def wait_for(self, condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
        """Wait until `condition()` (AssertionError naming `what` after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
            time.sleep(0.01)

    def close(self) -> None:
        """Stop reading and close the connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._ws.close()


def open_viewer(port: int, *, read: bool = True, keep: bool = True, timeout_s: float = CONNECT_S) -> Viewer:
    """A viewer connected once the bridge's live view listens (it loads with the bridge), past the
    server's info and advertisements."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            viewer = Viewer(port, read=read, keep=keep)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    viewer.handshake()
    return viewer
