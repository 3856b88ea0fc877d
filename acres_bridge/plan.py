"""Which nodes a bridge runs, with which parameters: the one decision both launch paths share.

`sim_bridge` (pip-only path, parameters from ROS) and `launch/sim_bridge.launch.py` (launch
arguments) both build a BridgeConfig and call plan_bridge(); neither decides anything itself.

    config = BridgeConfig.from_parameters({"vehicle": "polaris", "control_port": 47100})
    for node in plan_bridge(config):
        print(node.plugin, node.node_name, node.parameters)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "PACKAGE",
    "SUBSYSTEMS",
    "BridgeConfig",
    "PlannedNode",
    "Subsystem",
    "plan_bridge",
]

PACKAGE = "acres_bridge"
VEHICLES = ("polaris", "maxxum", "auto")
ParameterValue = bool | int | float | str


@dataclass(frozen=True)
class Subsystem:
    """One subsystem: its toggle (a boolean parameter of the same name), its node class, its vehicles."""

    name: str
    plugin: str  # the entry-point name in the group acres_bridge.components
    vehicles: tuple[str, ...]
    description: str


SUBSYSTEMS: tuple[Subsystem, ...] = (
    Subsystem("ingest", "acres_bridge::Ingest", ("polaris", "maxxum"), "the simulator connection"),
    Subsystem("clock_tf", "acres_bridge::ClockTf", ("polaris", "maxxum"), "/clock and /tf"),
    Subsystem("ins", "acres_bridge::Ins", ("polaris", "maxxum"), "pose and INS topics"),
    Subsystem("perception", "acres_bridge::Perception", ("polaris", "maxxum"), "LiDAR and camera"),
    Subsystem("episode", "acres_bridge::EpisodeClock", ("polaris", "maxxum"), "/sim/episode"),
    Subsystem("dbw", "acres_bridge::Dbw", ("polaris",), "drive-by-wire reports and commands"),
    Subsystem("reset", "acres_bridge::PoseReset", ("polaris", "maxxum"), "/sim/reset"),
)

# Parameters each node class declares (beyond the shared ones every subsystem node has).
_SHARED = ("vehicle", "frame_prefix", "utm_frame")
_NODE_PARAMETERS: dict[str, tuple[str, ...]] = {
    "ingest": (
        "control_host",
        "control_port",
        "reconnect_interval_s",
        "step_timeout_s",
        "simulation_control",
    ),
    "clock_tf": ("publish_clock",),
    "ins": (),
    "perception": (),
    "episode": (),
    "dbw": ("allow_unfenced_commands",),
    "reset": (),
}


@dataclass(frozen=True, kw_only=True)
class BridgeConfig:
    """Everything the plan depends on, validated once."""

    vehicle: str = "polaris"
    control_host: str = "127.0.0.1"
    control_port: int = 47100
    reconnect_interval_s: float = 0.5
    step_timeout_s: float = 60.0
    simulation_control: bool = True
    publish_clock: bool = True
    frame_prefix: str = ""
    utm_frame: str = "utm"
    allow_unfenced_commands: bool = False
    toggles: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.vehicle not in VEHICLES:
            raise ValueError(f"vehicle must be one of {', '.join(VEHICLES)}; found {self.vehicle!r}")
        if not 0 < self.control_port < 65536:
            raise ValueError(f"control_port must be a TCP port (1..65535); found {self.control_port}")
        unknown = set(self.toggles) - {s.name for s in SUBSYSTEMS}
        if unknown:
            raise ValueError(
                f"unknown subsystem toggles {sorted(unknown)}; known: {[s.name for s in SUBSYSTEMS]}"
            )

    def enabled(self, subsystem: str) -> bool:
        return self.toggles.get(subsystem, True)

    @classmethod
    def parameter_defaults(cls) -> dict[str, ParameterValue]:
        """Every parameter of the bridge with its default: the config's fields, one toggle per subsystem."""
        defaults: dict[str, ParameterValue] = {
            f.name: f.default for f in fields(cls) if isinstance(f.default, bool | int | float | str)
        }
        defaults.update({s.name: True for s in SUBSYSTEMS})
        return defaults

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> BridgeConfig:
        """A config from parameter values (missing ones take their defaults); unknown names are refused."""
        defaults = cls.parameter_defaults()
        unknown = set(values) - set(defaults)
        if unknown:
            raise ValueError(f"unknown bridge parameters {sorted(unknown)}")
        merged = {**defaults, **values}
        for name, default in defaults.items():
            value = merged[name]
            expected = type(default)
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                merged[name] = float(value)
            elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise ValueError(f"parameter {name} must be {expected.__name__}; found {value!r}")
        toggles = {s.name: bool(merged.pop(s.name)) for s in SUBSYSTEMS}
        return cls(toggles=toggles, **merged)


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
    for subsystem in SUBSYSTEMS:
        if not config.enabled(subsystem.name):
            continue
        if chosen == "auto" and subsystem.name != "ingest":
            continue
        if chosen != "auto" and chosen not in subsystem.vehicles:
            continue
        names = _NODE_PARAMETERS[subsystem.name] + (() if subsystem.name == "ingest" else _SHARED)
        values = {**_as_dict(config), "vehicle": chosen}
        parameters = {name: values[name] for name in names}
        planned.append(
            PlannedNode(
                subsystem=subsystem.name,
                plugin=subsystem.plugin,
                node_name=subsystem.name,
                namespace=namespace,
                parameters=parameters,
            )
        )
    return planned


def _as_dict(config: BridgeConfig) -> dict[str, ParameterValue]:
    return {f.name: getattr(config, f.name) for f in fields(config) if f.name != "toggles"}
