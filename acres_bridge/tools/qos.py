"""Offered QoS profiles in the YAML form rosbag2 stores per topic (``offered_qos_profiles``).

rosbag2 keeps, for each recorded topic, the QoS that each of its publishers offered. Metadata
version 9 (Jazzy and later) writes the policies by name (``reliability: reliable``); version 8 and
older (Humble) by their rmw enum number (``reliability: 1``). Both are read here; either is written.
The numbers are those of rmw: reliability 1 reliable, 2 best effort; durability 1 transient local,
2 volatile.

A recorder subscribes with the QoS that connects to every publisher, the way rosbag2 adapts its
request to the offers: reliable only if every publisher is reliable, transient local only if every
publisher is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard, TypeVar

import yaml

from acres_bridge.tools.errors import QosYamlError

if TYPE_CHECKING:  # rclpy only for the graph API's profiles: reading and writing bags needs no ROS
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile

__all__ = [
    "DEFAULT_METADATA_VERSION",
    "INFINITE",
    "METADATA_VERSIONS",
    "Durability",
    "History",
    "Liveliness",
    "OfferedQos",
    "QosTime",
    "Reliability",
    "adapt_to_offers",
    "dump_offered_qos",
    "missed_offers",
    "offered_qos_records",
    "parse_offered_qos",
    "qos_from_rclpy",
]

METADATA_VERSIONS = (8, 9)  # 8: policies as numbers (Humble reads it); 9: by name (Jazzy writes it)
DEFAULT_METADATA_VERSION = 9


class Reliability(Enum):
    """rmw_qos_reliability_policy_e."""

    SYSTEM_DEFAULT = 0
    RELIABLE = 1
    BEST_EFFORT = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class Durability(Enum):
    """rmw_qos_durability_policy_e."""

    SYSTEM_DEFAULT = 0
    TRANSIENT_LOCAL = 1
    VOLATILE = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class History(Enum):
    """rmw_qos_history_policy_e. Discovery does not carry it: an offer read from the graph is UNKNOWN."""

    SYSTEM_DEFAULT = 0
    KEEP_LAST = 1
    KEEP_ALL = 2
    UNKNOWN = 3


class Liveliness(Enum):
    """rmw_qos_liveliness_policy_e."""

    SYSTEM_DEFAULT = 0
    AUTOMATIC = 1
    MANUAL_BY_NODE = 2
    MANUAL_BY_TOPIC = 3
    UNKNOWN = 4
    BEST_AVAILABLE = 5


class QosTime(NamedTuple):
    """An rmw_time_t: whole seconds and nanoseconds."""

    sec: int
    nsec: int


UNSPECIFIED = QosTime(0, 0)
INFINITE = QosTime(9_223_372_036, 854_775_807)  # RMW_DURATION_INFINITE


@dataclass(frozen=True, kw_only=True)
class OfferedQos:
    """The QoS one publisher offered, every policy rosbag2 stores."""

    reliability: Reliability
    durability: Durability
    history: History = History.UNKNOWN
    depth: int = 0
    deadline: QosTime = INFINITE
    lifespan: QosTime = INFINITE
    liveliness: Liveliness = Liveliness.AUTOMATIC
    liveliness_lease_duration: QosTime = INFINITE
    avoid_ros_namespace_conventions: bool = False

    @property
    def pair(self) -> tuple[int, int]:
        """(reliability, durability) as rmw numbers: the form the parity report prints."""
        return (self.reliability.value, self.durability.value)


def _qos_time(duration: Duration) -> QosTime:
    sec, nsec = divmod(int(duration.nanoseconds), 1_000_000_000)
    return QosTime(sec, nsec)


def qos_from_rclpy(profile: QoSProfile) -> OfferedQos:
    """The offer of a publisher as rclpy's graph API reports it (TopicEndpointInfo.qos_profile)."""
    return OfferedQos(
        reliability=Reliability(int(profile.reliability)),
        durability=Durability(int(profile.durability)),
        history=History(int(profile.history)),
        depth=int(profile.depth),
        deadline=_qos_time(profile.deadline),
        lifespan=_qos_time(profile.lifespan),
        liveliness=Liveliness(int(profile.liveliness)),
        liveliness_lease_duration=_qos_time(profile.liveliness_lease_duration),
        avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions),
    )


def adapt_to_offers(offers: Sequence[OfferedQos]) -> tuple[Reliability, Durability]:
    """The reliability and durability a subscription requests to connect to every one of these
    publishers and lose nothing it can get: the strict value only when every offer has it."""
    reliable = bool(offers) and all(o.reliability is Reliability.RELIABLE for o in offers)
    latched = bool(offers) and all(o.durability is Durability.TRANSIENT_LOCAL for o in offers)
    return (
        Reliability.RELIABLE if reliable else Reliability.BEST_EFFORT,
        Durability.TRANSIENT_LOCAL if latched else Durability.VOLATILE,
    )


