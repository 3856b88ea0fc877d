"""Launch the bridge: one container with the subsystems of a Polaris or a Maxxum.

    ros2 launch acres_bridge sim_bridge.launch.py vehicle:=polaris control_port:=47100
    ros2 launch acres_bridge sim_bridge.launch.py vehicle:=maxxum namespace:=maxxum ins:=false

Every parameter of the bridge is a launch argument with its default from acres_bridge.plan;
which nodes run is decided by acres_bridge.plan.plan_bridge, the same code the sim_bridge
executable runs. vehicle:=auto or agents:=auto starts the sim_bridge executable itself, which
plans once the simulator has said which agents the session has and which vehicle each is.
"""

from __future__ import annotations

from typing import Any

from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import ComposableNodeContainer, Node
from launch_ros.descriptions import ComposableNode

from acres_bridge.plan import BridgeConfig, plan_bridge
from launch import LaunchContext, LaunchDescription


def _typed(text: str, default: Any) -> Any:
    if isinstance(default, bool):
        if text.lower() not in ("true", "false"):
            raise ValueError(f"expected true or false, found {text!r}")
        return text.lower() == "true"
    return type(default)(text)


def _bridge(context: LaunchContext) -> list[Any]:
    defaults = BridgeConfig.parameter_defaults()
    values = {name: _typed(LaunchConfiguration(name).perform(context), d) for name, d in defaults.items()}
    namespace = LaunchConfiguration("namespace").perform(context)
    config = BridgeConfig.from_parameters(values)
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


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            name, default_value=str(default).lower() if isinstance(default, bool) else str(default)
        )
        for name, default in BridgeConfig.parameter_defaults().items()
    ]
    arguments.append(DeclareLaunchArgument("namespace", default_value=""))
    return LaunchDescription([*arguments, OpaqueFunction(function=_bridge)])
