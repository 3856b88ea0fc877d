"""Bags: writing MCAP files as rosbag2 writes them, and reading MCAP files and rosbag2 bags.

Writing (``BagWriter``) goes through the ``mcap`` library, with what rosbag2's MCAP storage plugin
puts into a file, so that ``ros2 bag info``, ``ros2 bag play -s mcap``, Foxglove and rosbags accept
it: the profile ``ros2``; per type a schema named ``pkg/msg/Type`` of encoding ``ros2msg`` holding
the full definition text; per topic a channel of message encoding ``cdr`` whose metadata holds
``offered_qos_profiles`` (rosbag2's YAML) and ``topic_type_hash``; and at the end a metadata record
``rosbag2`` whose ``serialized_metadata`` is the bag's metadata in rosbag2's YAML (version 9 by
default, 8 on request for Humble's readers). Messages go in as the CDR bytes given, unchanged.

Reading: ``open_bag`` returns a ``BagReader``: an MCAP file is read with the ``mcap`` library; a
rosbag2 directory (sqlite3 or mcap storage) or a bare .db3 file, as the real vehicle records them,
with rosbags. Both give the same ``BagTopic`` and ``BagMessage`` records.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol, Self

import yaml
from mcap.exceptions import McapError
from mcap.reader import McapReader, make_reader
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from mcap.well_known import MessageEncoding, Profile, SchemaEncoding
from mcap.writer import CompressionType, Writer
from rosbags.interfaces import ConnectionExtRosbag2, MessageDefinitionFormat, Qos
from rosbags.rosbag2 import Reader as RosbagsReader
from rosbags.rosbag2 import ReaderError

from acres_bridge import __version__
from acres_bridge.tools.errors import BagError, QosYamlError
from acres_bridge.tools.msgdef import definition_text, parse_type_name, type_hash
from acres_bridge.tools.qos import (
    DEFAULT_METADATA_VERSION,
    Durability,
    History,
    Liveliness,
    OfferedQos,
    QosTime,
    Reliability,
    dump_offered_qos,
    offered_qos_records,
    parse_offered_qos,
)

__all__ = [
    "MCAP_MAGIC",
    "READERS",
    "BagMessage",
    "BagReader",
    "BagTopic",
    "BagWriter",
    "Compression",
    "McapBagReader",
    "RosbagsBagReader",
    "open_bag",
    "rosbag2_metadata",
]

MCAP_MAGIC = b"\x89MCAP0\r\n"
ROSBAG2_RECORD = "rosbag2"  # the MCAP metadata record rosbag2 reads its bag metadata from
LIBRARY = f"acres_bridge {__version__}"


class Compression(Enum):
    """Chunk compression of a written MCAP file. rosbag2 writes none by default."""

    NONE = "none"
    LZ4 = "lz4"
    ZSTD = "zstd"


_MCAP_COMPRESSION = {
    Compression.NONE: CompressionType.NONE,
    Compression.LZ4: CompressionType.LZ4,
    Compression.ZSTD: CompressionType.ZSTD,
}


@dataclass(frozen=True, kw_only=True)
class BagTopic:
    """One recorded topic: its type, the QoS each publisher offered, its definition and its count."""

    name: str
    type_name: str  # pkg/msg/Type
    offered_qos: tuple[OfferedQos, ...]
    definition: str | None  # the full ros2msg text; None when the bag has none
    message_count: int
    message_encoding: str = MessageEncoding.CDR
    type_hash: str = ""


@dataclass(frozen=True)
class BagMessage:
    """One recorded message as the bag holds it."""

    topic: str
    log_time_ns: int  # when it was received
    publish_time_ns: int  # the header stamp, else when it was sent (the log time where unknown)
    data: bytes  # the CDR bytes as received


class BagReader(Protocol):
    """What the tools read from a bag, whatever its storage."""

    path: Path

    def topics(self) -> Mapping[str, BagTopic]:
        """The recorded topics by name."""
        ...

    def messages(self, topics: Collection[str] | None = None) -> Iterator[BagMessage]:
        """The messages of these topics (default: all), in the order of their log time."""
        ...

    def close(self) -> None:
        """Release the file."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None: ...


