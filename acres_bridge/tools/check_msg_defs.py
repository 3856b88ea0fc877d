"""check_msg_defs: do our ds_dbw_msgs give the recorded bytes back? A wire-compatibility check.

    check_msg_defs session.mcap
    check_msg_defs vehicle_bag/            # a rosbag2 directory of the real vehicle

Each ds_dbw_msgs message of the bag is deserialised with our ds_dbw_msgs (rclpy.serialization) and
serialised again; the two byte strings must be equal. Fast CDR does not initialise alignment
padding, so the padding bytes are masked: their offsets are walked from the message layout (the
bag's own definition of the type, parsed by rosbags' typesys; the installed one where the bag has
none) and the lengths of the strings and sequences in the bytes. The options bytes of the
encapsulation header and the bytes after the last field (which Fast CDR's size calculation may add
and leave unwritten) are masked as well; the last fields must end at the same offset. Where the bag
holds a definition, its field list must also equal ours.

Prints ``MATCH: n/n messages round-trip byte-exactly`` or each mismatch (topic, index within the
topic, first differing offset). Exit status: 0 when all match, 1 on any mismatch or when the bag
holds no message of the package, 2 when the bag cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rclpy.serialization import deserialize_message, serialize_message
from rosbags.interfaces import Nodetype
from rosbags.interfaces.typing import FieldDesc, Typesdict

from acres_bridge.errors import AcresBridgeError
from acres_bridge.tools.bag import BagReader, BagTopic, open_bag
from acres_bridge.tools.cdr import cdr_layout, first_difference
from acres_bridge.tools.errors import CdrError, DefinitionError
from acres_bridge.tools.msgdef import definition_text, message_class, parse_definition, parse_type_name

__all__ = [
    "DEFAULT_PACKAGE",
    "Mismatch",
    "RoundTrip",
    "check_bag",
    "definition_difference",
    "main",
    "round_trip",
]

DEFAULT_PACKAGE = "ds_dbw_msgs"
SHOWN_MISMATCHES = 20


@dataclass(frozen=True)
class Mismatch:
    """One message that does not come back byte for byte."""

    topic: str
    index: int | None  # 0-based, within the topic, in log-time order; None: the topic's definition
    type_name: str
    reason: str
    offset: int | None = None  # the first differing byte, where the bytes were compared

    def __str__(self) -> str:
        which = f" #{self.index}" if self.index is not None else ""
        at = f" at byte {self.offset}" if self.offset is not None else ""
        return f"MISMATCH {self.topic}{which} {self.type_name}{at}: {self.reason}"


@dataclass(frozen=True)
class RoundTrip:
    """The result over a bag."""

    checked: int
    mismatches: tuple[Mismatch, ...]
    topics: tuple[tuple[str, str, int], ...]  # (topic, type, messages) of each checked topic

    @property
    def matched(self) -> int:
        return self.checked - len({(m.topic, m.index) for m in self.mismatches if m.index is not None})


def round_trip(
    data: bytes,
    message: type,
    type_name: str,
    types: Typesdict,
    ours: Typesdict,
    *,
    topic: str,
    index: int,
) -> Mismatch | None:
    """Deserialise one message with our class, serialise it again, compare outside the padding.

    `types` is the layout the bag gives the type (its definition), `ours` the layout of our class.
    """

    def mismatch(reason: str, offset: int | None = None) -> Mismatch:
        return Mismatch(topic, index, type_name, reason, offset)

    try:
        layout = cdr_layout(data, type_name, types)
    except CdrError as error:
        return mismatch(f"the bytes do not fit the layout: {error}")
    try:
        again = serialize_message(deserialize_message(data, message))
    except Exception as error:  # rclpy's C layer raises plain exceptions on bytes it cannot take
        return mismatch(f"our {type_name} does not take the bytes: {error}")
    try:
        again_layout = cdr_layout(again, type_name, ours)
    except CdrError as error:
        return mismatch(f"our serialisation does not fit our layout: {error}")
    offset = first_difference(data, again, layout, again_layout)
    if offset is None:
        return None
    ours_byte = f"{again[offset]:02x}" if offset < again_layout.end else "end"
    bag_byte = f"{data[offset]:02x}" if offset < layout.end else "end"
    return mismatch(
        f"the bag has {bag_byte}, ours {ours_byte} ({layout.end} / {again_layout.end} bytes)", offset
    )


def _type_text(desc: FieldDesc) -> str:
    if desc[0] is Nodetype.BASE:
        return desc[1][0]
    if desc[0] is Nodetype.NAME:
        return desc[1]
    inner, size = desc[1]
    suffix = f"[{size}]" if desc[0] is Nodetype.ARRAY else "[]"
    return _type_text(inner) + suffix


def _field_text(field: tuple[str, FieldDesc] | None) -> str:
    return "nothing" if field is None else f"{_type_text(field[1])} {field[0]}"


def definition_difference(bag_types: Typesdict, our_types: Typesdict) -> str | None:
    """The first place where two field layouts differ (a type missing, a field's name, order or
    type), or None. Constants are not compared: they are not on the wire."""
    for name in sorted(set(bag_types) | set(our_types)):
        if name not in bag_types or name not in our_types:
            side = "the bag" if name not in bag_types else "ours"
            return f"{name} is missing from {side}"
        theirs, ours = bag_types[name][1], our_types[name][1]
        for number in range(max(len(theirs), len(ours))):
            a = theirs[number] if number < len(theirs) else None
            b = ours[number] if number < len(ours) else None
            if a != b:
                return f"field {number + 1} of {name}: the bag has {_field_text(a)}, ours {_field_text(b)}"
    return None


@dataclass
class _Topic:
    topic: BagTopic
    message: type | None
    types: Typesdict | None  # the bag's layout of the type (ours where the bag has no definition)
    ours: Typesdict | None
    problem: str | None
    count: int = 0


def _prepare(topic: BagTopic) -> tuple[_Topic, Mismatch | None]:
    """Our class and the layout for a topic; a topic-wide mismatch when the definitions differ."""
    try:
        message = message_class(topic.type_name)
        ours = parse_definition(definition_text(topic.type_name), topic.type_name)
    except DefinitionError as error:
        return _Topic(topic, None, None, None, f"not in our package: {error}"), None
    if topic.definition is None:
        return _Topic(topic, message, ours, ours, None), None
    try:
        theirs = parse_definition(topic.definition, topic.type_name)
    except DefinitionError as error:
        return _Topic(topic, message, ours, ours, None), Mismatch(
            topic.name, None, topic.type_name, str(error)
        )
    difference = definition_difference(theirs, ours)
    found = None
    if difference is not None:
        found = Mismatch(
            topic.name, None, topic.type_name, f"the bag's definition differs from ours: {difference}"
        )
    return _Topic(topic, message, theirs, ours, None), found


def _package(type_name: str) -> str | None:
    try:
        return parse_type_name(type_name).package
    except DefinitionError:
        return None


def check_bag(reader: BagReader, package: str = DEFAULT_PACKAGE) -> RoundTrip:
    """Round-trip every message of the package's types in a bag."""
    topics: dict[str, _Topic] = {}
    mismatches: list[Mismatch] = []
    for name, topic in reader.topics().items():
        if _package(topic.type_name) != package or topic.message_encoding != "cdr":
            continue
        prepared, problem = _prepare(topic)
        topics[name] = prepared
        if problem is not None:
            mismatches.append(problem)
    checked = 0
    for message in reader.messages(list(topics)):
        state = topics[message.topic]
        index = state.count
        state.count += 1
        checked += 1
        if state.message is None or state.types is None or state.ours is None:
            mismatches.append(
                Mismatch(message.topic, index, state.topic.type_name, state.problem or "no layout")
            )
            continue
        found = round_trip(
            message.data,
            state.message,
            state.topic.type_name,
            state.types,
            state.ours,
            topic=message.topic,
            index=index,
        )
        if found is not None:
            mismatches.append(found)
    return RoundTrip(
        checked=checked,
        mismatches=tuple(mismatches),
        topics=tuple((s.topic.name, s.topic.type_name, s.count) for s in topics.values()),
    )


