"""Lockstep with the full Polaris set: how fast the bridge steps a Polaris with all its sensors.

Parked: the bridge runs clock_tf, ins, perception and episode (with the ingest; the drive-by-wire
and reset subsystems off: the set is the sensors'); the simulator makes a LiDAR cloud (1800 x 32)
and a camera image (896 x 512 bgr8) at 10 Hz besides the clock and the INS. The Polaris stands
parked, so the simulator reuses its ray casts and the bridge is the bound.

Driving: the same with the drive-by-wire's reports (50 Hz) as well, and the simulator's route
follower driving the Polaris (acres_sim --autopilot), so every cloud and image is cast anew: the
whole session's pace, simulator included. Every figure is taken while /step_simulation runs 120
steps per call, and a call answers only once every message of its steps, clouds and images
included, is published.
"""

from __future__ import annotations

from dataclasses import dataclass

from acres_bridge.processes import free_port
from acres_sim.sensors.camera import POLARIS_CAMERA
from acres_sim.sensors.lidar import POLARIS_LIDAR
from bench._processes import Children
from bench._ros import BenchNode
from bench._stats import median, spread
from bench.core import Benchmark, Outcome, Row, Settings
from bench.lockstep import BATCH, STEPS_PER_SIM_S, SteppedBridge, timed_batches

__all__ = ["BENCHMARK", "run"]

SUBSYSTEMS = ("ingest", "clock_tf", "ins", "perception", "episode")
DRIVING_SUBSYSTEMS = (*SUBSYSTEMS, "dbw")
THROUGHPUT = "lockstep, full Polaris set, 120 steps/call"
BRIDGE_BOUND = "bridge-bound rate, full Polaris set, one core"
BRIDGE_CPU = "bridge CPU per simulated second, full Polaris set"
SIM_CPU = "simulator CPU per simulated second, full Polaris set"
DRIVING = "lockstep, full Polaris set driving, 120 steps/call"
DRIVING_BRIDGE_CPU = "bridge CPU per simulated second, driving"
DRIVING_SIM_CPU = "simulator CPU per simulated second, driving"
UNREAD = "lockstep, full Polaris set driving, nobody reading its sensors"
UNREAD_SIM_CPU = "simulator CPU per simulated second, driving, nobody reading its sensors"
RAYS_SAVED = "rays not cast per simulated second, nobody reading (sensors on demand)"
ROWS = (
    (THROUGHPUT, "steps/s"),
    (BRIDGE_BOUND, "steps/s"),
    (BRIDGE_CPU, "ms/sim s"),
    (SIM_CPU, "ms/sim s"),
    (DRIVING, "steps/s"),
    (DRIVING_BRIDGE_CPU, "ms/sim s"),
    (DRIVING_SIM_CPU, "ms/sim s"),
    (UNREAD, "steps/s"),
    (UNREAD_SIM_CPU, "ms/sim s"),
    (RAYS_SAVED, "rays/sim s"),
)
DRIVING_AIM = 10.0  # times real time


@dataclass(frozen=True, kw_only=True)
class _Repetition:
    wall: float
    bridge_cpu: float
    sim_cpu: float


def _measure(
    settings: Settings, subsystems: tuple[str, ...], extra: tuple[str, ...] = (), *, on_demand: bool = False
) -> tuple[int, list[_Repetition]]:
    """(steps per repetition, the repetitions) of one session stepped in calls of BATCH. Nothing
    reads the bridge's topics; without `on_demand` the bridge has the simulator make every frame
    anyway (sensors_on_demand false), as a session whose stack reads them all."""
    repetitions, steps, warmup = settings.pick((5, 1200, 240), (1, 360, 120))
    with Children() as started, BenchNode() as ros:
        port = free_port()
        simulator = started.simulator(port, lockstep=True, perception=True, extra=extra)
        process = started.bridge(port, subsystems=subsystems, sensors_on_demand=on_demand)
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
    return steps, reps


