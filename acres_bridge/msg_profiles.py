"""The spec's topic tables as data: load, validate and look up msg_profiles/*.yaml.

One source of truth for every topic's name, type, direction, rate, QoS and frame. Nodes take
their names and QoS from here; tests and the parity tool check against it.

    profiles = load_profiles()
    odom = profiles.topic("polaris", "/vehicle/odom")
    node.create_publisher(odom.message_class(), odom.name, odom.qos.to_rclpy())
"""

from __future__ import annotations

import importlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from acres_bridge.errors import ProfileError

if TYPE_CHECKING:
    from rclpy.qos import QoSProfile

__all__ = [
    "ALWAYS_ABSOLUTE",
    "Direction",
    "MsgProfiles",
    "QosSpec",
    "RateKind",
    "TopicSpec",
    "default_profile_dir",
    "load_profiles",
]

QOS_FILE = "qos.yaml"
ALWAYS_ABSOLUTE = frozenset({"/clock", "/tf", "/tf_static", "/sim/episode"})
PACKAGE = "acres_bridge"


class Direction(Enum):
    """Which way a topic goes, seen from the bridge (or from the simulator for the episode log)."""

    PUBLISH = "publish"
    SUBSCRIBE = "subscribe"
    FILE = "file"
    FILE_AND_TOPIC = "file_and_topic"


class RateKind(Enum):
    """How often a topic carries a message when the spec gives no fixed frequency."""

    PERIODIC = "periodic"  # rate_hz holds the frequency
    ONCE = "once"
    ON_CHANGE = "on_change"
    ON_CHANGE_AND_1HZ = "on_change_and_1hz"
    PER_EPISODE = "per_episode"
    STEPS_WITH_CONTACTS = "steps_with_contacts"
    STEPS_WITH_EVENTS = "steps_with_events"
    BY_TASK = "by_task"
    NONE = "none"  # a subscription: the sender decides


_RELIABILITY = ("reliable", "best_effort")
_DURABILITY = ("volatile", "transient_local")
_HISTORY = ("keep_last", "keep_all")


@dataclass(frozen=True, kw_only=True)
class QosSpec:
    """A QoS profile: one of the spec's named profiles, or one given inline in a row."""

    name: str  # the profile name, or "inline"
    reliability: str
    durability: str
    history: str
    depth: int

    @property
    def pair(self) -> tuple[int, int]:
        """(reliability, durability) as the rmw enum numbers, the form ros2 bag and the parity report use."""
        return (1 if self.reliability == "reliable" else 2, 1 if self.durability == "transient_local" else 2)

    def to_rclpy(self) -> QoSProfile:
        """The rclpy.qos.QoSProfile of this spec (rclpy is imported here: reading the tables needs no ROS)."""
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: PLC0415

        return QoSProfile(
            reliability=ReliabilityPolicy.RELIABLE
            if self.reliability == "reliable"
            else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL
            if self.durability == "transient_local"
            else DurabilityPolicy.VOLATILE,
            history=HistoryPolicy.KEEP_LAST if self.history == "keep_last" else HistoryPolicy.KEEP_ALL,
            depth=self.depth,
        )


@dataclass(frozen=True, kw_only=True)
class TopicSpec:
    """One row of a topic table."""

    table: str
    name: str  # absolute ("/clock") or relative to the bridge's namespace ("odom")
    type_name: str  # "nav_msgs/msg/Odometry"
    direction: Direction
    rate_kind: RateKind
    rate_hz: float | None  # for PERIODIC rows
    burst: int  # messages sent together each period (13 for can/rx), else 1
    qos: QosSpec | None  # None for channels that exist only in the episode log file
    frame: str | None  # the header frame; None where the spec gives none
    node: str | None  # the executable that owns the topic, for the table of the other nodes
    description: str

    @property
    def is_absolute(self) -> bool:
        return self.name.startswith("/")

    @property
    def ros_name(self) -> str:
        """The name to create the topic with: absolute only for the four names that never move.

        The spec writes the Polaris's names for a bridge in the root namespace; in another
        namespace each gets the namespace as a prefix, except /clock, /tf, /tf_static and
        /sim/episode.
        """
        return self.name if self.name in ALWAYS_ABSOLUTE else self.name.lstrip("/")

    def message_class(self) -> type:
        """The Python message class of type_name (imports its package)."""
        return _import_message(self.type_name)

    def create_publisher(self, node: Any) -> Any:
        """A publisher of this topic on an rclpy node, with the row's name, type and QoS."""
        return node.create_publisher(self.message_class(), self.ros_name, self._wire_qos())

    def create_subscription(
        self, node: Any, callback: Callable[..., None], *, best_effort: bool = False, **options: Any
    ) -> Any:
        """A subscription to this topic on an rclpy node, with the row's name, type and QoS; with
        `best_effort`, the profile's history, depth and durability with best-effort reliability,
        which DDS matches with reliable and best-effort publishers alike. `options` go to
        create_subscription as they are."""
        qos = self._wire_qos()
        if best_effort:
            from rclpy.qos import ReliabilityPolicy  # noqa: PLC0415

            qos.reliability = ReliabilityPolicy.BEST_EFFORT
        return node.create_subscription(self.message_class(), self.ros_name, callback, qos, **options)

    def _wire_qos(self) -> Any:
        if self.qos is None:
            raise ValueError(f"{self.name} has no QoS: it is not a topic on the wire")
        return self.qos.to_rclpy()


