"""The ingest node: owns the simulator connection and feeds the subsystem nodes.

It is the only node that knows the wire protocol. Each decoded sample goes on the in-process
bus (subsystem nodes of this container get it without serialisation) and, while someone in
another process subscribes, on the internal ROS topic of its channel. It also serves simulation
control (simulation_interfaces) in the root namespace.

Parameters: control_host, control_port, reconnect_interval_s, step_timeout_s,
simulation_control (serve the simulation_interfaces services).

The channels of an agent (INS, drive-by-wire reports and commands, LiDAR, camera, resets, the
Maxxum's observation and commands, CAN frames both ways) are made when a session first lists the
agent, for up to MAX_AGENTS agents, and kept for later sessions; so one ingest serves every agent
of every session without a restart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.node import Node

from acres_bridge.ingest.bus import BUS, SampleBus
from acres_bridge.ingest.channels import (
    AGENT_RESET,
    CAMERA,
    CAN_RX,
    CAN_TX,
    CLOCK,
    DBW_COMMAND,
    DBW_REPORT,
    EPISODE,
    INS,
    LIDAR,
    MAXXUM_COMMAND,
    MAXXUM_OBSERVATION,
    SESSION,
    SampleOutlet,
    SampleSource,
    Session,
)
from acres_bridge.ingest.link import SimulatorLink, StepOutcome
from acres_bridge.ingest.simulation_control import SimulationControl
from acres_bridge.pace import PaceMeter
from acres_bridge.shutdown import add_shutdown_hook, remove_shutdown_hook
from acres_bridge.wire import (
    AgentReset,
    Clock,
    DbwCommand,
    DbwReport,
    EpisodeInfo,
    Hello,
    InsSample,
    SensorMeta,
)
from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.maxxum import MaxxumCommand, MaxxumObservation
from acres_bridge.wire.perception import CameraImage, LidarScan

__all__ = ["IngestNode"]

MAX_AGENTS = 16


class _PublishedSteps:
    """The simulator's commands, with a step acknowledged only once its data is published.

    The link returns when every sample of the steps has been handed to the subsystem nodes;
    a node that publishes from a thread of its own (perception) may still be at work then.
    """

    def __init__(self, link: SimulatorLink, bus: SampleBus) -> None:
        self._link = link
        self._bus = bus

    def request_steps(self, steps: int, *, timeout_s: float) -> StepOutcome:
        outcome = self._link.request_steps(steps, timeout_s=timeout_s)
        if outcome.ok and not self._bus.drain(timeout_s):
            return StepOutcome(
                False,
                last_step=outcome.last_step,
                message=f"the steps ran, but their data was not published within {timeout_s} s",
            )
        return outcome

    def set_state(self, state: int) -> bool:
        return self._link.set_state(state)

    def reset_session(self, reason: str = "") -> bool:
        return self._link.reset_session(reason)


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
        can_udp_port = int(self.declare_parameter("can_udp_port", 0).value)
        if not 0 <= can_udp_port < 65536:
            raise ValueError(f"parameter can_udp_port must be a UDP port or 0; found {can_udp_port}")
        namespace = self.get_namespace()
        self._namespace = namespace
        self._bus = bus
        self._clock_outlet = SampleOutlet(self, CLOCK, namespace=namespace, bus=bus)
        self._episode_outlet = SampleOutlet(self, EPISODE, namespace=namespace, bus=bus)
        self._session_outlet = SampleOutlet(self, SESSION, namespace=namespace, bus=bus)
        self._ins_outlets: list[SampleOutlet[InsSample]] = []
        self._report_outlets: list[SampleOutlet[DbwReport]] = []
        self._lidar_outlets: list[SampleOutlet[LidarScan]] = []
        self._camera_outlets: list[SampleOutlet[CameraImage]] = []
        self._observation_outlets: list[SampleOutlet[MaxxumObservation]] = []
        self._can_outlets: list[SampleOutlet[CanFrame]] = []
        self._command_sources: list[SampleSource[DbwCommand]] = []
        self._maxxum_command_sources: list[SampleSource[MaxxumCommand]] = []
        self._can_sources: list[SampleSource[CanFrame]] = []
        self._reset_sources: list[SampleSource[AgentReset]] = []
        self._lock = threading.Lock()
        self._last_episode: EpisodeInfo | None = None
        self._hello: Hello | None = None
        self._metas: list[SensorMeta | None] = []
        self.pace = PaceMeter()  # the session's real-time factor, from the clock as it arrives
        self.link = SimulatorLink(
            host=str(host),
            port=int(port),
            listener=self,
            reconnect_interval_s=float(reconnect_s),
            can_udp_port=can_udp_port,
            logger=self.get_logger(),
        )
        self.control = (
            SimulationControl(
                self,
                _PublishedSteps(self.link, bus),
                self.episode,
                step_timeout_s=float(step_timeout_s),
                pace=lambda: self.pace.factor(time.monotonic_ns()),
            )
            if serve_control
            else None
        )
        self._abort_steps = lambda: self.link.abort_pending("the bridge is shutting down")
        add_shutdown_hook(self._abort_steps)
        self._session_outlet.publish(Session(connected=False, hello=None))
        self._add_agents(1)  # agent 0's channels exist before any session
        self.link.start()
        self.get_logger().info(f"connecting to the simulator at {host}:{port}")

    def _add_agents(self, count: int) -> None:
        """Make the channels of agents up to `count` (at most MAX_AGENTS) that have none yet."""
        namespace, bus = self._namespace, self._bus
        for i in range(len(self._ins_outlets), min(count, MAX_AGENTS)):
            self._ins_outlets.append(SampleOutlet(self, INS, namespace=namespace, agent=i, bus=bus))
            self._report_outlets.append(SampleOutlet(self, DBW_REPORT, namespace=namespace, agent=i, bus=bus))
            self._lidar_outlets.append(SampleOutlet(self, LIDAR, namespace=namespace, agent=i, bus=bus))
            self._camera_outlets.append(SampleOutlet(self, CAMERA, namespace=namespace, agent=i, bus=bus))
            self._observation_outlets.append(
                SampleOutlet(self, MAXXUM_OBSERVATION, namespace=namespace, agent=i, bus=bus)
            )
            self._can_outlets.append(SampleOutlet(self, CAN_RX, namespace=namespace, agent=i, bus=bus))
            # Commands, frames and resets from the subsystem nodes, in this process or another, to the
            # simulator.
            self._command_sources.append(
                SampleSource(
                    self, DBW_COMMAND, self._command_sender(i), namespace=namespace, agent=i, bus=bus
                )
            )
            self._maxxum_command_sources.append(
                SampleSource(
                    self, MAXXUM_COMMAND, self._command_sender(i), namespace=namespace, agent=i, bus=bus
                )
            )
            self._can_sources.append(
                SampleSource(self, CAN_TX, self._can_sender(i), namespace=namespace, agent=i, bus=bus)
            )
            self._reset_sources.append(
                SampleSource(self, AGENT_RESET, self._reset_sender(i), namespace=namespace, agent=i, bus=bus)
            )

    def _command_sender(self, agent: int) -> Callable[[DbwCommand | MaxxumCommand], None]:
        def send(command: DbwCommand | MaxxumCommand) -> None:
            if not self.link.send_command(agent, command):
                kind = "drive-by-wire" if isinstance(command, DbwCommand) else "Maxxum"
                self.get_logger().warning(
                    f"agent {agent}: a {kind} command was not sent: no vehicle channel",
                    throttle_duration_sec=5.0,
                )

        return send

    def _can_sender(self, agent: int) -> Callable[[CanFrame], None]:
        def send(frame: CanFrame) -> None:
            if not self.link.send_can(agent, (frame,)):
                self.get_logger().warning(
                    f"agent {agent}: a CAN frame was not sent: no CAN transport", throttle_duration_sec=5.0
                )

        return send

    def _reset_sender(self, agent: int) -> Callable[[AgentReset], None]:
        def send(reset: AgentReset) -> None:
            if not self.link.reset_agent(agent, reset.x_m, reset.y_m, reset.yaw_rad):
                self.get_logger().warning(f"agent {agent}: the reset was not sent: not connected")

        return send

    def episode(self) -> EpisodeInfo | None:
        """The last episode message of the current session, None while not connected."""
        return self._last_episode

    # ---- LinkListener (I/O thread) -----------------------------------------------------------

    def on_session(self, hello: Hello) -> None:
        if len(hello.agents) > MAX_AGENTS:
            self.get_logger().warning(
                f"the session has {len(hello.agents)} agents; this ingest serves the first {MAX_AGENTS}"
            )
        self._add_agents(len(hello.agents))
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
        self.pace.record(time.monotonic_ns(), clock.stamp_ns)
        self._clock_outlet.publish(clock)

    def on_ins(self, agent: int, sample: InsSample) -> None:
        if agent < len(self._ins_outlets):
            self._ins_outlets[agent].publish(sample)

    def on_dbw_report(self, agent: int, report: DbwReport) -> None:
        if agent < len(self._report_outlets):
            self._report_outlets[agent].publish(report)

    def on_maxxum_observation(self, agent: int, observation: MaxxumObservation) -> None:
        if agent < len(self._observation_outlets):
            self._observation_outlets[agent].publish(observation)

    def on_can_frames(self, agent: int, frames: tuple[CanFrame, ...]) -> None:
        if agent < len(self._can_outlets):
            outlet = self._can_outlets[agent]
            for frame in frames:
                outlet.publish(frame)

    def on_lidar(self, agent: int, scan: LidarScan) -> None:
        if agent < len(self._lidar_outlets):
            self._lidar_outlets[agent].publish(scan)

    def on_camera(self, agent: int, image: CameraImage) -> None:
        if agent < len(self._camera_outlets):
            self._camera_outlets[agent].publish(image)

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
        self.link.abort_pending("the bridge is shutting down")
        self.link.stop()
        if self.control is not None:
            self.control.destroy()
        sources: list[SampleSource[Any]] = [
            *self._command_sources,
            *self._maxxum_command_sources,
            *self._can_sources,
            *self._reset_sources,
        ]
        outlets: list[SampleOutlet[Any]] = [
            self._clock_outlet,
            self._episode_outlet,
            self._session_outlet,
            *self._ins_outlets,
            *self._report_outlets,
            *self._lidar_outlets,
            *self._camera_outlets,
            *self._observation_outlets,
            *self._can_outlets,
        ]
        for source in sources:
            source.close()
        for outlet in outlets:
            outlet.close()
        super().destroy_node()
