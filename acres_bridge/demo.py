"""acres_demo: the bridge against the reference simulator, with a live table of its topics.

    acres_demo                       run until Ctrl-C
    acres_demo --seconds 10          stop after 10 s (or DEMO_SECONDS=10 acres_demo)
    acres_demo --sim-seconds 6       stop once 6 simulated seconds have passed on /clock
    acres_demo --vehicle maxxum --seed 7 --port 47100

It starts the simulator (free run) and the bridge as child processes, subscribes to every topic
that msg_profiles says the bridge publishes for the vehicle, and each second shows, per topic,
the expected rate, the rate in simulated time (messages published per simulated second, from the
stamps and the publisher's sequence numbers) and the rate of arrival in wall time, the message
count and a status judged in simulated time (acres_bridge.topic_watch): OK when every message the
simulator made for the topic was published, with those this reader lost noted apart; LOW with the
count missing and who skipped them (the simulator or the bridge). Above the table,
the session's real-time factor as /clock shows it, and the simulator's own word on its pace.
A busy machine slows the simulation down (a real-time factor below 1) but leaves the topics OK.
A topic that nothing publishes in this session says so.

On a terminal the table is redrawn in place; otherwise it is printed every LOG_INTERVAL_S
seconds, so a log stays readable. The final table is always printed at exit. The demo stops the
bridge and the simulator on SIGINT, SIGTERM or when the time is up, and exits 0; it exits 1
with a message when either child dies early or /clock does not arrive within CLOCK_TIMEOUT_S.

DDS discovery is confined to this machine: the demo and its children run with
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST whatever the environment says.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, TextIO

import rclpy
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions

from acres_bridge.errors import AcresBridgeError, ProcessFailedError
from acres_bridge.msg_profiles import Direction, MsgProfiles, load_profiles
from acres_bridge.pace import PaceMeter, PacingReport, describe_pace, parse_pacing_line
from acres_bridge.processes import (
    SIMULATOR_READY_LINE,
    ChildProcess,
    bridge_command,
    free_port,
    simulator_command,
)
from acres_bridge.topic_watch import (
    RATE_WINDOW_S,
    ClockHistory,
    SimulatorSkips,
    Status,
    TopicWatch,
    stamp_reader,
)
from acres_bridge.topics_cli import format_rate, format_table, resolve_name
from acres_bridge.wire.clock import NS_PER_S
from acres_bridge.wire.vocabulary import SimState, Vehicle

__all__ = [
    "CLOCK_TIMEOUT_S",
    "FINAL_TITLE",
    "HEADER",
    "NOT_PUBLISHED",
    "NOT_SUBSCRIBED",
    "RATE_WINDOW_S",
    "DemoError",
    "DemoOptions",
    "GraphView",
    "Status",
    "TopicWatch",
    "main",
    "parse_options",
    "run",
    "topic_row",
    "watch_list",
]

SECONDS_ENV = "DEMO_SECONDS"

MIN_DEPTH = 1000  # reader history of each subscription: seconds of every topic, for a busy machine
CLOCK_TIMEOUT_S = 20.0  # longest wait from the bridge's start to the first /clock message
READY_TIMEOUT_S = 20.0  # longest wait for the simulator's "listening on" line
DISCOVERY_SETTLE_S = 1.0  # after the first /clock, the bridge's publishers are all known
REDRAW_INTERVAL_S = 1.0
LOG_INTERVAL_S = 5.0  # table interval when stdout is not a terminal
STOP_TIMEOUT_S = 10.0  # wait after SIGINT before a child is killed

PACE_REPORT_S = 1.0  # the simulator's pace line, at most this often: the skips it says stay current
DEMO_STATUS = "/Demo/status"
# The Polaris's other nodes, as the lab runs them; the driver drives the built-in route.
POLARIS_NODES = ("polaris_description", "dbw_demo_driver", "odom_path", "lab_stubs")
NOT_PUBLISHED = "not published by this session"
SUBSCRIBED = "subscribed by the bridge"
NOT_SUBSCRIBED = "not subscribed by this session"
CLEAR_SCREEN = "\x1b[H\x1b[2J"
FINAL_TITLE = "acres_demo: final table"
HEADER = ("topic", "type", "expected", "sim rate", "wall rate", "count", "status")


def _state_name(state: int) -> str:
    """The episode state as the header shows it: stopped, playing, paused (else the number)."""
    return SimState(state).name.lower() if state in tuple(SimState) else str(state)


class DemoError(AcresBridgeError):
    """Raised when the demo cannot go on: the simulator never said it listens, or /clock did not
    arrive in time. The message names the process and its output. (A child that dies early raises
    ProcessFailedError.)"""


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


class _Monitor(Node):
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
        self.first_clock_ns: int | None = None  # wall time of the first /clock
        self.first_sim_ns: int | None = None  # its simulated time
        self.first_episode_ns: int | None = None
        self.first_clock_source_ns: int | None = None  # the DDS source timestamps of both
        self.first_episode_source_ns: int | None = None
        self.progress: str | None = None
        self.pace = PaceMeter()
        self.clocks = ClockHistory()
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
            stamp = reader(data) if reader is not None else self._placed(info)
            watch.record(time.monotonic_ns(), stamp, info.get("publication_sequence_number"))

        return on_message

    def _placed(self, info: dict[str, Any]) -> int | None:
        """The simulated time a message without a stamp was published in (None: before the first
        /clock this demo has, so it is counted but not judged)."""
        return self.clocks.sim_at(int(info.get("source_timestamp", 0)))

    def _callback(self, watch: TopicWatch) -> Callable[[Any, dict[str, Any]], None]:
        def on_message(message: Any, info: dict[str, Any]) -> None:
            now_ns = time.monotonic_ns()
            if watch.spec.name == "/clock":
                self.sim_time_ns = int(message.clock.sec) * NS_PER_S + int(message.clock.nanosec)
                self.pace.record(now_ns, self.sim_time_ns)
                self.clocks.record(int(info.get("source_timestamp", 0)), self.sim_time_ns)
                if self.first_clock_ns is None:
                    self.first_clock_ns = now_ns
                    self.first_sim_ns = self.sim_time_ns
                    self.first_clock_source_ns = int(info.get("source_timestamp", 0))
            sim_ns = self.sim_time_ns if watch.spec.name == "/clock" else None
            if sim_ns is None:
                sim_ns = watch_stamp(message) if watch.stamped else self._placed(info)
            watch.record(now_ns, sim_ns, info.get("publication_sequence_number"))
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
                    state=_state_name(int(message.state)),
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
        rows = [
            topic_row(watch, self.graph(watch, now_ns), now_ns, self.sim_time_ns, skips)
            for watch in self.watches
        ]
        return format_table(rows, HEADER)


@dataclass(frozen=True, kw_only=True)
class DemoOptions:
    """The demo's settings, validated by the argument parser."""

    vehicle: str
    seconds: float | None  # None: until SIGINT or SIGTERM
    sim_seconds: float | None = None  # stop once /clock is this far past its first message
    port: int
    seed: int


