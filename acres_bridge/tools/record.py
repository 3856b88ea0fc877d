"""acres_record: record topics of a running bridge into one MCAP file, as ``ros2 bag record -s mcap``.

    acres_record --profile polaris -o session.mcap
    acres_record --topics /clock /vehicle/odom --duration 10 -o odom.mcap
    acres_record --profile polaris --topics /vehicle/steering/cmd -o drive.mcap

Each topic is subscribed to once it has a publisher, with raw (serialised) messages: the CDR bytes
are written as received, never deserialised and serialised again. The subscription's reliability
and durability are adapted to what the publishers offer, as rosbag2 does (reliable only if every
publisher is, transient local only if every publisher is), and the offers are stored with the
channel. log_time is the time of reception; publish_time is the header stamp where the message
starts with a std_msgs/Header, else the time the publisher sent it.

The recording ends after --duration seconds or on SIGINT or SIGTERM (messages already received are
still written, for DRAIN_S); the file is closed and complete in every case. Exit status: 0 after a
recording, 2 when the options or the output file are not usable.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.subscription import Subscription

from acres_bridge.errors import AcresBridgeError
from acres_bridge.msg_profiles import Direction, MsgProfiles, load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.tools.bag import BagWriter, Compression
from acres_bridge.tools.cdr import header_stamp_ns
from acres_bridge.tools.errors import CdrError, DefinitionError, ToolError
from acres_bridge.tools.msgdef import message_class
from acres_bridge.tools.qos import (
    DEFAULT_METADATA_VERSION,
    METADATA_VERSIONS,
    Durability,
    OfferedQos,
    Reliability,
    adapt_to_offers,
    missed_offers,
    qos_from_rclpy,
)

__all__ = [
    "DEFAULT_DEPTH",
    "DISCOVERY_PERIOD_S",
    "DRAIN_S",
    "RecordOptions",
    "RecordSummary",
    "Recorder",
    "StopRequest",
    "main",
    "parse_options",
    "profile_topics",
    "record",
    "subscription_qos",
]

DEFAULT_DEPTH = 100  # messages a subscription queues while the writer is busy
DISCOVERY_PERIOD_S = 0.2  # how often the graph is read for new publishers
DRAIN_S = 0.2  # after the stop, messages already received are still written for this long
_SPIN_S = 0.05


@dataclass(frozen=True, kw_only=True)
class RecordOptions:
    """What to record, where, and for how long."""

    output: Path
    topics: tuple[str, ...]  # absolute names
    duration_s: float | None  # None: until SIGINT or SIGTERM
    compression: Compression = Compression.NONE
    depth: int = DEFAULT_DEPTH
    metadata_version: int = DEFAULT_METADATA_VERSION


@dataclass(frozen=True, kw_only=True)
class RecordSummary:
    """What a recording wrote."""

    output: Path
    messages: int
    recorded: tuple[str, ...]  # topics that had a publisher and were subscribed to
    missing: tuple[str, ...]  # topics that never had a publisher
    seconds: float
    stopped_by: str  # "SIGINT", "SIGTERM" or "duration"


def profile_topics(profiles: MsgProfiles, table: str, namespace: str = "/") -> tuple[str, ...]:
    """The absolute names of every topic a table of msg_profiles publishes (or publishes and logs)."""
    return tuple(
        resolve_name(spec.ros_name, namespace)
        for spec in profiles.table(table)
        if spec.direction in (Direction.PUBLISH, Direction.FILE_AND_TOPIC)
    )


def subscription_qos(offers: Sequence[OfferedQos], depth: int) -> QoSProfile:
    """The QoS to subscribe with: adapted to every offer, keeping the last `depth` messages."""
    reliability, durability = adapt_to_offers(offers)
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy(reliability.value),  # rclpy's policies carry the rmw numbers
        durability=DurabilityPolicy(durability.value),
    )


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, found {text}")
    return value


def _depth(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, found {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acres_record",
        description="Record topics of a running bridge into an MCAP file, as ros2 bag record -s mcap.",
    )
    parser.add_argument("--topics", nargs="+", default=[], metavar="TOPIC", help="topics to record")
    parser.add_argument(
        "--profile", metavar="TABLE", help="also every published topic of this msg_profiles table (polaris)"
    )
    parser.add_argument("--profiles", type=Path, metavar="DIR", help="msg_profiles directory (default: ours)")
    parser.add_argument("--namespace", default="/", help="namespace of the bridge, for --profile (default /)")
    parser.add_argument(
        "--duration", type=_positive, metavar="S", help="stop after S seconds (default: SIGINT)"
    )
    parser.add_argument("-o", "--output", type=Path, required=True, help="the MCAP file to write (new)")
    parser.add_argument(
        "--compression", choices=[c.value for c in Compression], default=Compression.NONE.value
    )
    parser.add_argument("--depth", type=_depth, default=DEFAULT_DEPTH, help="subscription queue depth")
    parser.add_argument(
        "--metadata-version",
        type=int,
        choices=METADATA_VERSIONS,
        default=DEFAULT_METADATA_VERSION,
        help="rosbag2 metadata version: 9 (Jazzy, QoS by name) or 8 (Humble, QoS as numbers)",
    )
    return parser


def parse_options(argv: Sequence[str] | None = None) -> RecordOptions:
    """The options of the command line; argparse exits with status 2 on a usage error."""
    parser = _parser()
    args = parser.parse_args(argv)
    topics = [name if name.startswith("/") else f"/{name}" for name in args.topics]
    if args.profile:
        try:
            profiles = load_profiles(args.profiles) if args.profiles else load_profiles()
            topics += profile_topics(profiles, args.profile, args.namespace)
        except KeyError as error:
            parser.error(str(error.args[0]))
        except AcresBridgeError as error:
            parser.error(str(error))
    if not topics:
        parser.error("name the topics to record with --topics and/or --profile")
    return RecordOptions(
        output=args.output,
        topics=tuple(dict.fromkeys(topics)),
        duration_s=args.duration,
        compression=Compression(args.compression),
        depth=args.depth,
        metadata_version=args.metadata_version,
    )


@dataclass
class _Topic:
    name: str
    seen: bool = False  # a publisher has appeared
    type_name: str = ""
    header_first: bool = False
    subscription: Subscription | None = None
    requested: tuple[Reliability, Durability] | None = None
    warned: set[str] = field(default_factory=set)


class Recorder:
    """Subscribes to the chosen topics as their publishers appear and writes every message to a bag.

    Runs in the thread that spins its node; the writer is touched only there.
    """

    def __init__(
        self,
        node: Node,
        writer: BagWriter,
        topics: Sequence[str],
        *,
        depth: int,
        report: Callable[[str], None],
    ) -> None:
        self.node = node
        self.writer = writer
        self.depth = depth
        self.report = report
        self.topics = {name: _Topic(name) for name in topics}
        self.messages = 0

    @property
    def recorded(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.topics.values() if t.subscription is not None)

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.topics.values() if not t.seen)

    def _warn(self, topic: _Topic, key: str, text: str) -> None:
        if key not in topic.warned:
            topic.warned.add(key)
            self.report(f"warning: {text}")

    def discover(self) -> None:
        """Subscribe to each topic that has publishers now; warn about publishers a subscription misses."""
        for topic in self.topics.values():
            infos = self.node.get_publishers_info_by_topic(topic.name)
            if not infos:
                continue
            topic.seen = True
            offers = [qos_from_rclpy(info.qos_profile) for info in infos]
            types = sorted({info.topic_type for info in infos})
            if topic.subscription is None:
                if len(types) > 1:
                    self._warn(topic, "types", f"{topic.name} is published with types {types}; not recorded")
                    continue
                self._subscribe(topic, types[0], offers)
                continue
            if types != [topic.type_name]:
                self._warn(
                    topic,
                    "types",
                    f"{topic.name} is published with types {types}; only {topic.type_name} is recorded",
                )
            if topic.requested is not None and missed_offers(topic.requested, offers):
                reliability, durability = topic.requested
                self._warn(
                    topic,
                    "qos",
                    f"a publisher of {topic.name} offers less than this recording requested "
                    f"({reliability.name.lower()}, {durability.name.lower()}); its messages are not recorded",
                )

    def _subscribe(self, topic: _Topic, type_name: str, offers: Sequence[OfferedQos]) -> None:
        try:
            message = message_class(type_name)
        except DefinitionError as error:
            self._warn(topic, "type", f"cannot record {topic.name}: {error}")
            return
        try:
            self.writer.add_topic(topic.name, type_name, offered_qos=offers)
        except DefinitionError as error:
            self._warn(topic, "definition", f"cannot record {topic.name}: {error}")
            return
        fields = list(message.get_fields_and_field_types().items())  # type: ignore[attr-defined]
        topic.type_name = type_name
        topic.header_first = bool(fields) and fields[0] == ("header", "std_msgs/Header")
        topic.requested = adapt_to_offers(offers)
        topic.subscription = self.node.create_subscription(
            message,
            topic.name,
            partial(self._on_message, topic),  # two arguments: rclpy passes the message info
            subscription_qos(offers, self.depth),
            raw=True,
        )
        reliability, durability = topic.requested
        self.report(
            f"recording {topic.name} {type_name} ({reliability.name.lower()}, {durability.name.lower()}) "
            f"from {len(offers)} publisher{'s' if len(offers) != 1 else ''}"
        )

    def _on_message(self, topic: _Topic, data: bytes, info: dict[str, Any]) -> None:
        received = int(info.get("received_timestamp") or time.time_ns())
        sent = int(info.get("source_timestamp") or received)
        if topic.header_first:
            try:
                sent = max(0, header_stamp_ns(data))
            except CdrError as error:
                self._warn(
                    topic, "stamp", f"{topic.name}: no header stamp ({error}); publish time is the send time"
                )
        self.writer.write(topic.name, data, log_time_ns=received, publish_time_ns=sent)
        self.messages += 1


class StopRequest:
    """Ends a recording: set from a signal handler or another thread, and says why."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def request(self, reason: str) -> None:
        self.reason = self.reason or reason
        self._event.set()

    def on_signal(self, number: int, _frame: FrameType | None) -> None:
        """A signal handler: SIGINT and SIGTERM end the recording."""
        self.request(signal.Signals(number).name)


