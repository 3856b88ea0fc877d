"""What acres_demo knows of one topic: its messages counted in simulated time, and a verdict on them.

A topic is judged in simulated time, not by the wall clock: a busy machine slows the whole session
down, and a message is no less there for arriving late. Each message is placed at its simulated
time: the header stamp where the message starts with a std_msgs/Header (the first transform's for
a TFMessage; read straight from the CDR bytes, nothing is deserialised), else the simulated time of
the last /clock published before it (ClockHistory, by the DDS source timestamps of both); such a
topic is judged within UNSTAMPED_TOLERANCE, as the bridge may publish it a little before or after
the clock of its step.

From its first message to its newest (messages of one publisher come in order), a periodic topic
must have had rate x span messages published; a topic whose newest message is more than LATE_S of
simulated time behind the latest /clock is LATE (its data waits somewhere, or has stopped). Published
counts what this reader received and what the DDS publication sequence numbers show was sent but
lost to it (a reader that fell behind a depth-10 writer); the latter is noted, not held against the
publisher. Fewer is LOW, and the verdict names who skipped them: the simulator, for clouds and
images whose perception step it skipped (it says how many in its pace line), else the publisher
(the bridge, or the node that owns the topic). More is HIGH (a second publisher, or a sample
published twice).

A topic its node publishes once for each message it takes (the odometry path: one nav_msgs/Path
per pose added, every pose in it) is judged against the inputs the node took, which the newest
message shows: a pose its node never received (lost between its input's depth-10 writer and a
reader that was off a CPU) is noted as lost on the way, not held against the node.

Pure: every method takes the times it is asked about.
"""

from __future__ import annotations

import bisect
import math
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from acres_bridge.msg_profiles import RateKind, TopicSpec
from acres_bridge.names import resolve_name
from acres_bridge.wire.clock import NS_PER_S

__all__ = [
    "LATE_S",
    "RATE_WINDOW_S",
    "RENDERED_TYPES",
    "ClockHistory",
    "SimulatorSkips",
    "Status",
    "TopicWatch",
    "Verdict",
    "inputs_reader",
    "path_poses_since",
    "stamp_reader",
]

RATE_WINDOW_S = 2.0  # the rates shown count the last 2 s (simulated for the one, wall for the other)
LATE_S = 1.0  # a topic whose newest message is this far behind the latest /clock is LATE
UNSTAMPED_TOLERANCE = 0.10  # placed by its source timestamp, a topic may be off by 10 % (or 2 messages)
RENDERED_TYPES = frozenset(
    {"sensor_msgs/msg/PointCloud2", "sensor_msgs/msg/Image", "sensor_msgs/msg/CameraInfo"}
)
_HORIZON_S = 15.0  # simulated times kept per topic: the rate window, the settling, a pace report's age

StampReader = Callable[[bytes], int | None]
InputsReader = Callable[[bytes, int], int | None]  # (message, since_ns) -> inputs taken since then


class Status(Enum):
    """The verdict on a periodic topic, in simulated time."""

    WAIT = "WAIT"
    OK = "OK"
    LOW = "LOW"
    HIGH = "HIGH"
    LATE = "LATE"


_ONE_STEP_NS = 10_000_000  # a little more than one physics step (1/120 s) between two clocks


