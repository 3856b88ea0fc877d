"""PolarisRoute: a Gymnasium environment over the bridge, in a session of its own.

    import gymnasium as gym, acres_bridge.gym
    env = gym.make("acres/PolarisRoute-v0")
    obs, info = env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.close()

The environment runs an isolated session (acres_bridge.session: the reference simulator in
lockstep and the bridge, in a DDS domain of its own) and drives the Polaris through the topics the
real vehicle has: the action is sent as drive-by-wire commands (/vehicle/ulc/cmd, a speed;
/vehicle/steering/cmd, a curvature), one ``step`` runs one control period of simulated time through
SteppingClient, and the observation is built (acres_bridge.gym.observation) from the messages of
exactly that period. docs/gym.md documents the spaces and the reward.

``reset(seed=...)`` (or ``options={"start": (x, y, yaw_deg)}``) starts a new session with that
seed, about a second: the same seed and the same actions then give the same observations, byte
for byte. ``reset()`` without either is a /reset_simulation, milliseconds: a new
episode of the same session, the vehicle back at its start, simulated time and the sensor noise
going on. Either way the drive-by-wire is enabled and in gear L before the first step.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from ds_dbw_msgs.msg import GearCmd, SteeringCmd, UlcCmd
from gymnasium import spaces
from std_msgs.msg import Empty

from acres_bridge.gym.observation import (
    CAMERA_SHAPE,
    LIDAR_SHAPE,
    STATE_FIELDS,
    RouteObserver,
    camera_image,
    lidar_ranges,
)
from acres_bridge.lockstep import SteppingClient
from acres_bridge.lockstep.batch import StepBatch
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.session import AgentConfig, IsolatedSession, SessionConfig, StartPose

__all__ = ["ENABLE_STEPS", "PHYSICS_HZ", "PolarisRouteEnv", "RewardWeights"]

PHYSICS_HZ: Final = 120
ENABLE_STEPS: Final = 240  # the enable and the gear must show within 2 simulated s
GEAR_L: Final = 5
MAX_CURVATURE: Final = 0.2  # 1/m: the steering's curvature range (ds_dbw_msgs)
ODOM: Final = "/vehicle/odom"
REPORTS: Final = ("/vehicle/steering/report", "/vehicle/ulc/report")
ENABLED: Final = "/vehicle/dbw_enabled"
GEAR_REPORT: Final = "/vehicle/gear/report"
LIDAR: Final = "/lidar/points"
CAMERA: Final = "/camera/image_raw"
OBSERVATIONS: Final = ("state", "lidar", "camera")
_MATCH_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class RewardWeights:
    """The reward of a step: ``progress`` x the metres gained along the route, minus
    ``cross_track`` x |cross-track error| (m) x the period (s), minus ``effort`` x the change of
    the curvature command squared (1/m^2), minus ``dbw_fault`` once for a period in which a
    drive-by-wire report says timeout or an override."""

    progress: float = 1.0
    cross_track: float = 1.0
    effort: float = 10.0
    dbw_fault: float = 10.0


class PolarisRouteEnv(gym.Env[dict[str, npt.NDArray[Any]], npt.NDArray[np.float32]]):
    """Follow the built-in route with the Polaris; see the module."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012 (Gymnasium's form)

    def __init__(
        self,
        *,
        observations: Sequence[str] = ("state",),
        control_period_s: float = 0.1,
        max_episode_s: float = 60.0,
        max_speed_mps: float = 5.0,
        max_cross_track_m: float = 5.0,
        goal_m: float | None = None,
        render_mode: str | None = None,
        folder: Path | str | None = None,
        rewards: RewardWeights | None = None,
    ) -> None:
        unknown = [o for o in observations if o not in OBSERVATIONS]
        if unknown or not observations:
            raise ValueError(f"observations must be some of {OBSERVATIONS}, found {list(observations)}")
        steps = round(control_period_s * PHYSICS_HZ)
        if steps < 1 or abs(steps / PHYSICS_HZ - control_period_s) > 1e-9:
            raise ValueError(
                f"control_period_s must be a whole number of 1/{PHYSICS_HZ} s, found {control_period_s}"
            )
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', found {render_mode!r}")
        self.observations = tuple(observations)
        self.period_steps = steps
        self.max_steps = math.ceil(max_episode_s * PHYSICS_HZ / steps)
        self.max_cross_track_m = max_cross_track_m
        self.render_mode = render_mode
        self.rewards = rewards or RewardWeights()
        self.observer = RouteObserver()
        self.goal_m = self.observer.route.length if goal_m is None else goal_m
        self._folder = Path(folder) if folder is not None else None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self.action_space = spaces.Box(
            low=np.array([0.0, -MAX_CURVATURE], dtype=np.float32),
            high=np.array([max_speed_mps, MAX_CURVATURE], dtype=np.float32),
            dtype=np.float32,
        )
        shapes: dict[str, spaces.Space[Any]] = {
            "state": spaces.Box(-np.inf, np.inf, shape=(len(STATE_FIELDS),), dtype=np.float32),
            "lidar": spaces.Box(0.0, np.inf, shape=LIDAR_SHAPE, dtype=np.float32),
            "camera": spaces.Box(0, 255, shape=CAMERA_SHAPE, dtype=np.uint8),
        }
        self.observation_space = spaces.Dict({name: shapes[name] for name in self.observations})  # type: ignore[assignment]
        self._session: IsolatedSession | None = None
        self._client: SteppingClient | None = None
        self._publishers: dict[str, Any] = {}
        self._latest: dict[str, Any] = {}
        self._steps = 0
        self._curvature = 0.0
        self._image: npt.NDArray[np.uint8] | None = None
        self._last_state = np.zeros(len(STATE_FIELDS), np.float32)

    # ---- the session ---------------------------------------------------------------------------

    def _topics(self) -> list[str]:
        topics = [ODOM, *REPORTS, ENABLED, GEAR_REPORT]
        if "lidar" in self.observations:
            topics.append(LIDAR)
        if "camera" in self.observations or self.render_mode == "rgb_array":
            topics.append(CAMERA)
        return topics

    def _start_session(self, seed: int, start: tuple[float, float, float] | None) -> None:
        self._close_session()
        if self._folder is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="acres_gym_")
        folder = self._folder or Path(self._scratch.name if self._scratch else ".")
        pose = None if start is None else StartPose(x=start[0], y=start[1], yaw_deg=start[2])
        perception = (
            any(name in self.observations for name in ("lidar", "camera")) or self.render_mode is not None
        )
        config = SessionConfig(
            agents=(AgentConfig(name="polaris", start=pose),),
            seed=seed,
            perception=perception,
            episode_log=None,
        )
        self._session = IsolatedSession(config, folder)
        self._session.start()
        node = self._session.node
        table = load_profiles()
        self._publishers = {
            name: table.topic("polaris", name).create_publisher(node)
            for name in ("/vehicle/enable", "/vehicle/gear/cmd", "/vehicle/ulc/cmd", "/vehicle/steering/cmd")
        }
        self._client = self._session.stepping_client(self._topics(), chunk_steps=self.period_steps)
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

    def _publish(self, topic: str, message: Any) -> None:
        """Publish a command, as a stack does: sent before the step request, it applies from the
        request's first step (docs/simulation_control.md), so the same actions drive the same way."""
        self._publishers[topic].publish(message)

    def _run(self, steps: int) -> StepBatch:
        assert self._client is not None
        batch = self._client.step(steps)
        for step in batch.steps:
            for topic, messages in step.messages.items():
                if messages:
                    self._latest[topic] = messages[-1]
        return batch

    def _engage(self) -> None:
        """Enable the drive-by-wire and put it in gear L, stepping until the reports show both."""
        gear = GearCmd()
        gear.cmd.value = GEAR_L
        for _ in range(ENABLE_STEPS // self.period_steps):
            enabled = self._latest.get(ENABLED)
            report = self._latest.get(GEAR_REPORT)
            if enabled is None or not enabled.data:
                self._publish("/vehicle/enable", Empty())
            elif report is not None and report.gear.value == GEAR_L:
                return
            else:
                self._publish("/vehicle/gear/cmd", gear)  # taken once the system is enabled
            self._command(0.0, 0.0)
            self._run(self.period_steps)
        raise RuntimeError(f"the drive-by-wire did not engage gear L within {ENABLE_STEPS / PHYSICS_HZ:g} s")

    def _command(self, speed: float, curvature: float) -> None:
        self._publish("/vehicle/ulc/cmd", UlcCmd(cmd=speed, cmd_type=UlcCmd.CMD_VELOCITY, enable=True))
        steering = SteeringCmd(cmd=curvature, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True)
        self._publish("/vehicle/steering/cmd", steering)

    # ---- Gymnasium -----------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
        super().reset(seed=seed)
        start = _start_option(options)
        if self._session is None or seed is not None or start is not None:
            session_seed = seed if seed is not None else int(self.np_random.integers(1 << 31))
            self._start_session(session_seed, start)
        else:
            assert self._client is not None
            self._client.reset()
            self._run(1)  # the new episode has begun before any command is sent into it
        self._latest.clear()
        self.observer.reset()
        self._engage()
        self._steps = 0
        self._curvature = 0.0
        observation = self._observe()
        return observation, self._info()

    def step(
        self, action: npt.ArrayLike
    ) -> tuple[dict[str, npt.NDArray[Any]], float, bool, bool, dict[str, Any]]:
        if self._session is None:
            raise RuntimeError("call reset() before step()")
        speed, curvature = self._check_action(action)
        before = self.observer.travelled_m
        self._command(speed, curvature)
        batch = self._run(self.period_steps)
        observation = self._observe()
        state = self._last_state
        faults = sum(
            1
            for topic in REPORTS
            for report in batch.messages(topic)
            if report.timeout or report.override_active or report.override_latched
        )
        period_s = self.period_steps / PHYSICS_HZ
        weights = self.rewards
        reward = (
            weights.progress * (self.observer.travelled_m - before)
            - weights.cross_track * abs(float(state[0])) * period_s
            - weights.effort * (curvature - self._curvature) ** 2
            - (weights.dbw_fault if faults else 0.0)
        )
        self._curvature = curvature
        self._steps += 1
        terminated = abs(float(state[0])) > self.max_cross_track_m or self.observer.travelled_m >= self.goal_m
        truncated = not terminated and self._steps >= self.max_steps
        info = self._info()
        info["dbw_faults"] = faults
        return observation, float(reward), terminated, truncated, info

    def render(self) -> npt.NDArray[np.uint8] | None:
        """The camera's last image (rgb_array)."""
        if self.render_mode != "rgb_array":
            return None
        return self._image

    def close(self) -> None:
        self._close_session()
        super().close()

    # ---- observations --------------------------------------------------------------------------

    def _check_action(self, action: npt.ArrayLike) -> tuple[float, float]:
        values = np.asarray(action, dtype=np.float64)
        if values.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, found {values.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"action must be finite, found {values.tolist()}")
        box = self.action_space
        assert isinstance(box, spaces.Box)
        low, high = box.low, box.high
        if np.any(values < low) or np.any(values > high):
            raise ValueError(
                f"action {values.tolist()} is outside the space: speed {low[0]:g}..{high[0]:g} m/s, "
                f"curvature {low[1]:g}..{high[1]:g} 1/m"
            )
        return float(values[0]), float(values[1])

    def _observe(self) -> dict[str, npt.NDArray[Any]]:
        """The observation of the period just run (its last message of each topic)."""
        observation: dict[str, npt.NDArray[Any]] = {}
        odom = self._latest.get(ODOM)
        state = np.zeros(len(STATE_FIELDS), np.float32) if odom is None else self.observer.state(odom)
        self._last_state = state
        if "state" in self.observations:
            observation["state"] = state
        if "lidar" in self.observations:
            cloud = self._latest.get(LIDAR)
            observation["lidar"] = np.zeros(LIDAR_SHAPE, np.float32) if cloud is None else lidar_ranges(cloud)
        image = self._latest.get(CAMERA)
        if image is not None:
            self._image = camera_image(image)
        if "camera" in self.observations:
            observation["camera"] = (
                self._image if self._image is not None else np.zeros(CAMERA_SHAPE, np.uint8)
            )
        return observation

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