class _Display:
    """Redraws in place on a terminal; elsewhere prints every LOG_INTERVAL_S seconds."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.interval_s = REDRAW_INTERVAL_S if self.tty else LOG_INTERVAL_S

    def show(self, text: str, *, final: bool = False) -> None:
        if self.tty:
            self.out.write(CLEAR_SCREEN)
        elif final:
            self.out.write(f"\n{FINAL_TITLE}\n")
        else:
            self.out.write("\n")
        self.out.write(text + "\n")
        self.out.flush()


class _Stop:
    """Turns SIGINT and SIGTERM into a flag the main loop reads."""

    def __init__(self) -> None:
        self.requested: str | None = None
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.requested = signal.Signals(signum).name


class _Demo:
    """One run: the children, the monitor node and its executor, the clock of the run."""

    def __init__(self, options: DemoOptions, out: TextIO) -> None:
        self.options = options
        self.out = out
        self.stop = _Stop()
        self.display = _Display(out)
        self.children: list[ChildProcess] = []
        self.simulator: ChildProcess | None = None
        self.simulator_pace: PacingReport | None = None
        self.bridge: ChildProcess | None = None
        # Two DDS participants: the clouds and images (tens of MB/s) arrive through their own
        # receive queues and a thread of their own, so on a busy machine they cannot crowd out the
        # small messages (a lost /sim/episode is resent only at the writer's next heartbeat).
        watches = watch_list(load_profiles(), options.vehicle)
        self.context = Context()
        rclpy.init(args=[], context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.monitor = _Monitor(watches, context=self.context, subscribe=lambda w: not w.rendered)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.monitor)
        self.bulk_context = Context()
        rclpy.init(args=[], context=self.bulk_context, signal_handler_options=SignalHandlerOptions.NO)
        self.bulk_monitor = _Monitor(
            watches, context=self.bulk_context, name="acres_demo_sensors", subscribe=lambda w: w.rendered
        )
        self.bulk_executor = SingleThreadedExecutor(context=self.bulk_context)
        self.bulk_executor.add_node(self.bulk_monitor)
        self.bulk_thread = threading.Thread(target=self._spin_bulk, name="acres-demo-sensors", daemon=True)
        self.bulk_thread.start()
        self.started_ns = time.monotonic_ns()

    def _spin_bulk(self) -> None:
        """Take clouds and images until the demo ends."""
        with contextlib.suppress(ExternalShutdownException):
            while self.bulk_context.ok():
                self.bulk_executor.spin_once(timeout_sec=0.1)

    def elapsed_s(self) -> float:
        return (time.monotonic_ns() - self.started_ns) / NS_PER_S

    def say(self, text: str) -> None:
        print(f"acres_demo: {text}", file=self.out, flush=True)

    def _read_simulator_pace(self) -> None:
        """The newest pace line the simulator printed (it prints one at most every few seconds)."""
        if self.simulator is None:
            return
        for line in reversed(self.simulator.tail(50)):
            report = parse_pacing_line(line)
            if report is not None:
                self.simulator_pace = report
                return

    def screen(self) -> str:
        self._read_simulator_pace()
        now_ns = time.monotonic_ns()
        pace = self.simulator_pace
        skips = None if pace is None else SimulatorSkips(pace.skipped_perception_steps, pace.sim_ns)
        lines = header_lines(
            vehicle=self.options.vehicle,
            port=self.options.port,
            seed=self.options.seed,
            elapsed_s=self.elapsed_s(),
            session=self.monitor.session,
            sim_time_ns=self.monitor.sim_time_ns,
            episode_after_clock_s=self.monitor.episode_after_clock_s(),
            pace=self.monitor.pace.factor(now_ns),
            simulator_pace=self.simulator_pace,
            progress=self.monitor.progress,
        )
        return "\n".join([*lines, "", self.monitor.table(now_ns, skips)])

    def start_children(self) -> None:
        """The simulator, and once it listens the bridge (unless a stop came first)."""
        options = self.options
        self.say(f"starting the simulator ({options.vehicle}, port {options.port}, seed {options.seed})")
        simulator = ChildProcess.start(
            "the simulator",
            simulator_command(
                options.port,
                seed=options.seed,
                lockstep=False,
                extra=("--vehicle", options.vehicle, "--pace-report-s", str(PACE_REPORT_S)),
            ),
        )
        self.children.append(simulator)
        self.simulator = simulator
        try:
            ready = simulator.wait_for_line(
                SIMULATOR_READY_LINE, READY_TIMEOUT_S, cancelled=lambda: self.stop.requested is not None
            )
        except ProcessFailedError as error:
            if error.returncode is not None:
                raise
            tail = ProcessFailedError.describe_output(error.output)
            raise DemoError(
                f"the simulator did not say it listens within {READY_TIMEOUT_S:g} s{tail}"
            ) from None
        if not ready:
            return
        self.say("the simulator listens; starting the bridge")
        self.bridge = ChildProcess.start("the bridge", bridge_command(options.port, vehicle=options.vehicle))
        self.children.append(self.bridge)
        if options.vehicle == Vehicle.POLARIS:
            self.say(f"starting {', '.join(POLARIS_NODES)}: the demo driver takes the wheel")
            for node in POLARIS_NODES:
                command = [sys.executable, "-m", f"acres_bridge.other.{node}", "--ros-args"]
                self.children.append(ChildProcess.start(node, [*command, "-p", "use_sim_time:=true"]))

    def spin_until(self, deadline_s: float) -> None:
        """Take messages until deadline_s of the run, the simulated time or a stop; ProcessFailedError
        when a child dies."""
        while self.stop.requested is None and self.elapsed_s() < deadline_s and not self._sim_time_is_up():
            self.executor.spin_once(timeout_sec=min(0.1, max(0.0, deadline_s - self.elapsed_s())))
            for child in self.children:
                child.check_alive()

    def simulated_s(self) -> float:
        """Simulated seconds from the first /clock this demo received to the newest."""
        first, newest = self.monitor.first_sim_ns, self.monitor.sim_time_ns
        return 0.0 if first is None or newest is None else (newest - first) / NS_PER_S

    def _sim_time_is_up(self) -> bool:
        return self.options.sim_seconds is not None and self.simulated_s() >= self.options.sim_seconds

    def watch(self) -> str:
        """Show the table until the time is up or a stop; why it ended."""
        clock_deadline_s = self.elapsed_s() + CLOCK_TIMEOUT_S
        end_s = float("inf") if self.options.seconds is None else self.options.seconds
        next_show_s = self.elapsed_s() + REDRAW_INTERVAL_S
        while self.stop.requested is None and self.elapsed_s() < end_s and not self._sim_time_is_up():
            self.spin_until(min(next_show_s, end_s))
            if self.monitor.first_clock_ns is None and self.elapsed_s() > clock_deadline_s:
                tail = "" if self.bridge is None else ProcessFailedError.describe_output(self.bridge.tail())
                raise DemoError(f"no /clock within {CLOCK_TIMEOUT_S:g} s of the bridge's start{tail}")
            if self.stop.requested is None and next_show_s <= self.elapsed_s() < end_s:
                self.display.show(self.screen())
                next_show_s += self.display.interval_s
        if self.stop.requested:
            return self.stop.requested
        if self._sim_time_is_up():
            return f"{self.options.sim_seconds:g} simulated s are up"
        return f"{self.options.seconds:g} s are up"

    def close(self) -> None:
        """Stop the bridge, then the simulator; then the monitor node."""
        for child in reversed(self.children):
            child.stop(STOP_TIMEOUT_S, report=self.say)
        self.executor.shutdown()
        self.monitor.destroy_node()
        self.context.try_shutdown()
        self.bulk_context.try_shutdown()
        self.bulk_thread.join(timeout=2.0)
        self.bulk_executor.shutdown()
        self.bulk_monitor.destroy_node()


def run(options: DemoOptions, out: TextIO = sys.stdout) -> int:
    """Run the demo; the exit status (0, or 1 when a child died or /clock never came)."""
    demo = _Demo(options, out)
    try:
        demo.start_children()
        reason = demo.watch()
    except (DemoError, ProcessFailedError) as error:
        demo.display.show(demo.screen(), final=True)
        print(f"acres_demo: {_reason(error)}", file=sys.stderr, flush=True)
        demo.close()
        return 1
    demo.display.show(demo.screen(), final=True)
    demo.say(f"{reason}; stopping the bridge and the simulator")
    demo.close()
    return 0


def _reason(error: AcresBridgeError) -> str:
    """Why the demo stops early; a child's end is said to come before the demo's."""
    if isinstance(error, ProcessFailedError) and error.returncode is not None:
        tail = ProcessFailedError.describe_output(error.output)
        return f"{error.process} {error.problem} before the demo's end{tail}"
    return str(error)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, found {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, found {text!r}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a TCP port, found {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"expected a TCP port (1..65535), found {value}")
    return value


def parse_options(argv: Sequence[str] | None, environ: dict[str, str] | None = None) -> DemoOptions:
    environ = dict(os.environ) if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="acres_demo", description="Run the bridge against the reference simulator and watch its topics."
    )
    parser.add_argument(
        "--vehicle",
        choices=[str(vehicle) for vehicle in Vehicle],
        default=str(Vehicle.POLARIS),
        help="the vehicle (default polaris)",
    )
    parser.add_argument(
        "--seconds",
        type=_seconds,
        default=None,
        help=f"stop after this many seconds (default ${SECONDS_ENV}; unset: until Ctrl-C)",
    )
    parser.add_argument(
        "--sim-seconds",
        type=_seconds,
        default=None,
        help="stop once /clock has advanced this many simulated seconds (a busy machine runs slower)",
    )
    parser.add_argument(
        "--port", type=_port, default=None, help="the simulator's control port (default: free)"
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of the sensor noise (default 42)")
    args = parser.parse_args(argv)
    seconds: float | None = args.seconds
    if seconds is None and environ.get(SECONDS_ENV, "").strip():
        try:
            seconds = _seconds(environ[SECONDS_ENV].strip())
        except argparse.ArgumentTypeError as error:
            parser.error(f"{SECONDS_ENV}: {error}")
    if not 0 <= args.seed < 1 << 32:
        parser.error(f"--seed must be in 0 .. 2^32-1, found {args.seed}")
    return DemoOptions(
        vehicle=args.vehicle,
        seconds=seconds,
        sim_seconds=args.sim_seconds,
        port=args.port if args.port is not None else free_port(),
        seed=args.seed,
    )


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(argv)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return run(options)


if __name__ == "__main__":
    sys.exit(main())
