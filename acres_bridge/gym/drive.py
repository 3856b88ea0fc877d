"""How a policy drives a vehicle through its own topics: pure, no node, no simulator.

A ``Drive`` holds what the Gymnasium environment and the policy node on the vehicle share, so a
policy sees the same numbers and sends the same commands in both:

- the action and observation spaces;
- the topics it reads (msg_profiles names of the vehicle's table) and the observation it builds
  from the latest message of each (acres_bridge.gym.observation);
- the commands an action becomes, as (topic, message) pairs of the vehicle's command topics;
- the engagement before the first action (the Polaris: enable the drive-by-wire, gear L; the
  Maxxum: lower the implement, the PTO as asked), a list of commands until the reports show it;
- the faults a period's messages show (a drive-by-wire timeout or override; the Maxxum's safety
  brake holding the vehicle), which the reward penalises.

Topic names are the msg_profiles names: absolute for the Polaris (/vehicle/odom), relative to the
bridge's namespace for the Maxxum (odom).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt
from ds_dbw_msgs.msg import GearCmd, SteeringCmd, UlcCmd
from geometry_msgs.msg import Twist
from gymnasium import spaces
from std_msgs.msg import Bool, Empty, Float32

from acres_bridge.convert.maxxum import MIN_YAW_RATE_SPEED_MPS
from acres_bridge.geo.route import Route
from acres_bridge.gym.observation import (
    CAMERA_SHAPE,
    LIDAR_SHAPE,
    STATE_FIELDS,
    RouteObserver,
    camera_image,
    lidar_ranges,
)

__all__ = [
    "IMPLEMENT_FIELDS",
    "OBSERVATIONS",
    "Command",
    "Drive",
    "MaxxumDrive",
    "PolarisDrive",
    "drive_for",
]

Command = tuple[str, Any]  # (msg_profiles topic name, message)
OBSERVATIONS: Final = ("state", "lidar", "camera", "implement")
IMPLEMENT_FIELDS: Final = ("implement_depth_m", "hitch_lift_deg", "draft_kn", "pto_rpm")
GEAR_L: Final = 5
POLARIS_MAX_CURVATURE: Final = 0.2  # 1/m: the steering's curvature range (ds_dbw_msgs)
MAXXUM_MAX_CURVATURE: Final = 0.2  # 1/m: the route's U-turns need 1/6
_NO_IMAGE: Final = np.zeros(CAMERA_SHAPE, np.uint8)


@dataclass(frozen=True)
class _Layout:
    """A vehicle's topic names (msg_profiles) for what a Drive reads."""

    odom: str
    lidar: str
    camera: str


