"""Launch the bridge: one container with the subsystems of a Polaris or a Maxxum.

    ros2 launch acres_bridge sim_bridge.launch.py vehicle:=polaris control_port:=47100
    ros2 launch acres_bridge sim_bridge.launch.py vehicle:=maxxum namespace:=maxxum ins:=false

Every parameter of the bridge is a launch argument with its default from acres_bridge.plan;
which nodes run is decided by acres_bridge.plan.plan_bridge, the same code the sim_bridge
executable runs. vehicle:=auto or agents:=auto starts the sim_bridge executable itself, which
plans once the simulator has said which agents the session has and which vehicle each is.
"""

from __future__ import annotations

import signal
from typing import Any

import launch.logging
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch.utilities.signal_management import AsyncSafeSignalManager
from launch_ros.actions import ComposableNodeContainer, Node
from launch_ros.descriptions import ComposableNode

from acres_bridge.plan import PARAMETER_DESCRIPTIONS, BridgeConfig, plan_bridge
from launch import LaunchContext, LaunchDescription

_log = launch.logging.get_logger("sim_bridge.launch")
_LAUNCH_ONLY = ("namespace",)
# What `ros2 launch --launch-prefix` and `--launch-prefix-filter` add to the arguments.
_ROS2_LAUNCH_OPTIONS = ("launch-prefix", "launch-prefix-filter")


class LaunchArgumentError(ValueError):
    """A launch argument this file does not know, or one whose value it cannot take."""


def _typed(name: str, text: str, default: Any) -> Any:
    """The value of launch argument `name` as the type of its default; the error names the argument."""
    if isinstance(default, bool):
        if text.lower() not in ("true", "false"):
            raise LaunchArgumentError(f"launch argument {name}: expected true or false, found {text!r}")
        return text.lower() == "true"
    try:
        return type(default)(text)
    except ValueError:
        kind = (
            "an integer" if isinstance(default, int) else "a number" if isinstance(default, float) else "text"
        )
        raise LaunchArgumentError(f"launch argument {name}: expected {kind}, found {text!r}") from None


def _refuse_unknown(argv: list[str], known: set[str]) -> None:
    """Refuse a name:=value of the command line that is no argument of this file (launch ignores it)."""
    given = [arg.split(":=", 1)[0] for arg in argv if ":=" in arg]
    unknown = sorted({name for name in given if name not in known and name not in _ROS2_LAUNCH_OPTIONS})
    if unknown:
        raise LaunchArgumentError(
            f"unknown launch argument {', '.join(unknown)}; sim_bridge.launch.py takes "
            f"{', '.join(sorted(known))} (ros2 launch acres_bridge sim_bridge.launch.py --show-args)"
        )


def _bridge(context: LaunchContext) -> list[Any]:
    """The bridge's processes, or LaunchArgumentError before any of them starts."""
    defaults = BridgeConfig.parameter_defaults()
    _refuse_unknown(list(context.argv), {*defaults, *_LAUNCH_ONLY})
    values = {
        name: _typed(name, LaunchConfiguration(name).perform(context), default)
        for name, default in defaults.items()
    }
    namespace = LaunchConfiguration("namespace").perform(context)
    try:
        config = BridgeConfig.from_parameters(values)
    except ValueError as error:
        raise LaunchArgumentError(f"launch argument {error}") from None
    if config.vehicle == "auto" or config.agents != "0":
        return [
            Node(
                package="acres_bridge",
                executable="sim_bridge",
                namespace=namespace,
                parameters=[values],
                output="screen",
            )
        ]
    nodes = [
        ComposableNode(
            package=planned.package,
            plugin=planned.plugin,
            name=planned.node_name,
            namespace=namespace,
            parameters=[planned.parameters],
        )
        for planned in plan_bridge(config)
    ]
    return [
        ComposableNodeContainer(
            name="sim_bridge",
            namespace=namespace,
            package="acres_bridge",
            executable="component_container",
            composable_node_descriptions=nodes,
            output="screen",
        )
    ]


def _stop_on_sigterm(context: LaunchContext) -> list[Any]:
    """Make SIGTERM (what `docker stop`, systemd and Kubernetes send) end the launch as Ctrl-C does:
    each process stopped in turn, then exit 0. Left as it is, SIGTERM ends the launch process at
    once (nothing installs a Python handler for it) and leaves every process it started running;
    launch's own handler, were it reached, would only cancel the launch, with the same result.

    launch dispatches signals through its AsyncSafeSignalManager, which has no public accessor:
    this takes the running one, gives SIGTERM its SIGINT handler, and installs a Python handler
    that lets the signal through to it. Without that manager the launch keeps launch's behaviour."""
    manager = getattr(AsyncSafeSignalManager, "_AsyncSafeSignalManager__current", None)
    if manager is None:
        return []
    on_sigint = manager.handle(signal.SIGINT, None)
    manager.handle(signal.SIGINT, on_sigint)
    if on_sigint is None:
        return []

    def on_sigterm(signum: int) -> None:
        _log.warning("SIGTERM: stopping the launched processes as for Ctrl-C")
        on_sigint(signal.SIGINT)

    manager.handle(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGTERM, lambda signum, frame: None)  # the manager's wakeup fd does the rest
    return []


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            name,
            default_value=str(default).lower() if isinstance(default, bool) else str(default),
            description=PARAMETER_DESCRIPTIONS[name],
        )
        for name, default in BridgeConfig.parameter_defaults().items()
    ]
    arguments.append(
        DeclareLaunchArgument(
            "namespace", default_value="", description="the namespace of the bridge's nodes"
        )
    )
    return LaunchDescription(
        [*arguments, OpaqueFunction(function=_stop_on_sigterm), OpaqueFunction(function=_bridge)]
    )
