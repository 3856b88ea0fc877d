"""The ingest node: owns the simulator connection and feeds the subsystem nodes.

It is the only node that knows the wire protocol. Each decoded sample goes on the in-process
bus (subsystem nodes of this container get it without serialisation) and, while someone in
another process subscribes, on the internal ROS topic of its channel. It also serves simulation
control (simulation_interfaces) in the root namespace.

Parameters: control_host, control_port, reconnect_interval_s, step_timeout_s,
simulation_control (serve the simulation_interfaces services), agents (how many agent slots
of INS channels to offer).
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.node import Node

from acres_bridge.ingest.bus import BUS, SampleBus
from acres_bridge.ingest.channels import CLOCK, EPISODE, INS, SESSION, IngestChannel, Session
from acres_bridge.ingest.link import SimulatorLink
from acres_bridge.ingest.simulation_control import SimulationControl
from acres_bridge.wire import Clock, EpisodeInfo, Hello, InsSample, SensorMeta

__all__ = ["IngestNode"]

MAX_AGENTS = 16


class _Outlet:
    """One channel of the ingest: the bus key and the internal ROS publisher."""

    def __init__(
        self, node: Node, bus: SampleBus, channel: IngestChannel[Any], namespace: str, agent: int
    ) -> None:
        self.key = channel.key(namespace, agent)
        self._bus = bus
        self._to_message = channel.to_message
        self._publisher = node.create_publisher(channel.message_type, self.key, channel.qos())
        self._latched = channel.latched
        bus.register_producer(self.key, latched=channel.latched)

    def publish(self, sample: Any) -> None:
        self._bus.publish(self.key, sample)
        # Latched channels are always published, so a late subscriber in another process gets the last one.
        if self._latched or self._publisher.get_subscription_count() > 0:
            self._publisher.publish(self._to_message(sample))

    def close(self) -> None:
        self._bus.unregister_producer(self.key)


class IngestNode(Node):
    """Connects to the simulator and hands every sample to the subsystem nodes."""

    DEFAULT_NODE_NAME = "ingest"

    def __init__(self, *, bus: SampleBus = BUS, **node_options: Any) -> None:
        node_options.setdefault("node_name", self.DEFAULT_NODE_NAME)
        super().__init__(**node_options)
        host = self.declare_parameter("control_host", "127.0.0.1").value
        port = self.declare_parameter("control_port", 47100).value
        reconnect_s = self.declare_parameter("reconnect_interval_s", 0.5).value
        step_timeout_s = self.declare_parameter("step_timeout_s", 60.0).value
        serve_control = self.declare_parameter("simulation_control", True).value
        agents = self.declare_parameter("agents", 1).value
        if not 1 <= agents <= MAX_AGENTS:
            raise ValueError(f"parameter agents must be 1..{MAX_AGENTS}, found {agents}")
        namespace = self.get_namespace()
        self._bus = bus
        self._clock_outlet = _Outlet(self, bus, CLOCK, namespace, 0)
        self._episode_outlet = _Outlet(self, bus, EPISODE, namespace, 0)
        self._session_outlet = _Outlet(self, bus, SESSION, namespace, 0)
        self._ins_outlets = [_Outlet(self, bus, INS, namespace, agent) for agent in range(agents)]
        self._lock = threading.Lock()
        self._last_episode: EpisodeInfo | None = None
        self._hello: Hello | None = None
        self._metas: list[SensorMeta | None] = []
        self.link = SimulatorLink(
            host=str(host),
            port=int(port),
            listener=self,
            reconnect_interval_s=float(reconnect_s),
            logger=self.get_logger(),
        )
        self.control = (
            SimulationControl(self, self.link, self.episode, step_timeout_s=float(step_timeout_s))
            if serve_control
            else None
        )
        self._session_outlet.publish(Session(connected=False, hello=None))
        self.link.start()
        self.get_logger().info(f"connecting to the simulator at {host}:{port}")

    def episode(self) -> EpisodeInfo | None:
        """The last episode message of the current session, None while not connected."""
        return self._last_episode

    # ---- LinkListener (I/O thread) -----------------------------------------------------------

    def on_session(self, hello: Hello) -> None:
        if len(hello.agents) > len(self._ins_outlets):
            self.get_logger().warning(
                f"the session has {len(hello.agents)} agents; this ingest serves the first "
                f"{len(self._ins_outlets)} (parameter agents)"
            )
        with self._lock:
            self._hello = hello
            self._metas = [None] * len(hello.agents)
        self._publish_session()

    def on_sensor_meta(self, agent: int, meta: SensorMeta) -> None:
        with self._lock:
            if agent < len(self._metas):
                self._metas[agent] = meta
        self._publish_session()

    def _publish_session(self) -> None:
        with self._lock:
            session = Session(
                connected=self._hello is not None, hello=self._hello, sensor_meta=tuple(self._metas)
            )
        self._session_outlet.publish(session)

    def on_episode(self, info: EpisodeInfo) -> None:
        self._last_episode = info
        self._episode_outlet.publish(info)
        if self.control is not None:
            self.control.episode_changed()

    def on_clock(self, clock: Clock) -> None:
        self._clock_outlet.publish(clock)

    def on_ins(self, agent: int, sample: InsSample) -> None:
        if agent < len(self._ins_outlets):
            self._ins_outlets[agent].publish(sample)

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
        self.link.stop()
        if self.control is not None:
            self.control.destroy()
        for outlet in (self._clock_outlet, self._episode_outlet, self._session_outlet, *self._ins_outlets):
            outlet.close()
        super().destroy_node()
