"""Lockstep with the full Polaris set: how fast the bridge steps a Polaris with all its sensors.

The bridge runs clock_tf, ins, perception and episode (with the ingest; the drive-by-wire and
reset subsystems off: the set is the sensors'); the simulator makes a LiDAR
cloud (1800 x 32) and a camera image (896 x 512 bgr8) at 10 Hz besides the clock and the INS. The
Polaris stands parked, so the simulator reuses its ray casts and is not the bound; every figure
is taken while /step_simulation runs 120 steps per call, and a call answers only once every
message of its steps, clouds and images included, is published.
"""

from __future__ import annotations

from dataclasses import dataclass

from acres_bridge.processes import free_port
from bench._processes import Children
from bench._ros import BenchNode
from bench._stats import median, spread
from bench.core import Benchmark, Outcome, Row, Settings
from bench.lockstep import BATCH, STEPS_PER_SIM_S, SteppedBridge, timed_batches

__all__ = ["BENCHMARK", "run"]

SUBSYSTEMS = ("ingest", "clock_tf", "ins", "perception", "episode")
THROUGHPUT = "lockstep, full Polaris set, 120 steps/call"
BRIDGE_BOUND = "bridge-bound rate, full Polaris set, one core"
BRIDGE_CPU = "bridge CPU per simulated second, full Polaris set"
SIM_CPU = "simulator CPU per simulated second, full Polaris set"
ROWS = ((THROUGHPUT, "steps/s"), (BRIDGE_BOUND, "steps/s"), (BRIDGE_CPU, "ms/sim s"), (SIM_CPU, "ms/sim s"))


@dataclass(frozen=True, kw_only=True)
class _Repetition:
    wall: float
    bridge_cpu: float
    sim_cpu: float


def run(settings: Settings) -> Outcome:
    repetitions, steps, warmup = settings.pick((5, 1200, 240), (1, 360, 120))
    with Children() as started, BenchNode() as ros:
        port = free_port()
        simulator = started.simulator(port, lockstep=True, perception=True)
        process = started.bridge(port, subsystems=SUBSYSTEMS)
        bridge = SteppedBridge(ros, process, simulator)
        bridge.wait_paused()
        timed_batches(bridge.step, warmup)
        reps = []
        for _ in range(repetitions):
            bridge_cpu, sim_cpu = process.cpu_seconds(), simulator.cpu_seconds()
            wall = timed_batches(bridge.step, steps)
            reps.append(
                _Repetition(
                    wall=wall,
                    bridge_cpu=process.cpu_seconds() - bridge_cpu,
                    sim_cpu=simulator.cpu_seconds() - sim_cpu,
                )
            )
    sim_s = steps / STEPS_PER_SIM_S
    rates = [steps / rep.wall for rep in reps]
    bridge_ms = 1000.0 * sum(rep.bridge_cpu for rep in reps) / (sim_s * len(reps))
    sim_ms = 1000.0 * sum(rep.sim_cpu for rep in reps) / (sim_s * len(reps))
    bound = 1000.0 * STEPS_PER_SIM_S / bridge_ms
    provenance = (
        f"median of {len(reps)} x {sim_s:g} sim s, range {spread(rates)}" if len(reps) > 1 else "one run"
    )
    return Outcome(
        rows=(
            Row(
                name=THROUGHPUT,
                value=median(rates),
                unit="steps/s",
                notes=f"{median(rates) / STEPS_PER_SIM_S:.1f}x real time with the simulator's share; "
                f"{BATCH} steps/call; {provenance}",
            ),
            Row(
                name=BRIDGE_BOUND,
                value=bound,
                unit="steps/s",
                notes=f"{bound / STEPS_PER_SIM_S:.1f}x real time: 120 steps per simulated second over the "
                "bridge's CPU per simulated second (aim: 10x or better)",
            ),
            Row(
                name=BRIDGE_CPU,
                value=bridge_ms,
                unit="ms/sim s",
                notes="user+sys of all threads: 120 clocks, 100 INS samples (5 topics each + /tf), "
                "10 clouds, 10 images + camera_info, per simulated second",
            ),
            Row(
                name=SIM_CPU,
                value=sim_ms,
                unit="ms/sim s",
                notes="parked Polaris: ray casts reused, the LiDAR's noise drawn anew for every cloud",
            ),
        )
    )


BENCHMARK = Benchmark(key="full_set", rows=ROWS, run=run)