class _ClosedOnExit:
    """A bag reader or writer used as a context manager: closed on leaving the ``with`` block."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise BagError(f"bag {str(path)!r} does not exist")


class McapBagReader(_ClosedOnExit):
    """Reads an MCAP file with the mcap library."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        _check_exists(self.path)
        if self.path.is_dir():
            raise BagError(f"{self.path} is a directory, not an MCAP file")
        self._stream: IO[bytes] = self.path.open("rb")
        try:
            start = self._stream.read(len(MCAP_MAGIC))
            if start != MCAP_MAGIC:
                raise BagError(
                    f"{self.path} is not an MCAP file: it starts with {start!r}, expected {MCAP_MAGIC!r}"
                )
            self._stream.seek(0)
            self._reader: McapReader = make_reader(self._stream)
            self._schemas, self._channels, counts = self._index()
            self._topics = self._make_topics(counts)
        except BaseException:
            self._stream.close()
            raise

    def _index(self) -> tuple[dict[int, Schema], dict[int, Channel], Mapping[int, int]]:
        try:
            summary = self._reader.get_summary()
        except (McapError, ValueError, EOFError) as error:
            raise BagError(
                f"{self.path} is not a complete MCAP file ({error}); `mcap recover` can repair it"
            ) from None
        if summary is not None and summary.statistics is not None:
            return dict(summary.schemas), dict(summary.channels), summary.statistics.channel_message_counts
        # No summary section: scan the records.
        schemas: dict[int, Schema] = {}
        channels: dict[int, Channel] = {}
        counts: dict[int, int] = defaultdict(int)
        self._stream.seek(0)
        try:
            for record in StreamReader(self._stream, skip_magic=False).records:
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message):
                    counts[record.channel_id] += 1
        except (McapError, ValueError, EOFError) as error:
            raise BagError(f"{self.path} is not a readable MCAP file ({error})") from None
        return schemas, channels, counts

    def _make_topics(self, counts: Mapping[int, int]) -> dict[str, BagTopic]:
        topics: dict[str, BagTopic] = {}
        for channel in self._channels.values():
            schema = self._schemas.get(channel.schema_id)
            type_name = schema.name if schema is not None else ""
            try:
                offered = parse_offered_qos(channel.metadata.get("offered_qos_profiles", ""))
            except QosYamlError as error:
                raise BagError(f"{self.path}, topic {channel.topic}: {error}") from None
            definition = (
                schema.data.decode("utf-8", errors="replace")
                if schema is not None and schema.encoding == SchemaEncoding.ROS2
                else None
            )
            earlier = topics.get(channel.topic)
            if earlier is not None and earlier.type_name != type_name:
                raise BagError(
                    f"{self.path}: topic {channel.topic} has channels of two types, "
                    f"{earlier.type_name} and {type_name}"
                )
            topics[channel.topic] = BagTopic(
                name=channel.topic,
                type_name=type_name,
                offered_qos=(earlier.offered_qos if earlier else ()) + offered,
                definition=definition,
                message_count=(earlier.message_count if earlier else 0) + counts.get(channel.id, 0),
                message_encoding=channel.message_encoding,
                type_hash=channel.metadata.get("topic_type_hash", ""),
            )
        return topics

    def topics(self) -> Mapping[str, BagTopic]:
        return self._topics

    def messages(self, topics: Collection[str] | None = None) -> Iterator[BagMessage]:
        wanted = None if topics is None else list(topics)
        try:
            for _schema, channel, message in self._reader.iter_messages(topics=wanted, log_time_order=True):
                yield BagMessage(channel.topic, message.log_time, message.publish_time, message.data)
        except (McapError, ValueError, EOFError) as error:
            raise BagError(f"{self.path}: reading the messages failed ({error})") from None

    def metadata(self, name: str) -> list[dict[str, str]]:
        """The key-value maps of the metadata records of this name (``rosbag2`` for the bag metadata)."""
        try:
            return [dict(r.metadata) for r in self._reader.iter_metadata() if r.name == name]
        except (McapError, ValueError, EOFError) as error:
            raise BagError(f"{self.path}: reading the metadata records failed ({error})") from None

    def close(self) -> None:
        self._stream.close()


def _from_rosbags(qos: Qos) -> OfferedQos:
    return OfferedQos(
        reliability=Reliability(qos.reliability.value),
        durability=Durability(qos.durability.value),
        history=History(qos.history.value),
        depth=qos.depth,
        deadline=QosTime(*qos.deadline),
        lifespan=QosTime(*qos.lifespan),
        liveliness=Liveliness(qos.liveliness.value),
        liveliness_lease_duration=QosTime(*qos.liveliness_lease_duration),
        avoid_ros_namespace_conventions=qos.avoid_ros_namespace_conventions,
    )


