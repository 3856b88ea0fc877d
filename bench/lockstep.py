"""Lockstep: how fast the bridge steps the simulation, and what each simulated second costs.

One simulator serves the bridge (a Polaris with the ingest, clock_tf, ins and episode
subsystems, any other subsystem off); the bench calls /step_simulation, which answers only once
the steps ran and every message they made was published. A second simulator of the same build
is driven by a bare protocol client (bench/_raw_client.py) to show what the simulator alone can
do. Within each repetition the two alternate, so load from elsewhere on the machine falls on
both alike; figures are medians.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from simulation_interfaces.msg import Result, SimulationState
from simulation_interfaces.srv import GetSimulationState, StepSimulation

from acres_bridge.processes import free_port
from bench._processes import BRIDGE_SUBSYSTEMS, Child, Children, cpu_seconds
from bench._raw_client import RawClient
from bench._ros import BenchNode
from bench._stats import median, spread
from bench.core import Benchmark, Outcome, Row, Settings
from bench.errors import BenchError

__all__ = ["BENCHMARK", "SteppedBridge", "run", "timed_batches"]

STEPS_PER_SIM_S = 120  # physics steps per simulated second
BATCH = 120  # steps per call in the throughput figures

BRIDGE_BATCH = "lockstep throughput via bridge, 120 steps/call"
BRIDGE_SINGLE = "lockstep round trip via bridge, 1 step/call"
ALONE_BATCH = "simulator alone, 120 steps/call"
ALONE_SINGLE = "simulator alone, 1 step/call"
SERVICE_FLOOR = "ROS service round trip, no stepping"
BRIDGE_CPU = "bridge CPU per simulated second, lockstep"
SIM_CPU = "simulator CPU per simulated second, lockstep"

ROWS = (
    (BRIDGE_BATCH, "steps/s"),
    (BRIDGE_SINGLE, "ms/call"),
    (ALONE_BATCH, "steps/s"),
    (ALONE_SINGLE, "ms/call"),
    (SERVICE_FLOOR, "ms/call"),
    (BRIDGE_CPU, "ms/sim s"),
    (SIM_CPU, "ms/sim s"),
)


@dataclass(frozen=True, kw_only=True)
class _Plan:
    repetitions: int
    batch_steps: int  # steps per throughput measurement (120 = one simulated second)
    single_calls: int  # 1-step calls per round-trip measurement
    floor_calls: int  # calls of the no-op service per measurement
    warmup_steps: int


@dataclass(frozen=True, kw_only=True)
class _Repetition:
    """Wall and CPU seconds of one repetition, as measured."""

    bridge_wall: float  # plan.batch_steps steps through the bridge, in calls of BATCH
    bridge_cpu: float  # the bridge process, same window
    sim_cpu: float  # the bridge's simulator, same window
    client_cpu: float  # this process (the rclpy client calling the bridge), same window
    alone_wall: float  # plan.batch_steps steps by the raw client, in calls of BATCH
    alone_cpu: float  # the simulator driven alone, same window
    bridge_call_wall: float  # per 1-step call through the bridge
    bridge_call_cpu: float  # bridge CPU per 1-step call
    alone_call_wall: float  # per 1-step call of the raw client
    floor_call_wall: float  # per /get_simulation_state call


class SteppedBridge:
    """The bridge's side: /step_simulation and /get_simulation_state called from the bench node."""

    def __init__(self, ros: BenchNode, bridge: Child, simulator: Child) -> None:
        self._ros = ros
        self.process = bridge
        self.simulator = simulator
        watch = (bridge, simulator)
        self._step = ros.client(StepSimulation, "/step_simulation", watch=watch)
        self._state = ros.client(GetSimulationState, "/get_simulation_state", watch=watch)

    def wait_paused(self, timeout_s: float = 30.0) -> None:
        """Wait until the bridge is connected to its (lockstep, so paused) simulator."""
        deadline = time.monotonic() + timeout_s
        while self.state() != SimulationState.STATE_PAUSED:
            self.process.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"the bridge did not reach the paused simulator within {timeout_s} s")
            time.sleep(0.05)

    def state(self) -> int:
        response = self._ros.call(self._state, GetSimulationState.Request())
        return int(response.state.state)

    def step(self, steps: int) -> None:
        response = self._ros.call(self._step, StepSimulation.Request(steps=steps))
        if response.result.result != Result.RESULT_OK:
            raise BenchError(f"/step_simulation refused {steps} steps: {response.result.error_message}")


