"""Which nodes a bridge runs, with which parameters: the one decision both launch paths share.

`sim_bridge` (pip-only path, parameters from ROS) and `launch/sim_bridge.launch.py` (launch
arguments) both build a BridgeConfig and call plan_bridge(); neither decides anything itself.

    config = BridgeConfig.from_parameters({"vehicle": "polaris", "control_port": 47100})
    for node in plan_bridge(config):
        print(node.plugin, node.node_name, node.parameters)

Several agents (spec: Several Agents): `agents` says which agents of the session a bridge
serves, `auto` for all. serve_agents() gives each one its place: the first served agent (agent 0
with `auto`) takes the bridge's namespace, the frame_prefix parameter, /clock and /sim/episode;
every other one a namespace /<name> below the bridge's and the frame prefix <name>/, its name
sanitised (any character but a letter, a digit or _ becomes _). plan_agent() plans one agent's
nodes; the ingest and the simulation services stay with the bridge.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from acres_bridge.convert.speed_controller import DEFAULT_CMD_TIMEOUT_S, SpeedControllerParams
from acres_bridge.errors import ParameterError
from acres_bridge.wire.vocabulary import Vehicle

__all__ = [
    "PACKAGE",
    "PARAMETER_DESCRIPTIONS",
    "SUBSYSTEMS",
    "AgentSlot",
    "BridgeConfig",
    "PlannedNode",
    "SessionAgent",
    "Subsystem",
    "agent_namespace",
    "plan_agent",
    "plan_bridge",
    "sanitize_name",
    "serve_agents",
]

PACKAGE = "acres_bridge"
AUTO = "auto"  # the vehicle and the agents: those of the session the bridge connects to
VEHICLES = (*(str(vehicle) for vehicle in Vehicle), AUTO)
_CONTROLLER = SpeedControllerParams()
ParameterValue = bool | int | float | str


@dataclass(frozen=True)
class Subsystem:
    """One subsystem: its toggle (a boolean parameter of the same name), its node class, its vehicles."""

    name: str
    plugin: str  # the entry-point name in the group acres_bridge.components
    vehicles: tuple[Vehicle, ...]
    description: str
    default: bool = True  # whether it runs when its toggle is not given
    primary_only: bool = False  # one per bridge (its first served agent), not one per agent


_BOTH = tuple(Vehicle)
SUBSYSTEMS: tuple[Subsystem, ...] = (
    Subsystem("ingest", "acres_bridge::Ingest", _BOTH, "the simulator connection"),
    Subsystem("clock_tf", "acres_bridge::ClockTf", _BOTH, "/clock and /tf"),
    Subsystem("ins", "acres_bridge::Ins", _BOTH, "pose and INS topics"),
    Subsystem("perception", "acres_bridge::Perception", _BOTH, "LiDAR and camera"),
    Subsystem("episode", "acres_bridge::EpisodeClock", _BOTH, "/sim/episode", primary_only=True),
    Subsystem("dbw", "acres_bridge::Dbw", (Vehicle.POLARIS,), "drive-by-wire reports and commands"),
    Subsystem("reset", "acres_bridge::PoseReset", _BOTH, "/sim/reset"),
    Subsystem(
        "maxxum",
        "acres_bridge::Maxxum",
        (Vehicle.MAXXUM,),
        "engine_rpm, steering_angle, implement/state, the sensor mounts and the tractor commands",
    ),
    Subsystem("can", "acres_bridge::Can", (Vehicle.MAXXUM,), "can/rx and can/tx"),
    Subsystem(
        "foxglove",
        "acres_bridge::LiveView",
        _BOTH,
        "a live view for the Foxglove app (WebSocket, foxglove_host:foxglove_port)",
        default=False,
        primary_only=True,
    ),
)
_DEFAULTS = {s.name: s.default for s in SUBSYSTEMS}

# Parameters each node class declares (beyond the shared ones every subsystem node has).
_SHARED = ("vehicle", "frame_prefix", "utm_frame")
_NODE_PARAMETERS: dict[str, tuple[str, ...]] = {
    "ingest": (
        "control_host",
        "control_port",
        "reconnect_interval_s",
        "step_timeout_s",
        "simulation_control",
        "sensors_on_demand",
        "can_udp_port",
        "session_token_file",
        "vehicle",
        "allow_unfenced_commands",
        "acked_clock",
    ),
    "clock_tf": ("publish_clock",),
    "ins": (),
    "perception": (),
    "episode": (),
    "dbw": ("allow_unfenced_commands",),
    "reset": ("allow_unfenced_commands",),
    "maxxum": ("allow_unfenced_commands", "speed_kp", "speed_ki", "max_speed_mps", "cmd_timeout_s"),
    "can": ("allow_unfenced_commands",),
    "foxglove": (
        "allow_unfenced_commands",
        "foxglove_host",
        "foxglove_port",
        "foxglove_allow_publish",
        "foxglove_backlog",
    ),
}


@dataclass(frozen=True, kw_only=True)
class BridgeConfig:
    """Everything the plan depends on, validated once."""

    vehicle: str = "polaris"
    agents: str = "0"
    control_host: str = "127.0.0.1"
    control_port: int = 47100
    reconnect_interval_s: float = 0.5
    step_timeout_s: float = 60.0
    simulation_control: bool = True
    sensors_on_demand: bool = True
    publish_clock: bool = True
    frame_prefix: str = ""
    utm_frame: str = "utm"
    allow_unfenced_commands: bool = False
    can_udp_port: int = 0  # the first Maxxum's CAN transport; 0: the port the simulator announces
    session_token_file: str = ""  # a session's token file, read once and removed
    acked_clock: bool = False  # in lockstep, a request's last clock once its data is acknowledged
    speed_kp: float = _CONTROLLER.speed_kp
    speed_ki: float = _CONTROLLER.speed_ki
    max_speed_mps: float = _CONTROLLER.max_speed_mps
    cmd_timeout_s: float = DEFAULT_CMD_TIMEOUT_S
    foxglove_host: str = "127.0.0.1"
    foxglove_port: int = 8765
    foxglove_allow_publish: bool = False
    foxglove_backlog: int = 256
    toggles: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.vehicle not in VEHICLES:
            raise ParameterError(f"vehicle must be one of {', '.join(VEHICLES)}; found {self.vehicle!r}")
        _parse_agents(self.agents)
        if not 0 < self.control_port < 65536:
            raise ParameterError(f"control_port must be a TCP port (1..65535); found {self.control_port}")
        if not 0 <= self.foxglove_port < 65536:
            raise ParameterError(
                "foxglove_port must be a TCP port (1..65535), or 0 for any free one; "
                f"found {self.foxglove_port}"
            )
        if not 1 <= self.foxglove_backlog <= 100_000:
            raise ParameterError(
                f"foxglove_backlog must be 1 .. 100000 messages; found {self.foxglove_backlog}"
            )
        if not 0 <= self.can_udp_port < 65536:
            raise ParameterError(
                "can_udp_port must be a UDP port (1..65535), or 0 for the simulator's; "
                f"found {self.can_udp_port}"
            )
        for name in ("reconnect_interval_s", "step_timeout_s", "cmd_timeout_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ParameterError(f"{name} must be a finite number of seconds > 0; found {value}")
        try:
            SpeedControllerParams(
                speed_kp=self.speed_kp, speed_ki=self.speed_ki, max_speed_mps=self.max_speed_mps
            )
        except ValueError as error:
            raise ParameterError(str(error).replace("SpeedControllerParams.", "")) from None
        unknown = set(self.toggles) - {s.name for s in SUBSYSTEMS}
        if unknown:
            raise ParameterError(
                f"unknown subsystem toggles {sorted(unknown)}; known: {[s.name for s in SUBSYSTEMS]}"
            )

    def enabled(self, subsystem: str) -> bool:
        return self.toggles.get(subsystem, _DEFAULTS.get(subsystem, True))

    @classmethod
    def parameter_defaults(cls) -> dict[str, ParameterValue]:
        """Every parameter of the bridge with its default: the config's fields, one toggle per subsystem."""
        defaults: dict[str, ParameterValue] = {
            f.name: f.default for f in fields(cls) if isinstance(f.default, bool | int | float | str)
        }
        defaults.update(_DEFAULTS)
        return defaults

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> BridgeConfig:
        """A config from parameter values (missing ones take their defaults); unknown names are refused."""
        defaults = cls.parameter_defaults()
        unknown = set(values) - set(defaults)
        if unknown:
            raise ParameterError(f"unknown bridge parameters {sorted(unknown)}")
        merged = {**defaults, **values}
        agents = merged["agents"]
        if isinstance(agents, int) and not isinstance(agents, bool):
            merged["agents"] = str(agents)  # agents:=1 arrives as an integer from the command line
        for name, default in defaults.items():
            value = merged[name]
            expected = type(default)
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                merged[name] = float(value)
            elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise ParameterError(f"parameter {name} must be {expected.__name__}; found {value!r}")
        toggles = {s.name: bool(merged.pop(s.name)) for s in SUBSYSTEMS}
        return cls(toggles=toggles, **merged)


