"""The ingest node in process, with a scripted simulator connection in place of the link: each
sample reaches the channel of its class and agent, the session is published, and what the nodes
send on the channels to the simulator reaches the connection."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import rclpy
import samples
from rclpy.context import Context
from rclpy.parameter import Parameter

from acres_bridge.ingest.bus import SampleBus
from acres_bridge.ingest.channels import (
    AGENT_RESET,
    CAN_TX,
    CHANNELS,
    CLOCK,
    DBW_COMMAND,
    DBW_REPORT,
    INS,
    MAXXUM_COMMAND,
    SESSION,
    Flow,
    Session,
)
from acres_bridge.ingest.node import MAX_AGENTS, IngestNode
from acres_bridge.ingest.steps import StepOutcome
from acres_bridge.wire import AgentReset, Clock, DbwCommand, DbwTarget, Hello, SimState, Vehicle


@dataclass
class ScriptedConnection:
    """A SimulatorConnection that records what the ingest asks of it."""

    options: dict[str, Any]
    started: int = 0
    stopped: int = 0
    sent: list[tuple[int, object]] = field(default_factory=list)
    hello: Hello | None = None

    def start(self) -> None:
        self.started += 1

    def stop(self) -> None:
        self.stopped += 1

    def request_steps(self, steps: int, *, timeout_s: float) -> StepOutcome:
        return StepOutcome(True, last_step=steps)

    def abort_pending(self, reason: str) -> None:
        return None

    def send(self, agent: int, sample: object) -> bool:
        self.sent.append((agent, sample))
        return True

    def set_state(self, state: SimState) -> bool:
        return True

    def reset_session(self, reason: str = "") -> bool:
        return True


@dataclass
class Ingest:
    node: IngestNode
    bus: SampleBus
    namespace: str

    @property
    def connection(self) -> ScriptedConnection:
        connection = self.node.connection
        assert isinstance(connection, ScriptedConnection)
        return connection

    def collect(self, key: str) -> list[Any]:
        received: list[Any] = []
        self.bus.subscribe(key, received.append)
        return received


@contextlib.contextmanager
def ingest_node(vehicle: str = "polaris") -> Iterator[Ingest]:
    """An ingest with a scripted connection and a bus of its own, agent 0 a `vehicle`."""
    context = Context()
    rclpy.init(context=context, args=[])
    bus = SampleBus()  # a bus of its own: nothing else of this process sees these samples
    namespace = f"/ingest_{uuid.uuid4().hex[:8]}"
    node = IngestNode(
        context=context,
        namespace=namespace,
        bus=bus,
        connection=lambda **options: ScriptedConnection(options),
        parameter_overrides=[
            Parameter("simulation_control", value=False),
            Parameter("control_port", value=47123),
            Parameter("vehicle", value=vehicle),
        ],
    )
    try:
        yield Ingest(node, bus, namespace)
    finally:
        node.destroy_node()
        context.try_shutdown()


@pytest.fixture
def ingest() -> Iterator[Ingest]:
    with ingest_node() as made:
        yield made


def test_the_connection_is_made_from_the_parameters_and_started(ingest: Ingest) -> None:
    options = ingest.connection.options
    assert (options["host"], options["port"], options["listener"]) == ("127.0.0.1", 47123, ingest.node)
    assert ingest.connection.started == 1


def test_the_session_is_published_when_it_starts_and_when_sensor_meta_arrives(ingest: Ingest) -> None:
    sessions = ingest.collect(SESSION.key(ingest.namespace))  # latched: the one before any session
    assert sessions == [Session(connected=False, hello=None)]
    hello = samples.hello(samples.agent(0), samples.agent(1, Vehicle.MAXXUM))
    ingest.node.on_session(hello)
    ingest.node.on_sample(1, samples.sensor_meta(1, Vehicle.MAXXUM))
    assert [s.connected for s in sessions] == [False, True, True]
    assert sessions[-1].hello == hello
    assert sessions[-1].meta(1) == samples.sensor_meta(1, Vehicle.MAXXUM)
    assert sessions[-1].meta(0) is None


def test_each_sample_reaches_the_channel_of_its_class_and_agent(ingest: Ingest) -> None:
    ingest.node.on_session(samples.hello(samples.agent(0), samples.agent(1)))
    clocks = ingest.collect(CLOCK.key(ingest.namespace))
    first, second = (ingest.collect(INS.key(ingest.namespace, agent)) for agent in (0, 1))
    ingest.node.on_sample(0, Clock(step=1, stamp_ns=8_333_333))
    ingest.node.on_sample(1, samples.ins_sample(1))
    ingest.node.on_sample(7, samples.ins_sample(1))  # an agent the session lacks: nowhere
    assert clocks == [Clock(step=1, stamp_ns=8_333_333)]
    assert (first, second) == ([], [samples.ins_sample(1)])


def test_what_the_nodes_send_reaches_the_connection_for_their_agent(ingest: Ingest) -> None:
    ingest.node.on_session(samples.hello(samples.agent(0), samples.agent(1)))
    enable = DbwCommand(seq=0, target=DbwTarget.ENABLE, cmd_type=0, flags=0, cmd=0.0)
    reset = AgentReset(agent=0, x_m=1.0, y_m=2.0, yaw_rad=0.5)
    for key, sample in (
        (DBW_COMMAND.key(ingest.namespace, 1), enable),
        (AGENT_RESET.key(ingest.namespace, 0), reset),
    ):
        ingest.bus.register_producer(key)  # a node of this process, as the dbw and reset nodes are
        ingest.bus.publish(key, sample)
        ingest.bus.unregister_producer(key)
    assert ingest.connection.sent == [(1, enable), (0, reset)]


def test_agents_beyond_the_limit_get_no_channels(ingest: Ingest) -> None:
    agents = [samples.agent(i, name=f"a{i}") for i in range(MAX_AGENTS + 2)]
    ingest.node.on_session(samples.hello(*agents))
    assert ingest.bus.has_producer(INS.key(ingest.namespace, MAX_AGENTS - 1))
    assert not ingest.bus.has_producer(INS.key(ingest.namespace, MAX_AGENTS))


def test_destroying_the_node_stops_the_connection_and_closes_every_channel(ingest: Ingest) -> None:
    key = INS.key(ingest.namespace, 0)
    assert ingest.bus.has_producer(key)
    ingest.node.destroy_node()
    assert ingest.connection.stopped == 1
    assert not ingest.bus.has_producer(key)


def _topics(ingest: Ingest) -> set[str]:
    """The ingest's own endpoints' topics (its publishers and subscriptions)."""
    node = ingest.node
    names = node.get_publisher_names_and_types_by_node(node.get_name(), node.get_namespace())
    names += node.get_subscriber_names_and_types_by_node(node.get_name(), node.get_namespace())
    return {name for name, _types in names}


def test_the_internal_topics_are_hidden_and_only_those_of_the_sessions_vehicles() -> None:
    with ingest_node("polaris") as polaris:
        topics = _topics(polaris)
        assert DBW_COMMAND.key(polaris.namespace, 0) in topics
        assert {MAXXUM_COMMAND.key(polaris.namespace, 0), CAN_TX.key(polaris.namespace, 0)}.isdisjoint(topics)
        assert all("/_acres_ingest/" in topic for topic in topics if "acres_ingest" in topic)
        polaris.node.on_session(samples.hello(samples.agent(0), samples.agent(1, Vehicle.MAXXUM)))
        topics = _topics(polaris)
        assert MAXXUM_COMMAND.key(polaris.namespace, 1) in topics  # agent 1 is a Maxxum
        assert DBW_REPORT.key(polaris.namespace, 1) not in topics
        assert MAXXUM_COMMAND.key(polaris.namespace, 0) not in topics
    with ingest_node("auto") as auto:  # the vehicle comes with the session: no agent channel before
        assert not auto.bus.has_producer(INS.key(auto.namespace, 0))
        auto.node.on_session(samples.hello(samples.agent(0, Vehicle.MAXXUM)))
        assert auto.bus.has_producer(INS.key(auto.namespace, 0))
        assert MAXXUM_COMMAND.key(auto.namespace, 0) in _topics(auto)


def test_without_the_fence_no_command_leaves_and_no_command_topic_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The side door of an unfenced bridge whose own dbw, maxxum or can node is off: a peer of the
    # network publishes on the internal command channels, or a node of this process sends there.
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")
    with ingest_node("polaris") as unfenced:
        assert not unfenced.node.gate.allowed
        commands = [channel for channel in CHANNELS if channel.flow is Flow.TO_SIMULATOR]
        topics = _topics(unfenced)
        assert not any(channel.key(unfenced.namespace, 0) in topics for channel in commands)
        enable = DbwCommand(seq=0, target=DbwTarget.ENABLE, cmd_type=0, flags=0, cmd=0.0)
        reset = AgentReset(agent=0, x_m=1.0, y_m=2.0, yaw_rad=0.5)
        for key, sample in (
            (DBW_COMMAND.key(unfenced.namespace, 0), enable),
            (AGENT_RESET.key(unfenced.namespace, 0), reset),
        ):
            unfenced.bus.register_producer(key)
            unfenced.bus.publish(key, sample)
            unfenced.bus.unregister_producer(key)
        assert unfenced.connection.sent == []
        assert unfenced.node.refused["unfenced"] == 2
