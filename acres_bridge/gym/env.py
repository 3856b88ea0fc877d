"""Gymnasium environments over the bridge, each in a session of its own.

    import gymnasium as gym, acres_bridge.gym
    env = gym.make("acres/PolarisRoute-v0")     # or "acres/MaxxumField-v0"
    obs, info = env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.close()

An environment runs an isolated session (acres_bridge.session: the reference simulator in lockstep
and the bridge, in a DDS domain of its own) and drives the vehicle through the topics the real
vehicle has: a Drive (acres_bridge.gym.drive) turns the action into the vehicle's commands and the
latest messages into the observation, as the policy node on the vehicle does. One ``step`` runs
one control period of simulated time through SteppingClient; its observation is built from the
last message of each topic in that period. docs/gym.md documents the spaces and the reward.

``reset(seed=...)`` (or ``options={"start": (x, y, yaw_deg)}``) starts a new session with that
seed, about a second: the same seed and the same actions then give the same observations, byte
for byte. ``reset()`` without either is a /reset_simulation, milliseconds: a new episode of the
same session, the vehicle back at its start, simulated time and the sensor noise going on. Either
way one control period runs without a command (the first observation, as the policy node waits
for one), then the vehicle is engaged (Drive.engage) before the first step.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from acres_bridge.gym.drive import Command, Drive, MaxxumDrive, PolarisDrive
from acres_bridge.lockstep import SteppingClient
from acres_bridge.lockstep.batch import StepBatch
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.session import AgentConfig, IsolatedSession, SessionConfig, StartPose

__all__ = [
    "DEFAULT_START_UTC",
    "PHYSICS_HZ",
    "MaxxumFieldEnv",
    "PolarisRouteEnv",
    "RewardWeights",
    "RouteEnv",
]

PHYSICS_HZ: Final = 120
# The sun and the weather of every episode unless asked otherwise: the same seed, the same images.
DEFAULT_START_UTC: Final = datetime(2026, 6, 21, 12, 0, tzinfo=UTC)
_MATCH_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class RewardWeights:
    """The reward of a step: ``progress`` x the metres gained along the route, minus
    ``cross_track`` x |cross-track error| (m) x the period (s), minus ``effort`` x the change of
    the curvature command squared (1/m^2), minus ``dbw_fault`` once for a period in which a
    drive-by-wire report says timeout or an override (the Maxxum: its safety brake held it)."""

    progress: float = 1.0
    cross_track: float = 1.0
    effort: float = 10.0
    dbw_fault: float = 10.0


class RouteEnv(gym.Env[dict[str, npt.NDArray[Any]], npt.NDArray[np.float32]]):
    """Follow the built-in route with a vehicle, driven through its topics by a Drive; see the module."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012 (Gymnasium's form)

    def __init__(
        self,
        drive: Drive,
        *,
        control_period_s: float = 0.1,
        max_episode_s: float = 60.0,
        max_cross_track_m: float = 5.0,
        goal_m: float | None = None,
        start: tuple[float, float, float] | None = None,
        start_utc: datetime | None = DEFAULT_START_UTC,
        scenario: Path | str | None = None,
        render_mode: str | None = None,
        folder: Path | str | None = None,
        rewards: RewardWeights | None = None,
    ) -> None:
        steps = round(control_period_s * PHYSICS_HZ)
        if steps < 1 or abs(steps / PHYSICS_HZ - control_period_s) > 1e-9:
            raise ValueError(
                f"control_period_s must be a whole number of 1/{PHYSICS_HZ} s, found {control_period_s}"
            )
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', found {render_mode!r}")
        self.drive = drive
        self.observations = drive.observations
        self.period_steps = steps
        self.max_steps = math.ceil(max_episode_s * PHYSICS_HZ / steps)
        self.max_cross_track_m = max_cross_track_m
        self.render_mode = render_mode
        self.rewards = rewards or RewardWeights()
        self.observer = drive.observer
        self.goal_m = self.observer.route.length if goal_m is None else goal_m
        self.start = start
        self.start_utc = start_utc
        self.starts = _scenario_starts(Path(scenario), drive.vehicle) if scenario is not None else []
        self._folder = Path(folder) if folder is not None else None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self.action_space = drive.action_space
        self.observation_space = drive.observation_space
        self._topics = drive.observed_topics(camera=render_mode == "rgb_array")
        self._session: IsolatedSession | None = None
        self._client: SteppingClient | None = None
        self._publishers: dict[str, Any] = {}
        self._names: dict[str, str] = {}  # the client's topic -> the msg_profiles name
        self._latest: dict[str, Any] = {}
        self._steps = 0
        self._curvature = 0.0

    # ---- the session ---------------------------------------------------------------------------

    def _start_session(self, seed: int | None, start: tuple[float, float, float] | None) -> None:
        """A new session: `seed` (None: the scenario's or a random one) and the start pose of the
        options, else one of the scenario file's episodes (drawn with the environment's
        generator), else the environment's."""
        self._close_session()
        if self._folder is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="acres_gym_")
        folder = self._folder or Path(self._scratch.name if self._scratch else ".")
        start_utc = self.start_utc
        pose = None
        if start is None and self.starts:
            drawn = self.starts[int(self.np_random.integers(len(self.starts)))]
            pose, start_utc = drawn.start, drawn.start_utc
            seed = drawn.seed if seed is None else seed
        else:
            start = start or self.start
            pose = None if start is None else StartPose(x=start[0], y=start[1], yaw_deg=start[2])
        if seed is None:
            seed = int(self.np_random.integers(1 << 31))
        vehicle = self.drive.vehicle
        config = SessionConfig(
            agents=(AgentConfig(name=vehicle, vehicle=vehicle, start=pose),),
            seed=seed,
            start_utc=start_utc,
            perception=any(
                topic in self._topics for topic in (self.drive.layout.lidar, self.drive.layout.camera)
            ),
            episode_log=None,
        )
        self._session = IsolatedSession(config, folder)
        self._session.start()
        table = load_profiles()
        self._publishers = {
            name: table.topic(vehicle, name).create_publisher(self._session.node)
            for name in self.drive.command_topics()
        }
        self._names = {resolve_name(table.topic(vehicle, name).ros_name, ""): name for name in self._topics}
        self._client = self._session.stepping_client(self._topics, chunk_steps=self.period_steps)
        deadline = time.monotonic() + _MATCH_TIMEOUT_S  # a sample sent before the bridge matched is lost
        while any(p.get_subscription_count() == 0 for p in self._publishers.values()):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the bridge did not subscribe to the commands within {_MATCH_TIMEOUT_S} s"
                )
            time.sleep(0.02)

    def _close_session(self) -> None:
        if self._session is not None:
            self._session.close()
        self._session = self._client = None
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def _publish(self, commands: list[Command]) -> None:
        """Publish commands, as a stack does: sent before the step request, they apply from the
        request's first step (docs/simulation_control.md), so the same actions drive the same way."""
        for topic, message in commands:
            self._publishers[topic].publish(message)

    def _run(self, steps: int) -> StepBatch:
        assert self._client is not None
        batch = self._client.step(steps)
        for step in batch.steps:
            for topic, messages in step.messages.items():
                if messages:
                    self._latest[self._names[topic]] = messages[-1]
        return batch

    def _engage(self) -> None:
        """Engage the vehicle (Drive.engage), a control period at a time, until its reports show it."""
        tries = math.ceil(self.drive.engage_s * PHYSICS_HZ / self.period_steps)
        for _ in range(tries + 1):
            commands = self.drive.engage(self._latest)
            if commands is None:
                return
            self._publish(commands)
            self._run(self.period_steps)
        raise RuntimeError(f"the {self.drive.vehicle} did not engage within {self.drive.engage_s:g} s")

    # ---- Gymnasium -----------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
        super().reset(seed=seed)
        start = _start_option(options)
        if self._session is None or seed is not None or start is not None:
            self._start_session(seed, start)
        else:
            assert self._client is not None
            self._client.reset()
        self._latest.clear()
        self.drive.reset()
        self._run(self.period_steps)  # the first observation, before any command
        self._engage()
        self._steps = 0
        self._curvature = 0.0
        observation = self.drive.observe(self._latest)
        return observation, self._info()

    def step(
        self, action: npt.ArrayLike
    ) -> tuple[dict[str, npt.NDArray[Any]], float, bool, bool, dict[str, Any]]:
        if self._session is None:
            raise RuntimeError("call reset() before step()")
        values = self.drive.check_action(action)
        before = self.observer.travelled_m
        self._publish(self.drive.commands(values))
        batch = self._run(self.period_steps)
        observation = self.drive.observe(self._latest)
        cross_track = abs(float(self.drive.state[0]))
        faults = self.drive.faults({self._names[t]: batch.messages(t) for t in self._names})
        curvature = self.drive.steering(values)
        weights = self.rewards
        reward = (
            weights.progress * (self.observer.travelled_m - before)
            - weights.cross_track * cross_track * self.period_steps / PHYSICS_HZ
            - weights.effort * (curvature - self._curvature) ** 2
            - (weights.dbw_fault if faults else 0.0)
        )
        self._curvature = curvature
        self._steps += 1
        terminated = cross_track > self.max_cross_track_m or self.observer.travelled_m >= self.goal_m
        truncated = not terminated and self._steps >= self.max_steps
        info = self._info()
        info["faults"] = faults
        return observation, float(reward), terminated, truncated, info

    def render(self) -> npt.NDArray[np.uint8] | None:  # type: ignore[override]
        """The camera's last image (rgb_array)."""
        if self.render_mode != "rgb_array":
            return None
        return self.drive.image

    def close(self) -> None:
        self._close_session()
        super().close()

    def _info(self) -> dict[str, Any]:
        """The same for the same seed and actions (the session's domain is ``domain_id``)."""
        return {
            "progress_m": self.observer.travelled_m,
            "sim_time_s": self._steps * self.period_steps / PHYSICS_HZ,
        }

    @property
    def domain_id(self) -> int | None:
        """The DDS domain of the running session (None before reset)."""
        return None if self._session is None else self._session.domain_id