PARAMETER_DESCRIPTIONS: dict[str, str] = {
    "vehicle": "polaris | maxxum | auto (agent 0's vehicle, from the simulator)",
    "agents": "auto for every agent of the session, or agent indices such as 1 or 0,2",
    "control_host": "the simulator's address",
    "control_port": "the simulator's control channel (TCP port)",
    "reconnect_interval_s": "how often to retry while the simulator is away",
    "step_timeout_s": "the longest wait for an acknowledged step request",
    "simulation_control": "serve /step_simulation, /simulate_steps, /reset_simulation, ...",
    "sensors_on_demand": "have the simulator make only the LiDAR and camera frames someone reads",
    "publish_clock": "publish /clock (false on a second bridge of the same session)",
    "frame_prefix": "prefix of the vehicle's frames, e.g. polaris2/",
    "utm_frame": "the frame of the poses",
    "allow_unfenced_commands": "forward commands without the DDS loopback fence (warns)",
    "can_udp_port": "the first Maxxum's CAN transport (UDP port, the game's -RlCanUdp=); "
    "0: the port the simulator announces",
    "session_token_file": "a session's token file, read once and removed (docs/protocol.md); empty: none",
    "acked_clock": "in lockstep, a request's last /clock only once every reliable reader has "
    "acknowledged the request's data (for a stack stepped at its own pace)",
    "speed_kp": "Maxxum speed controller: pedal per m/s of speed error",
    "speed_ki": "Maxxum speed controller: pedal per m of integrated speed error",
    "max_speed_mps": "Maxxum: the highest speed set point of cmd_vel and speed_cmd",
    "cmd_timeout_s": "Maxxum: no guidance for this long (simulated time) stops the bridge's commands",
    "foxglove_host": "the live view's address (127.0.0.1: this machine only)",
    "foxglove_port": "the live view's WebSocket port (0: any free port, logged)",
    "foxglove_allow_publish": "take viewers' messages on the command topics (through the fence's gate)",
    "foxglove_backlog": "messages queued per viewer; a slower viewer loses the oldest",
    **{
        s.name: f"run the {s.name} node: {s.description} ({'true' if s.default else 'false'} by default)"
        for s in SUBSYSTEMS
    },
}

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def _parse_agents(text: str) -> tuple[int, ...] | None:
    """None for "auto" (every agent), else the agent indices of a comma-separated list, in order."""
    if text.strip() == AUTO:
        return None
    try:
        indices = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ParameterError(f"agents must be auto or agent indices like 0 or 0,2; found {text!r}") from None
    if not indices or min(indices) < 0 or len(set(indices)) != len(indices):
        raise ParameterError(f"agents must be auto or distinct agent indices >= 0; found {text!r}")
    return indices