@dataclass(frozen=True)
class MsgProfiles:
    """All topic tables and QoS profiles, as loaded from one directory."""

    directory: Path
    qos_profiles: Mapping[str, QosSpec]
    tables: Mapping[str, tuple[TopicSpec, ...]]

    def table(self, table: str) -> tuple[TopicSpec, ...]:
        """The rows of one table (polaris, maxxum, session, episode_log, other_nodes)."""
        try:
            return self.tables[table]
        except KeyError:
            raise KeyError(f"no msg_profiles table {table!r}; there are {sorted(self.tables)}") from None

    def topic(self, table: str, name: str) -> TopicSpec:
        """The row of one topic in one table."""
        for spec in self.table(table):
            if spec.name == name:
                return spec
        raise KeyError(f"msg_profiles table {table!r} has no topic {name!r}")

    def qos(self, profile: str) -> QosSpec:
        """A named QoS profile of the spec."""
        try:
            return self.qos_profiles[profile]
        except KeyError:
            raise KeyError(f"no QoS profile {profile!r}; there are {sorted(self.qos_profiles)}") from None

    def __iter__(self) -> Iterator[TopicSpec]:
        for rows in self.tables.values():
            yield from rows


def default_profile_dir() -> Path:
    """msg_profiles/ of a source checkout when running from one, else the installed share copy.

    The share copy is looked up on AMENT_PREFIX_PATH (a colcon or ROS install) and in this
    interpreter's prefix (the pip-only venv, which sets no AMENT_PREFIX_PATH).
    """
    source = Path(__file__).resolve().parent.parent / "msg_profiles"
    if (source / QOS_FILE).is_file():
        return source
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    for prefix in (*prefixes, sys.prefix):
        installed = Path(prefix) / "share" / PACKAGE / "msg_profiles"
        if (installed / QOS_FILE).is_file():
            return installed
    raise ProfileError(
        "msg_profiles", f"not found in a source checkout, on AMENT_PREFIX_PATH or in {sys.prefix}"
    )


@cache
def _import_message(type_name: str) -> type:
    package, kind, name = type_name.split("/")
    module = importlib.import_module(f"{package}.{kind}")
    message = getattr(module, name, None)
    if not isinstance(message, type):
        raise ImportError(f"{package}.{kind} has no type {name}")
    return message


