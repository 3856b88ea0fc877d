"""The demo's table and header: each topic's row, the session and the pace. Pure: no node."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from acres_bridge.msg_profiles import Direction, MsgProfiles
from acres_bridge.pace import PacingReport, describe_pace
from acres_bridge.text_tables import format_rate
from acres_bridge.topic_watch import (
    SimulatorSkips,
    Status,
    TopicWatch,
)
from acres_bridge.wire.clock import NS_PER_S
from acres_bridge.wire.vocabulary import SimState, Vehicle

__all__ = [
    "FINAL_TITLE",
    "HEADER",
    "NOT_PUBLISHED",
    "NOT_SUBSCRIBED",
    "SUBSCRIBED",
    "GraphView",
    "Session",
    "driver_progress",
    "header_lines",
    "state_name",
    "topic_row",
    "watch_list",
    "watch_stamp",
]

NOT_PUBLISHED = "not published by this session"


SUBSCRIBED = "subscribed by the bridge"


NOT_SUBSCRIBED = "not subscribed by this session"


FINAL_TITLE = "acres_demo: final table"


HEADER = ("topic", "type", "expected", "sim rate", "wall rate", "count", "status")


def state_name(state: int) -> str:
    """The episode state as the header shows it: stopped, playing, paused (else the number)."""
    return SimState(state).name.lower() if state in tuple(SimState) else str(state)


def watch_list(profiles: MsgProfiles, vehicle: str) -> list[TopicWatch]:
    """The vehicle's topics as the bridge sees them (published first), plus the session's /sim/episode."""
    specs = list(profiles.table(vehicle))
    names = {spec.name for spec in specs}
    specs += [spec for spec in profiles.table("session") if spec.name not in names]
    if vehicle == Vehicle.POLARIS:  # the demo runs the Polaris's other nodes too
        specs += [spec for spec in profiles.table("other_nodes") if spec.name not in names]
    published = [spec for spec in specs if spec.direction is Direction.PUBLISH]
    subscribed = [spec for spec in specs if spec.direction is Direction.SUBSCRIBE]
    return [TopicWatch(spec) for spec in published + subscribed]


def watch_stamp(message: Any) -> int | None:
    """The header stamp of a decoded message, in ns."""
    stamp = message.header.stamp
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def _hz(rate: float | None) -> str:
    return "" if rate is None else f"{rate:.1f} Hz"


@dataclass(frozen=True, kw_only=True)
class Session:
    """What the header shows of /sim/episode."""

    episode_id: str
    source: str
    map: str
    state: str


@dataclass(frozen=True, kw_only=True)
class GraphView:
    """Publishers and subscribers of one topic other than the demo's own, and whether that is final."""

    publishers: int
    subscribers: int
    settled: bool  # discovery has had time to find the bridge's endpoints


def topic_row(
    watch: TopicWatch,
    graph: GraphView,
    wall_ns: int,
    clock_ns: int | None,
    skips: SimulatorSkips | None = None,
) -> tuple[str, ...]:
    """One row of the table: topic, type, expected, sim rate, wall rate, count, status."""
    spec = watch.spec
    if spec.direction is Direction.SUBSCRIBE:
        status = SUBSCRIBED if graph.subscribers else NOT_SUBSCRIBED if graph.settled else ""
        return (watch.name, spec.type_name, "in", "", "", "", status)
    if watch.error is not None:
        return (watch.name, spec.type_name, format_rate(spec), "", "", "", watch.error)
    if watch.count == 0 and graph.publishers == 0 and graph.settled:
        return (watch.name, spec.type_name, format_rate(spec), "", "", "", NOT_PUBLISHED)
    if watch.periodic:
        sim_rate = _hz(watch.sim_rate_hz(clock_ns))
        status = watch.verdict(clock_ns, skips).text()
    else:
        sim_rate = ""
        status = "" if watch.count else Status.WAIT.value
    wall_rate = _hz(watch.wall_rate_hz(wall_ns)) if watch.periodic else ""
    return (watch.name, spec.type_name, format_rate(spec), sim_rate, wall_rate, str(watch.count), status)


def driver_progress(status_json: str) -> str:
    """One line of the demo driver's /Demo/status: where on the route, how fast, how far off."""
    try:
        status = json.loads(status_json)
    except ValueError:
        return "driver: (unreadable status)"
    if not isinstance(status, dict) or status.get("state") != "driving":
        return "driver: waiting for odometry"
    try:
        return (
            f"driver: route point {status['route_index']}/{status['route_size']}  "
            f"speed {float(status['speed_mps']):.2f} m/s  curvature {float(status['curvature']):+.4f} 1/m  "
            f"cross-track {float(status['cross_track_m']):.2f} m"
        )
    except (KeyError, TypeError, ValueError):
        return "driver: (incomplete status)"


def header_lines(
    *,
    vehicle: str,
    port: int,
    seed: int,
    elapsed_s: float,
    session: Session | None,
    sim_time_ns: int | None,
    episode_after_clock_s: tuple[float, float] | None = None,
    pace: float | None = None,
    simulator_pace: PacingReport | None = None,
    progress: str | None = None,
) -> list[str]:
    """The lines above the table: the demo's settings, the session, the sim time, the pace."""
    first = f"acres_demo: {vehicle}, port {port}, seed {seed}, running {elapsed_s:.1f} s"
    if session is None:
        second = "session: (no /sim/episode yet)"
    else:
        came = ""
        if episode_after_clock_s is not None:
            published, arrived = episode_after_clock_s
            came = f"  (published {published:+.2f} s, came {arrived:+.2f} s from the first /clock)"
        second = (
            f"session: {session.episode_id}  source {session.source}  map {session.map}  "
            f"state {session.state}{came}"
        )
    sim_time = "(no /clock yet)" if sim_time_ns is None else f"{sim_time_ns / NS_PER_S:.3f} s"
    lines = [first, f"{second}  |  sim time {sim_time}", f"pace: {describe_pace(pace)}"]
    if simulator_pace is not None:
        lines.append(
            f"simulator: {simulator_pace.real_time_factor:.2f}x real time over its last "
            f"{simulator_pace.window_s:g} s, {simulator_pace.lost_s:.1f} s given up behind wall time, "
            f"{simulator_pace.skipped_perception_steps} perception steps skipped"
        )
    if progress is not None:
        lines.append(progress)
    return lines
