"""A test kit for users' own stacks: launch_testing and pytest against the simulator.

- ``simulation_launch_description(...)``: the simulator and the bridge as launch actions, with a
  free port and a DDS domain of their own, for a launch_testing ``generate_test_description``;
- ``Sim``: steps the lockstep simulation and keeps what came, judged in simulated time;
- ``assert_within_route``, ``assert_no_dbw_timeout``, ... : the scenario criteria as assertions;
- the pytest fixture ``acres_sim`` (plugin acres_bridge.testing.pytest_plugin, registered with
  pytest when acres_bridge is installed): a session of its own per test, closed afterwards.

docs/testing.md has both styles and the example package examples/my_stack.
"""

from acres_bridge.testing.assertions import (
    assert_criteria,
    assert_goal_reached,
    assert_max_speed,
    assert_min_distance,
    assert_no_dbw_fault,
    assert_no_dbw_override,
    assert_no_dbw_timeout,
    assert_topic_rate,
    assert_within_route,
    judge,
)
from acres_bridge.testing.session_sim import SessionSim
from acres_bridge.testing.sim import DEFAULT_TOPICS, Sim, SimTimeoutError

__all__ = [
    "DEFAULT_TOPICS",
    "SessionSim",
    "Sim",
    "SimTimeoutError",
    "assert_criteria",
    "assert_goal_reached",
    "assert_max_speed",
    "assert_min_distance",
    "assert_no_dbw_fault",
    "assert_no_dbw_override",
    "assert_no_dbw_timeout",
    "assert_topic_rate",
    "assert_within_route",
    "judge",
    "simulation_launch_description",
]


def __getattr__(name: str) -> object:
    # launch and launch_ros come from the ROS 2 wheels: imported only by who asks for this.
    if name == "simulation_launch_description":
        from acres_bridge.testing.launch import simulation_launch_description  # noqa: PLC0415

        return simulation_launch_description
    raise AttributeError(name)