def timed_batches(step: Callable[[int], None], total: int) -> float:
    """Wall seconds to run `total` steps in calls of BATCH."""
    calls, rest = divmod(total, BATCH)
    start = time.perf_counter()
    for _ in range(calls):
        step(BATCH)
    if rest:
        step(rest)
    return time.perf_counter() - start


def _calls(call: Callable[[], object], count: int) -> float:
    """Wall seconds per call of `call()` over `count` calls."""
    start = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - start) / count


def _repetition(bridge: SteppedBridge, raw: RawClient, alone: Child, plan: _Plan) -> _Repetition:
    alone_cpu0 = alone.cpu_seconds()
    alone_wall = timed_batches(raw.step, plan.batch_steps)
    alone_cpu = alone.cpu_seconds() - alone_cpu0

    bridge_cpu0, sim_cpu0 = bridge.process.cpu_seconds(), bridge.simulator.cpu_seconds()
    client_cpu0 = cpu_seconds(os.getpid())
    bridge_wall = timed_batches(bridge.step, plan.batch_steps)
    client_cpu = cpu_seconds(os.getpid()) - client_cpu0
    bridge_cpu = bridge.process.cpu_seconds() - bridge_cpu0
    sim_cpu = bridge.simulator.cpu_seconds() - sim_cpu0

    alone_call = _calls(partial(raw.step, 1), plan.single_calls)
    call_cpu0 = bridge.process.cpu_seconds()
    bridge_call = _calls(partial(bridge.step, 1), plan.single_calls)
    call_cpu = bridge.process.cpu_seconds() - call_cpu0
    floor_call = _calls(bridge.state, plan.floor_calls)

    return _Repetition(
        bridge_wall=bridge_wall,
        bridge_cpu=bridge_cpu,
        sim_cpu=sim_cpu,
        client_cpu=client_cpu,
        alone_wall=alone_wall,
        alone_cpu=alone_cpu,
        bridge_call_wall=bridge_call,
        bridge_call_cpu=call_cpu / plan.single_calls,
        alone_call_wall=alone_call,
        floor_call_wall=floor_call,
    )


def _measure(plan: _Plan) -> list[_Repetition]:
    with Children() as started, BenchNode() as ros:
        bridge_port, alone_port = free_port(), free_port()
        bridge_sim = started.simulator(bridge_port, lockstep=True, name="acres_sim (bridge's)")
        bridge_process = started.bridge(bridge_port)
        alone = started.simulator(alone_port, lockstep=True, name="acres_sim (alone)")
        bridge = SteppedBridge(ros, bridge_process, bridge_sim)
        bridge.wait_paused()
        with RawClient(port=alone_port) as raw:
            # Warm-up: first messages of every publisher, first requests of every path.
            for step in (raw.step, bridge.step):
                timed_batches(step, plan.warmup_steps)
                _calls(partial(step, 1), 20)
            return [_repetition(bridge, raw, alone, plan) for _ in range(plan.repetitions)]


def _times(value: float) -> str:
    return f"{value:.1f}x" if value < 10 else f"{value:.0f}x"