def sanitize_name(name: str) -> str:
    """An agent name as a ROS name token: every character but a letter, a digit or _ becomes _;
    a leading digit gets a leading _ (ROS name tokens do not start with a digit)."""
    token = _UNSAFE.sub("_", name) or "_"
    return f"_{token}" if token[0].isdigit() else token


def agent_namespace(bridge_namespace: str, name: str) -> str:
    """The namespace of a further agent: /<name> below the bridge's namespace."""
    base = bridge_namespace.rstrip("/")
    return f"{base}/{sanitize_name(name)}"


@dataclass(frozen=True)
class SessionAgent:
    """An agent as the session lists it (the simulator's HELLO)."""

    index: int
    name: str
    vehicle: str


@dataclass(frozen=True)
class AgentSlot:
    """An agent this bridge serves, with its place on the ROS side.

    `primary` is the bridge's first served agent: it publishes /clock (when publish_clock) and
    /sim/episode, in the bridge's own namespace with the frame_prefix parameter.
    """

    index: int
    name: str
    vehicle: str
    namespace: str
    frame_prefix: str
    primary: bool


def serve_agents(
    config: BridgeConfig, agents: Sequence[SessionAgent], *, namespace: str = ""
) -> list[AgentSlot]:
    """The agents of a session that this bridge serves, in order, each with its namespace and prefix.

    An index of `agents` that the session does not have is left out; so is an agent whose vehicle
    differs from a vehicle the config fixes for the first served agent.
    """
    wanted = _parse_agents(config.agents)
    by_index = {agent.index: agent for agent in agents}
    chosen = list(agents) if wanted is None else [by_index[i] for i in wanted if i in by_index]
    slots = []
    for position, agent in enumerate(chosen):
        primary = position == 0
        slots.append(
            AgentSlot(
                index=agent.index,
                name=agent.name,
                vehicle=agent.vehicle,
                namespace=namespace if primary else agent_namespace(namespace, agent.name),
                frame_prefix=config.frame_prefix if primary else f"{sanitize_name(agent.name)}/",
                primary=primary,
            )
        )
    return slots


