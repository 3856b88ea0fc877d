"""The scenario file (``acres_scenario: 1``): its schema, in one place, as pydantic models.

A scenario says what one episode runs (the session, the stack under test, the stepping, the
duration), how it is judged (named criteria with thresholds) and, optionally, a sweep that expands
it into many named episodes (acres_bridge.scenario.sweep). docs/scenarios.md documents every field;
``acres_scenario schema`` prints the JSON Schema these models make.

Every model refuses keys it does not know, values of the wrong type and values out of range;
acres_bridge.scenario.loader turns pydantic's errors into messages with the file, the line and
the field. Every value is bounded: numbers finite and within their range, poses within the
simulator's reach of the tile, times within the sun's and the clock's years, text without control
characters and of bounded length, lists and mappings of bounded size, and a sweep's values short
enough to name episodes and their folders.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST
from acres_bridge.wire.maxxum import IMPLEMENT_STATE_KEYS
from acres_bridge.wire.messages import RESET_REACH_M

__all__ = [
    "CRITERION_KINDS",
    "DEFAULT_START_UTC",
    "FORMAT_VERSION",
    "MAX_ARGS",
    "MAX_ARG_TEXT",
    "MAX_DURATION_S",
    "MAX_START_UTC",
    "MAX_SWEEP_EPISODES",
    "MAX_SWEEP_VALUE_TEXT",
    "MIN_START_UTC",
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
MIN_START_UTC: Final = datetime(1970, 1, 1, tzinfo=UTC)  # the weather's clock counts seconds from 1970
MAX_START_UTC: Final = datetime(2100, 1, 1, tzinfo=UTC)  # the sun's equations are fitted to the present era
MAX_ARGS: Final = 64  # arguments of a stack, and of a sweep's point or matrix
MAX_ARG_TEXT: Final = 1024  # characters of a stack argument's text
MAX_SWEEP_VALUE_TEXT: Final = 64  # characters of a text a sweep varies: it names episodes and folders
MAX_DESCRIPTION: Final = 4096  # characters
PHYSICS_HZ: Final = 120  # physics steps a simulated second: the most a stack's timer can fire
DEFAULT_STEPS_PER_REQUEST: Final = 12  # 0.1 s of simulated time a request without stack rates
_MAX_PATH_TEXT: Final = 1024  # characters of a folder of python_path
_INT64: Final = 1 << 63  # a ROS parameter's integer is an int64
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,63}")
_ROS_NAME = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_WORD = r"[^\s\x00-\x1f\x7f]{1,255}"  # a word of a command line: no space, no control character
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
Scalar = bool | int | float | str
Vehicle = Literal["polaris", "maxxum"]


class _Strict(BaseModel):
    """Unknown keys are errors; values are not coerced across types (a string is not a number);
    a float is finite (NaN and infinities are refused)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


_LAX: Final = ConfigDict(extra="forbid", strict=False, frozen=True, allow_inf_nan=False)
"""The config of the models whose YAML integers are floats too, or whose times are YAML timestamps."""


