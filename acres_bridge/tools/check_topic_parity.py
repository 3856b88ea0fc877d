"""check_topic_parity: compare the topics of a simulator bag with bags of the real vehicle, or with the
spec's topic table (msg_profiles).

    check_topic_parity sim.mcap dbw_direct_test_01/ human_20260813_172445/ --allow allow.yaml
    check_topic_parity sim.mcap --vehicle polaris

For each topic that both sides have, three checks: the type; the QoS (reliability, durability) that
the publishers offered, as rmw numbers (reliability 1 reliable, 2 best effort; durability 1
transient local, 2 volatile); and the frame names: the header.frame_id values seen, or for a
tf2_msgs/msg/TFMessage the parent->child pairs. One line per topic, OK or DIFF, then a count.

Against msg_profiles, the reference is each published row of the table: its type, the QoS pair of
its profile, and its frame (for /tf: the parent of every pair; a row without a frame expects the
empty frame_id the spec gives the drive-by-wire reports). Reference bags may be MCAP files, rosbag2
directories (sqlite3 or mcap storage) or .db3 files; several reference bags are merged.

An allow file lists known differences, each with its reason; a listed difference is reported but
does not fail the check. Exit status: 0 when every difference is allowed, 1 when one is not or no
topic is common to both sides, 2 when a bag, the allow file or the table cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import yaml
from rosbags.interfaces import Nodetype
from rosbags.interfaces.typing import Typesdict
from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from acres_bridge.errors import AcresBridgeError
from acres_bridge.msg_profiles import Direction, TopicSpec, load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.tools.bag import BagReader, BagTopic, open_bag
from acres_bridge.tools.cdr import header_frame
from acres_bridge.tools.errors import AllowFileError, CdrError, DefinitionError
from acres_bridge.tools.msgdef import definition_text, parse_definition, parse_type_name

__all__ = [
    "TF_TYPE",
    "Allowance",
    "Check",
    "Comparison",
    "TopicSide",
    "compare",
    "format_report",
    "load_allow_file",
    "main",
    "merge_sides",
    "observe_bag",
    "profile_sides",
]

TF_TYPE = "tf2_msgs/msg/TFMessage"
HEADER_TYPE = "std_msgs/msg/Header"
SHOWN_FRAMES = 3  # frame names a line shows before "..."
UNREADABLE = "<unreadable>"  # the frame of a message whose bytes do not parse


class Check(Enum):
    """One comparison made for each common topic."""

    TYPE = "type"
    QOS = "qos"
    FRAMES = "frames"


@dataclass(frozen=True, kw_only=True)
class TopicSide:
    """What one side shows of a topic."""

    type_name: str
    qos: frozenset[tuple[int, int]]  # (reliability, durability) of each offer; empty: not recorded
    frames: frozenset[str] | None  # None: unknown (no message, or nothing to check against)


@dataclass(frozen=True)
class Allowance:
    """A known difference: this check of this topic may differ, for this reason."""

    topic: str
    check: Check
    reason: str


@dataclass(frozen=True)
class Comparison:
    """The checks of one topic common to both sides."""

    topic: str
    sim: TopicSide
    ref: TopicSide
    differences: tuple[Check, ...]
    allowed: tuple[Allowance, ...]  # the allowances that cover some of the differences

    @property
    def unexpected(self) -> tuple[Check, ...]:
        covered = {a.check for a in self.allowed}
        return tuple(c for c in self.differences if c not in covered)


# ---------------------------------------------------------------------------------------------------
# What a bag shows


def _types_of(topic: BagTopic) -> Typesdict | None:
    """The field layouts of a topic's type: the bag's definition, else the installed one, else None."""
    for source in (topic.definition, None):
        try:
            text = source if source is not None else definition_text(topic.type_name)
            return parse_definition(text, topic.type_name)
        except DefinitionError:
            continue
    return None


def _tf_pairs(store: Typestore) -> Callable[[bytes], Iterable[str]]:
    def pairs(data: bytes) -> Iterable[str]:
        message = store.deserialize_cdr(data, TF_TYPE)
        return [f"{t.header.frame_id}->{t.child_frame_id}" for t in message.transforms]  # type: ignore[attr-defined]

    return pairs


def frame_reader(topic: BagTopic) -> Callable[[bytes], Iterable[str]] | None:
    """How to read the frame names of one message of a topic; None when its messages carry none.

    Raises DefinitionError when the type name is malformed or its layout unknown (no definition in
    the bag, type not installed here)."""
    full = parse_type_name(topic.type_name).full
    types = _types_of(topic)
    if full == TF_TYPE:
        store = get_typestore(Stores.EMPTY if types else Stores.ROS2_JAZZY)
        if types:
            store.register(types)
        return _tf_pairs(store)
    if types is None:
        raise DefinitionError(f"no definition of {full} for {topic.name}, in the bag or installed")
    _constants, fields = types[full]
    if fields and fields[0][1] == (Nodetype.NAME, HEADER_TYPE):
        return lambda data: (header_frame(data),)
    return None


def observe_bag(reader: BagReader) -> dict[str, TopicSide]:
    """Each topic of a bag: its type, the offered QoS pairs and the frame names of its messages."""
    topics = reader.topics()
    readers: dict[str, Callable[[bytes], Iterable[str]]] = {}
    frames: dict[str, set[str] | None] = {}
    for name, topic in topics.items():
        frames[name] = None
        if topic.message_count == 0 or topic.message_encoding != "cdr":
            continue
        try:
            read = frame_reader(topic)
        except DefinitionError:
            continue
        if read is None:
            frames[name] = set()
        else:
            readers[name] = read
    for message in reader.messages(list(readers)):
        seen = frames[message.topic]
        if seen is None:
            seen = frames[message.topic] = set()
        try:
            seen.update(readers[message.topic](message.data))
        except (CdrError, SerdeError, UnicodeDecodeError, ValueError, IndexError):
            seen.add(UNREADABLE)
    return {
        name: TopicSide(
            type_name=topic.type_name,
            qos=frozenset(q.pair for q in topic.offered_qos),
            frames=None if frames[name] is None else frozenset(frames[name] or ()),
        )
        for name, topic in topics.items()
    }


def merge_sides(bags: Sequence[Mapping[str, TopicSide]]) -> dict[str, TopicSide]:
    """Several bags of one side as one: QoS offers and frames of a topic united; the first type kept."""
    merged: dict[str, TopicSide] = {}
    for bag in bags:
        for name, side in bag.items():
            earlier = merged.get(name)
            if earlier is None:
                merged[name] = side
                continue
            if earlier.frames is None or side.frames is None:
                frames = earlier.frames if side.frames is None else side.frames
            else:
                frames = earlier.frames | side.frames
            merged[name] = TopicSide(type_name=earlier.type_name, qos=earlier.qos | side.qos, frames=frames)
    return merged


def _expected_frames(spec: TopicSpec, seen: frozenset[str] | None) -> frozenset[str] | None:
    if seen is None:
        return None
    if spec.type_name == TF_TYPE:
        if spec.frame is None:
            return None
        return frozenset(f"{spec.frame}->{pair.partition('->')[2]}" for pair in seen)
    if not seen:  # the type has no header
        return frozenset()
    return frozenset({spec.frame or ""})


def profile_sides(
    rows: Sequence[TopicSpec], sim: Mapping[str, TopicSide], namespace: str = "/"
) -> dict[str, TopicSide]:
    """The reference a msg_profiles table gives for each topic it publishes, by absolute name.

    The expected frames follow the shape of what the simulator bag shows (`sim`): the table's frame
    as parent of each TF pair; the frame (or "" where the table gives none) for a message with a
    header; nothing for a message without one."""
    sides: dict[str, TopicSide] = {}
    for spec in rows:
        if spec.direction not in (Direction.PUBLISH, Direction.FILE_AND_TOPIC) or spec.qos is None:
            continue
        name = resolve_name(spec.ros_name, namespace)
        seen = sim[name].frames if name in sim else None
        sides[name] = TopicSide(
            type_name=spec.type_name, qos=frozenset({spec.qos.pair}), frames=_expected_frames(spec, seen)
        )
    return sides


# ---------------------------------------------------------------------------------------------------
# Comparing


def _differences(sim: TopicSide, ref: TopicSide) -> tuple[Check, ...]:
    found = []
    if sim.type_name != ref.type_name:
        found.append(Check.TYPE)
    if sim.qos and ref.qos and sim.qos != ref.qos:
        found.append(Check.QOS)
    if sim.frames is not None and ref.frames is not None and sim.frames != ref.frames:
        found.append(Check.FRAMES)
    return tuple(found)


def compare(
    sim: Mapping[str, TopicSide], ref: Mapping[str, TopicSide], allow: Sequence[Allowance] = ()
) -> list[Comparison]:
    """The checks of every topic on both sides, in the order of the simulator side."""
    comparisons = []
    for name, sim_side in sim.items():
        ref_side = ref.get(name)
        if ref_side is None:
            continue
        differences = _differences(sim_side, ref_side)
        allowed = tuple(a for a in allow if a.topic == name and a.check in differences)
        comparisons.append(Comparison(name, sim_side, ref_side, differences, allowed))
    return comparisons


def _qos_text(qos: frozenset[tuple[int, int]]) -> str:
    if not qos:
        return "?"
    pairs = sorted(qos)
    return str(pairs[0]) if len(pairs) == 1 else "[" + ", ".join(map(str, pairs)) + "]"


def _frames_text(frames: frozenset[str] | None) -> str:
    if frames is None:
        return "-"
    names = sorted(frames)
    shown = ", ".join(repr(n) for n in names[:SHOWN_FRAMES])
    return f"[{shown}, ...]" if len(names) > SHOWN_FRAMES else f"[{shown}]"


def format_report(comparisons: Sequence[Comparison]) -> list[str]:
    """One line per topic, then the count of checks and differences."""
    topic_width = max((len(c.topic) for c in comparisons), default=0) + 2
    type_width = max((len(c.sim.type_name) for c in comparisons), default=0) + 2
    lines = []
    for c in comparisons:
        status = "DIFF" if c.differences else "OK"
        qos = f"qos {_qos_text(c.sim.qos)} / {_qos_text(c.ref.qos)}"
        line = (
            f"{status:<4} {c.topic:<{topic_width}}{c.sim.type_name:<{type_width}}{qos:<21}"
            f"frames {_frames_text(c.sim.frames)} / {_frames_text(c.ref.frames)}"
        )
        if c.sim.type_name != c.ref.type_name:
            line += f"  type {c.ref.type_name}"
        if c.unexpected:
            line += "  differs: " + ", ".join(check.value for check in c.unexpected)
        for allowance in c.allowed:
            line += f"  allowed ({allowance.check.value}): {allowance.reason}"
        lines.append(line)
    differences = sum(1 for c in comparisons if c.differences)
    lines.append(f"{len(comparisons)} common topic checks, {differences} differences")
    if differences:
        unexpected = sum(1 for c in comparisons if c.unexpected)
        lines.append(f"{differences - unexpected} allowed, {unexpected} unexpected")
    return lines


# ---------------------------------------------------------------------------------------------------
# The allow file


def load_allow_file(path: Path) -> tuple[Allowance, ...]:
    """The allowances of a YAML file: ``allow:``, a list of ``{topic, check, reason}``."""
    name = str(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise AllowFileError(name, "file not found") from None
    except (OSError, yaml.YAMLError) as error:
        raise AllowFileError(name, f"not readable YAML: {error}") from None
    if not isinstance(data, dict) or set(data) != {"allow"} or not isinstance(data["allow"], list):
        raise AllowFileError(name, f"expected a mapping with one key 'allow' holding a list; found {data!r}")
    checks = ", ".join(c.value for c in Check)
    allowances = []
    for number, entry in enumerate(data["allow"], start=1):
        if not isinstance(entry, dict) or set(entry) != {"topic", "check", "reason"}:
            raise AllowFileError(
                name, f"expected exactly the keys topic, check and reason; found {entry!r}", entry=number
            )
        topic, check, reason = entry["topic"], entry["check"], entry["reason"]
        if not isinstance(topic, str) or not topic.startswith("/"):
            raise AllowFileError(name, f"topic must be an absolute topic name; found {topic!r}", entry=number)
        if check not in {c.value for c in Check}:
            raise AllowFileError(name, f"check must be one of {checks}; found {check!r}", entry=number)
        if not isinstance(reason, str) or not reason.strip():
            raise AllowFileError(
                name, f"reason must say why the difference is expected; found {reason!r}", entry=number
            )
        allowances.append(Allowance(topic, Check(check), reason.strip()))
    return tuple(allowances)


# ---------------------------------------------------------------------------------------------------
# The command line


def _observe(path: Path) -> dict[str, TopicSide]:
    with open_bag(path) as reader:
        return observe_bag(reader)


def _report(title: str, comparisons: Sequence[Comparison], out: Callable[[str], None]) -> bool:
    """Print one comparison; True when it passes."""
    out(title)
    for line in format_report(comparisons):
        out(line)
    if not comparisons:
        out("no topic is on both sides: nothing was compared")
        return False
    return not any(c.unexpected for c in comparisons)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check_topic_parity",
        description="Compare the topics of a simulator bag with reference bags or a msg_profiles table.",
    )
    parser.add_argument("sim_bag", type=Path, metavar="SIM_BAG")
    parser.add_argument("ref_bags", type=Path, nargs="*", metavar="REF_BAG")
    parser.add_argument("--vehicle", metavar="TABLE", help="compare with this msg_profiles table (polaris)")
    parser.add_argument("--profiles", type=Path, metavar="DIR", help="msg_profiles directory (default: ours)")
    parser.add_argument("--namespace", default="/", help="namespace of the bridge, for --vehicle (default /)")
    parser.add_argument("--allow", type=Path, metavar="FILE", help="YAML file of known differences")
    args = parser.parse_args(argv)
    if not args.ref_bags and not args.vehicle:
        parser.error("give reference bags, --vehicle TABLE, or both")

    def out(line: str) -> None:
        print(line, flush=True)

    try:
        allow = load_allow_file(args.allow) if args.allow else ()
        sim = _observe(args.sim_bag)
        references: list[tuple[str, dict[str, TopicSide]]] = []
        if args.ref_bags:
            title = f"{args.sim_bag} / {', '.join(map(str, args.ref_bags))}"
            references.append((title, merge_sides([_observe(path) for path in args.ref_bags])))
        if args.vehicle:
            profiles = load_profiles(args.profiles) if args.profiles else load_profiles()
            title = f"{args.sim_bag} / msg_profiles table {args.vehicle} ({profiles.directory})"
            references.append((title, profile_sides(profiles.table(args.vehicle), sim, args.namespace)))
        passed = True
        used: set[Allowance] = set()
        for title, ref in references:
            comparisons = compare(sim, ref, allow)
            passed &= _report(title, comparisons, out)
            used.update(a for c in comparisons for a in c.allowed)
        for allowance in allow:
            if allowance not in used:
                out(f"not needed: the allowance of {allowance.check.value} on {allowance.topic}")
    except KeyError as error:
        print(f"check_topic_parity: {error.args[0]}", file=sys.stderr)
        return 2
    except AcresBridgeError as error:
        print(f"check_topic_parity: {error}", file=sys.stderr)
        return 2
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
