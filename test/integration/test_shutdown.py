"""SIGINT and SIGTERM end the bridge cleanly whatever it is doing: exit status 0, every node
unloaded, no traceback, and not by the last-resort deadline (which would say so). The simulator
likewise ends in the middle of a long step request. (`ros2 launch` and SIGINT: test_ros2_cli.)"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from rosgraph_msgs.msg import Clock
from simulation_interfaces.srv import StepSimulation

from acres_bridge.processes import ChildProcess, simulator_command
from acres_bridge.shutdown import STOP_DEADLINE_S
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST

from .conftest import Processes, Ros, free_port, wait_for_line

pytestmark = pytest.mark.integration

SIGNALS = [signal.SIGINT, signal.SIGTERM]
UNCLEAN = ("Traceback", "context is invalid", "did not end within", "Exception in thread")
LAST_UNLOADED = "Unloaded /reset"  # the newest node of a Polaris bridge goes last (oldest first)


def stop(process: ChildProcess, signum: signal.Signals) -> tuple[int, float]:
    """Send the signal; the exit status and the seconds it took (reported, not judged: the
    process's own deadline bounds it, and says so if it ever had to)."""
    started = time.monotonic()
    process.popen.send_signal(signum)
    code = process.popen.wait(timeout=30.0)
    process.stop()  # collects the rest of the output
    return code, time.monotonic() - started


def assert_clean(process: ChildProcess, code: int, seconds: float) -> None:
    output = process.output
    assert code == 0, output
    for text in UNCLEAN:
        assert text not in output, output
    assert LAST_UNLOADED in output, output
    assert seconds < 30.0, f"took {seconds:.1f} s (the deadline is {STOP_DEADLINE_S} s)"


def connected_bridge(processes: Processes, ros: Ros) -> tuple[ChildProcess, list[Clock]]:
    """A simulator in lockstep, a bridge connected to it, and the test's /clock subscription."""
    port = free_port()
    processes.simulator(port)
    return processes.bridge(port), ros.collect(Clock, "/clock", 100)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_connected_bridge_with_subscribers_ends_cleanly(
    processes: Processes, ros: Ros, signum: signal.Signals
) -> None:
    bridge, received = connected_bridge(processes, ros)
    ros.step(24)
    ros.wait_until(lambda: received, "/clock")
    assert_clean(bridge, *stop(bridge, signum))


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_bridge_that_is_reconnecting_ends_cleanly(processes: Processes, signum: signal.Signals) -> None:
    bridge = processes.bridge(free_port())  # nothing listens there: it keeps trying
    wait_for_line(bridge, "connecting to the simulator")
    wait_for_line(bridge, LAST_UNLOADED.replace("Unloaded", "Loaded acres_bridge::PoseReset as"))
    assert_clean(bridge, *stop(bridge, signum))


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_bridge_in_the_middle_of_a_long_step_request_ends_cleanly(
    processes: Processes, ros: Ros, signum: signal.Signals
) -> None:
    bridge, received = connected_bridge(processes, ros)
    client = ros.node.create_client(StepSimulation, "/step_simulation")
    ros.wait_until(client.service_is_ready, "/step_simulation")
    client.call_async(StepSimulation.Request(steps=24_000))  # 200 simulated seconds: seconds of work
    ros.wait_until(lambda: len(received) > 50, "the request's first steps")
    assert_clean(bridge, *stop(bridge, signum))


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_the_simulator_in_the_middle_of_a_long_step_request_ends_cleanly(
    processes: Processes, ros: Ros, signum: signal.Signals
) -> None:
    port = free_port()
    simulator = processes.simulator(port)
    processes.bridge(port)
    received = ros.collect(Clock, "/clock", 100)
    client = ros.node.create_client(StepSimulation, "/step_simulation")
    ros.wait_until(client.service_is_ready, "/step_simulation")
    # the longest request there is: 5 simulated minutes, seconds of work on any machine
    answer = client.call_async(StepSimulation.Request(steps=MAX_STEPS_PER_REQUEST))
    ros.wait_until(lambda: len(received) > 50, "the request's first steps")
    code, seconds = stop(simulator, signum)
    assert code == 0, simulator.output
    assert "Traceback" not in simulator.output
    assert seconds < 30.0, f"took {seconds:.1f} s"  # a signal ends the request, it does not wait
    # the bridge answers the request: the simulator went away before it was done
    ros.wait_until(answer.done, "the answer of the interrupted request")
    assert answer.result().result.result != 1


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_the_simulator_stopped_while_it_builds_its_world_ends_cleanly(
    processes: Processes, tmp_path: Path, signum: signal.Signals
) -> None:
    """As `ros2 launch` does when a launch ends at once: the stop arrives before the simulator
    listens. It ends with 0 and no traceback, and leaves no episode log of a session that never ran."""
    log = tmp_path / "session.mcap"
    args = simulator_command(
        free_port(),
        seed=42,
        lockstep=True,
        extra=("--perception", "--log-level", "DEBUG", "--episode-log", str(log)),
    )
    simulator = processes.script("acres_sim", args)
    wait_for_line(simulator, "building the world")
    code, _ = stop(simulator, signum)
    assert code == 0, simulator.output
    assert "Traceback" not in simulator.output
    if "listening on" not in simulator.output:  # stopped before it served, as it almost always is
        assert not log.exists()