def _per_sim_s_ms(steps: int, reps: list[_Repetition]) -> tuple[float, float]:
    """(bridge, simulator) CPU ms per simulated second over the repetitions."""
    sim_s = steps / STEPS_PER_SIM_S * len(reps)
    return (
        1000.0 * sum(rep.bridge_cpu for rep in reps) / sim_s,
        1000.0 * sum(rep.sim_cpu for rep in reps) / sim_s,
    )


def _provenance(steps: int, reps: list[_Repetition]) -> str:
    rates = [steps / rep.wall for rep in reps]
    sim_s = steps / STEPS_PER_SIM_S
    return f"median of {len(reps)} x {sim_s:g} sim s, range {spread(rates)}" if len(reps) > 1 else "one run"


def _driving_rows(settings: Settings) -> tuple[Row, ...]:
    steps, reps = _measure(settings, DRIVING_SUBSYSTEMS, ("--autopilot",))
    rate = median([steps / rep.wall for rep in reps])
    bridge_ms, sim_ms = _per_sim_s_ms(steps, reps)
    times = rate / STEPS_PER_SIM_S
    verdict = "met" if times >= DRIVING_AIM else "missed"
    return (
        Row(
            name=DRIVING,
            value=rate,
            unit="steps/s",
            notes=f"{times:.1f}x real time, simulator included (aim {DRIVING_AIM:g}x: {verdict}); "
            f"{BATCH} steps/call; {_provenance(steps, reps)}",
        ),
        Row(
            name=DRIVING_BRIDGE_CPU,
            value=bridge_ms,
            unit="ms/sim s",
            notes="as the parked row, and 50 drive-by-wire report lines (7 topics each) per simulated second",
        ),
        Row(
            name=DRIVING_SIM_CPU,
            value=sim_ms,
            unit="ms/sim s",
            notes="the route follower drives: 10 clouds and 10 images cast anew per simulated second, "
            "on every core",
        ),
    )


def _unread_rows(settings: Settings) -> tuple[Row, ...]:
    steps, reps = _measure(settings, DRIVING_SUBSYSTEMS, ("--autopilot",), on_demand=True)
    rate = median([steps / rep.wall for rep in reps])
    _, sim_ms = _per_sim_s_ms(steps, reps)
    rays = round(POLARIS_LIDAR.rate_hz) * POLARIS_LIDAR.points + round(POLARIS_CAMERA.rate_hz) * (
        POLARIS_CAMERA.width * POLARIS_CAMERA.height
    )
    return (
        Row(
            name=UNREAD,
            value=rate,
            unit="steps/s",
            notes=f"{rate / STEPS_PER_SIM_S:.1f}x real time: the driving row with the bridge's "
            f"sensors_on_demand (its default); {_provenance(steps, reps)}",
        ),
        Row(
            name=UNREAD_SIM_CPU,
            value=sim_ms,
            unit="ms/sim s",
            notes="the driving row's simulator when nobody subscribes to the cloud or the image: "
            "SENSOR_DEMAND wants no frame, no ray is cast, the LiDAR's noise is still drawn",
        ),
        Row(
            name=RAYS_SAVED,
            value=float(rays),
            unit="rays/sim s",
            notes="10 clouds of 1800 x 32 beams and 10 images of 896 x 512 pixels per simulated second",
        ),
    )


def run(settings: Settings) -> Outcome:
    steps, reps = _measure(settings, SUBSYSTEMS)
    rates = [steps / rep.wall for rep in reps]
    bridge_ms, sim_ms = _per_sim_s_ms(steps, reps)
    bound = 1000.0 * STEPS_PER_SIM_S / bridge_ms
    provenance = _provenance(steps, reps)
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
            *_driving_rows(settings),
            *_unread_rows(settings),
        )
    )


BENCHMARK = Benchmark(key="full_set", rows=ROWS, run=run)
