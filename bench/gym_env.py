"""The Gymnasium environment: steps per second of acres/PolarisRoute-v0 (one step = 0.1 simulated s).

One environment with the INS state only, with the LiDAR, and with the camera; and a vector of 2
environments (gymnasium.make_vec, async: each in a process and a session of its own) with the
state only, counting the steps of both. The actions hold a steady 2 m/s on the route's first run.
Each figure follows a reset and 10 warm-up steps.
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

    from acres_bridge.gym import POLARIS_ROUTE  # noqa: PLC0415

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
    return Outcome(rows=tuple(rows))


BENCHMARK = Benchmark(key="gym", rows=ROWS, run=run)
