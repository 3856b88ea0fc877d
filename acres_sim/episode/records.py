"""The records that task code and experiments give the episode log: a task's status, and how an
agent's hardware differs from its nominal vehicle (the TaskStatus and VehicleShift messages)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType

from acres_sim.errors import ParamsError

__all__ = ["MountOffset", "TaskState", "TaskStatus", "VehicleShift"]


class TaskState(IntEnum):
    """The STATUS_* values of the TaskStatus message."""

    PENDING = 0
    RUNNING = 1
    SUCCEEDED = 2
    FAILED = 3
    ABORTED = 4


def _finite(owner: str, **values: float) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ParamsError(f"{owner}.{name}: expected a finite number, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TaskStatus:
    """What task code reports on /sim/task: the task (and the agent it is for, empty for a session
    task), its status, its progress (0 .. 1), the total reward of the last step and its terms by
    name (in the order given), and a human-readable message."""

    task: str
    status: TaskState
    agent: str = ""
    progress: float = 0.0
    reward: float = 0.0
    reward_terms: Mapping[str, float] = field(default_factory=dict)
    message: str = ""

    def __post_init__(self) -> None:
        """A named task, a known status, a progress of 0 .. 1, finite rewards."""
        if not self.task:
            raise ParamsError("TaskStatus.task: expected a non-empty task name")
        try:
            object.__setattr__(self, "status", TaskState(self.status))
        except ValueError:
            raise ParamsError(
                f"TaskStatus.status: expected one of {[int(s) for s in TaskState]}, got {self.status!r}"
            ) from None
        _finite("TaskStatus", progress=self.progress, reward=self.reward)
        if not 0.0 <= self.progress <= 1.0:
            raise ParamsError(f"TaskStatus.progress: expected 0 .. 1, got {self.progress!r}")
        terms = dict(self.reward_terms)
        for name, value in terms.items():
            if not isinstance(name, str):
                raise ParamsError(f"TaskStatus.reward_terms: expected names as strings, got {name!r}")
            _finite("TaskStatus.reward_terms", **{name: value})
        object.__setattr__(self, "reward_terms", MappingProxyType(terms))


@dataclass(frozen=True, kw_only=True)
class MountOffset:
    """A change of a sensor mount in base_footprint: a translation (m) and a rotation (x, y, z, w)."""

    translation: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)

    def __post_init__(self) -> None:
        """Three finite coordinates and a unit quaternion."""
        if len(self.translation) != 3 or len(self.rotation) != 4:
            raise ParamsError(
                "MountOffset: expected a translation of 3 and a rotation of 4 numbers, got "
                f"{self.translation!r} and {self.rotation!r}"
            )
        _finite("MountOffset", **{f"translation[{i}]": v for i, v in enumerate(self.translation)})
        _finite("MountOffset", **{f"rotation[{i}]": v for i, v in enumerate(self.rotation)})
        norm = math.sqrt(sum(v * v for v in self.rotation))
        if abs(norm - 1.0) > 1e-6:
            raise ParamsError(f"MountOffset.rotation: expected a unit quaternion, got norm {norm:.6f}")


@dataclass(frozen=True, kw_only=True)
class VehicleShift:
    """How one agent's hardware differs from its nominal vehicle (the VehicleShift message): offsets
    and scales from nominal (a scale of 1 and an offset of 0 change nothing)."""

    agent: str
    mass_offset_kg: float = 0.0
    steering_offset_deg: float = 0.0
    steering_ratio_scale: float = 1.0
    throttle_gain_scale: float = 1.0
    brake_gain_scale: float = 1.0
    tyre_radius_scale: float = 1.0
    actuator_delay_s: float = 0.0
    lidar_mount_offset: MountOffset = field(default_factory=MountOffset)
    camera_mount_offset: MountOffset = field(default_factory=MountOffset)

    def __post_init__(self) -> None:
        """A named agent, finite offsets, positive scales, a delay >= 0."""
        if not self.agent:
            raise ParamsError("VehicleShift.agent: expected an agent name")
        _finite(
            "VehicleShift",
            mass_offset_kg=self.mass_offset_kg,
            steering_offset_deg=self.steering_offset_deg,
            actuator_delay_s=self.actuator_delay_s,
        )
        for name in ("steering_ratio_scale", "throttle_gain_scale", "brake_gain_scale", "tyre_radius_scale"):
            value = getattr(self, name)
            _finite("VehicleShift", **{name: value})
            if value <= 0.0:
                raise ParamsError(f"VehicleShift.{name}: expected a factor > 0, got {value!r}")
        if self.actuator_delay_s < 0.0:
            raise ParamsError(
                f"VehicleShift.actuator_delay_s: expected >= 0 s, got {self.actuator_delay_s!r}"
            )


# ---- messages (rosbags' generated classes of the definitions in the file) ------------------------