def load_profiles(directory: Path | None = None, *, check_types: bool = True) -> MsgProfiles:
    """Load and validate every table of a msg_profiles directory.

    Raises ProfileError naming the file and row for an unknown profile, an unknown or malformed
    type, a duplicate topic within a table, or any missing or malformed field. With
    check_types, each type must import in this environment.
    """
    directory = directory or default_profile_dir()
    qos_path = directory / QOS_FILE
    qos_profiles = _load_qos(qos_path)
    tables: dict[str, tuple[TopicSpec, ...]] = {}
    for path in sorted(directory.glob("*.yaml")):
        if path.name == QOS_FILE:
            continue
        table, rows = _load_table(path, qos_profiles, check_types=check_types)
        if table in tables:
            raise ProfileError(path.name, f"table {table!r} is defined twice in {directory}")
        tables[table] = rows
    if not tables:
        raise ProfileError(str(directory), "no topic tables (*.yaml besides qos.yaml)")
    return MsgProfiles(directory=directory, qos_profiles=qos_profiles, tables=tables)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ProfileError(path.name, f"file not found in {path.parent}") from None
    except yaml.YAMLError as error:
        raise ProfileError(path.name, f"not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ProfileError(path.name, f"expected a mapping at the top, found {type(data).__name__}")
    return data


def _choice(value: Any, allowed: tuple[str, ...], what: str, fail: Any) -> str:
    if value not in allowed:
        raise fail(f"{what} must be one of {', '.join(allowed)}; found {value!r}")
    return str(value)


def _qos_from_mapping(name: str, data: Any, fail: Any) -> QosSpec:
    if not isinstance(data, dict):
        raise fail(f"QoS {name!r} must be a mapping, found {data!r}")
    unknown = set(data) - {"reliability", "durability", "history", "depth", "description"}
    if unknown:
        raise fail(f"QoS {name!r} has unknown keys {sorted(unknown)}")
    depth = data.get("depth")
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise fail(f"QoS {name!r} depth must be a positive integer, found {depth!r}")
    return QosSpec(
        name=name,
        reliability=_choice(data.get("reliability"), _RELIABILITY, f"QoS {name!r} reliability", fail),
        durability=_choice(data.get("durability", "volatile"), _DURABILITY, f"QoS {name!r} durability", fail),
        history=_choice(data.get("history", "keep_last"), _HISTORY, f"QoS {name!r} history", fail),
        depth=depth,
    )


def _load_qos(path: Path) -> dict[str, QosSpec]:
    data = _read_yaml(path)
    profiles = data.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise ProfileError(path.name, "expected a non-empty mapping 'profiles'")

    def fail(message: str) -> ProfileError:
        return ProfileError(path.name, message)

    return {str(name): _qos_from_mapping(str(name), spec, fail) for name, spec in profiles.items()}


_ROW_KEYS = {"name", "type", "direction", "rate", "burst", "qos", "frame", "node", "description"}


def _load_table(
    path: Path, qos_profiles: Mapping[str, QosSpec], *, check_types: bool
) -> tuple[str, tuple[TopicSpec, ...]]:
    data = _read_yaml(path)
    table = data.get("table")
    if not isinstance(table, str) or not table:
        raise ProfileError(path.name, "expected a string 'table' naming the table")
    rows = data.get("topics")
    if not isinstance(rows, list) or not rows:
        raise ProfileError(path.name, "expected a non-empty list 'topics'")
    specs: list[TopicSpec] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        spec = _parse_row(path.name, table, number, row, qos_profiles, check_types=check_types)
        if spec.name in seen:
            raise ProfileError(
                path.name,
                f"duplicate topic, first given in row {seen[spec.name]}",
                row=number,
                topic=spec.name,
            )
        seen[spec.name] = number
        specs.append(spec)
    return table, tuple(specs)


def _parse_row(
    file: str,
    table: str,
    number: int,
    row: Any,
    qos_profiles: Mapping[str, QosSpec],
    *,
    check_types: bool,
) -> TopicSpec:
    topic = row.get("name") if isinstance(row, dict) else None

    def fail(message: str) -> ProfileError:
        return ProfileError(file, message, row=number, topic=topic if isinstance(topic, str) else None)

    if not isinstance(row, dict):
        raise fail(f"expected a mapping, found {row!r}")
    unknown = set(row) - _ROW_KEYS
    if unknown:
        raise fail(f"unknown keys {sorted(unknown)}")
    if not isinstance(topic, str) or not topic or topic.endswith("/") or "//" in topic or " " in topic:
        raise fail(f"name must be a ROS topic name, found {topic!r}")

    type_name = row.get("type")
    if not isinstance(type_name, str) or len(type_name.split("/")) != 3 or type_name.split("/")[1] != "msg":
        raise fail(f"type must look like package/msg/Name, found {type_name!r}")
    if check_types:
        try:
            _import_message(type_name)
        except (ImportError, ValueError) as error:
            raise fail(f"unknown type {type_name!r}: {error}") from None

    try:
        direction = Direction(row.get("direction"))
    except ValueError:
        allowed = ", ".join(d.value for d in Direction)
        raise fail(f"direction must be one of {allowed}; found {row.get('direction')!r}") from None

    rate_kind, rate_hz = _parse_rate(row.get("rate"), direction, fail)
    burst = row.get("burst", 1)
    if not isinstance(burst, int) or isinstance(burst, bool) or burst < 1:
        raise fail(f"burst must be a positive integer, found {burst!r}")

    qos_value = row.get("qos")
    qos: QosSpec | None
    if isinstance(qos_value, str):
        if qos_value not in qos_profiles:
            raise fail(f"unknown QoS profile {qos_value!r}; known: {', '.join(sorted(qos_profiles))}")
        qos = qos_profiles[qos_value]
    elif isinstance(qos_value, dict):
        qos = _qos_from_mapping("inline", qos_value, fail)
    elif qos_value is None and direction is Direction.FILE:
        qos = None
    else:
        raise fail(f"qos must name a profile or give one inline, found {qos_value!r}")

    frame = row.get("frame")
    if frame is not None and (not isinstance(frame, str) or not frame):
        raise fail(f"frame must be a non-empty string or null, found {frame!r}")
    node = row.get("node")
    if node is not None and not isinstance(node, str):
        raise fail(f"node must be a string, found {node!r}")
    return TopicSpec(
        table=table,
        name=topic,
        type_name=type_name,
        direction=direction,
        rate_kind=rate_kind,
        rate_hz=rate_hz,
        burst=burst,
        qos=qos,
        frame=frame,
        node=node,
        description=str(row.get("description", "")),
    )


def _parse_rate(value: Any, direction: Direction, fail: Any) -> tuple[RateKind, float | None]:
    if value is None:
        if direction is not Direction.SUBSCRIBE:
            raise fail("rate is required for a topic that is published or written")
        return RateKind.NONE, None
    if direction is Direction.SUBSCRIBE:
        raise fail(f"a subscription has no rate; found {value!r}")
    if isinstance(value, bool):
        raise fail(f"rate must be a frequency in Hz or a keyword, found {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value <= 0:
            raise fail(f"rate must be a positive frequency in Hz, found {value!r}")
        return RateKind.PERIODIC, float(value)
    keywords = [k.value for k in RateKind if k not in (RateKind.PERIODIC, RateKind.NONE)]
    if value not in keywords:
        raise fail(f"rate must be a frequency in Hz or one of {', '.join(keywords)}; found {value!r}")
    return RateKind(value), None