class ClockHistory:
    """The /clock messages of the last seconds by their DDS source timestamp (the publisher's wall
    clock), so a message without a stamp is placed at the simulated time it was published in."""

    def __init__(self, keep_s: float = _HORIZON_S) -> None:
        self.keep_ns = int(keep_s * NS_PER_S)
        self._sources: deque[int] = deque()
        self._sims: deque[int] = deque()

    def record(self, source_ns: int, sim_ns: int) -> None:
        if self._sources and source_ns < self._sources[-1]:
            return  # out of order (another publisher's clock): keep the history sorted
        self._sources.append(source_ns)
        self._sims.append(sim_ns)
        while self._sources and self._sources[0] < source_ns - self.keep_ns:
            self._sources.popleft()
            self._sims.popleft()

    @property
    def newest_source_ns(self) -> int | None:
        """The source timestamp of the newest clock kept (None before any)."""
        return self._sources[-1] if self._sources else None

    def sim_at(self, source_ns: int) -> int | None:
        """The simulated time of the last clock published at or before source_ns; None before any.

        Where this reader lost the clocks in between (the next clock it has is more than a physics
        step later), the time is interpolated between the two by their source timestamps, so a
        message is not placed a long way before it was published (which would make its topic look
        as if messages were missing)."""
        return self.placement(source_ns)[0]

    def placement(self, source_ns: int) -> tuple[int | None, int]:
        """sim_at(source_ns), and how far off it may be: the simulated time between the clocks this
        reader has on either side (a physics step where it has them all; 0 before any or after the
        newest)."""
        index = bisect.bisect_right(self._sources, source_ns) - 1
        if index < 0:
            return None, 0
        sim = self._sims[index]
        if index + 1 >= len(self._sources):
            return sim, 0
        source, later_source = self._sources[index], self._sources[index + 1]
        gap = self._sims[index + 1] - sim
        if gap > _ONE_STEP_NS and later_source > source:
            sim += (source_ns - source) * gap // (later_source - source)
        return sim, gap


@dataclass(frozen=True)
class SimulatorSkips:
    """Perception steps the simulator says it skipped, counted up to the simulated time until_ns."""

    count: int
    until_ns: int


@dataclass(frozen=True)
class Verdict:
    status: Status
    expected: int = 0  # messages due from the first one to the judged end
    received: int = 0
    reason: str = ""  # for LOW: who skipped the messages that were never published
    unreceived: int = 0  # published (by their sequence numbers) but never received by this reader
    behind_s: float = 0.0  # for LATE: how far the newest message is behind the latest /clock
    lost_before: int = 0  # inputs of a derived topic that never reached its node
    node: str = ""  # that node

    def text(self) -> str:
        notes = [f"+{self.unreceived} published, not received here"] if self.unreceived else []
        if self.lost_before:
            notes.append(f"{self.lost_before} inputs lost on the way to {self.node}")
        note = f" ({'; '.join(notes)})" if notes else ""
        if self.status is Status.LOW:
            skipped = self.expected - self.received - self.unreceived
            return f"LOW: {skipped} of {self.expected} {self.reason}{note}"
        if self.status is Status.HIGH:
            return f"HIGH: {self.received} for {self.expected} due"
        if self.status is Status.LATE:
            return f"LATE: newest {self.behind_s:.1f} s behind /clock{note}"
        return f"{self.status.value}{note}"


def _stamp_at(offset: int) -> StampReader:
    """Read a builtin_interfaces/Time at `offset` of the CDR body (after the 4-byte encapsulation)."""

    def read(data: bytes) -> int | None:
        if len(data) < 4 + offset + 8:
            return None
        order = "<" if data[1] & 1 else ">"
        sec, nanosec = struct.unpack_from(f"{order}iI", data, 4 + offset)
        return int(sec) * NS_PER_S + int(nanosec)

    return read


def _first_transform_stamp(data: bytes) -> int | None:
    if len(data) < 8:
        return None
    order = "<" if data[1] & 1 else ">"
    (count,) = struct.unpack_from(f"{order}I", data, 4)
    return _stamp_at(4)(data) if count > 0 else None


