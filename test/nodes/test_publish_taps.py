"""Taps on the bridge's own publishers: which topics are published here, and who sees each message."""

from __future__ import annotations

from acres_bridge.nodes.publish_taps import PublishTaps


def test_a_topic_is_published_here_while_one_of_its_publishers_is() -> None:
    taps = PublishTaps()
    taps.register("/vehicle/odom")
    taps.register("/vehicle/odom")
    taps.unregister("/vehicle/odom")
    assert taps.published_here("/vehicle/odom")
    taps.unregister("/vehicle/odom")
    assert not taps.published_here("/vehicle/odom")
    taps.unregister("/never")  # nothing to leave: no error, nothing registered
    assert not taps.published_here("/never")


def test_each_tap_sees_its_topic_until_removed() -> None:
    taps = PublishTaps()
    seen: list[tuple[str, object]] = []

    def first(message: object) -> None:
        seen.append(("first", message))

    def second(message: object) -> None:
        seen.append(("second", message))

    taps.add("/tf", first)
    taps.add("/tf", second)
    for tap in taps.taps.get("/tf", ()):
        tap(1)
    taps.remove("/tf", first)
    for tap in taps.taps.get("/tf", ()):
        tap(2)
    taps.remove("/tf", second)
    assert seen == [("first", 1), ("second", 1), ("second", 2)]
    assert "/tf" not in taps.taps
