"""The line follower against the ACRES simulator, with the pytest fixture of acres_bridge's test kit:
a simulator and a bridge in a session of their own for this test, ended after it."""

import pytest

from acres_bridge.testing import SessionSim, assert_no_dbw_timeout, assert_topic_rate, assert_within_route

# The follower's 50 Hz timer runs on simulated time: each step waits for the commands it owes, so
# the test judges the same follower whatever the machine's load.
pytestmark = pytest.mark.acres_sim(vehicle="polaris", seed=7, stack_rates={"/vehicle/ulc/cmd": 50})


def test_the_follower_holds_the_polaris_on_the_route(acres_sim: SessionSim) -> None:
    acres_sim.start_stack(["ros2", "launch", "my_stack", "follower.launch.py", "use_sim_time:=true"])
    acres_sim.wait_for_stack()
    started = acres_sim.now
    acres_sim.wait_for(
        lambda sim: sim.latest("/vehicle/odom").twist.twist.linear.x > 1.5,
        sim_seconds=10,
        what="the Polaris at 1.5 m/s",
    )
    acres_sim.step(seconds=15)
    assert_within_route(acres_sim, max_xte=0.3)
    assert_no_dbw_timeout(acres_sim)
    assert_topic_rate(acres_sim, "/vehicle/ulc/cmd", min_hz=20, after_s=started + 1.0)