def plan_agent(config: BridgeConfig, slot: AgentSlot, *, ingest_namespace: str = "") -> list[PlannedNode]:
    """The subsystem nodes of one served agent (no ingest): in the slot's namespace, with its index,
    vehicle and frame prefix; /clock and /sim/episode only for the primary agent."""
    planned = []
    for subsystem in SUBSYSTEMS:
        if subsystem.name == "ingest" or not config.enabled(subsystem.name):
            continue
        if slot.vehicle not in subsystem.vehicles or (subsystem.primary_only and not slot.primary):
            continue
        values: dict[str, ParameterValue] = {
            **_as_dict(config),
            "vehicle": slot.vehicle,
            "frame_prefix": slot.frame_prefix,
            "publish_clock": config.publish_clock and slot.primary,
        }
        parameters = {name: values[name] for name in (*_NODE_PARAMETERS[subsystem.name], *_SHARED)}
        parameters["agent"] = slot.index
        if slot.namespace != ingest_namespace:
            parameters["ingest_namespace"] = ingest_namespace or "/"
        planned.append(
            PlannedNode(
                subsystem=subsystem.name,
                plugin=subsystem.plugin,
                node_name=subsystem.name,
                namespace=slot.namespace,
                parameters=parameters,
            )
        )
    return planned


@dataclass(frozen=True)
class PlannedNode:
    """A node to load: its class, name, namespace and parameters."""

    subsystem: str
    plugin: str
    node_name: str
    namespace: str
    parameters: dict[str, ParameterValue]
    package: str = PACKAGE


def plan_bridge(
    config: BridgeConfig, *, vehicle: str | None = None, namespace: str = ""
) -> list[PlannedNode]:
    """The nodes of a bridge for one vehicle, in load order (the ingest first).

    With config.vehicle == "auto" the vehicle comes from the session: pass it as `vehicle`;
    without it only the ingest is planned (the rest follows once the session is known).
    """
    chosen = vehicle or config.vehicle
    planned = []
    if config.enabled("ingest"):
        ingest = next(subsystem for subsystem in SUBSYSTEMS if subsystem.name == "ingest")
        values = _as_dict(config)
        planned.append(
            PlannedNode(
                subsystem=ingest.name,
                plugin=ingest.plugin,
                node_name=ingest.name,
                namespace=namespace,
                parameters={name: values[name] for name in _NODE_PARAMETERS[ingest.name]},
            )
        )
    if chosen == AUTO:
        return planned
    agent_0 = AgentSlot(
        index=0, name="", vehicle=chosen, namespace=namespace, frame_prefix=config.frame_prefix, primary=True
    )
    return planned + plan_agent(config, agent_0, ingest_namespace=namespace)


def _as_dict(config: BridgeConfig) -> dict[str, ParameterValue]:
    return {f.name: getattr(config, f.name) for f in fields(config) if f.name != "toggles"}
