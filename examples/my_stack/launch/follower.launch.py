"""The stack: the line follower (use_sim_time:=true against the simulator)."""

from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [
            DeclareLaunchArgument("use_sim_time", default_value="false"),
            DeclareLaunchArgument("speed_mps", default_value="2.0"),
            Node(
                package="my_stack",
                executable="line_follower",
                parameters=[
                    {
                        "use_sim_time": LaunchConfiguration("use_sim_time"),
                        "speed_mps": LaunchConfiguration("speed_mps"),
                    }
                ],
                output="screen",
            ),
        ]
    )
