"""acres_demo's run: the simulator and the bridge as children, the monitor, the display, the options."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TextIO

import rclpy
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from acres_bridge.demo.monitor import PACE_REPORT_S, Monitor
from acres_bridge.demo.table import FINAL_TITLE, header_lines, watch_list
from acres_bridge.errors import AcresBridgeError, ProcessFailedError
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.pace import PacingReport, parse_pacing_line
from acres_bridge.processes import (
    SIMULATOR_READY_LINE,
    ChildProcess,
    bridge_command,
    free_port,
    simulator_command,
)
from acres_bridge.topic_watch import (
    SimulatorSkips,
)
from acres_bridge.wire.clock import NS_PER_S
from acres_bridge.wire.vocabulary import Vehicle

__all__ = [
    "CLEAR_SCREEN",
    "CLOCK_TIMEOUT_S",
    "LOG_INTERVAL_S",
    "POLARIS_NODES",
    "READY_TIMEOUT_S",
    "REDRAW_INTERVAL_S",
    "SECONDS_ENV",
    "STOP_TIMEOUT_S",
    "DemoError",
    "DemoOptions",
    "main",
    "parse_options",
    "run",
]

SECONDS_ENV = "DEMO_SECONDS"


CLOCK_TIMEOUT_S = 20.0  # longest wait from the bridge's start to the first /clock message


READY_TIMEOUT_S = 20.0  # longest wait for the simulator's "listening on" line


REDRAW_INTERVAL_S = 1.0


LOG_INTERVAL_S = 5.0  # table interval when stdout is not a terminal


STOP_TIMEOUT_S = 10.0  # wait after SIGINT before a child is killed


CATCH_UP_S = 30.0  # at the end, the longest wait for what is still on its way to the table


# The Polaris's other nodes, as the lab runs them; the driver drives the built-in route.
POLARIS_NODES = ("polaris_description", "dbw_demo_driver", "odom_path", "lab_stubs")


CLEAR_SCREEN = "\x1b[H\x1b[2J"


class DemoError(AcresBridgeError):
    """Raised when the demo cannot go on: the simulator never said it listens, or /clock did not
    arrive in time. The message names the process and its output. (A child that dies early raises
    ProcessFailedError.)"""


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
        self.monitor = Monitor(watches, context=self.context, subscribe=lambda w: not w.rendered)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.monitor)
        self.bulk_context = Context()
        rclpy.init(args=[], context=self.bulk_context, signal_handler_options=SignalHandlerOptions.NO)
        self.bulk_monitor = Monitor(
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
            self._catch_up()
            return f"{self.options.sim_seconds:g} simulated s are up"
        return f"{self.options.seconds:g} s are up"

    def _catch_up(self) -> None:
        """Judge the last table at the clock the run stopped at, once what was published by then
        has reached this reader (at most CATCH_UP_S): on a busy machine the reader lags the
        publishers, and a message on its way is neither late nor lost."""
        stop_ns = self.monitor.sim_time_ns
        if stop_ns is None:
            return
        self.monitor.judged_clock_ns = stop_ns
        deadline_s = self.elapsed_s() + CATCH_UP_S
        while self.elapsed_s() < deadline_s and not self.monitor.caught_up(stop_ns):
            self.executor.spin_once(timeout_sec=0.05)

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