def run(settings: Settings) -> Outcome:
    plan = settings.pick(
        _Plan(repetitions=7, batch_steps=1200, single_calls=1200, floor_calls=300, warmup_steps=240),
        _Plan(repetitions=1, batch_steps=600, single_calls=120, floor_calls=100, warmup_steps=120),
    )
    reps = _measure(plan)
    sim_s = plan.batch_steps / STEPS_PER_SIM_S

    def summary(values: list[float], what: str) -> str:
        """The median's provenance for the notes column."""
        if len(values) == 1:
            return f"one run of {what}"
        return f"median of {len(values)} x {what}, range {spread(values)}"

    bridge_sps = [plan.batch_steps / rep.bridge_wall for rep in reps]
    alone_sps = [plan.batch_steps / rep.alone_wall for rep in reps]
    faster = median([rep.bridge_wall / rep.alone_wall for rep in reps])  # simulator alone vs bridge
    bridge_call_ms = [1000.0 * rep.bridge_call_wall for rep in reps]
    alone_call_ms = [1000.0 * rep.alone_call_wall for rep in reps]
    floor_ms = [1000.0 * rep.floor_call_wall for rep in reps]
    # CPU over every batch window of the run together: /proc/<pid>/stat counts in clock ticks.
    batch_wall = sum(rep.bridge_wall for rep in reps)
    total_sim_s = sim_s * len(reps)
    bridge_cpu_ms = 1000.0 * sum(rep.bridge_cpu for rep in reps) / total_sim_s
    sim_cpu_ms = 1000.0 * sum(rep.sim_cpu for rep in reps) / total_sim_s
    alone_cpu_ms = 1000.0 * sum(rep.alone_cpu for rep in reps) / total_sim_s
    bridge_busy = sum(rep.bridge_cpu for rep in reps) / batch_wall
    sim_busy = sum(rep.sim_cpu for rep in reps) / batch_wall
    client_busy = sum(rep.client_cpu for rep in reps) / batch_wall
    call_ms = median(bridge_call_ms)
    rows = (
        Row(
            name=BRIDGE_BATCH,
            value=median(bridge_sps),
            unit="steps/s",
            notes=f"{_times(median(bridge_sps) / STEPS_PER_SIM_S)} real time; the simulator alone is "
            f"{_times(faster)} faster [1]; {summary(bridge_sps, f'{sim_s:g} sim s')}",
        ),
        Row(
            name=BRIDGE_SINGLE,
            value=call_ms,
            unit="ms/call",
            notes=f"= {1000 / call_ms:.0f} steps/s, {_times(1000 / call_ms / STEPS_PER_SIM_S)} real time; "
            f"bridge CPU {1000 * median([rep.bridge_call_cpu for rep in reps]):.2f} ms/call; "
            f"{summary(bridge_call_ms, f'{plan.single_calls} calls')}",
        ),
        Row(
            name=ALONE_BATCH,
            value=median(alone_sps),
            unit="steps/s",
            notes=f"bare protocol client, same run [1]; {summary(alone_sps, f'{sim_s:g} sim s')}",
        ),
        Row(
            name=ALONE_SINGLE,
            value=median(alone_call_ms),
            unit="ms/call",
            notes=f"bare protocol client; {summary(alone_call_ms, f'{plan.single_calls} calls')}",
        ),
        Row(
            name=SERVICE_FLOOR,
            value=median(floor_ms),
            unit="ms/call",
            notes="/get_simulation_state of the bridge: the floor of any call through rclpy; "
            f"{summary(floor_ms, f'{plan.floor_calls} calls')}",
        ),
        Row(
            name=BRIDGE_CPU,
            value=bridge_cpu_ms,
            unit="ms/sim s",
            notes=f"= {1000 * bridge_cpu_ms / STEPS_PER_SIM_S:.0f} us/step; user+sys of all threads over "
            f"the {total_sim_s:g} sim s at 120 steps/call; on CPU {100 * bridge_busy:.0f}% of the wall time",
        ),
        Row(
            name=SIM_CPU,
            value=sim_cpu_ms,
            unit="ms/sim s",
            notes=f"the bridge's simulator, same window: on CPU {100 * sim_busy:.0f}% of the wall time; "
            f"driven alone {alone_cpu_ms:.1f} ms/sim s",
        ),
    )
    footnotes = (
        "[1] The simulator is not the bound. The same simulator, in the same run, driven by a bare "
        "protocol client (bench/_raw_client.py: handshake with acres_bridge.wire, then STEP_REQUESTs; "
        "every channel drained, nothing decoded; a request is done when each channel ends with its "
        f"STEP_DONE / STREAM_MARK) steps {_times(faster)} as fast as through the bridge. In lockstep the "
        "simulator and the bridge work in turn (a request's data is sent when its steps are done), so "
        "the wall time of a request is the simulator's share plus the bridge's: during the bridge's "
        f"batches the simulator was on CPU {100 * sim_busy:.0f}% of the wall time, the bridge "
        f"{100 * bridge_busy:.0f}%, the bench's client {100 * client_busy:.0f}% (the rest: waiting for a "
        "CPU or a wake-up); a simulator that took no time at all would raise the bridge's figure by at "
        f"most {_times(1 / max(1e-9, 1 - sim_busy))}. Bridge and simulator alone alternate within each "
        "repetition, so other load on the machine hits both alike.",
        f"Lockstep rows: the bridge runs {', '.join(BRIDGE_SUBSYSTEMS)} (any other subsystem off); no "
        "subscriber listens to its topics (DDS delivery to readers is not included); the bench's own "
        "rclpy client is part of every call through the bridge.",
    )
    return Outcome(rows=rows, footnotes=footnotes)


BENCHMARK = Benchmark(key="lockstep", rows=ROWS, run=run)
