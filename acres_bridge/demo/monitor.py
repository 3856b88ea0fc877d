"""The demo's subscriber node: every topic the bridge publishes, the clock, the episode, the pace."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from rclpy.context import Context
from rclpy.node import Node
from rclpy.qos import QoSProfile

from acres_bridge.demo.table import (
    HEADER,
    GraphView,
    Session,
    driver_progress,
    state_name,
    topic_row,
    watch_stamp,
)
from acres_bridge.msg_profiles import Direction
from acres_bridge.names import resolve_name
from acres_bridge.pace import PaceMeter
from acres_bridge.text_tables import format_table
from acres_bridge.topic_watch import (
    LATE_S,
    ClockHistory,
    SimulatorSkips,
    TopicWatch,
    inputs_reader,
    stamp_reader,
)
from acres_bridge.wire.clock import NS_PER_S

__all__ = [
    "DEMO_STATUS",
    "DISCOVERY_SETTLE_S",
    "MIN_DEPTH",
    "PACE_REPORT_S",
    "Monitor",
]

MIN_DEPTH = 1000  # reader history of each subscription: seconds of every topic, for a busy machine


DISCOVERY_SETTLE_S = 1.0  # after the first /clock, the bridge's publishers are all known


PACE_REPORT_S = 1.0  # the simulator's pace line, at most this often: the skips it says stay current


DEMO_STATUS = "/Demo/status"


class Monitor(Node):
    """Subscribes to each watched topic with its QoS (a deeper history) and records arrivals:
    those with `subscribe(watch)` true; the table shows all `watches`."""

    def __init__(
        self,
        watches: Sequence[TopicWatch],
        *,
        context: Context,
        name: str = "acres_demo",
        subscribe: Callable[[TopicWatch], bool] = lambda _watch: True,
    ) -> None:
        super().__init__(name, context=context)
        self.watches = watches
        self.session: Session | None = None
        self.sim_time_ns: int | None = None
        self.judged_clock_ns: int | None = None  # the clock the table judges at, once the run stopped
        self.first_clock_ns: int | None = None  # wall time of the first /clock
        self.first_sim_ns: int | None = None  # its simulated time
        self.first_episode_ns: int | None = None
        self.first_clock_source_ns: int | None = None  # the DDS source timestamps of both
        self.first_episode_source_ns: int | None = None
        self.progress: str | None = None
        self.pace = PaceMeter()
        self.clocks = ClockHistory()
        # Messages without a stamp that came before a clock published after them: placed once
        # one has come, so that none is placed at an older clock than the one it follows.
        self._unplaced: deque[tuple[TopicWatch, int, int, int | None]] = deque()
        for watch in watches:
            if watch.spec.direction is Direction.PUBLISH and subscribe(watch):
                self._subscribe(watch)

    def _subscribe(self, watch: TopicWatch) -> None:
        spec = watch.spec
        try:
            message_class = spec.message_class()
        except (ImportError, ValueError) as error:
            watch.error = f"type not available: {error}"
            return
        qos = spec.qos.to_rclpy() if spec.qos is not None else QoSProfile(depth=MIN_DEPTH)
        qos.depth = max(qos.depth, MIN_DEPTH)
        decode = spec.name in ("/clock", "/sim/episode", DEMO_STATUS)
        reader = stamp_reader(message_class)
        watch.stamped = reader is not None
        watch.inputs = inputs_reader(message_class)
        callback = self._callback(watch) if decode else self._raw_callback(watch, reader)
        # rclpy hands a callback of two parameters the message info (source timestamp, sequence number)
        self.create_subscription(
            message_class,
            spec.ros_name,
            callback,  # type: ignore[arg-type]
            qos,
            raw=not decode,
        )

    def _raw_callback(
        self, watch: TopicWatch, reader: Callable[[bytes], int | None] | None
    ) -> Callable[[Any, dict[str, Any]], None]:
        """Count a message at its stamp (read from the CDR bytes), or where its source timestamp
        puts it among the clock messages."""

        def on_message(data: Any, info: dict[str, Any]) -> None:
            now_ns = time.monotonic_ns()
            if reader is None:
                self._record_unstamped(watch, now_ns, info)
            else:
                watch.record(now_ns, reader(data), info.get("publication_sequence_number"))
            watch.record_inputs(data)

        return on_message

    def _record_unstamped(self, watch: TopicWatch, wall_ns: int, info: dict[str, Any]) -> None:
        """Place a message without a stamp among the clocks once a clock published after it has
        come: a reader that is behind on /clock would otherwise place it at an older clock, and
        its topic would look faster than it is."""
        source_ns = int(info.get("source_timestamp", 0))
        self._unplaced.append((watch, wall_ns, source_ns, info.get("publication_sequence_number")))
        self._place_unplaced()

    def _place_unplaced(self) -> None:
        """Record the messages without a stamp that a clock published after them now brackets."""
        newest = self.clocks.newest_source_ns
        waiting: deque[tuple[TopicWatch, int, int, int | None]] = deque()
        # Every one the clocks bracket, in the order they came: a message of another publisher
        # stamped ahead of the clocks does not hold up those behind it.
        for watch, wall_ns, source_ns, seq in self._unplaced:
            if newest is not None and source_ns > newest:
                waiting.append((watch, wall_ns, source_ns, seq))
                continue
            sim_ns, unsure_ns = self.clocks.placement(source_ns)
            watch.record(wall_ns, sim_ns, seq, uncertainty_ns=unsure_ns)
        self._unplaced = waiting

    def _callback(self, watch: TopicWatch) -> Callable[[Any, dict[str, Any]], None]:
        def on_message(message: Any, info: dict[str, Any]) -> None:
            now_ns = time.monotonic_ns()
            if watch.spec.name == "/clock":
                self.sim_time_ns = int(message.clock.sec) * NS_PER_S + int(message.clock.nanosec)
                self.pace.record(now_ns, self.sim_time_ns)
                self.clocks.record(int(info.get("source_timestamp", 0)), self.sim_time_ns)
                self._place_unplaced()
                if self.first_clock_ns is None:
                    self.first_clock_ns = now_ns
                    self.first_sim_ns = self.sim_time_ns
                    self.first_clock_source_ns = int(info.get("source_timestamp", 0))
            seq = info.get("publication_sequence_number")
            if watch.spec.name == "/clock":
                watch.record(now_ns, self.sim_time_ns, seq)
            elif watch.stamped:
                watch.record(now_ns, watch_stamp(message), seq)
            else:
                self._record_unstamped(watch, now_ns, info)
            if watch.spec.name == DEMO_STATUS:
                self.progress = driver_progress(str(message.data))
            elif watch.spec.name == "/sim/episode":
                if self.first_episode_ns is None:
                    self.first_episode_ns = now_ns
                    self.first_episode_source_ns = int(info.get("source_timestamp", 0))
                self.session = Session(
                    episode_id=str(message.episode_id),
                    source=str(message.source),
                    map=str(message.map),
                    state=state_name(int(message.state)),
                )

        return on_message

    def episode_after_clock_s(self) -> tuple[float, float] | None:
        """When the first /sim/episode was published and when it came, each from the first /clock
        (negative: before it). A reader that lost it gets it again only at the writer's next
        heartbeat (3 s with Fast DDS's defaults): then the two differ."""
        if self.first_episode_ns is None or self.first_clock_ns is None:
            return None
        assert self.first_episode_source_ns is not None
        assert self.first_clock_source_ns is not None
        published = (self.first_episode_source_ns - self.first_clock_source_ns) / NS_PER_S
        return (published, (self.first_episode_ns - self.first_clock_ns) / NS_PER_S)

    def graph(self, watch: TopicWatch, now_ns: int) -> GraphView:
        name = resolve_name(watch.spec.ros_name, self.get_namespace())
        own = 1 if watch.spec.direction is Direction.PUBLISH and watch.error is None else 0
        settled = self.first_clock_ns is not None and (
            now_ns - self.first_clock_ns >= DISCOVERY_SETTLE_S * NS_PER_S
        )
        return GraphView(
            publishers=self.count_publishers(name),
            subscribers=max(0, self.count_subscribers(name) - own),
            settled=settled,
        )

    def table(self, now_ns: int, skips: SimulatorSkips | None) -> str:
        clock_ns = self.sim_time_ns if self.judged_clock_ns is None else self.judged_clock_ns
        rows = [
            topic_row(watch, self.graph(watch, now_ns), now_ns, clock_ns, skips) for watch in self.watches
        ]
        return format_table(rows, HEADER)

    def caught_up(self, clock_ns: int) -> bool:
        """Whether every periodic topic that has come has come to within LATE_S of `clock_ns`."""
        return all(
            watch.newest_sim_ns >= clock_ns - LATE_S * NS_PER_S
            for watch in self.watches
            if watch.periodic and watch.newest_sim_ns is not None
        )