def _scalar(most_text: int) -> BeforeValidator:
    """The check of a value given to a stack (an argument, a parameter): a finite number, an
    integer that fits an int64, or a text of at most `most_text` characters without control
    characters (a process's arguments cannot hold a NUL)."""

    def check(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
            raise ValueError("an integer must fit 64 bits (-2^63 .. 2^63-1)")
        if isinstance(value, str):
            if len(value) > most_text:
                raise ValueError(f"a text of {len(value)} characters; at most {most_text}")
            if _CONTROL.search(value):
                raise ValueError("a text must not hold control characters (NUL, newline, tab, ...)")
        return value

    return BeforeValidator(check)


ArgValue = Annotated[Scalar, _scalar(MAX_ARG_TEXT)]
"""A stack's argument."""
SweepValue = Annotated[Scalar, _scalar(MAX_SWEEP_VALUE_TEXT)]
"""A value a sweep gives a stack's argument: it is part of an episode's name and folder."""


def _check_arg_names(args: Mapping[str, object]) -> None:
    """At most MAX_ARGS arguments, each named with letters, digits, '_' and '.' (at most 64)."""
    if len(args) > MAX_ARGS:
        raise ValueError(f"{len(args)} arguments; at most {MAX_ARGS}")
    for name in args:
        if not _ARG_NAME.fullmatch(name):
            shown = name if len(name) <= 70 else f"{name[:67]}..."
            raise ValueError(f"argument name {shown!r}: letters, digits, '_' and '.', at most 64 characters")


def _utc_in_range(value: datetime) -> datetime:
    """A start time with its time zone, in UTC, from MIN_START_UTC up to MAX_START_UTC."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must carry its time zone, e.g. 2026-06-21T05:30:00Z")
    utc = value.astimezone(UTC)
    if not MIN_START_UTC <= utc < MAX_START_UTC:
        raise ValueError(
            f"must lie from {MIN_START_UTC:%Y-%m-%d} up to {MAX_START_UTC:%Y-%m-%d}, found {utc:%Y-%m-%d}"
        )
    return utc


StartUtc = Annotated[datetime, AfterValidator(_utc_in_range)]
"""A session's start in UTC: the sun, the weather and the episode ids."""


def _check_reach(x: float, y: float, frame: str, what: str) -> None:
    """A position (tile, or UTM of the tile's zone) within RESET_REACH_M of the tile's centre in
    x and in y: where the simulator can put an agent, as /sim/reset checks it too."""
    east, north = (x, y) if frame == "tile" else ACRE_GEOREFERENCE.utm_to_world(x, y, 0.0)[:2]
    if max(abs(east), abs(north)) > RESET_REACH_M:
        where = (
            ""
            if frame == "tile"
            else f" utm, {east:.0f} m east and {north:.0f} m north of the tile's centre,"
        )
        raise ValueError(
            f"{what} ({x:g}, {y:g}){where} lies off the map: a position lies within {RESET_REACH_M:g} m "
            "of the tile's centre in x and in y (the tile spans 400 m either way)"
        )


def _arg_names(value: object) -> object:
    """The names of a stack's or a sweep's arguments, checked before their values are."""
    if isinstance(value, Mapping):
        _check_arg_names(value)
    return value


class StartPoseSpec(_Strict):
    """A start pose: tile x, y in m (``frame: tile``) or UTM easting and northing of the tile's zone
    (``frame: utm``), and the yaw in degrees counter-clockwise from east (-360 .. 360). ``name``
    labels it in a sweep's episode names (default: its index in the sweep's list). It lies within
    RESET_REACH_M of the tile's centre in x and in y, where the simulator can put an agent."""

    x: float
    y: float
    yaw_deg: float = Field(default=0.0, ge=-360, le=360)
    frame: Literal["tile", "utm"] = "tile"
    name: str | None = Field(default=None, pattern=_NAME.pattern)

    model_config = _LAX  # YAML integers are metres too

    @model_validator(mode="after")
    def _on_the_map(self) -> StartPoseSpec:
        _check_reach(self.x, self.y, self.frame, "the start")
        return self


class AgentEntry(_Strict):
    """An agent of a session with several: its name, its vehicle and, optionally, its start pose."""

    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_ -]{0,63}$")
    vehicle: Vehicle = "polaris"
    start: StartPoseSpec | None = None