def missed_offers(
    requested: tuple[Reliability, Durability], offers: Sequence[OfferedQos]
) -> tuple[OfferedQos, ...]:
    """The offers a subscription with this request does not connect to: a best-effort publisher for a
    reliable request, a volatile one for a transient-local request."""
    reliability, durability = requested
    return tuple(
        o
        for o in offers
        if (reliability is Reliability.RELIABLE and o.reliability is not Reliability.RELIABLE)
        or (durability is Durability.TRANSIENT_LOCAL and o.durability is not Durability.TRANSIENT_LOCAL)
    )


def _check_version(version: int) -> None:
    if version not in METADATA_VERSIONS:
        raise QosYamlError(
            f"rosbag2 metadata version must be one of {', '.join(map(str, METADATA_VERSIONS))}; "
            f"found {version!r}"
        )


def offered_qos_records(profiles: Sequence[OfferedQos], *, version: int) -> list[dict[str, Any]]:
    """The profiles as the mappings rosbag2 writes, in its key order: policies by name for metadata
    version 9, by number for 8."""
    _check_version(version)

    def policy(value: Enum) -> int | str:
        return value.name.lower() if version >= 9 else int(value.value)

    def time(value: QosTime) -> dict[str, int]:
        return {"sec": value.sec, "nsec": value.nsec}

    return [
        {
            "history": policy(p.history),
            "depth": p.depth,
            "reliability": policy(p.reliability),
            "durability": policy(p.durability),
            "deadline": time(p.deadline),
            "lifespan": time(p.lifespan),
            "liveliness": policy(p.liveliness),
            "liveliness_lease_duration": time(p.liveliness_lease_duration),
            "avoid_ros_namespace_conventions": p.avoid_ros_namespace_conventions,
        }
        for p in profiles
    ]


def dump_offered_qos(profiles: Sequence[OfferedQos], *, version: int = DEFAULT_METADATA_VERSION) -> str:
    """The YAML text of an MCAP channel's ``offered_qos_profiles`` (empty for no profiles)."""
    records = offered_qos_records(profiles, version=version)
    if not records:
        return ""
    text: str = yaml.safe_dump(records, sort_keys=False, default_flow_style=False)
    return text.rstrip("\n")


_E = TypeVar("_E", bound=Enum)


def _policy(record: Mapping[str, Any], key: str, kind: type[_E], index: int, default: _E | None) -> _E:
    value = record.get(key)
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise QosYamlError(f"profile {index}: {key} must be a name or an rmw number, found {value!r}")
    if isinstance(value, int):
        try:
            return kind(value)
        except ValueError:
            numbers = ", ".join(f"{m.value} ({m.name.lower()})" for m in kind)
            raise QosYamlError(f"profile {index}: {key} {value} is not one of {numbers}") from None
    try:
        return kind[value.upper()]
    except KeyError:
        names = ", ".join(m.name.lower() for m in kind)
        raise QosYamlError(f"profile {index}: {key} {value!r} is not one of {names}") from None


def _natural(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _time(record: Mapping[str, Any], key: str, index: int) -> QosTime:
    value = record.get(key)
    if value is None:
        return INFINITE
    if not isinstance(value, Mapping):
        raise QosYamlError(f"profile {index}: {key} must be a mapping of sec and nsec, found {value!r}")
    sec, nsec = value.get("sec"), value.get("nsec")
    if not (_natural(sec) and _natural(nsec)):
        raise QosYamlError(f"profile {index}: {key} sec and nsec must be integers >= 0, found {value!r}")
    return QosTime(sec, nsec)


def _parse_record(record: Any, index: int) -> OfferedQos:
    if not isinstance(record, Mapping):
        raise QosYamlError(f"profile {index} must be a mapping of policies, found {record!r}")
    depth = record.get("depth", 0)
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise QosYamlError(f"profile {index}: depth must be an integer >= 0, found {depth!r}")
    avoid = record.get("avoid_ros_namespace_conventions", False)
    if not isinstance(avoid, bool):
        raise QosYamlError(
            f"profile {index}: avoid_ros_namespace_conventions must be true or false, found {avoid!r}"
        )
    return OfferedQos(
        reliability=_policy(record, "reliability", Reliability, index, None),
        durability=_policy(record, "durability", Durability, index, None),
        history=_policy(record, "history", History, index, History.UNKNOWN),
        depth=depth,
        deadline=_time(record, "deadline", index),
        lifespan=_time(record, "lifespan", index),
        liveliness=_policy(record, "liveliness", Liveliness, index, Liveliness.AUTOMATIC),
        liveliness_lease_duration=_time(record, "liveliness_lease_duration", index),
        avoid_ros_namespace_conventions=avoid,
    )


def parse_offered_qos(text: str | Sequence[Any]) -> tuple[OfferedQos, ...]:
    """The profiles of an ``offered_qos_profiles`` value: YAML text (an MCAP channel, metadata up to
    version 8) or the already-parsed list (metadata version 9). Names and numbers are both accepted;
    reliability and durability are required, the other policies default to what discovery reports."""
    if isinstance(text, str):
        if not text.strip():
            return ()
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise QosYamlError(f"offered_qos_profiles is not valid YAML: {error}") from None
    else:
        data = text
    if not isinstance(data, list):
        raise QosYamlError(f"offered_qos_profiles must be a list of profiles, found {data!r}")
    return tuple(_parse_record(record, index) for index, record in enumerate(data, start=1))
