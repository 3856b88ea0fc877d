"""Offered QoS in rosbag2's YAML: written as rosbag2 writes it, read back in both of its forms, and read
identically by rosbags (an independent implementation)."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.duration import Duration
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    LivelinessPolicy,
    QoSProfile,
    ReliabilityPolicy,
)
from rosbags.rosbag2.metadata import parse_qos

from acres_bridge.tools.errors import QosYamlError
from acres_bridge.tools.qos import (
    INFINITE,
    Durability,
    History,
    Liveliness,
    OfferedQos,
    QosTime,
    Reliability,
    adapt_to_offers,
    dump_offered_qos,
    missed_offers,
    offered_qos_records,
    parse_offered_qos,
    qos_from_rclpy,
)

FAST = settings(max_examples=60, deadline=None, database=None)

RELIABLE_VOLATILE = OfferedQos(reliability=Reliability.RELIABLE, durability=Durability.VOLATILE)

# The text rosbag2 (Jazzy, metadata version 9) stores for a publisher that discovery reports.
JAZZY_TEXT = """\
- history: unknown
  depth: 0
  reliability: reliable
  durability: volatile
  deadline:
    sec: 9223372036
    nsec: 854775807
  lifespan:
    sec: 9223372036
    nsec: 854775807
  liveliness: automatic
  liveliness_lease_duration:
    sec: 9223372036
    nsec: 854775807
  avoid_ros_namespace_conventions: false"""

# The same offer as rosbag2 of Humble stored it: policies as rmw numbers.
HUMBLE_TEXT = """\
- history: 3
  depth: 0
  reliability: 1
  durability: 2
  deadline:
    sec: 9223372036
    nsec: 854775807
  lifespan:
    sec: 9223372036
    nsec: 854775807
  liveliness: 1
  liveliness_lease_duration:
    sec: 9223372036
    nsec: 854775807
  avoid_ros_namespace_conventions: false"""

times = st.builds(QosTime, st.integers(0, 2**40), st.integers(0, 999_999_999)) | st.just(INFINITE)
offers = st.builds(
    OfferedQos,
    reliability=st.sampled_from(Reliability),
    durability=st.sampled_from(Durability),
    history=st.sampled_from(History),
    depth=st.integers(0, 10_000),
    deadline=times,
    lifespan=times,
    liveliness=st.sampled_from(Liveliness),
    liveliness_lease_duration=times,
    avoid_ros_namespace_conventions=st.booleans(),
)


def test_version_9_text_is_what_rosbag2_of_jazzy_writes() -> None:
    assert dump_offered_qos([RELIABLE_VOLATILE], version=9) == JAZZY_TEXT


def test_version_8_text_is_what_rosbag2_of_humble_writes() -> None:
    assert dump_offered_qos([RELIABLE_VOLATILE], version=8) == HUMBLE_TEXT


def test_no_offers_is_the_empty_text() -> None:
    assert dump_offered_qos([]) == ""
    assert parse_offered_qos("") == ()
    assert parse_offered_qos("  \n") == ()


@pytest.mark.parametrize("text", [JAZZY_TEXT, HUMBLE_TEXT])
def test_both_forms_read_as_the_same_offer(text: str) -> None:
    (offer,) = parse_offered_qos(text)
    assert offer == RELIABLE_VOLATILE
    assert offer.pair == (1, 2)


@FAST
@given(profiles=st.lists(offers, max_size=4), version=st.sampled_from([8, 9]))
def test_round_trip_over_every_policy_value(profiles: list[OfferedQos], version: int) -> None:
    assert parse_offered_qos(dump_offered_qos(profiles, version=version)) == tuple(profiles)


@FAST
@given(profiles=st.lists(offers, min_size=1, max_size=4), version=st.sampled_from([8, 9]))
def test_rosbags_reads_our_text_as_we_do(profiles: list[OfferedQos], version: int) -> None:
    theirs = parse_qos(dump_offered_qos(profiles, version=version))
    assert [(q.reliability.value, q.durability.value, q.history.value, q.depth) for q in theirs] == [
        (p.reliability.value, p.durability.value, p.history.value, p.depth) for p in profiles
    ]
    assert [tuple(q.deadline) for q in theirs] == [tuple(p.deadline) for p in profiles]
    assert [q.liveliness.value for q in theirs] == [p.liveliness.value for p in profiles]


def test_version_9_metadata_holds_a_list_and_8_the_text() -> None:
    records = offered_qos_records([RELIABLE_VOLATILE], version=9)
    assert records == yaml.safe_load(JAZZY_TEXT)
    assert parse_offered_qos(records) == (RELIABLE_VOLATILE,)


def test_a_missing_policy_other_than_reliability_and_durability_takes_the_discovery_default() -> None:
    (offer,) = parse_offered_qos("- {reliability: best_effort, durability: transient_local}")
    assert offer == OfferedQos(reliability=Reliability.BEST_EFFORT, durability=Durability.TRANSIENT_LOCAL)
    assert offer.pair == (2, 1)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("- {reliability: [", "not valid YAML"),
        ("reliability: reliable", "must be a list of profiles"),
        ("- 5", "profile 1 must be a mapping"),
        ("- {durability: volatile}", "profile 1: reliability must be a name or an rmw number, found None"),
        ("- {reliability: reliable}", "durability must be a name or an rmw number"),
        ("- {reliability: sometimes, durability: volatile}", "reliability 'sometimes' is not one of"),
        ("- {reliability: 7, durability: volatile}", "reliability 7 is not one of 0 \\(system_default\\)"),
        ("- {reliability: true, durability: volatile}", "reliability must be a name or an rmw number"),
        ("- {reliability: 1, durability: 2, depth: -1}", "depth must be an integer >= 0, found -1"),
        ("- {reliability: 1, durability: 2, depth: 2.5}", "depth must be an integer >= 0"),
        ("- {reliability: 1, durability: 2, deadline: 5}", "deadline must be a mapping of sec and nsec"),
        ("- {reliability: 1, durability: 2, lifespan: {sec: -1, nsec: 0}}", "lifespan sec and nsec must be"),
        ("- {reliability: 1, durability: 2, avoid_ros_namespace_conventions: 1}", "must be true or false"),
        ("- {reliability: 1, durability: 2}\n- {reliability: 1}", "profile 2: durability"),
    ],
)
def test_bad_offered_qos_text_is_refused_with_the_value(text: str, match: str) -> None:
    with pytest.raises(QosYamlError, match=match):
        parse_offered_qos(text)


@pytest.mark.parametrize("version", [7, 10])
def test_an_unknown_metadata_version_is_refused(version: int) -> None:
    with pytest.raises(QosYamlError, match=f"must be one of 8, 9; found {version}"):
        dump_offered_qos([RELIABLE_VOLATILE], version=version)


def _offer(reliability: Reliability, durability: Durability) -> OfferedQos:
    return OfferedQos(reliability=reliability, durability=durability)


@pytest.mark.parametrize(
    ("offered", "requested"),
    [
        ([], (Reliability.BEST_EFFORT, Durability.VOLATILE)),
        ([(Reliability.RELIABLE, Durability.VOLATILE)], (Reliability.RELIABLE, Durability.VOLATILE)),
        (
            [(Reliability.RELIABLE, Durability.TRANSIENT_LOCAL)],
            (Reliability.RELIABLE, Durability.TRANSIENT_LOCAL),
        ),
        (
            [
                (Reliability.RELIABLE, Durability.TRANSIENT_LOCAL),
                (Reliability.BEST_EFFORT, Durability.VOLATILE),
            ],
            (Reliability.BEST_EFFORT, Durability.VOLATILE),
        ),
        (
            [(Reliability.RELIABLE, Durability.TRANSIENT_LOCAL), (Reliability.RELIABLE, Durability.VOLATILE)],
            (Reliability.RELIABLE, Durability.VOLATILE),
        ),
    ],
)
def test_the_request_takes_the_strict_policy_only_when_every_publisher_offers_it(
    offered: list[tuple[Reliability, Durability]], requested: tuple[Reliability, Durability]
) -> None:
    assert adapt_to_offers([_offer(*o) for o in offered]) == requested


REL, BE = Reliability.RELIABLE, Reliability.BEST_EFFORT
TL, VOL = Durability.TRANSIENT_LOCAL, Durability.VOLATILE


@pytest.mark.parametrize(
    ("requested", "offered", "missed"),
    [
        ((REL, VOL), [(BE, VOL)], 1),
        ((REL, VOL), [(REL, TL)], 0),
        ((BE, VOL), [(REL, VOL)], 0),
        ((REL, TL), [(REL, VOL)], 1),
        ((BE, TL), [(BE, TL), (BE, VOL)], 1),
    ],
)
def test_a_subscription_misses_only_publishers_that_offer_less_than_it_requests(
    requested: tuple[Reliability, Durability], offered: list[tuple[Reliability, Durability]], missed: int
) -> None:
    assert len(missed_offers(requested, [_offer(*o) for o in offered])) == missed


def test_an_rclpy_profile_becomes_the_offer_rosbag2_would_store() -> None:
    profile = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=7,
        reliability=ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
        deadline=Duration(seconds=1, nanoseconds=5),
        liveliness=LivelinessPolicy.AUTOMATIC,
    )
    offer = qos_from_rclpy(profile)
    assert offer.pair == (2, 1)
    assert offer.history is History.KEEP_LAST
    assert offer.depth == 7
    assert offer.deadline == QosTime(1, 5)
    assert offer.liveliness is Liveliness.AUTOMATIC
