"""The Gymnasium environments: steps per second (one step = 0.1 simulated s), and what the ROS
path costs a step against the simulator alone.

acres/PolarisRoute-v0 with the INS state only, with the LiDAR, and with the camera; a vector of 2
of them (gymnasium.make_vec, async: each in a process and a session of its own) with the state
only, counting the steps of both; and acres/MaxxumField-v0 with its default observation. The
actions hold a steady speed on the route's first run. Each figure follows a reset and 10 warm-up
steps. Last, a simulator of the same build, without perception, stepped 12 steps a request by a
bare protocol client (bench/_raw_client.py), right after the state-only environment in the same
run: the difference of the two per-step times is what the bridge, DDS and the environment's
Python add to a step.
"""

from __future__ import annotations

import time
from typing import Any, Final

import numpy as np

from bench.core import Benchmark, Outcome, Row, Settings

__all__ = ["BENCHMARK", "run"]

TARGET: Final = 500.0  # steps/s of the INS-only single environment: 50x real time
ROWS = (
    ("gym steps per second, state", "steps/s"),
    ("gym steps per second, state + LiDAR", "steps/s"),
    ("gym steps per second, state + camera", "steps/s"),
    ("gym steps per second, state, vector of 2", "steps/s"),
    ("gym steps per second, Maxxum state + implement", "steps/s"),
    ("simulator alone, 12 steps/request (a gym step's physics)", "requests/s"),
)
_WARM_UP = 10


def _rate(env: Any, steps: int, action: Any) -> float:
    env.reset(seed=1)
    for _ in range(_WARM_UP):
        env.step(action)
    started = time.monotonic()
    for _ in range(steps):
        env.step(action)
    return steps / (time.monotonic() - started)


def run(settings: Settings) -> Outcome:
    import gymnasium as gym  # noqa: PLC0415 (only this benchmark needs it)

    from acres_bridge.gym import MAXXUM_FIELD, POLARIS_ROUTE  # noqa: PLC0415

    steps = settings.pick(300, 20)
    action = np.array([2.0, 0.0], dtype=np.float32)
    rows = []
    for (name, unit), observations in zip(
        ROWS[:3], (("state",), ("state", "lidar"), ("state", "camera")), strict=True
    ):
        env = gym.make(POLARIS_ROUTE, observations=observations)
        try:
            rate = _rate(env, steps, action)
        finally:
            env.close()
        note = f"{rate / 10:.1f}x real time"
        if observations == ("state",):
            note += f"; target {TARGET:g}"
        rows.append(Row(name=name, value=rate, unit=unit, notes=note))
    envs = gym.make_vec(
        POLARIS_ROUTE, num_envs=2, vectorization_mode="async", vector_kwargs={"context": "spawn"}
    )
    try:
        rate = 2 * _rate(envs, steps, np.stack([action, action]))
    finally:
        envs.close()
    name, unit = ROWS[3]
    rows.append(
        Row(
            name=name,
            value=rate,
            unit=unit,
            notes=f"both environments' steps; {rows[0].value and rate / rows[0].value:.2f}x one",
        )
    )
    env = gym.make(MAXXUM_FIELD)
    try:
        rate = _rate(env, steps, np.array([1.5, 0.0, 0.6], dtype=np.float32))
    finally:
        env.close()
    name, unit = ROWS[4]
    rows.append(Row(name=name, value=rate, unit=unit, notes=f"{rate / 10:.1f}x real time"))
    alone = _simulator_alone(steps)
    name, unit = ROWS[5]
    single = rows[0].value or 1.0
    ros_ms = 1000.0 / single - 1000.0 / alone
    rows.append(
        Row(
            name=name,
            value=alone,
            unit=unit,
            notes=f"{1000.0 / alone:.2f} ms a request; the ROS path adds {ros_ms:.2f} ms a gym step "
            f"({alone / single:.1f}x)",
        )
    )
    return Outcome(rows=tuple(rows))


def _simulator_alone(requests: int) -> float:
    """Requests of 12 steps a second of a simulator without perception, stepped by a bare client."""
    from acres_bridge.processes import free_port  # noqa: PLC0415
    from bench._processes import Children  # noqa: PLC0415
    from bench._raw_client import RawClient  # noqa: PLC0415

    with Children() as started:
        port = free_port()
        started.simulator(port, lockstep=True, name="acres_sim (alone)")
        with RawClient(port=port) as raw:
            for _ in range(_WARM_UP):
                raw.step(12)
            began = time.monotonic()
            for _ in range(requests):
                raw.step(12)
            return requests / (time.monotonic() - began)


BENCHMARK = Benchmark(key="gym", rows=ROWS, run=run)