def _lines(result: RoundTrip, package: str, bag: Path) -> Iterator[str]:
    for topic, type_name, count in result.topics:
        yield f"{topic}  {type_name}  {count} messages"
    for mismatch in result.mismatches[:SHOWN_MISMATCHES]:
        yield str(mismatch)
    if len(result.mismatches) > SHOWN_MISMATCHES:
        yield f"... and {len(result.mismatches) - SHOWN_MISMATCHES} more mismatches"
    if result.checked == 0:
        yield f"NO MESSAGES: {bag} holds no {package} message"
    elif result.mismatches:
        yield f"MISMATCH: {result.matched}/{result.checked} messages round-trip byte-exactly"
    else:
        yield f"MATCH: {result.checked}/{result.checked} messages round-trip byte-exactly"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check_msg_defs",
        description="Round-trip each ds_dbw_msgs message of a bag through our message definitions.",
    )
    parser.add_argument(
        "bag", type=Path, metavar="BAG", help="an .mcap file, a .db3 file or a rosbag2 directory"
    )
    parser.add_argument(
        "--package", default=DEFAULT_PACKAGE, help="the message package to check (ds_dbw_msgs)"
    )
    args = parser.parse_args(argv)
    try:
        with open_bag(args.bag) as reader:
            result = check_bag(reader, args.package)
    except AcresBridgeError as error:
        print(f"check_msg_defs: {error}", file=sys.stderr)
        return 2
    for line in _lines(result, args.package, args.bag):
        print(line, flush=True)
    return 0 if result.checked and not result.mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