class SessionSpec(_Strict):
    """The simulator session: one vehicle (``vehicle``) or several agents (``agents``, agent 0
    first, the one the criteria judge and the stack drives), the scene, the map, the seed of the
    sensor noise, ``start_utc`` (the sun and the weather, from MIN_START_UTC up to MAX_START_UTC),
    ACRES Core or not, and perception."""

    vehicle: Vehicle | None = None
    agents: tuple[AgentEntry, ...] | None = Field(default=None, min_length=1, max_length=16)
    start: StartPoseSpec | None = None
    scene: Literal["acre", "flat"] = "acre"
    map: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{1,32}$")
    seed: int = Field(default=42, ge=0, lt=1 << 32)
    start_utc: StartUtc = DEFAULT_START_UTC
    core: bool = False
    perception: bool = False

    model_config = _LAX  # YAML timestamps and text

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
    every request, however much faster than real time the session steps.

    ``stack_rates`` (topic -> Hz: the vehicle's command topics and the rates of the stack's timers
    on simulated time) makes that wait count instead: each request ends at the next step where a
    declared timer falls due, the runner waits until the stack has sent on each topic what its
    rate owes by then, and a stack that falls behind is an ERROR naming the topic, owed and sent.
    ``steps_per_request: auto`` (the default) is then a tick of the stack's timers, else
    DEFAULT_STEPS_PER_REQUEST; a number caps the request either way."""

    mode: Literal["lockstep", "realtime"] = "lockstep"
    steps_per_request: Annotated[int, Field(ge=1, le=MAX_STEPS_PER_REQUEST)] | Literal["auto"] = "auto"
    wait_for_stack: bool = True
    stack_reply_s: float = Field(default=1.0, gt=0, le=60)
    stack_rates: dict[Annotated[str, Field(pattern=_ROS_NAME.pattern, max_length=255)], float] = Field(
        default_factory=dict, max_length=16
    )

    @field_validator("stack_rates")
    @classmethod
    def _rates_in_range(cls, rates: dict[str, float]) -> dict[str, float]:
        for topic, rate in rates.items():
            if not (math.isfinite(rate) and 0 < rate <= PHYSICS_HZ):
                raise ValueError(
                    f"stack_rates: {topic} at {rate} Hz; a rate is above 0 and at most the physics "
                    f"rate, {PHYSICS_HZ} Hz (a timer on simulated time fires at most once a step)"
                )
        return rates

    @model_validator(mode="after")
    def _rates_in_lockstep(self) -> SteppingSpec:
        if self.stack_rates and (self.mode != "lockstep" or not self.wait_for_stack):
            raise ValueError("stack_rates go with mode lockstep and wait_for_stack true")
        return self

    def requested_steps(self) -> int:
        """The most steps a request may run: the number given, or with ``auto`` as many as the
        bridge takes when stack rates shape the requests, else DEFAULT_STEPS_PER_REQUEST."""
        if self.steps_per_request != "auto":
            return self.steps_per_request
        return MAX_STEPS_PER_REQUEST if self.stack_rates else DEFAULT_STEPS_PER_REQUEST


class StackSpec(_Strict):
    """The stack under test: exactly one of ``launch`` ("PACKAGE FILE"), ``run`` ("PACKAGE
    EXECUTABLE"), ``python`` ("module:callable" that returns an rclpy node) or ``builtin``
    (``dbw_demo_driver``, ``autopilot``: the simulator's route follower, or ``none``).

    ``args`` go to the stack: ``name:=value`` launch arguments for ``launch``, ROS parameters
    (``-p name:=value``) for ``run``, ``python`` and ``dbw_demo_driver``. ``python_path`` lists
    folders, relative to the scenario file, put first on the Python path of a ``python`` stack.
    ``use_sim_time`` (default true) is set as a parameter or launch argument."""

    launch: str | None = Field(default=None, pattern=f"^{_WORD} {_WORD}$")
    run: str | None = Field(default=None, pattern=f"^{_WORD} {_WORD}$")
    python: str | None = Field(default=None, pattern=_ENTRY_POINT.pattern, max_length=255)
    builtin: Literal["dbw_demo_driver", "autopilot", "none"] | None = None
    args: dict[str, ArgValue] = Field(default_factory=dict)
    python_path: list[
        Annotated[str, Field(min_length=1, max_length=_MAX_PATH_TEXT, pattern=r"^[^\x00-\x1f\x7f]*$")]
    ] = Field(default_factory=list, max_length=16)
    use_sim_time: bool = True

    _names = field_validator("args", mode="before")(_arg_names)

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
    model_config = _LAX

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

    @model_validator(mode="after")
    def _on_the_map(self) -> GoalReached:
        _check_reach(self.x, self.y, self.frame, "the goal")
        return self


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
    topic: str = Field(pattern=_ROS_NAME.pattern, max_length=255)
    min_hz: float = Field(gt=0, le=10_000)
    after_s: float = Field(default=1.0, ge=0, le=MAX_DURATION_S)


class ImplementState(_Criterion):
    """A key of the Maxxum's ``implement/state`` (``pto_on``, ``raised``, ``hitch_lever``,
    ``implement_depth_m``, ...) equals ``equals``, or lies within ``min``..``max``, ``at`` the end
    or ``always`` (every state from ``after_s`` on). Maxxum only. Value: the last value, or the
    first that broke the rule."""

    kind: Literal["implement_state"]
    key: str
    equals: ArgValue | None = None
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
    start_utc: StartUtc | None = None
    start: StartPoseSpec | None = None
    args: dict[str, SweepValue] = Field(default_factory=dict)

    model_config = _LAX

    _names = field_validator("args", mode="before")(_arg_names)


class SweepMatrix(_Strict):
    """The lists a sweep's matrix varies; every combination is an episode, named in this order:
    seed, start, start_utc, then the stack's arguments in file order."""

    seed: tuple[Annotated[int, Field(ge=0, lt=1 << 32)], ...] | None = Field(
        default=None, min_length=1, max_length=MAX_SWEEP_EPISODES
    )
    start: tuple[StartPoseSpec, ...] | None = Field(default=None, min_length=1, max_length=MAX_SWEEP_EPISODES)
    start_utc: tuple[StartUtc, ...] | None = Field(default=None, min_length=1, max_length=MAX_SWEEP_EPISODES)
    args: dict[str, Annotated[tuple[SweepValue, ...], Field(min_length=1, max_length=MAX_SWEEP_EPISODES)]] = (
        Field(default_factory=dict)
    )

    model_config = _LAX

    _names = field_validator("args", mode="before")(_arg_names)

    @property
    def axes(self) -> list[tuple[str, tuple[object, ...]]]:
        """The lists the matrix varies, in the order of the episodes' names: seed, start,
        start_utc, then the stack's arguments ('args.NAME') in file order."""
        axes: list[tuple[str, tuple[object, ...]]] = []
        if self.seed is not None:
            axes.append(("seed", self.seed))
        if self.start is not None:
            axes.append(("start", self.start))
        if self.start_utc is not None:
            axes.append(("start_utc", self.start_utc))
        return axes + [(f"args.{name}", values) for name, values in self.args.items()]


class SweepSpec(_Strict):
    """A sweep: every combination of the ``matrix``'s lists, then each point of ``list``; at most
    MAX_SWEEP_EPISODES episodes in all."""

    matrix: SweepMatrix = Field(default_factory=SweepMatrix)
    list: tuple[SweepPoint, ...] = Field(default=(), max_length=MAX_SWEEP_EPISODES)

    model_config = _LAX

    @property
    def episode_count(self) -> int:
        """The episodes of the sweep, counted without making them: the product of the matrix's
        list lengths (none without lists), plus the list's points."""
        axes = self.matrix.axes
        return (math.prod(len(values) for _, values in axes) if axes else 0) + len(self.list)

    @model_validator(mode="after")
    def _not_too_many(self) -> SweepSpec:
        if self.episode_count > MAX_SWEEP_EPISODES:
            lengths = " x ".join(str(len(values)) for _, values in self.matrix.axes) or "0"
            raise ValueError(
                f"{self.episode_count} episodes (matrix {lengths}, list {len(self.list)}); "
                f"a sweep has at most {MAX_SWEEP_EPISODES}"
            )
        return self


class Scenario(_Strict):
    """A whole scenario file."""

    acres_scenario: Literal[1]
    name: str = Field(pattern=_NAME.pattern)
    description: str = Field(default="", max_length=MAX_DESCRIPTION)
    session: SessionSpec = Field(default_factory=SessionSpec)
    duration_s: float = Field(gt=0, le=MAX_DURATION_S)
    stepping: SteppingSpec = Field(default_factory=SteppingSpec)
    stack: StackSpec
    criteria: tuple[CriterionSpec, ...] = Field(min_length=1, max_length=64)
    record: RecordSpec = Field(default_factory=RecordSpec)
    timeout_s: float | None = Field(default=None, gt=0, le=24 * 3600)
    sweep: SweepSpec | None = None

    model_config = _LAX

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
