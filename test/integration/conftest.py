"""Fixtures of the integration tests: the reference simulator and the bridge as real processes,
and a ROS node of the test that subscribes, calls services and reads the graph.

Every process is ended at teardown, also when the test fails; every wait is bounded.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from simulation_interfaces.srv import GetSimulationState, StepSimulation

from acres_bridge.errors import ProcessFailedError
from acres_bridge.processes import (
    SIMULATOR_READY_LINE,
    ChildProcess,
    bridge_command,
    free_port,
    simulator_command,
)
from acres_sim.clock import step_stamp_ns

__all__ = [
    "LATCHED",
    "START_UTC",
    "TIMEOUT_S",
    "Processes",
    "Ros",
    "free_port",
    "step_in_pace",
    "wait_for_line",
]

TIMEOUT_S = 30.0
SETTLE_QUIET_S = 0.3  # Ros.settle: this long without a new message, and everything is here
STATE_SERVICE = "/get_simulation_state"
_WARM_UP_ASK_S = 2.0  # how long one ask of the warm-up waits before it asks again
# The bridge's simulation_interfaces services, served by one node: the warm-up asks one of them.
_SIMULATION_SERVICES = frozenset(
    {
        "/step_simulation",
        "/reset_simulation",
        "/set_simulation_state",
        STATE_SERVICE,
        "/get_simulator_features",
    }
)
START_UTC = "20261002T072309"


def wait_for_line(process: ChildProcess, text: str, timeout_s: float = TIMEOUT_S) -> None:
    """Wait until the process prints a line with `text`; fail the test when it ends or time is up."""
    try:
        process.wait_for_line(text, timeout_s)
    except ProcessFailedError as error:
        pytest.fail(str(error))


_LIVE: list[Processes] = []  # the Processes of the fixtures now in use, for failure reports
_REPORT_LINES = 40


class Processes:
    """Starts the simulator, the bridge and scripts; stops every one of them at teardown."""

    def __init__(self) -> None:
        self.started: list[ChildProcess] = []

    def simulator(
        self, port: int, *extra: str, seed: int = 42, lockstep: bool = True, perception: bool = False
    ) -> ChildProcess:
        """The reference simulator; clouds and images only when the test asks for `perception`."""
        flag = "--perception" if perception else "--no-perception"
        args = simulator_command(
            port, seed=seed, lockstep=lockstep, start_utc=START_UTC, extra=(*extra, flag)
        )
        process = self.script("acres_sim", args)
        wait_for_line(process, SIMULATOR_READY_LINE)
        return process

    def bridge(
        self, port: int, *, env: Mapping[str, str] | None = None, **parameters: bool | int | float | str
    ) -> ChildProcess:
        """The bridge, in `env` (default: localhost_environment(), behind the fence)."""
        return self.script("sim_bridge", bridge_command(port, **parameters), env=env)

    def script(self, name: str, args: list[str], *, env: Mapping[str, str] | None = None) -> ChildProcess:
        process = ChildProcess.start(name, args, env=env)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            process.stop()


@pytest.fixture
def processes() -> Iterator[Processes]:
    started = Processes()
    _LIVE.append(started)
    yield started
    _LIVE.remove(started)
    started.stop_all()


@pytest.fixture(scope="module")
def module_processes() -> Iterator[Processes]:
    started = Processes()
    _LIVE.append(started)
    yield started
    _LIVE.remove(started)
    started.stop_all()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report ends with the last lines of every process it had running."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for started in _LIVE:
            for process in started.started:
                report.sections.append(
                    (f"last output of {process.name}", "\n".join(process.tail(_REPORT_LINES)))
                )


class Ros:
    """The test's own ROS node. It spins only inside wait_until and call, in the test's thread,
    so creating and destroying subscriptions and clients never races the executor."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context, args=[])
        self.node = Node(f"probe_{uuid.uuid4().hex[:8]}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients: dict[tuple[type, str], Any] = {}
        self._collected: list[list[Any]] = []
        self._answered: set[str] = set()  # services that have answered this node

    def wait_until(self, condition: Callable[[], object], what: str, timeout_s: float = TIMEOUT_S) -> None:
        """Spin until condition() holds; fail the test after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout_s} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.01)

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)

    def collect(self, message_type: type, topic: str, qos: QoSProfile | int = 1000) -> list[Any]:
        """A list that fills with every message of the topic."""
        received: list[Any] = []
        self.node.create_subscription(message_type, topic, received.append, qos)
        self._collected.append(received)
        return received

    def settle(
        self, *lists: list[Any], quiet_s: float = SETTLE_QUIET_S, timeout_s: float = TIMEOUT_S
    ) -> None:
        """Spin until no message has come for quiet_s into `lists` (default: every list of collect()).

        After an acknowledged step everything is published; what is still on its way arrives
        without a pause as long as this process gets the CPU, so a quiet spell means it is all
        here, however slow the machine (a fixed sleep would not know)."""
        watched = lists or tuple(self._collected)
        deadline = time.monotonic() + timeout_s
        sizes = [len(x) for x in watched]
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < quiet_s:
            if time.monotonic() > deadline:
                pytest.fail(f"messages still arriving after {timeout_s} s")
            self.executor.spin_once(timeout_sec=0.01)
            now_sizes = [len(x) for x in watched]
            if now_sizes != sizes:
                sizes = now_sizes
                quiet_since = time.monotonic()

    def call(self, service_type: type, name: str, request: Any, timeout_s: float = TIMEOUT_S) -> Any:
        """Call a service and wait for its answer. The client is made once per service and kept, so
        a loop of step requests does not wait for a new client's discovery each time."""
        client = self._client(service_type, name)
        new_server = not client.service_is_ready() or name not in self._answered
        self.wait_until(client.service_is_ready, f"service {name}", timeout_s)
        if name in _SIMULATION_SERVICES and new_server:
            # A server that has just appeared may not have matched this node's response readers
            # yet, and Fast DDS then drops its answer ("failed to send response"). A request that
            # changes nothing, asked again until it is answered, waits for that match (its client
            # is made after this one, so its match comes later); then the request itself goes.
            # (No client is made before it is needed: a client shows its service in the graph.)
            self._until_answered(timeout_s)
        future = client.call_async(request)
        self.wait_until(future.done, f"the answer of {name}", timeout_s)
        self._answered.add(name)
        return future.result()

    def _client(self, service_type: type, name: str) -> Any:
        key = (service_type, name)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(service_type, name)
        return self._clients[key]

    def _until_answered(self, timeout_s: float) -> None:
        """Ask /get_simulation_state until an answer comes (each ask waits a little)."""
        state = self._client(GetSimulationState, STATE_SERVICE)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not state.service_is_ready():
                self.executor.spin_once(timeout_sec=0.05)
                continue
            future = state.call_async(GetSimulationState.Request())
            answer_by = min(deadline, time.monotonic() + _WARM_UP_ASK_S)
            while not future.done() and time.monotonic() < answer_by:
                self.executor.spin_once(timeout_sec=0.01)
            if future.done():
                return
            state.remove_pending_request(future)
        pytest.fail(f"no answer of {STATE_SERVICE} within {timeout_s} s")

    def step(self, steps: int) -> None:
        """Run steps through /step_simulation and check they were acknowledged as done."""
        response = self.call(StepSimulation, "/step_simulation", StepSimulation.Request(steps=steps))
        assert response.result.result == 1, response.result.error_message

    def shutdown(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def step_in_pace(
    ros: Ros,
    received: list[Any],
    stamp_ns: Callable[[Any], int],
    *,
    steps_done: int,
    period_ns: int,
    requests: int,
    steps: int = 12,
) -> list[Any]:
    """Step `requests` requests of `steps` steps in the pace of a subscriber in another process that
    publishes into `received` once per `period_ns` of simulation time (at each multiple of it), and
    return what it published from the last message before the first request on.

    First wait until it has caught up with the `steps_done` steps made so far (its message of the
    newest period boundary came), then make each request only once the messages of the one before
    are in: the subscriber then never has more than one request's samples waiting, so none is
    evicted from its history, however starved its process is (a plain subscriber loses the oldest
    of a burst larger than its depth)."""

    def reached(step: int) -> Callable[[], bool]:
        boundary = step_stamp_ns(step) // period_ns * period_ns
        return lambda: bool(received) and stamp_ns(received[-1]) >= boundary

    ros.wait_until(reached(steps_done), f"the subscriber's message of step {steps_done}")
    start = len(received) - 1
    for request in range(1, requests + 1):
        ros.step(steps)
        steps_done += steps
        ros.wait_until(reached(steps_done), f"the subscriber's messages of request {request}")
    return received[start:]


LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


@pytest.fixture
def ros() -> Iterator[Ros]:
    node = Ros()
    yield node
    node.shutdown()


@pytest.fixture(scope="module")
def module_ros() -> Iterator[Ros]:
    node = Ros()
    yield node
    node.shutdown()