def _align(offset: int, size: int) -> int:
    return -(-offset // size) * size


def path_poses_since(data: bytes, since_ns: int) -> int | None:
    """How many poses of a raw nav_msgs/Path are stamped at or after since_ns; None when the path
    may have dropped some of those (its oldest pose is later) or is not laid out as a trail (every
    pose's frame name of one length, as odom_path makes them).

    Read from the CDR bytes by a binary search over the stamps: each pose after the first has the
    same length and starts on a multiple of 8."""
    if len(data) < 16:
        return None
    order = "<" if data[1] & 1 else ">"
    body = memoryview(data)[4:]
    (frame_length,) = struct.unpack_from(f"{order}I", body, 8)
    count_at = _align(12 + frame_length, 4)
    if count_at + 4 > len(body):
        return None
    count = int(struct.unpack_from(f"{order}I", body, count_at)[0])
    first = count_at + 4
    if count == 0:
        return 0
    if first + 12 > len(body):
        return None
    (pose_frame_length,) = struct.unpack_from(f"{order}I", body, first + 8)
    second = _align(first + 12 + pose_frame_length, 8) + 56
    size = _align(12 + pose_frame_length, 8) + 56
    if second + (count - 1) * size != len(body):
        return None

    def stamp(index: int) -> int:
        at = first if index == 0 else second + (index - 1) * size
        sec, nanosec = struct.unpack_from(f"{order}iI", body, at)
        return int(sec) * NS_PER_S + int(nanosec)

    if stamp(0) > since_ns:
        return None
    low, high = 0, count  # the first pose at or after since_ns lies in [low, high]
    while low < high:
        middle = (low + high) // 2
        if stamp(middle) < since_ns:
            low = middle + 1
        else:
            high = middle
    return count - low


def inputs_reader(message_class: type) -> InputsReader | None:
    """How to read, from a raw message, how many inputs its node had taken since a simulated time:
    for a nav_msgs/Path (a trail of poses, one message per pose added) its poses since then."""
    if getattr(message_class, "__name__", "") == "Path" and message_class.__module__.startswith("nav_msgs"):
        return path_poses_since
    return None


def stamp_reader(message_class: type) -> StampReader | None:
    """How to read the simulated time of a raw message of this class; None when it has no stamp."""
    fields = list(message_class.get_fields_and_field_types().items())  # type: ignore[attr-defined]
    if not fields:
        return None
    name, type_name = fields[0]
    if name == "header" and type_name == "std_msgs/Header":
        return _stamp_at(0)
    if name == "clock" and type_name == "builtin_interfaces/Time":
        return _stamp_at(0)
    if name == "transforms" and type_name == "sequence<geometry_msgs/TransformStamped>":
        return _first_transform_stamp
    return None


@dataclass
class TopicWatch:
    """The messages of one topic: when they came (wall) and what simulated time they belong to."""

    spec: TopicSpec
    stamped: bool = True  # False: placed by ClockHistory
    count: int = 0  # every message
    placed: int = 0  # the messages with a simulated time (those before the first /clock have none)
    first_sim_ns: int | None = None
    newest_sim_ns: int | None = None
    first_uncertainty_ns: int = 0  # how far off the first and the newest placement may be
    newest_uncertainty_ns: int = 0
    error: str | None = None  # why the topic cannot be watched (its type does not import)
    first_wall_ns: int | None = None
    first_seq: int | None = None  # DDS publication sequence numbers, while one publisher sends
    last_seq: int | None = None
    seq_count: int = 0
    several_publishers: bool = False
    walls: deque[int] = field(default_factory=deque)  # arrivals within the last RATE_WINDOW_S
    recent_sims: deque[int] = field(default_factory=deque)  # simulated times not yet far behind
    recent_seqs: deque[int | None] = field(default_factory=deque)  # their sequence numbers, if known
    inputs: InputsReader | None = None  # a topic published once per input its node took
    taken: int | None = None  # the inputs its node took from the first message to the newest

    @property
    def name(self) -> str:
        return resolve_name(self.spec.name, "/")

    @property
    def periodic(self) -> bool:
        return self.spec.rate_kind is RateKind.PERIODIC and self.spec.rate_hz is not None

    @property
    def rendered(self) -> bool:
        """Made by the simulator's renderer, which skips perception steps it cannot keep up with."""
        return self.spec.type_name in RENDERED_TYPES

    def record(
        self, wall_ns: int, sim_ns: int | None, seq: int | None = None, *, uncertainty_ns: int = 0
    ) -> None:
        """A message arrived at wall_ns, of simulated time sim_ns (None: not known, before /clock),
        with the publication sequence number seq (None: not known); uncertainty_ns says how far off
        sim_ns may be (a message without a stamp, placed among the clocks this reader has)."""
        self.count += 1
        self._count_seq(seq)
        if self.first_wall_ns is None:
            self.first_wall_ns = wall_ns
        self.walls.append(wall_ns)
        self._forget_walls(wall_ns)
        if sim_ns is None:
            return
        self.placed += 1
        if self.first_sim_ns is None or sim_ns < self.first_sim_ns:
            self.first_sim_ns = sim_ns
            self.first_uncertainty_ns = uncertainty_ns
        if self.newest_sim_ns is None or sim_ns > self.newest_sim_ns:
            self.newest_sim_ns = sim_ns
            self.newest_uncertainty_ns = uncertainty_ns
        self.recent_sims.append(sim_ns)
        self.recent_seqs.append(None if self.several_publishers else seq)
        horizon = sim_ns - int(_HORIZON_S * NS_PER_S)
        while self.recent_sims and self.recent_sims[0] < horizon:
            self.recent_sims.popleft()
            self.recent_seqs.popleft()

    def record_inputs(self, data: bytes) -> None:
        """Read from the newest message how many inputs its node took since the first one."""
        if self.inputs is not None and self.first_sim_ns is not None:
            self.taken = self.inputs(data, self.first_sim_ns)

    def _count_seq(self, seq: int | None) -> None:
        if seq is None or self.several_publishers:
            return
        if self.last_seq is not None and seq <= self.last_seq:
            self.several_publishers = True  # numbers of two writers interleave: no gap count
            return
        if self.first_seq is None:
            self.first_seq = seq
        self.last_seq = seq
        self.seq_count += 1

    @property
    def unreceived(self) -> int:
        """Messages the publisher numbered but this reader never got (0 when not known)."""
        if self.first_seq is None or self.last_seq is None or self.several_publishers:
            return 0
        return self.last_seq - self.first_seq + 1 - self.seq_count

    def wall_rate_hz(self, wall_ns: int) -> float | None:
        """Arrivals per wall second over the window (over the span seen, before a full window)."""
        self._forget_walls(wall_ns)
        if self.first_wall_ns is None:
            return None
        window = int(RATE_WINDOW_S * NS_PER_S)
        if wall_ns - self.first_wall_ns >= window:
            return len(self.walls) * NS_PER_S / window
        if len(self.walls) < 2 or self.walls[-1] == self.walls[0]:
            return None
        return (len(self.walls) - 1) * NS_PER_S / (self.walls[-1] - self.walls[0])

    def sim_rate_hz(self, clock_ns: int | None) -> float | None:
        """Messages published per simulated second over the RATE_WINDOW_S of simulated time that ends
        with the newest message (from the first one on); None before half a window has passed.

        Published, not received: with one publisher, the sequence numbers of the messages received in
        the window count those this reader lost between them too (its own loss is shown apart)."""
        end = self._judged_end(clock_ns)
        if end is None or self.first_sim_ns is None:
            return None
        start = max(end - int(RATE_WINDOW_S * NS_PER_S), self.first_sim_ns)
        if end - start < int(RATE_WINDOW_S * NS_PER_S) // 2:
            return None
        taken = zip(self.recent_sims, self.recent_seqs, strict=True)
        in_window = [(t, q) for t, q in taken if start <= t < end]
        numbered = [q for _, q in in_window if q is not None]
        if len(numbered) == len(in_window) >= 2 and not self.several_publishers:
            # One publisher: its numbers increase, so the messages from the first to the last taken
            # in the window, lost ones included, span their stamps (a loss at the window's edge
            # shortens that span, not the rate).
            span = in_window[-1][0] - in_window[0][0]
            if span > 0:
                return (numbered[-1] - numbered[0]) * NS_PER_S / span
        return len(in_window) * NS_PER_S / (end - start)

    def verdict(self, clock_ns: int | None, skips: SimulatorSkips | None = None) -> Verdict:
        """Whether every message due from the first one to the newest was published (received, or
        numbered by the publisher but lost to this reader), or how many were not and who skipped
        them (`skips`: what the simulator last said it skipped); LATE when the newest is more than
        LATE_S behind the latest clock."""
        end = self._judged_end(clock_ns)
        if not self.periodic or end is None or self.first_sim_ns is None or end <= self.first_sim_ns:
            return Verdict(Status.WAIT)
        expected, received, unreceived = self._due(end), self._received_by(end), self.unreceived
        burst = max(1, self.spec.burst)
        if self.stamped:
            tolerance = burst
        else:  # the span is known only as well as the clocks around its first and newest message
            assert self.spec.rate_hz is not None
            unsure_s = (self.first_uncertainty_ns + self.newest_uncertainty_ns) / NS_PER_S
            tolerance = max(2, math.ceil(UNSTAMPED_TOLERANCE * expected)) + math.ceil(
                self.spec.rate_hz * unsure_s
            )
        lost_before = 0
        if self.taken is not None and self.taken < expected:
            lost_before, expected = expected - self.taken, self.taken
        if received + unreceived < expected - tolerance:
            who = self._who_skipped(skips, expected - received - unreceived, end)
            return Verdict(Status.LOW, expected, received, who, unreceived)
        if received > expected + tolerance:
            return Verdict(Status.HIGH, expected, received)
        assert clock_ns is not None
        behind_s = (clock_ns - end) / NS_PER_S
        if behind_s > LATE_S:
            return Verdict(Status.LATE, expected, received, unreceived=unreceived, behind_s=behind_s)
        return Verdict(
            Status.OK,
            expected,
            received,
            unreceived=unreceived,
            lost_before=lost_before,
            node=self.spec.node or "its node",
        )

    def _due(self, end_ns: int) -> int:
        """Messages due from the first one up to end_ns (whole bursts)."""
        assert self.spec.rate_hz is not None
        assert self.first_sim_ns is not None
        burst = max(1, self.spec.burst)
        periods = math.floor((end_ns - self.first_sim_ns) * self.spec.rate_hz / (burst * NS_PER_S) + 1e-6)
        return (periods + 1) * burst

    def _received_by(self, end_ns: int) -> int:
        return self.placed - sum(1 for t in self.recent_sims if t > end_ns)

    def _judged_end(self, clock_ns: int | None) -> int | None:
        """The simulated time up to which the topic is judged: its newest message (None before the
        first /clock)."""
        return None if clock_ns is None else self.newest_sim_ns

    def _who_skipped(self, skips: SimulatorSkips | None, missing: int, end_ns: int) -> str:
        """Who skipped the messages never published: the simulator, when it skipped at least as
        many perception steps as this rendered topic misses up to the time of its report (or
        end_ns, if earlier); else the publisher."""
        if self.rendered and skips is not None and self.first_sim_ns is not None:
            until = min(skips.until_ns, end_ns)
            kept = self.recent_sims
            complete = not kept or kept[0] <= until or len(kept) == self.placed  # nothing later forgotten
            skipped = missing
            if self.first_sim_ns <= until and complete:
                skipped = self._due(until) - self._received_by(until) - self.unreceived
            if skipped <= skips.count:
                return "skipped by the simulator"
        return f"not published by {self.spec.node or 'the bridge'}"

    def _forget_walls(self, wall_ns: int) -> None:
        while self.walls and self.walls[0] < wall_ns - int(RATE_WINDOW_S * NS_PER_S):
            self.walls.popleft()
