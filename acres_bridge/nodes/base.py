"""What every subsystem node shares: its agent, its frames, msg_profiles, its ingest channels.

Parameters of every subsystem node:
  vehicle          polaris | maxxum: which table of msg_profiles names the topics
  agent            the agent index this node serves (0 = agent 0)
  ingest_namespace the namespace of the ingest node ("" = this node's own namespace)
  frame_prefix     prefix of this vehicle's frames, e.g. "polaris2/" (spec: Frames)
  utm_frame        the name of the utm frame
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar, TypeVar

from rclpy.publisher import Publisher

from acres_bridge.convert.frame_names import FrameNames, frame_names
from acres_bridge.errors import ParameterError
from acres_bridge.ingest.acks import ACKS, AckWait
from acres_bridge.ingest.channels import CommandOutlet, IngestChannel, SampleSubscription
from acres_bridge.ingest.command_gate import CommandGate
from acres_bridge.ingest.deliveries import LEDGER, DeliveryLedger
from acres_bridge.msg_profiles import Direction, MsgProfiles, RateKind, TopicSpec, load_profiles
from acres_bridge.nodes.command_subscription import CommandSubscription
from acres_bridge.nodes.publish_taps import TAPS, PublishTaps
from acres_bridge.publisher_events import NodeWithoutPublisherEvents
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["StepPublisher", "SubsystemNode", "profiles"]

S = TypeVar("S")
T = TypeVar("T")
REFUSAL_LOG_S = 1.0  # a refusal's warning at most this often (every refusal is counted)


@cache
def profiles() -> MsgProfiles:
    """msg_profiles, loaded and validated once per process."""
    return load_profiles()


class StepPublisher:
    """A publisher whose every message names the physics step that made it, for the delivery report
    of lockstep (acres_bridge.ingest.deliveries), is noted for the wait for its readers'
    acknowledgements (acres_bridge.ingest.acks), and is shown to the taps on its topic
    (acres_bridge.nodes.publish_taps)."""

    def __init__(
        self,
        publisher: Publisher,
        ledger: DeliveryLedger = LEDGER,
        taps: PublishTaps = TAPS,
        acks: AckWait = ACKS,
    ) -> None:
        self.publisher = publisher
        self.topic: str = publisher.topic_name  # fully qualified
        self._ledger = ledger
        self._taps = taps
        self._acks = acks
        ledger.register(self.topic)
        taps.register(self.topic)

    def publish(self, message: Any, step: int) -> None:
        self.publisher.publish(message)
        self._handed_on(step, lambda: message)

    def publish_serialized(self, data: bytes, step: int, message: Callable[[], Any]) -> None:
        """Publish a message already serialized (acres_bridge.convert.cdr); `message` makes the
        same message as an object, called only for the taps, when the topic has any."""
        self.publisher.publish(data)
        self._handed_on(step, message)

    def _handed_on(self, step: int, message: Callable[[], Any]) -> None:
        """What follows every publish: the step into the delivery report, the writer to the wait
        for acknowledgements, the message to the taps."""
        self._ledger.record(self.topic, step)
        self._acks.wrote(self.publisher)
        taps = self._taps.taps.get(self.topic, ())
        if taps:
            made = message()
            for tap in taps:
                tap(made)

    def wanted(self) -> bool:
        """Whether anyone reads the topic now: a subscriber, or a tap (the live view)."""
        return self.publisher.get_subscription_count() > 0 or bool(self._taps.taps.get(self.topic))

    def close(self) -> None:
        """Leave the report and the taps (the publisher itself ends with its node)."""
        self._ledger.unregister(self.topic)
        self._taps.unregister(self.topic)


class SubsystemNode(NodeWithoutPublisherEvents):
    """A node of one subsystem of one vehicle: publishers from msg_profiles, samples from the ingest."""

    DEFAULT_NODE_NAME = "subsystem"
    # The one vehicle a node serves and its error for another ({vehicle}); None: it serves either.
    SERVES: ClassVar[tuple[Vehicle, str] | None] = None

    def __init__(self, **node_options: Any) -> None:
        node_options.setdefault("node_name", self.DEFAULT_NODE_NAME)
        super().__init__(**node_options)
        vehicle = str(self.declare_parameter("vehicle", str(Vehicle.POLARIS)).value)
        if vehicle not in tuple(Vehicle):
            raise ParameterError(f"parameter vehicle must be polaris or maxxum, found {vehicle!r}")
        self.vehicle = Vehicle(vehicle)
        if self.SERVES is not None and self.vehicle != self.SERVES[0]:
            raise ParameterError(self.SERVES[1].format(vehicle=self.vehicle))
        self.agent = int(self.declare_parameter("agent", 0).value)
        ingest_namespace = str(self.declare_parameter("ingest_namespace", "").value)
        self.ingest_namespace = ingest_namespace or self.get_namespace()
        self.frames: FrameNames = frame_names(
            vehicle=vehicle,
            frame_prefix=str(self.declare_parameter("frame_prefix", "").value),
            utm_frame=str(self.declare_parameter("utm_frame", "utm").value),
        )
        self._sources: list[SampleSubscription[Any]] = []
        self._outlets: list[CommandOutlet[Any]] = []
        self._gate: CommandGate | None = None  # made with the node's first command outlet
        self._step_publishers: list[StepPublisher] = []
        self.refused: Counter[str] = Counter()  # inputs refused, by kind ("unfenced": no DDS fence)

    def topic(self, name: str) -> TopicSpec:
        """This vehicle's msg_profiles row of a topic."""
        return profiles().topic(self.vehicle, name)

    def frame(self, name: str) -> str:
        """The header frame msg_profiles gives this vehicle's topic, with the node's frame prefix
        (and utm as the utm_frame parameter names it)."""
        spec = self.topic(name)
        if spec.frame is None:
            raise ValueError(f"{name} has no header frame in msg_profiles")
        return self.frames.utm if spec.frame == "utm" else self.frames.apply(spec.frame)

    def publisher(self, name: str, *, table: str | None = None) -> StepPublisher:
        """A publisher with the name, type and QoS that msg_profiles gives this vehicle's topic (or
        the topic of another `table`); each message is published with the step that made it."""
        spec = self.topic(name) if table is None else profiles().topic(table, name)
        publisher = StepPublisher(self._publisher_of(spec))
        self._step_publishers.append(publisher)
        return publisher

    def latched_publisher(self, name: str) -> Publisher:
        """The publisher of a topic sent once and kept for late subscribers (/tf_static), tied to no
        step and so in no delivery report."""
        spec = self.topic(name)
        if spec.rate_kind is not RateKind.ONCE:
            raise ValueError(f"{name} is not a latched topic ({spec.rate_kind.value}): use publisher()")
        return self._publisher_of(spec)

    def _publisher_of(self, spec: TopicSpec) -> Publisher:
        if spec.direction is not Direction.PUBLISH:
            raise ValueError(f"{spec.name} is not a topic the bridge publishes ({spec.direction.value})")
        publisher: Publisher = spec.create_publisher(self)
        return publisher

    def subscription(self, name: str, callback: Callable[[Any], None]) -> CommandSubscription:
        """The subscription of a topic the bridge takes (a command), with the name, type and QoS
        that msg_profiles gives this vehicle's topic, for reliable and best-effort publishers."""
        spec = self.topic(name)
        if spec.direction is not Direction.SUBSCRIBE:
            raise ValueError(f"{name} is not a topic the bridge subscribes to ({spec.direction.value})")
        return CommandSubscription(self, spec, self._guarded(callback, f"a {name} message"))

    def samples(
        self,
        channel: IngestChannel[S],
        callback: Callable[[S], None],
        *,
        agent: int | None = None,
        wants: Callable[[], bool] | None = None,
    ) -> None:
        """Deliver a channel of the ingest to callback (in-process when the ingest is here);
        `wants` says whether the node wants them now (default: always), which decides whether the
        simulator makes a sensor's frames at all (acres_bridge.ingest.frame_demand)."""
        source = SampleSubscription(
            self,
            channel,
            self._guarded(callback, f"a {channel.sample_type.__name__} sample"),
            namespace=self.ingest_namespace,
            agent=self.agent if agent is None else agent,
            wants=wants,
        )
        self._sources.append(source)

    @property
    def command_gate(self) -> CommandGate:
        """The fence's gate for this node's commands (declares ``allow_unfenced_commands``)."""
        if self._gate is None:
            self._gate = CommandGate(self)
        return self._gate

    def outlet(self, channel: IngestChannel[S]) -> CommandOutlet[S]:
        """This node's sending end of a channel to the simulator (its agent's), behind the fence's
        gate (acres_bridge.ingest.command_gate); closed with the node."""
        outlet = CommandOutlet(
            self,
            channel,
            namespace=self.ingest_namespace,
            agent=self.agent,
            gate=self.command_gate,
            refused=self.refused,
        )
        self._outlets.append(outlet)
        return outlet

    def _guarded(self, callback: Callable[[T], None], what: str) -> Callable[[T], None]:
        """``callback``, with any error it raises refused under "error" rather than let out to the
        executor, which would end the process: one bad message must not end the bridge."""

        def guarded(message: T) -> None:
            try:
                callback(message)
            except Exception as error:  # the executor's last line of defence
                self.refuse("error", what, f"{type(error).__name__}: {str(error)[:200]}")

        return guarded

    def refuse(self, kind: str, what: str, reason: str) -> None:
        """Count a refused input under `kind` and say why, at a limited rate: "refused WHAT (N so
        far): REASON"."""
        self.refused[kind] += 1
        self.get_logger().warning(
            f"refused {what} ({self.refused[kind]} so far): {reason}", throttle_duration_sec=REFUSAL_LOG_S
        )

    def destroy_node(self) -> None:
        for source in self._sources:
            source.close()
        self._sources.clear()
        for outlet in self._outlets:
            outlet.close()
        self._outlets.clear()
        for publisher in self._step_publishers:
            publisher.close()
        self._step_publishers.clear()
        super().destroy_node()
