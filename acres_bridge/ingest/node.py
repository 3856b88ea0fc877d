"""The ingest node: owns the simulator connection and feeds the subsystem nodes.

It is the only node that knows the wire protocol. Each decoded sample goes on the in-process
bus (subsystem nodes of this container get it without serialisation) and, while someone in
another process subscribes, on the internal ROS topic of its channel. It also serves simulation
control (simulation_interfaces) in the root namespace.

Parameters: control_host, control_port, reconnect_interval_s, step_timeout_s,
simulation_control (serve the simulation_interfaces services), can_udp_port, vehicle (agent 0's,
or auto: from the session), allow_unfenced_commands, acked_clock (in lockstep, a request's last
clock goes out once its data is acknowledged by every reliable reader: acres_bridge.ingest.acks).

Its ends of the channels come from the one table `ingest.channels.CHANNELS`: a sample the link
hands over goes to the outlet of its class and agent, and what the nodes send on a channel to the
simulator goes to the connection through the fence's gate (acres_bridge.ingest.command_gate): the
one place where commands leave the bridge, whichever node sent them. The channels of an agent are
those of its vehicle, made when a session first lists the agent as that vehicle (agent 0's at
start when the vehicle parameter names it), for up to MAX_AGENTS agents, and kept for later
sessions; so one ingest serves every agent of every session without a restart.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from acres_interfaces.msg import StepDelivery as StepDeliveryMessage
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from acres_bridge.errors import ParameterError
from acres_bridge.ingest.acks import ACK_TIMEOUT_S, ACKS, AckWait
from acres_bridge.ingest.bus import BUS, SampleBus
from acres_bridge.ingest.channels import (
    CHANNELS,
    SESSION,
    Flow,
    IngestChannel,
    SampleOutlet,
    SampleSubscription,
    Session,
)
from acres_bridge.ingest.clock_hold import ClockHold
from acres_bridge.ingest.command_gate import CommandGate
from acres_bridge.ingest.connection import SimulatorConnection
from acres_bridge.ingest.deliveries import (
    DELIVERIES_DEPTH,
    LEDGER,
    STEP_DELIVERIES,
    DeliveryLedger,
    StepDelivery,
    delivery_message,
)
from acres_bridge.ingest.frame_demand import FrameDemand
from acres_bridge.ingest.link import SimulatorLink
from acres_bridge.ingest.simulation_control import SimulationControl
from acres_bridge.ingest.steps import StepOutcome
from acres_bridge.pace import PaceMeter
from acres_bridge.publisher_events import NodeWithoutPublisherEvents
from acres_bridge.shutdown import add_shutdown_hook, remove_shutdown_hook
from acres_bridge.wire import CameraImage, Clock, EpisodeInfo, Hello, LidarScan, SensorMeta, SimState
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.session_token import take_token
from acres_bridge.wire.vocabulary import SensorKind, Vehicle

__all__ = ["IngestNode"]

MAX_AGENTS = 16
_DEMAND_CHECK_S = 0.5  # how often the frames wanted are checked besides each step request


class _PublishedSteps:
    """The simulator's commands, with a step acknowledged only once its data is published, and
    reported (acres_bridge.ingest.deliveries) before it is answered.

    The link returns when every sample of the steps has been handed to the subsystem nodes;
    a node that publishes from a thread of its own (perception) may still be at work then.
    """

    def __init__(
        self,
        link: SimulatorConnection,
        bus: SampleBus,
        ledger: DeliveryLedger,
        report: Callable[[StepDelivery], None],
        before_request: Callable[[], None] = lambda: None,
        *,
        clocks: ClockHold | None = None,
        acks: AckWait | None = None,
        on_late_acks: Callable[[list[str]], None] = lambda _topics: None,
    ) -> None:
        """`before_request` runs before each step request goes (the frames wanted are sent);
        `clocks` holds the request's last clock until its data is published (ingest.clock_hold)
        and, with `acks`, acknowledged (ingest.acks; `on_late_acks` gets the topics of a wait that
        timed out)."""
        self._link = link
        self._bus = bus
        self._ledger = ledger
        self._report = report
        self._before_request = before_request
        self._clocks = clocks
        self._acks = acks
        self._on_late_acks = on_late_acks

    def request_steps(self, steps: int, *, timeout_s: float) -> StepOutcome:
        self._before_request()
        self._ledger.open()
        if self._acks is not None:
            self._acks.open()
        if self._clocks is not None:
            self._clocks.hold()
        try:
            outcome = self._link.request_steps(steps, timeout_s=timeout_s)
            published = outcome.ok and self._bus.drain(timeout_s)
            if published and self._acks is not None and (late := self._acks.wait()):
                self._on_late_acks(late)
        finally:
            if self._acks is not None:
                self._acks.abandon()
            if self._clocks is not None:
                self._clocks.release()
        if outcome.ok and not (published and self._bus.drain(timeout_s)):
            outcome = StepOutcome(
                False,
                last_step=outcome.last_step,
                message=f"the steps ran, but their data was not published within {timeout_s} s",
            )
        if not outcome.ok:
            self._ledger.abandon()
            return outcome
        self._report(self._ledger.close(outcome.last_step - steps + 1, outcome.last_step))
        return outcome

    def set_state(self, state: SimState) -> bool:
        return self._link.set_state(state)

    def reset_session(self, reason: str = "") -> bool:
        return self._link.reset_session(reason)


class IngestNode(NodeWithoutPublisherEvents):
    """Connects to the simulator and hands every sample to the subsystem nodes."""

    DEFAULT_NODE_NAME = "ingest"

    def __init__(
        self,
        *,
        bus: SampleBus = BUS,
        ledger: DeliveryLedger = LEDGER,
        connection: Callable[..., SimulatorConnection] = SimulatorLink,
        **node_options: Any,
    ) -> None:
        """`connection` makes the connection to the simulator, with SimulatorLink's keyword arguments."""
        node_options.setdefault("node_name", self.DEFAULT_NODE_NAME)
        super().__init__(**node_options)
        host = self.declare_parameter("control_host", "127.0.0.1").value
        port = self.declare_parameter("control_port", 47100).value
        reconnect_s = self.declare_parameter("reconnect_interval_s", 0.5).value
        step_timeout_s = self.declare_parameter("step_timeout_s", 60.0).value
        serve_control = self.declare_parameter("simulation_control", True).value
        on_demand = bool(self.declare_parameter("sensors_on_demand", True).value)
        can_udp_port = int(self.declare_parameter("can_udp_port", 0).value)
        if not 0 <= can_udp_port < 65536:
            raise ParameterError(f"parameter can_udp_port must be a UDP port or 0; found {can_udp_port}")
        token_file = str(self.declare_parameter("session_token_file", "").value)
        try:
            token = take_token(token_file) if token_file else ""
        except ProtocolError as error:
            raise ParameterError(f"parameter session_token_file: {error}") from None
        vehicle = str(self.declare_parameter("vehicle", "auto").value)
        acked_clock = bool(self.declare_parameter("acked_clock", False).value)
        self.refused: Counter[str] = Counter()  # commands not sent ("unfenced": no DDS fence)
        self.gate = CommandGate(self)
        self._namespace = self.get_namespace()
        self._bus = bus
        # One end per channel of CHANNELS (and per agent where the channel is one per agent).
        self._outlets: dict[tuple[type, int], SampleOutlet[Any]] = {}
        self._ingest_subscriptions: list[SampleSubscription[Any]] = []
        self._ends: set[tuple[str, int]] = set()  # (channel suffix, agent) of the ends made
        # What the ingest itself does with some samples, after they are published.
        self._observers: dict[type, Callable[[int, Any], None]] = {
            Clock: self._on_clock,
            EpisodeInfo: self._on_episode,
            SensorMeta: self._on_sensor_meta,
        }
        self._lock = threading.Lock()
        self._last_episode: EpisodeInfo | None = None
        self._hello: Hello | None = None
        self._metas: list[SensorMeta | None] = []
        self.pace = PaceMeter()  # the session's real-time factor, from the clock as it arrives
        self._clocks = ClockHold(self._publish_clock)
        for channel in CHANNELS:
            if not channel.per_agent:
                self._add_end(channel, 0)
        self.connection: SimulatorConnection = connection(
            host=str(host),
            port=int(port),
            listener=self,
            reconnect_interval_s=float(reconnect_s),
            can_udp_port=can_udp_port,
            token=token,
            logger=self.get_logger(),
        )
        self._frame_demand = FrameDemand(self.connection.send, enabled=on_demand)
        self.control = (
            SimulationControl(
                self,
                _PublishedSteps(
                    self.connection,
                    bus,
                    ledger,
                    self._delivery_reporter(),
                    self._update_frame_demand,
                    clocks=self._clocks,
                    acks=ACKS if acked_clock else None,
                    on_late_acks=self._on_late_acks,
                ),
                self.episode,
                step_timeout_s=float(step_timeout_s),
                pace=lambda: self.pace.factor(time.monotonic_ns()),
            )
            if serve_control
            else None
        )
        self.create_timer(_DEMAND_CHECK_S, self._update_frame_demand)  # a session running free
        self._abort_steps = lambda: self.connection.abort_pending("the bridge is shutting down")
        add_shutdown_hook(self._abort_steps)
        self._publish_session()
        if vehicle in tuple(Vehicle):
            self._add_agent(0, Vehicle(vehicle))  # agent 0's channels exist before any session
        self.connection.start()
        self.get_logger().info(f"connecting to the simulator at {host}:{port}")
        if acked_clock:
            self.get_logger().info(
                "acked_clock: a lockstep request's last /clock goes out once its data is acknowledged"
            )

    def _delivery_reporter(self) -> Callable[[StepDelivery], None]:
        """Publish each request's delivery report (reliable: a client waits on every one)."""
        qos = QoSProfile(
            depth=DELIVERIES_DEPTH,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )
        publisher = self.create_publisher(StepDeliveryMessage, STEP_DELIVERIES, qos)
        return lambda delivery: publisher.publish(delivery_message(delivery))

    def _on_late_acks(self, topics: list[str]) -> None:
        """A request's last clock went out before these topics' readers acknowledged its data."""
        self.get_logger().warning(
            f"acked_clock: readers of {', '.join(sorted(topics))} did not acknowledge a request's data "
            f"within {ACK_TIMEOUT_S} s; its last /clock went out without ({ACKS.timeouts} such requests)",
            throttle_duration_sec=5.0,
        )

    def _add_agent(self, agent: int, vehicle: Vehicle) -> None:
        """Make the channels of an agent of this vehicle that it has none of yet."""
        for channel in CHANNELS:
            if channel.per_agent and vehicle in channel.vehicles:
                self._add_end(channel, agent)

    def _add_end(self, channel: IngestChannel[Any], agent: int) -> None:
        """The ingest's end of one channel: an outlet for samples from the simulator, a
        subscription (in this process, or another one behind the fence) for commands the nodes
        send to it."""
        if (channel.suffix, agent) in self._ends:
            return
        self._ends.add((channel.suffix, agent))
        if channel.flow is Flow.FROM_SIMULATOR:
            outlet = SampleOutlet(self, channel, namespace=self._namespace, agent=agent, bus=self._bus)
            self._outlets[(channel.sample_type, agent)] = outlet
            return
        self._ingest_subscriptions.append(
            SampleSubscription(
                self,
                channel,
                self._sender(agent),
                namespace=self._namespace,
                agent=agent,
                bus=self._bus,
                remote=self.gate.allowed,
            )
        )

    def _sender(self, agent: int) -> Callable[[Any], None]:
        def send(sample: Any) -> None:
            if not self.gate.admit(self.refused):
                return
            if not self.connection.send(agent, sample):
                self.get_logger().warning(
                    f"agent {agent}: a {type(sample).__name__} was not sent: the simulator has no "
                    "channel for it now",
                    throttle_duration_sec=5.0,
                )

        return send

    def _update_frame_demand(self) -> None:
        """Tell the simulator which sensors' frames anyone wants (acres_bridge.ingest.frame_demand)."""
        with self._lock:
            metas = list(self._metas)

        def wanted(agent: int) -> dict[SensorKind, bool]:
            return {
                kind: outlet is not None and outlet.wanted()
                for kind, outlet in (
                    (SensorKind.LIDAR, self._outlets.get((LidarScan, agent))),
                    (SensorKind.CAMERA, self._outlets.get((CameraImage, agent))),
                )
            }

        self._frame_demand.update(metas, wanted)

    def episode(self) -> EpisodeInfo | None:
        """The last episode message of the current session, None while not connected."""
        return self._last_episode

    # ---- LinkListener (I/O thread) -----------------------------------------------------------

    def on_session(self, hello: Hello) -> None:
        if len(hello.agents) > MAX_AGENTS:
            self.get_logger().warning(
                f"the session has {len(hello.agents)} agents; this ingest serves the first {MAX_AGENTS}"
            )
        for entry in hello.agents[:MAX_AGENTS]:
            self._add_agent(entry.index, entry.vehicle)
        self._frame_demand.forget()
        with self._lock:
            self._hello = hello
            self._metas = [None] * len(hello.agents)
        self._publish_session()

    def on_sample(self, agent: int, sample: object) -> None:
        """Publish a sample on its channel, then let the ingest note what it needs of it."""
        kind = type(sample)
        outlet = self._outlets.get((kind, agent))
        held = kind is Clock and self._clocks.take(agent, sample)  # type: ignore[arg-type]
        if outlet is not None and not held:
            outlet.publish(sample)
        observe = self._observers.get(kind)
        if observe is not None:
            observe(agent, sample)

    def _publish_clock(self, agent: int, clock: Clock) -> None:
        outlet = self._outlets.get((Clock, agent))
        if outlet is not None:
            outlet.publish(clock)

    def _on_clock(self, agent: int, clock: Clock) -> None:
        self.pace.record(time.monotonic_ns(), clock.stamp_ns)

    def _on_episode(self, agent: int, info: EpisodeInfo) -> None:
        self._last_episode = info
        if self.control is not None:
            self.control.episode_changed()

    def _on_sensor_meta(self, agent: int, meta: SensorMeta) -> None:
        with self._lock:
            if agent < len(self._metas):
                self._metas[agent] = meta
        self._publish_session()

    def _publish_session(self) -> None:
        with self._lock:
            session = Session(
                connected=self._hello is not None, hello=self._hello, sensor_meta=tuple(self._metas)
            )
        self._outlets[(SESSION.sample_type, 0)].publish(session)

    def on_disconnect(self, reason: str) -> None:
        self.get_logger().warning(f"simulator connection lost ({reason}); reconnecting")
        self._last_episode = None
        with self._lock:
            self._hello = None
            self._metas = []
        self._publish_session()
        if self.control is not None:
            self.control.episode_changed()

    # ---- life cycle --------------------------------------------------------------------------

    def destroy_node(self) -> None:
        remove_shutdown_hook(self._abort_steps)
        self.connection.abort_pending("the bridge is shutting down")
        self.connection.stop()
        if self.control is not None:
            self.control.destroy()
        for subscription in self._ingest_subscriptions:
            subscription.close()
        for outlet in self._outlets.values():
            outlet.close()
        super().destroy_node()