def record(options: RecordOptions, *, stop: StopRequest, report: Callable[[str], None]) -> RecordSummary:
    """Record until `stop` is set or the duration has passed; the file is complete when this returns.

    Raises BagError when the output file cannot be created.
    """
    writer = BagWriter(
        options.output, compression=options.compression, metadata_version=options.metadata_version
    )
    context = Context()
    started = time.monotonic()
    recorder: Recorder | None = None
    try:
        rclpy.init(context=context, args=[], signal_handler_options=SignalHandlerOptions.NO)
        node = Node(f"acres_record_{os.getpid()}", context=context, start_parameter_services=False)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        recorder = Recorder(node, writer, options.topics, depth=options.depth, report=report)
        count = len(options.topics)
        plural = "s" if count != 1 else ""
        report(f"recording {count} topic{plural} into {options.output} once they have publishers")
        recorder.discover()
        node.create_timer(DISCOVERY_PERIOD_S, recorder.discover)
        deadline = None if options.duration_s is None else started + options.duration_s
        while not stop.requested:
            if deadline is not None and time.monotonic() >= deadline:
                stop.request("duration")
                break
            executor.spin_once(timeout_sec=_SPIN_S)
        drained = time.monotonic() + DRAIN_S
        while time.monotonic() < drained:
            executor.spin_once(timeout_sec=_SPIN_S)
        executor.shutdown()
        node.destroy_node()
    finally:
        writer.close()
        context.try_shutdown()
    return RecordSummary(
        output=options.output,
        messages=recorder.messages if recorder else 0,
        recorded=recorder.recorded if recorder else (),
        missing=recorder.missing if recorder else options.topics,
        seconds=time.monotonic() - started,
        stopped_by=stop.reason or "an error",
    )


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(argv)
    stop = StopRequest()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, stop.on_signal)

    def report(line: str) -> None:
        print(line, file=sys.stderr if line.startswith("warning:") else sys.stdout, flush=True)

    try:
        summary = record(options, stop=stop, report=report)
    except ToolError as error:
        print(f"acres_record: {error}", file=sys.stderr, flush=True)
        return 2
    report(
        f"stopped by {summary.stopped_by} after {summary.seconds:.1f} s: {summary.messages} messages "
        f"on {len(summary.recorded)} topics in {summary.output}"
    )
    if summary.missing:
        report(f"warning: no publisher appeared on {', '.join(summary.missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