class PolarisRouteEnv(RouteEnv):
    """Follow the built-in route with the Polaris: action [speed m/s, curvature 1/m] as
    /vehicle/ulc/cmd and /vehicle/steering/cmd; observations some of state, lidar, camera."""

    def __init__(
        self, *, observations: Sequence[str] | None = None, max_speed_mps: float = 5.0, **options: Any
    ) -> None:
        super().__init__(PolarisDrive(observations, max_speed_mps=max_speed_mps), **options)


class MaxxumFieldEnv(RouteEnv):
    """Work the field's rows with the Maxxum, the implement down and the PTO on: action [speed m/s,
    curvature 1/m, hitch lever 0..1] as cmd_vel and hitch/lever_cmd; observations some of state,
    implement, lidar, camera. It starts at the route's start unless told otherwise."""

    def __init__(
        self,
        *,
        observations: Sequence[str] | None = None,
        max_speed_mps: float = 3.0,
        pto: bool = True,
        **options: Any,
    ) -> None:
        drive = MaxxumDrive(observations, max_speed_mps=max_speed_mps, pto=pto)
        if options.get("start") is None:
            x, y, yaw = drive.observer.route.pose_at(0.0)
            options["start"] = (x, y, math.degrees(yaw))
        super().__init__(drive, **options)


