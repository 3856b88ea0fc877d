"""SteppingClient: lockstep that loses nothing, for a user's own node.

    client = SteppingClient(node, ["/clock", "/vehicle/odom", "/lidar/points"])
    batch = client.step(12)   # returns when every message of those 12 steps has arrived here
    for step in batch.steps:
        odom = step["/vehicle/odom"]
    client.reset()

An acknowledged step answers once the bridge has published its messages; a subscriber in another
process may not have taken them yet, and one with the spec's depth of 10 can lose some of a large
request's burst. The client sends the steps in requests small enough to arrive whole, subscribes
with a history deep enough for each, reads the bridge's delivery report of each request
(acres_bridge.ingest.deliveries) and waits until it holds every message the report lists.
docs/simulation_control.md has the contract.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from acres_interfaces.msg import StepDelivery
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from simulation_interfaces.msg import Result, SimulationState
from simulation_interfaces.srv import GetSimulationState, ResetSimulation, StepSimulation

from acres_bridge.errors import SteppingError
from acres_bridge.ingest.deliveries import DELIVERIES_DEPTH, STEP_DELIVERIES
from acres_bridge.lockstep.batch import StepBatch, shortfall, sort_into_steps
from acres_bridge.msg_profiles import Direction, MsgProfiles, RateKind, TopicSpec, load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST

__all__ = ["SteppingClient", "history_depth"]

PHYSICS_HZ: Final = 120.0
DEFAULT_CHUNK_STEPS: Final = 30  # the largest request sent at once: see docs/simulation_control.md
EVENT_DEPTH: Final = 100  # the history of a topic without a rate (episode changes)
_WARM_UP_ASK_S: Final = 2.0
_SPIN_S: Final = 0.05


def history_depth(spec: TopicSpec, steps: int) -> int:
    """A history that holds every message `steps` steps can make on the topic, and some."""
    if spec.rate_kind is not RateKind.PERIODIC or spec.rate_hz is None:
        return EVENT_DEPTH
    return (math.ceil(steps * spec.rate_hz / PHYSICS_HZ) + 1) * spec.burst + 10


class SteppingClient:
    """Steps a lockstep session and hands over every watched message of each request, by step.

    `topics` are names as msg_profiles writes them for `vehicle` (or the session's /sim/episode);
    `namespace` is the bridge's. Its subscriptions have the spec's reliability and durability and
    a history deep enough for `chunk_steps` steps. The client spins `node` itself while it waits
    (in an executor of its own unless `executor` is given); pass ``spin=False`` when another thread
    already spins the node, and the client then only waits. One client steps a session at a time.
    """

    def __init__(
        self,
        node: Node,
        topics: Sequence[str],
        *,
        vehicle: str = "polaris",
        namespace: str = "",
        chunk_steps: int = DEFAULT_CHUNK_STEPS,
        timeout_s: float = 60.0,
        executor: Executor | None = None,
        spin: bool = True,
    ) -> None:
        if not 1 <= chunk_steps <= MAX_STEPS_PER_REQUEST:
            raise ValueError(f"chunk_steps must be 1..{MAX_STEPS_PER_REQUEST}, found {chunk_steps}")
        if not topics:
            raise ValueError("watch at least one topic")
        self.node = node
        self.chunk_steps = chunk_steps
        self.timeout_s = timeout_s
        self._changed = threading.Condition()
        self._received: dict[str, list[Any]] = {}
        self._deliveries: list[Any] = []
        self._ready = False
        self._subscriptions: dict[str, Any] = {}
        profiles = load_profiles()
        for name in topics:
            spec = _find(profiles, vehicle, name)
            topic = resolve_name(spec.ros_name, namespace)
            self._received[topic] = []
            self._subscriptions[topic] = node.create_subscription(
                spec.message_class(), topic, self._keeper(topic), self._qos(spec)
            )
        self.topics: tuple[str, ...] = tuple(self._received)
        self._delivery_subscription = node.create_subscription(
            StepDelivery,
            STEP_DELIVERIES,
            self._on_delivery,
            QoSProfile(depth=DELIVERIES_DEPTH, reliability=ReliabilityPolicy.RELIABLE),
        )
        self._step = node.create_client(StepSimulation, "/step_simulation")
        self._reset = node.create_client(ResetSimulation, "/reset_simulation")
        self._state = node.create_client(GetSimulationState, "/get_simulation_state")
        self._executor: Executor | None = None
        if spin:
            self._executor = executor or SingleThreadedExecutor(context=node.context)
            self._executor.add_node(node)

    def _qos(self, spec: TopicSpec) -> QoSProfile:
        assert spec.qos is not None
        qos = spec.qos.to_rclpy()
        qos.history = HistoryPolicy.KEEP_LAST
        qos.depth = history_depth(spec, self.chunk_steps)
        return qos

    # ---- requests ----------------------------------------------------------------------------

    def step(self, steps: int = 1) -> StepBatch:
        """Run `steps` physics steps; return when every watched message they made has arrived.

        The steps go to the bridge in requests of at most chunk_steps, each received whole before
        the next is sent: a burst the size of a chunk is what a subscriber on this machine takes
        without loss (docs/simulation_control.md). Raises SteppingError when a request is refused,
        or when something it made has not arrived within timeout_s (the message names each topic
        and how many are missing)."""
        if not 1 <= steps <= MAX_STEPS_PER_REQUEST:
            raise ValueError(f"steps must be 1..{MAX_STEPS_PER_REQUEST}, found {steps}")
        batches: list[StepBatch] = []
        left = steps
        while left > 0:
            chunk = min(left, self.chunk_steps)
            batches.append(self._request(chunk))
            left -= chunk
        if len(batches) == 1:
            return batches[0]
        return StepBatch(
            batches[0].first_step,
            batches[-1].last_step,
            tuple(step for batch in batches for step in batch.steps),
        )

    def _request(self, steps: int) -> StepBatch:
        """One /step_simulation request, and its messages once all have arrived."""
        deadline = time.monotonic() + self.timeout_s
        self._warm_up(deadline)
        with self._changed:
            for received in self._received.values():
                received.clear()  # what came between requests belongs to none of them
            self._deliveries.clear()
        response = self._call(self._step, StepSimulation.Request(steps=steps), deadline)
        if response.result.result != Result.RESULT_OK:
            raise SteppingError(f"/step_simulation refused {steps} steps: {response.result.error_message}")
        self._wait(
            lambda: bool(self._deliveries),
            deadline,
            lambda: (
                f"no delivery report on {STEP_DELIVERIES} for the request of {steps} steps: "
                "is the bridge that serves /step_simulation this version of acres_bridge?"
            ),
        )
        with self._changed:
            delivery = self._deliveries.pop(0)
        first, last = int(delivery.first_step), int(delivery.last_step)
        if last - first + 1 != steps:
            raise SteppingError(
                f"the bridge reported steps {first}..{last} for a request of {steps}: "
                "another client is stepping the session"
            )
        reported = {t.topic: [int(s) for s in t.steps] for t in delivery.topics}
        absent = [t for t in self.topics if t not in reported]
        if absent:
            raise SteppingError(
                f"the bridge that serves /step_simulation does not publish {', '.join(absent)}; "
                f"it publishes {', '.join(sorted(reported))}"
            )
        due = {t: reported[t] for t in self.topics}
        self._wait(
            lambda: not shortfall(due, self._received),
            deadline,
            lambda: _missing(first, last, due, self._received),
        )
        with self._changed:
            taken = {t: list(self._received[t]) for t in self.topics}
        return sort_into_steps(first, last, due, taken)

    def reset(self) -> None:
        """A new episode of the whole session (/reset_simulation, SCOPE_DEFAULT)."""
        deadline = time.monotonic() + self.timeout_s
        self._warm_up(deadline)
        response = self._call(self._reset, ResetSimulation.Request(), deadline)
        if response.result.result != Result.RESULT_OK:
            raise SteppingError(f"/reset_simulation failed: {response.result.error_message}")

    def destroy(self) -> None:
        """Remove the client's subscriptions and service clients from the node."""
        if self._executor is not None:
            self._executor.remove_node(self.node)
        for subscription in (*self._subscriptions.values(), self._delivery_subscription):
            self.node.destroy_subscription(subscription)
        for client in (self._step, self._reset, self._state):
            self.node.destroy_client(client)

    # ---- waiting -----------------------------------------------------------------------------

    def _warm_up(self, deadline: float) -> None:
        """Once: the services are up and have answered this node (Fast DDS drops the answer to a
        client that has not yet matched), the bridge is connected to its simulator (a bridge and a
        simulator started together, as a launch file does, take a moment to meet), and every
        watched topic has matched the bridge."""
        if self._ready:
            return
        self._wait(self._step.service_is_ready, deadline, lambda: "no /step_simulation: is a bridge running?")
        while True:
            future = self._state.call_async(GetSimulationState.Request())
            try:
                self._wait(future.done, min(deadline, time.monotonic() + _WARM_UP_ASK_S), lambda: "")
            except SteppingError:
                self._state.remove_pending_request(future)
                if time.monotonic() >= deadline:
                    raise SteppingError("/get_simulation_state never answered") from None
                continue
            if future.result().state.state != SimulationState.STATE_NO_WORLD:
                break
            if time.monotonic() >= deadline:
                raise SteppingError(f"the bridge was not connected to a simulator within {self.timeout_s} s")
            with contextlib.suppress(SteppingError):  # a pause before asking again
                self._wait(lambda: False, min(deadline, time.monotonic() + _SPIN_S), lambda: "")
        subscriptions = {**self._subscriptions, STEP_DELIVERIES: self._delivery_subscription}
        self._wait(
            lambda: all(s.get_publisher_count() > 0 for s in subscriptions.values()),
            deadline,
            lambda: (
                "no publisher matched "
                + ", ".join(t for t, s in subscriptions.items() if s.get_publisher_count() == 0)
            ),
        )
        self._ready = True

    def _call(self, client: Any, request: Any, deadline: float) -> Any:
        future = client.call_async(request)
        if self._executor is None:
            future.add_done_callback(lambda _future: self._notify())
        try:
            self._wait(future.done, deadline, lambda: f"no answer of {client.srv_name}")
        except SteppingError:
            client.remove_pending_request(future)
            raise
        return future.result()

    def _wait(self, condition: Callable[[], bool], deadline: float, what: Callable[[], str]) -> None:
        """Until condition() holds (spinning the node, or waiting for the thread that does)."""
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SteppingError(f"timed out after {self.timeout_s} s: {what()}")
            if self._executor is not None:
                self._executor.spin_once(timeout_sec=min(_SPIN_S, remaining))
            else:
                with self._changed:
                    self._changed.wait(min(_SPIN_S, remaining))

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _keeper(self, topic: str) -> Callable[[Any], None]:
        received = self._received[topic]

        def keep(message: Any) -> None:
            with self._changed:
                received.append(message)
                self._changed.notify_all()

        return keep

    def _on_delivery(self, message: Any) -> None:
        with self._changed:
            self._deliveries.append(message)
            self._changed.notify_all()


def _find(profiles: MsgProfiles, vehicle: str, name: str) -> TopicSpec:
    profiles.table(vehicle)  # KeyError naming the tables for a vehicle msg_profiles does not have
    for table in (vehicle, "session"):
        try:
            spec = profiles.topic(table, name)
        except KeyError:
            continue
        if spec.qos is not None and spec.direction is not Direction.SUBSCRIBE:
            return spec
    raise ValueError(f"{name!r} is not a topic the bridge publishes for a {vehicle} (msg_profiles)")


def _missing(first: int, last: int, due: dict[str, list[int]], received: dict[str, list[Any]]) -> str:
    short = shortfall(due, received)
    listed = ", ".join(f"{t} {len(due[t]) - n} of {len(due[t])} received" for t, n in sorted(short.items()))
    return f"steps {first}..{last}: still missing {sum(short.values())} messages ({listed})"
