"""The scenario file (``acres_scenario: 1``): its schema, in one place, as pydantic models.

A scenario says what one episode runs (the session, the stack under test, the stepping, the
duration), how it is judged (named criteria with thresholds) and, optionally, a sweep that expands
it into many named episodes (acres_bridge.scenario.sweep). docs/scenarios.md documents every field;
``acres_scenario schema`` prints the JSON Schema these models make.

Every model refuses keys it does not know, values of the wrong type and values out of range;
acres_bridge.scenario.loader turns pydantic's errors into messages with the file, the line and
the field.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Annotated, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST
from acres_bridge.wire.maxxum import IMPLEMENT_STATE_KEYS

__all__ = [
    "CRITERION_KINDS",
    "DEFAULT_START_UTC",
    "FORMAT_VERSION",
    "MAX_DURATION_S",
    "AgentEntry",
    "CriterionSpec",
    "GoalReached",
    "ImplementState",
    "MaxCrossTrackError",
    "MaxSpeed",
    "MinDistance",
    "NoDbwFault",
    "NoDbwOverride",
    "NoDbwTimeout",
    "RecordSpec",
    "Scenario",
    "SessionSpec",
    "StackSpec",
    "StartPoseSpec",
    "SteppingSpec",
    "SweepMatrix",
    "SweepPoint",
    "SweepSpec",
    "TopicRate",
]

FORMAT_VERSION: Final = 1
MAX_DURATION_S: Final = 3600.0  # one simulated hour per episode
DEFAULT_START_UTC: Final = datetime(
    2026, 6, 21, 12, 0, tzinfo=UTC
)  # a scenario is reproducible unless it says otherwise
MAX_SWEEP_EPISODES: Final = 10_000
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_ROS_NAME = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
Scalar = bool | int | float | str
Vehicle = Literal["polaris", "maxxum"]


class _Strict(BaseModel):
    """Unknown keys are errors; values are not coerced across types (a string is not a number)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


class StartPoseSpec(_Strict):
    """A start pose: tile x, y in m (``frame: tile``) or UTM easting and northing of the tile's zone
    (``frame: utm``), and the yaw in degrees counter-clockwise from east. ``name`` labels it in a
    sweep's episode names (default: its index in the sweep's list)."""

    x: float
    y: float
    yaw_deg: float = 0.0
    frame: Literal["tile", "utm"] = "tile"
    name: str | None = Field(default=None, pattern=_NAME.pattern)

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)  # YAML integers are metres too

    _check = field_validator("x", "y", "yaw_deg")(_finite)


class AgentEntry(_Strict):
    """An agent of a session with several: its name, its vehicle and, optionally, its start pose."""

    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_ -]{0,63}$")
    vehicle: Vehicle = "polaris"
    start: StartPoseSpec | None = None


class SessionSpec(_Strict):
    """The simulator session: one vehicle (``vehicle``) or several agents (``agents``, agent 0
    first, the one the criteria judge and the stack drives), the scene, the map, the seed of the
    sensor noise, ``start_utc`` (the sun and the weather), ACRES Core or not, and perception."""

    vehicle: Vehicle | None = None
    agents: tuple[AgentEntry, ...] | None = Field(default=None, min_length=1, max_length=16)
    start: StartPoseSpec | None = None
    scene: Literal["acre", "flat"] = "acre"
    map: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{1,32}$")
    seed: int = Field(default=42, ge=0, lt=1 << 32)
    start_utc: datetime = DEFAULT_START_UTC
    core: bool = False
    perception: bool = False

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)  # YAML timestamps and text

    @field_validator("start_utc")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("must carry its time zone, e.g. 2026-06-21T05:30:00Z")
        return value.astimezone(UTC)

    @field_validator("seed", "core", "perception", mode="before")
    @classmethod
    def _exact(cls, value: object) -> object:
        """Numbers and flags as written: 'yes' or 3.0 is no flag and no seed."""
        if isinstance(value, str | float):
            raise ValueError(f"expected {'a whole number' if not isinstance(value, str) else 'no text'}")
        return value

    @model_validator(mode="after")
    def _one_way(self) -> SessionSpec:
        if self.vehicle is not None and self.agents is not None:
            raise ValueError("give vehicle or agents, not both")
        if self.agents is not None:
            names = [a.name for a in self.agents]
            if len(set(names)) != len(names):
                raise ValueError(f"agent names must differ, found {names}")
            if self.start is not None and self.agents[0].start is not None:
                raise ValueError("agent 0's start is given twice (session.start and agents[0].start)")
        return self

    @property
    def first_vehicle(self) -> str:
        """The vehicle of agent 0: the one the stack drives and the criteria judge."""
        if self.agents is not None:
            return self.agents[0].vehicle
        return self.vehicle or "polaris"