class RosbagsBagReader(_ClosedOnExit):
    """Reads a rosbag2 directory (sqlite3 or mcap storage), a .db3 or an .mcap file with rosbags."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        _check_exists(self.path)
        if self.path.is_dir() and not (self.path / "metadata.yaml").is_file():
            raise BagError(f"{self.path} is a directory without metadata.yaml, not a rosbag2 bag")
        try:
            self._reader = RosbagsReader(self.path)
            self._reader.open()
        except (ReaderError, FileNotFoundError, KeyError, ValueError) as error:
            raise BagError(f"{self.path} is not a readable rosbag2 bag: {error}") from None
        self._topics = self._make_topics()

    def _make_topics(self) -> dict[str, BagTopic]:
        topics: dict[str, BagTopic] = {}
        for connection in self._reader.connections:
            ext = connection.ext
            offered = (
                tuple(_from_rosbags(q) for q in ext.offered_qos_profiles)
                if isinstance(ext, ConnectionExtRosbag2)
                else ()
            )
            definition = (
                connection.msgdef.data if connection.msgdef.format is MessageDefinitionFormat.MSG else None
            )
            earlier = topics.get(connection.topic)
            topics[connection.topic] = BagTopic(
                name=connection.topic,
                type_name=connection.msgtype,
                offered_qos=(earlier.offered_qos if earlier else ()) + offered,
                definition=definition or None,
                message_count=(earlier.message_count if earlier else 0) + connection.msgcount,
                type_hash=connection.digest,
            )
        return topics

    def topics(self) -> Mapping[str, BagTopic]:
        return self._topics

    def messages(self, topics: Collection[str] | None = None) -> Iterator[BagMessage]:
        connections = [c for c in self._reader.connections if topics is None or c.topic in topics]
        if not connections:
            return
        try:
            for connection, timestamp, data in self._reader.messages(connections=connections):
                yield BagMessage(connection.topic, timestamp, timestamp, bytes(data))
        except ReaderError as error:
            raise BagError(f"{self.path}: reading the messages failed ({error})") from None

    def close(self) -> None:
        self._reader.close()


READERS: Mapping[str, type[McapBagReader] | type[RosbagsBagReader]] = {
    "mcap": McapBagReader,
    "rosbags": RosbagsBagReader,
}


def open_bag(path: Path | str) -> McapBagReader | RosbagsBagReader:
    """A reader for a bag: an .mcap file with the mcap library; a rosbag2 directory or a .db3 file with
    rosbags."""
    path = Path(path)
    _check_exists(path)
    if path.is_dir() or path.suffix == ".db3":
        return RosbagsBagReader(path)
    if path.suffix == ".mcap":
        return McapBagReader(path)
    raise BagError(
        f"{path}: a bag is an .mcap file, a .db3 file or a rosbag2 directory; found {path.suffix!r}"
    )


@dataclass
class _TopicState:
    topic: BagTopic
    channel_id: int
    count: int = 0
    sequence: int = 0


def rosbag2_metadata(
    *,
    version: int,
    file_name: str,
    topics: Sequence[tuple[BagTopic, int]],
    start_ns: int,
    end_ns: int,
    ros_distro: str,
) -> dict[str, Any]:
    """The bag metadata (rosbag2's BagMetadata) as rosbag2 serialises it, in its key order; the topics
    with their message counts. Metadata version 9 holds the offered QoS as a list, 8 as YAML text."""
    duration = max(0, end_ns - start_ns)
    total = sum(count for _, count in topics)
    return {
        "version": version,
        "storage_identifier": "mcap",
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start_ns},
        "message_count": total,
        "topics_with_message_count": [
            {
                "topic_metadata": {
                    "name": topic.name,
                    "type": topic.type_name,
                    "serialization_format": topic.message_encoding,
                    "offered_qos_profiles": offered_qos_records(topic.offered_qos, version=version)
                    if version >= 9
                    else dump_offered_qos(topic.offered_qos, version=version),
                    "type_description_hash": topic.type_hash,
                },
                "message_count": count,
            }
            for topic, count in topics
        ],
        "compression_format": "",
        "compression_mode": "",
        "relative_file_paths": [file_name],
        "files": [
            {
                "path": file_name,
                "starting_time": {"nanoseconds_since_epoch": start_ns},
                "duration": {"nanoseconds": duration},
                "message_count": total,
            }
        ],
        "custom_data": {},
        "ros_distro": ros_distro,
    }


@dataclass
class _Times:
    start: int | None = None
    end: int = 0


class BagWriter(_ClosedOnExit):
    """Writes an MCAP file the way rosbag2's MCAP storage does; the file is complete once closed.

    Not thread-safe: call from one thread (the recorder's executor), then close.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        compression: Compression = Compression.NONE,
        metadata_version: int = DEFAULT_METADATA_VERSION,
    ) -> None:
        self.path = Path(path)
        offered_qos_records((), version=metadata_version)  # validates the version
        self.metadata_version = metadata_version
        try:
            self._stream: IO[bytes] = self.path.open("xb")
        except FileExistsError:
            raise BagError(f"{self.path} exists already; choose another output file") from None
        except OSError as error:
            raise BagError(f"cannot create {self.path}: {error.strerror}") from None
        self._writer = Writer(self._stream, compression=_MCAP_COMPRESSION[compression])
        self._writer.start(profile=Profile.ROS2, library=LIBRARY)
        self._schemas: dict[str, int] = {}
        self._topics: dict[str, _TopicState] = {}
        self._times = _Times()
        self._closed = False

    @property
    def topics(self) -> Mapping[str, BagTopic]:
        """The topics added so far."""
        return {name: state.topic for name, state in self._topics.items()}

    def message_count(self, topic: str) -> int:
        """Messages written on a topic so far."""
        return self._topics[topic].count

    def add_topic(
        self,
        name: str,
        type_name: str,
        *,
        offered_qos: Sequence[OfferedQos],
        definition: str | None = None,
        topic_type_hash: str | None = None,
    ) -> BagTopic:
        """Add a topic (once). The definition and the type hash default to those of the installed type."""
        if name in self._topics:
            raise BagError(f"topic {name} is in {self.path} already")
        type_full = parse_type_name(type_name).full
        text = definition_text(type_full) if definition is None else definition
        digest = type_hash(type_full) if topic_type_hash is None else topic_type_hash
        schema_id = self._schemas.get(type_full)
        if schema_id is None:
            schema_id = self._writer.register_schema(type_full, SchemaEncoding.ROS2, text.encode())
            self._schemas[type_full] = schema_id
        metadata = {
            "offered_qos_profiles": dump_offered_qos(offered_qos, version=self.metadata_version),
            "topic_type_hash": digest,
        }
        channel_id = self._writer.register_channel(name, MessageEncoding.CDR, schema_id, metadata)
        topic = BagTopic(
            name=name,
            type_name=type_full,
            offered_qos=tuple(offered_qos),
            definition=text,
            message_count=0,
            type_hash=digest,
        )
        self._topics[name] = _TopicState(topic, channel_id)
        return topic

    def write(self, topic: str, data: bytes, *, log_time_ns: int, publish_time_ns: int | None = None) -> None:
        """Write one message of a topic added before; publish_time defaults to log_time."""
        state = self._topics.get(topic)
        if state is None:
            raise BagError(f"topic {topic} was not added to {self.path}")
        if log_time_ns < 0:
            raise BagError(f"log time must be >= 0 ns; found {log_time_ns} on {topic}")
        publish = log_time_ns if publish_time_ns is None else max(0, publish_time_ns)
        self._writer.add_message(state.channel_id, log_time_ns, data, publish, sequence=state.sequence)
        state.sequence = (state.sequence + 1) & 0xFFFFFFFF
        state.count += 1
        times = self._times
        times.start = log_time_ns if times.start is None else min(times.start, log_time_ns)
        times.end = max(times.end, log_time_ns)

    def close(self) -> None:
        """Write the rosbag2 metadata record and the summary, and close the file (once)."""
        if self._closed:
            return
        self._closed = True
        try:
            start = self._times.start if self._times.start is not None else 0
            metadata = rosbag2_metadata(
                version=self.metadata_version,
                file_name=self.path.name,
                topics=[(s.topic, s.count) for s in self._topics.values()],
                start_ns=start,
                end_ns=self._times.end if self._times.start is not None else start,
                ros_distro=os.environ.get("ROS_DISTRO") or "jazzy",
            )
            serialized = yaml.safe_dump(metadata, sort_keys=False, default_flow_style=False)
            self._writer.add_metadata(ROSBAG2_RECORD, {"serialized_metadata": serialized})
            self._writer.finish()
        finally:
            self._stream.close()
