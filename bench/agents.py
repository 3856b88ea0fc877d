"""Several agents: what each agent costs the bridge per simulated second, with 1, 4 and 8 agents.

Every agent is a parked Polaris with its sensors (clock, TF, INS, LiDAR 1800 x 32 and camera
896 x 512 at 10 Hz; episode once); one bridge serves them all (vehicle:=auto agents:=auto, the
subsystems of the full Polaris set). The bridge's CPU over a lockstep run, divided by the
simulated seconds and the agents, shows how the cost grows with the session.
"""

from __future__ import annotations

from acres_bridge.processes import free_port
from bench._processes import Children
from bench._ros import BenchNode
from bench.core import Benchmark, Outcome, Row, Settings
from bench.full_set import SUBSYSTEMS
from bench.lockstep import STEPS_PER_SIM_S, SteppedBridge, timed_batches

__all__ = ["BENCHMARK", "run"]

COUNTS = (1, 4, 8)
ROWS = tuple(
    (f"bridge CPU per agent per simulated second, {n} agent{'s' if n > 1 else ''}", "ms") for n in COUNTS
)


def _measure(agents: int, steps: int, warmup: int) -> tuple[float, float]:
    """(bridge CPU s, wall s) over `steps` lockstep steps of a session of `agents` Polaris."""
    with Children() as started, BenchNode() as ros:
        port = free_port()
        extra = [arg for index in range(agents) for arg in ("--agent", f"polaris{index}:polaris")]
        simulator = started.simulator(port, lockstep=True, perception=True, extra=extra)
        process = started.bridge(
            port, subsystems=SUBSYSTEMS, vehicle="auto", agents="auto", sensors_on_demand=False
        )
        bridge = SteppedBridge(ros, process, simulator)
        bridge.wait_paused()
        timed_batches(bridge.step, warmup)  # every agent's nodes loaded, every publisher warm
        cpu = process.cpu_seconds()
        wall = timed_batches(bridge.step, steps)
        return process.cpu_seconds() - cpu, wall


def run(settings: Settings) -> Outcome:
    steps, warmup = settings.pick((1200, 360), (240, 240))
    sim_s = steps / STEPS_PER_SIM_S
    rows = []
    first = None
    for (name, unit), agents in zip(ROWS, COUNTS, strict=True):
        cpu, wall = _measure(agents, steps, warmup)
        whole = 1000.0 * cpu / sim_s
        per_agent = whole / agents
        first = first or per_agent
        rows.append(
            Row(
                name=name,
                value=per_agent,
                unit=unit,
                notes=f"{per_agent / first:.2f}x the 1-agent figure; whole bridge {whole:.0f} ms per sim s; "
                f"{steps / wall / STEPS_PER_SIM_S:.1f}x real time with the simulator's share",
            )
        )
    return Outcome(
        rows=tuple(rows),
        footnotes=(
            f"Agents rows: {sim_s:g} simulated seconds in lockstep (120 steps/call) per session; parked "
            "Polaris agents, so the simulator reuses its ray casts; CPU from /proc in clock ticks.",
        ),
    )


BENCHMARK = Benchmark(key="agents", rows=ROWS, run=run)