class SteppingSpec(_Strict):
    """How the episode advances: ``lockstep`` (the runner steps the simulator,
    ``steps_per_request`` physics steps of 1/120 s per request, losing no message) or ``realtime``
    (the simulator runs freely at real time, as with the real vehicle).

    With ``wait_for_stack`` (lockstep with a stack process), the runner waits after each request
    until the stack has sent a command on one of the vehicle's command topics, at most
    ``stack_reply_s`` of wall-clock time: a stack that commands at real time then commands within
    every request, however much faster than real time the session steps."""

    mode: Literal["lockstep", "realtime"] = "lockstep"
    steps_per_request: int = Field(default=12, ge=1, le=MAX_STEPS_PER_REQUEST)
    wait_for_stack: bool = True
    stack_reply_s: float = Field(default=1.0, gt=0, le=60)


class StackSpec(_Strict):
    """The stack under test: exactly one of ``launch`` ("PACKAGE FILE"), ``run`` ("PACKAGE
    EXECUTABLE"), ``python`` ("module:callable" that returns an rclpy node) or ``builtin``
    (``dbw_demo_driver``, ``autopilot``: the simulator's route follower, or ``none``).

    ``args`` go to the stack: ``name:=value`` launch arguments for ``launch``, ROS parameters
    (``-p name:=value``) for ``run``, ``python`` and ``dbw_demo_driver``. ``python_path`` lists
    folders, relative to the scenario file, put first on the Python path of a ``python`` stack.
    ``use_sim_time`` (default true) is set as a parameter or launch argument."""

    launch: str | None = Field(default=None, pattern=r"^\S+ \S+$")
    run: str | None = Field(default=None, pattern=r"^\S+ \S+$")
    python: str | None = Field(default=None, pattern=_ENTRY_POINT.pattern)
    builtin: Literal["dbw_demo_driver", "autopilot", "none"] | None = None
    args: dict[str, Scalar] = Field(default_factory=dict)
    python_path: list[str] = Field(default_factory=list, max_length=16)
    use_sim_time: bool = True

    @field_validator("args")
    @classmethod
    def _arg_names(cls, value: dict[str, Scalar]) -> dict[str, Scalar]:
        for name, arg in value.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
                raise ValueError(f"argument name {name!r}: letters, digits, '_' and '.'")
            if isinstance(arg, float) and not math.isfinite(arg):
                raise ValueError(f"argument {name}: must be a finite number")
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> StackSpec:
        given = [k for k in ("launch", "run", "python", "builtin") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of launch, run, python or builtin; found {given or 'none'}")
        if self.python_path and self.python is None:
            raise ValueError("python_path goes with a python stack")
        return self

    @property
    def kind(self) -> str:
        """launch, run, python or builtin."""
        return next(k for k in ("launch", "run", "python", "builtin") if getattr(self, k) is not None)


class _Criterion(_Strict):
    """What every criterion has: a name (default: its kind) for the verdict and the results."""

    name: str | None = Field(default=None, pattern=_NAME.pattern)
    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    @property
    def label(self) -> str:
        return self.name or str(getattr(self, "kind"))  # noqa: B009 (every subclass has its kind)


class GoalReached(_Criterion):
    """Agent 0 comes within ``radius_m`` of (``x``, ``y``) within ``within_s`` simulated seconds.
    Value: the time it first did, in s (null: never)."""

    kind: Literal["goal_reached"]
    x: float
    y: float
    frame: Literal["tile", "utm"] = "tile"
    radius_m: float = Field(default=3.0, gt=0, le=1000)
    within_s: float = Field(gt=0, le=MAX_DURATION_S)


class MaxCrossTrackError(_Criterion):
    """The distance of agent 0 from the built-in route stays at most ``max_m``, from ``after_s`` on.
    Value: the largest distance, in m."""

    kind: Literal["max_cross_track_error"]
    max_m: float = Field(gt=0, le=1000)
    after_s: float = Field(default=0.0, ge=0, le=MAX_DURATION_S)


class MaxSpeed(_Criterion):
    """The speed of agent 0 (its odometry's twist) stays at most ``max_mps``. Value: the largest, m/s."""

    kind: Literal["max_speed"]
    max_mps: float = Field(gt=0, le=100)


class MinDistance(_Criterion):
    """Agent 0 drives at least ``min_m`` (the length of its odometry's path). Value: the length, m."""

    kind: Literal["min_distance"]
    min_m: float = Field(ge=0, le=1e6)


class NoDbwTimeout(_Criterion):
    """No drive-by-wire report (steering, throttle, brake, ULC) says ``timeout``: the stack never
    stopped sending commands it had started. Polaris only. Value: the reports that did."""

    kind: Literal["no_dbw_timeout"]


class NoDbwFault(_Criterion):
    """No steering, throttle or brake report says ``fault``. Polaris only. Value: the reports that did."""

    kind: Literal["no_dbw_fault"]


class NoDbwOverride(_Criterion):
    """No drive-by-wire report says ``override_active`` or ``override_latched``. Polaris only.
    Value: the reports that did."""

    kind: Literal["no_dbw_override"]


class TopicRate(_Criterion):
    """A topic (a name of the vehicle's msg_profiles table, as the stack's commands
    ``/vehicle/ulc/cmd`` or the bridge's ``/vehicle/odom``) has at least ``min_hz`` messages per
    simulated second, counted from ``after_s`` to the end. Value: the rate, Hz."""

    kind: Literal["topic_rate"]
    topic: str = Field(pattern=_ROS_NAME.pattern)
    min_hz: float = Field(gt=0, le=10_000)
    after_s: float = Field(default=1.0, ge=0, le=MAX_DURATION_S)


class ImplementState(_Criterion):
    """A key of the Maxxum's ``implement/state`` (``pto_on``, ``raised``, ``hitch_lever``,
    ``implement_depth_m``, ...) equals ``equals``, or lies within ``min``..``max``, ``at`` the end
    or ``always`` (every state from ``after_s`` on). Maxxum only. Value: the last value, or the
    first that broke the rule."""

    kind: Literal["implement_state"]
    key: str
    equals: Scalar | None = None
    min: float | None = None
    max: float | None = None
    at: Literal["end", "always"] = "end"
    after_s: float = Field(default=0.0, ge=0, le=MAX_DURATION_S)

    @field_validator("key")
    @classmethod
    def _known_key(cls, value: str) -> str:
        if value not in IMPLEMENT_STATE_KEYS:
            raise ValueError(f"not a key of implement/state; its keys: {', '.join(IMPLEMENT_STATE_KEYS)}")
        return value

    @model_validator(mode="after")
    def _one_rule(self) -> ImplementState:
        if (self.equals is None) == (self.min is None and self.max is None):
            raise ValueError("give equals, or min and/or max")
        return self


CRITERIA: Final = (
    GoalReached,
    MaxCrossTrackError,
    MaxSpeed,
    MinDistance,
    NoDbwTimeout,
    NoDbwFault,
    NoDbwOverride,
    TopicRate,
    ImplementState,
)
CRITERION_KINDS: Final = tuple(get_args(c.model_fields["kind"].annotation)[0] for c in CRITERIA)
CriterionSpec = Annotated[
    GoalReached
    | MaxCrossTrackError
    | MaxSpeed
    | MinDistance
    | NoDbwTimeout
    | NoDbwFault
    | NoDbwOverride
    | TopicRate
    | ImplementState,
    Field(discriminator="kind"),
]
DBW_CRITERIA: Final = ("no_dbw_timeout", "no_dbw_fault", "no_dbw_override")


class RecordSpec(_Strict):
    """What the episode's rosbag2 MCAP holds: the topics its criteria read (``criteria``, the
    default), every published topic of the vehicle (``all``), or nothing (``none``)."""

    topics: Literal["criteria", "all", "none"] = "criteria"


class SweepPoint(_Strict):
    """One episode of a sweep's list: any of the values a matrix varies, one each."""

    seed: int | None = Field(default=None, ge=0, lt=1 << 32)
    start_utc: datetime | None = None
    start: StartPoseSpec | None = None
    args: dict[str, Scalar] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)