class Drive:
    """The shared part of a vehicle's drive: the observation from the latest messages, and the
    checks of an action. Subclasses give the vehicle's topics, action, commands and engagement."""

    vehicle: ClassVar[str]
    layout: ClassVar[_Layout]
    observation_names: ClassVar[tuple[str, ...]] = ("state", "lidar", "camera")
    default_observations: ClassVar[tuple[str, ...]] = ("state",)
    engage_s: ClassVar[float] = 2.0  # the engagement must show within this much simulated time

    def __init__(self, observations: Sequence[str] | None, route: Route | None = None) -> None:
        observations = self.default_observations if observations is None else observations
        unknown = [o for o in observations if o not in self.observation_names]
        if unknown or not observations:
            raise ValueError(
                f"observations of a {self.vehicle} must be some of {self.observation_names}, "
                f"found {list(observations)}"
            )
        self.observations = tuple(observations)
        self.observer = RouteObserver(route)
        self.image: npt.NDArray[np.uint8] | None = None  # the camera's last image, for render()
        self.state = np.zeros(len(STATE_FIELDS), np.float32)  # the last state, whatever was asked
        boxes: dict[str, spaces.Space[Any]] = {
            "state": spaces.Box(-np.inf, np.inf, shape=(len(STATE_FIELDS),), dtype=np.float32),
            "lidar": spaces.Box(0.0, np.inf, shape=LIDAR_SHAPE, dtype=np.float32),
            "camera": spaces.Box(0, 255, shape=CAMERA_SHAPE, dtype=np.uint8),
            "implement": spaces.Box(-np.inf, np.inf, shape=(len(IMPLEMENT_FIELDS),), dtype=np.float32),
        }
        self.observation_space = spaces.Dict({name: boxes[name] for name in self.observations})

    # ---- topics --------------------------------------------------------------------------------

    def observed_topics(self, *, camera: bool = False) -> tuple[str, ...]:
        """The topics to read: the odometry, the engagement's reports, the sensors asked for
        (the camera also with `camera`, for render())."""
        topics = [self.layout.odom, *self.report_topics()]
        if "lidar" in self.observations:
            topics.append(self.layout.lidar)
        if "camera" in self.observations or camera:
            topics.append(self.layout.camera)
        return tuple(dict.fromkeys(topics))

    def report_topics(self) -> tuple[str, ...]:
        raise NotImplementedError

    def command_topics(self) -> tuple[str, ...]:
        raise NotImplementedError

    # ---- actions -------------------------------------------------------------------------------

    action_space: spaces.Box
    action_names: ClassVar[tuple[str, ...]]

    def check_action(self, action: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The action as float64; ValueError for a wrong shape, a NaN or a value outside the space."""
        values = np.asarray(action, dtype=np.float64)
        box = self.action_space
        if values.shape != box.shape:
            raise ValueError(f"action must have shape {box.shape}, found {values.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"action must be finite, found {values.tolist()}")
        if np.any(values < box.low) or np.any(values > box.high):
            ranges = ", ".join(
                f"{name} {lo:g}..{hi:g}"
                for name, lo, hi in zip(self.action_names, box.low, box.high, strict=True)
            )
            raise ValueError(f"action {values.tolist()} is outside the space: {ranges}")
        return values

    def commands(self, action: npt.NDArray[np.float64]) -> list[Command]:
        """The command messages of a checked action."""
        raise NotImplementedError

    def engage(self, latest: Mapping[str, Any]) -> list[Command] | None:
        """The commands that engage the vehicle given the latest reports; None once engaged."""
        raise NotImplementedError

    def faults(self, messages: Mapping[str, Sequence[Any]]) -> int:
        """How many of a period's report messages show a fault."""
        raise NotImplementedError

    def steering(self, action: npt.NDArray[np.float64]) -> float:
        """The curvature of an action (1/m), for the reward's effort."""
        return float(action[1])

    # ---- observations --------------------------------------------------------------------------

    def reset(self) -> None:
        self.observer.reset()
        self.image = None
        self.state = np.zeros(len(STATE_FIELDS), np.float32)

    def observe(self, latest: Mapping[str, Any]) -> dict[str, npt.NDArray[Any]]:
        """The observation of the latest message of each topic (zeros for what has not come yet);
        advances the route progress with the odometry."""
        odom = latest.get(self.layout.odom)
        if odom is not None:
            self.state = self.observer.state(odom)
        image = latest.get(self.layout.camera)
        if image is not None:
            self.image = camera_image(image)
        observation: dict[str, npt.NDArray[Any]] = {}
        for name in self.observations:
            if name == "state":
                observation[name] = self.state.copy()
            elif name == "lidar":
                cloud = latest.get(self.layout.lidar)
                observation[name] = (
                    np.zeros(LIDAR_SHAPE, np.float32) if cloud is None else lidar_ranges(cloud)
                )
            elif name == "camera":
                observation[name] = _NO_IMAGE.copy() if self.image is None else self.image
            else:
                observation[name] = self.observe_extra(name, latest)
        return observation

    def observe_extra(self, name: str, latest: Mapping[str, Any]) -> npt.NDArray[Any]:
        raise ValueError(f"no observation {name!r} on a {self.vehicle}")


class PolarisDrive(Drive):
    """The Polaris: a speed set point (/vehicle/ulc/cmd) and a curvature (/vehicle/steering/cmd),
    after enabling the drive-by-wire and shifting to L, as on the real vehicle."""

    vehicle = "polaris"
    layout = _Layout(odom="/vehicle/odom", lidar="/lidar/points", camera="/camera/image_raw")
    action_names = ("speed_mps", "curvature_1pm")
    ENABLED: Final = "/vehicle/dbw_enabled"
    GEAR_REPORT: Final = "/vehicle/gear/report"
    FAULT_REPORTS: Final = ("/vehicle/steering/report", "/vehicle/ulc/report")

    def __init__(
        self,
        observations: Sequence[str] | None = None,
        *,
        max_speed_mps: float = 5.0,
        route: Route | None = None,
    ) -> None:
        super().__init__(observations, route)
        self.action_space = spaces.Box(
            low=np.array([0.0, -POLARIS_MAX_CURVATURE], dtype=np.float32),
            high=np.array([max_speed_mps, POLARIS_MAX_CURVATURE], dtype=np.float32),
            dtype=np.float32,
        )

    def report_topics(self) -> tuple[str, ...]:
        return (*self.FAULT_REPORTS, self.ENABLED, self.GEAR_REPORT)

    def command_topics(self) -> tuple[str, ...]:
        return ("/vehicle/enable", "/vehicle/gear/cmd", "/vehicle/ulc/cmd", "/vehicle/steering/cmd")

    def commands(self, action: npt.NDArray[np.float64]) -> list[Command]:
        speed, curvature = float(action[0]), float(action[1])
        return [
            ("/vehicle/ulc/cmd", UlcCmd(cmd=speed, cmd_type=UlcCmd.CMD_VELOCITY, enable=True)),
            (
                "/vehicle/steering/cmd",
                SteeringCmd(cmd=curvature, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True),
            ),
        ]

    def engage(self, latest: Mapping[str, Any]) -> list[Command] | None:
        enabled = latest.get(self.ENABLED)
        report = latest.get(self.GEAR_REPORT)
        if enabled is not None and enabled.data and report is not None and report.gear.value == GEAR_L:
            return None
        if enabled is None or not enabled.data:
            first: Command = ("/vehicle/enable", Empty())
        else:
            gear = GearCmd()
            gear.cmd.value = GEAR_L
            first = ("/vehicle/gear/cmd", gear)  # taken once the system is enabled
        return [first, *self.commands(np.zeros(2))]

    def faults(self, messages: Mapping[str, Sequence[Any]]) -> int:
        return sum(
            1
            for topic in self.FAULT_REPORTS
            for report in messages.get(topic, ())
            if report.timeout or report.override_active or report.override_latched
        )


class MaxxumDrive(Drive):
    """The Maxxum: a speed and a curvature as cmd_vel (linear.x, angular.z = curvature x speed)
    and the hitch lever (hitch/lever_cmd), after lowering the implement (hitch/raise_cmd false)
    and setting the PTO (pto/cmd), as the real tractor takes them."""

    vehicle = "maxxum"
    layout = _Layout(odom="odom", lidar="lidar/points", camera="camera/image_raw")
    observation_names = ("state", "implement", "lidar", "camera")
    default_observations = ("state", "implement")
    action_names = ("speed_mps", "curvature_1pm", "hitch_lever")
    engage_s = 5.0
    IMPLEMENT: Final = "implement/state"

    def __init__(
        self,
        observations: Sequence[str] | None = None,
        *,
        max_speed_mps: float = 3.0,
        pto: bool = True,
        route: Route | None = None,
    ) -> None:
        super().__init__(observations, route)
        self.pto = pto
        self.action_space = spaces.Box(
            low=np.array([0.0, -MAXXUM_MAX_CURVATURE, 0.0], dtype=np.float32),
            high=np.array([max_speed_mps, MAXXUM_MAX_CURVATURE, 1.0], dtype=np.float32),
            dtype=np.float32,
        )

    def report_topics(self) -> tuple[str, ...]:
        return (self.IMPLEMENT,)

    def command_topics(self) -> tuple[str, ...]:
        return ("cmd_vel", "hitch/lever_cmd", "hitch/raise_cmd", "pto/cmd")

    def commands(self, action: npt.NDArray[np.float64]) -> list[Command]:
        speed, curvature, lever = float(action[0]), float(action[1]), float(action[2])
        twist = Twist()
        twist.linear.x = speed
        # The bridge divides the yaw rate by at least MIN_YAW_RATE_SPEED_MPS: the curvature holds at rest too.
        twist.angular.z = curvature * max(speed, MIN_YAW_RATE_SPEED_MPS)
        return [("cmd_vel", twist), ("hitch/lever_cmd", Float32(data=lever))]

    def engage(self, latest: Mapping[str, Any]) -> list[Command] | None:
        state = _implement_state(latest.get(self.IMPLEMENT))
        if state is not None and state.get("raised") is False and state.get("pto_on") is self.pto:
            return None
        return [
            ("hitch/raise_cmd", Bool(data=False)),
            ("pto/cmd", Bool(data=self.pto)),
            *self.commands(np.zeros(3)),
        ]

    def faults(self, messages: Mapping[str, Sequence[Any]]) -> int:
        return sum(1 for m in messages.get(self.IMPLEMENT, ()) if (_implement_state(m) or {}).get("stale"))

    def observe_extra(self, name: str, latest: Mapping[str, Any]) -> npt.NDArray[Any]:
        state = _implement_state(latest.get(self.IMPLEMENT)) or {}
        values = (
            state.get("implement_depth_m", 0.0),
            state.get("hitch_lift_deg", 0.0),
            state.get("draft_n", 0.0) / 1000.0,
            state.get("pto_rpm", 0.0),
        )
        return np.array(
            [v if isinstance(v, (int, float)) and math.isfinite(v) else 0.0 for v in values], np.float32
        )


def _implement_state(message: Any) -> dict[str, Any] | None:
    """implement/state's JSON object, or None for no message or one that is not an object."""
    if message is None:
        return None
    try:
        state = json.loads(message.data)
    except ValueError:
        return None
    return state if isinstance(state, dict) else None


def drive_for(vehicle: str, observations: Sequence[str] | None = None, **options: Any) -> Drive:
    """The Drive of a vehicle ("polaris" or "maxxum") with its default observations if none are given."""
    kinds: dict[str, type[PolarisDrive] | type[MaxxumDrive]] = {
        "polaris": PolarisDrive,
        "maxxum": MaxxumDrive,
    }
    if vehicle not in kinds:
        raise ValueError(f"vehicle must be one of {sorted(kinds)}, found {vehicle!r}")
    return kinds[vehicle](observations, **options)