@dataclass(frozen=True)
class _Start:
    """Where and when an episode of a scenario file starts, with its seed."""

    start: StartPose | None
    start_utc: datetime | None
    seed: int


def _scenario_starts(path: Path, vehicle: str) -> list[_Start]:
    """The start pose, start_utc and seed of each episode of a scenario file's sweep, for a vehicle
    of `vehicle`; ValueError for a file of another vehicle (its load errors name file and line)."""
    from acres_bridge.scenario.episode import session_config  # noqa: PLC0415 (the scenario layer)
    from acres_bridge.scenario.loader import load_scenario  # noqa: PLC0415
    from acres_bridge.scenario.sweep import expand  # noqa: PLC0415

    scenario = load_scenario(path)
    if scenario.session.first_vehicle != vehicle:
        raise ValueError(f"{path}: a scenario of a {scenario.session.first_vehicle}, not of a {vehicle}")
    starts = []
    for episode in expand(scenario):
        config = session_config(episode.scenario)
        starts.append(_Start(config.agents[0].start, config.start_utc, config.seed))
    return starts


def _start_option(options: dict[str, Any] | None) -> tuple[float, float, float] | None:
    if not options or options.get("start") is None:
        return None
    start = options["start"]
    try:
        x, y, yaw_deg = (float(v) for v in start)
    except (TypeError, ValueError):
        raise ValueError(f"options['start'] must be (x, y, yaw_deg) on the tile, found {start!r}") from None
    if not all(math.isfinite(v) for v in (x, y, yaw_deg)):
        raise ValueError(f"options['start'] must be finite, found {start!r}")
    return (x, y, yaw_deg)