class SweepMatrix(_Strict):
    """The lists a sweep's matrix varies; every combination is an episode, named in this order:
    seed, start, start_utc, then the stack's arguments in file order."""

    seed: tuple[Annotated[int, Field(ge=0, lt=1 << 32)], ...] | None = Field(default=None, min_length=1)
    start: tuple[StartPoseSpec, ...] | None = Field(default=None, min_length=1)
    start_utc: tuple[datetime, ...] | None = Field(default=None, min_length=1)
    args: dict[str, Annotated[tuple[Scalar, ...], Field(min_length=1)]] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)


class SweepSpec(_Strict):
    """A sweep: every combination of the ``matrix``'s lists, then each point of ``list``."""

    matrix: SweepMatrix = Field(default_factory=SweepMatrix)
    list: tuple[SweepPoint, ...] = ()

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)


class Scenario(_Strict):
    """A whole scenario file."""

    acres_scenario: Literal[1]
    name: str = Field(pattern=_NAME.pattern)
    description: str = ""
    session: SessionSpec = Field(default_factory=SessionSpec)
    duration_s: float = Field(gt=0, le=MAX_DURATION_S)
    stepping: SteppingSpec = Field(default_factory=SteppingSpec)
    stack: StackSpec
    criteria: tuple[CriterionSpec, ...] = Field(min_length=1, max_length=64)
    record: RecordSpec = Field(default_factory=RecordSpec)
    timeout_s: float | None = Field(default=None, gt=0, le=24 * 3600)
    sweep: SweepSpec | None = None

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    @model_validator(mode="after")
    def _coherent(self) -> Scenario:
        labels = [c.label for c in self.criteria]
        if len(set(labels)) != len(labels):
            raise ValueError(f"criteria need distinct names (give each a name), found {labels}")
        vehicle = self.session.first_vehicle
        for criterion in self.criteria:
            if criterion.kind in DBW_CRITERIA and vehicle != "polaris":
                raise ValueError(f"criterion {criterion.label}: the drive-by-wire is the Polaris's")
            if criterion.kind == "implement_state" and vehicle != "maxxum":
                raise ValueError(f"criterion {criterion.label}: the implement is the Maxxum's")
        if self.stack.builtin in ("dbw_demo_driver", "autopilot") and vehicle != "polaris":
            raise ValueError(f"stack builtin {self.stack.builtin} drives a Polaris; agent 0 is a {vehicle}")
        return self
