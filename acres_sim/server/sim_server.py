"""The network side of the reference simulator: docs/protocol.md, served over loopback by default.

One thread, one selector: the control listener, each agent's sensor and vehicle listeners, and
every accepted connection (acres_sim.server.clients, opened by acres_sim.server.handshake). In
free run (PLAYING) the world advances paced to wall time and never faster (acres_sim.server.pacing:
no catching up in bursts; a slow pace is reported); in lockstep only on step requests, as fast as
it can. In free run the clouds and images are made in
a render thread (acres_sim.server.rendering), so a camera frame never holds up the physics, the
INS and the clock; their frames follow as soon as they are ready, stamped with their step. A step
request (lockstep, or a paused free-run session) sends its STREAM_MARK only after every cloud and
image of its steps. Output is buffered per connection and
flushed after each step (free run) or each request (lockstep), so a long request costs a
handful of system calls, not one per message.

The vehicle channel of a Polaris carries its drive-by-wire: each DBW_COMMAND goes to the world at
once in free run, and in lockstep from the first STEP_REQUEST that counts it
(acres_sim.server.vehicle_commands). Each report line (50 Hz) goes out on that agent's vehicle
channel.

The vehicle channel of a Maxxum carries MAXXUM_COMMAND (acres_bridge.wire.maxxum.MaxxumCommand,
numbered as the drive-by-wire commands are) to its tractor model and MaxxumObservation each 0.1 s
of simulation time from it. Each Maxxum also has a CAN port (UDP, `can_port` in HELLO,
acres_sim.server.can_bus): the tractor's J1939 group each 0.1 s, a barrier after each lockstep step.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import time
from collections.abc import Sequence
from typing import Protocol

from acres_bridge.rate_limited_log import RateLimitedLog
from acres_bridge.wire import (
    PROTOCOL_VERSION,
    AgentEntry,
    AgentReset,
    ClientHello,
    Clock,
    DbwCommand,
    EpisodeInfo,
    ProtocolError,
    ResetSession,
    SensorDemand,
    SetState,
    StepDone,
    StepRequest,
    StepStatus,
    StreamMark,
    decode,
    encode,
)
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST
from acres_bridge.wire.maxxum import MaxxumCommand
from acres_bridge.wire.vocabulary import SimState, Vehicle
from acres_sim.clock import PHYSICS_RATE_HZ as PHYSICS_HZ
from acres_sim.server.can_bus import CanPort
from acres_sim.server.clients import Client, Clients, Listener
from acres_sim.server.handshake import Handshake, session_hello
from acres_sim.server.pacing import REPORT_INTERVAL_S, SLOW_RTF, RealTimePacer
from acres_sim.server.rendering import RenderThread, perception_frames
from acres_sim.server.vehicle_commands import VehicleCommands
from acres_sim.vehicles.tractor import observation_message
from acres_sim.world.model import StepOutput, World
from acres_sim.world.wire import wire_ins

__all__ = ["SimServer", "StepObserver"]

_log = logging.getLogger("acres_sim.server")
_FLUSH_BYTES = 1 << 20
_HOUSEKEEPING_S = 0.1  # while stepping: new clients, pending output, handshakes, this often


class StepObserver(Protocol):
    """What sees the world's steps as the server makes them (in the server's thread)."""

    def on_step(self, world: World, output: StepOutput) -> None: ...
    def on_episode(self, world: World) -> None: ...
    def close(self) -> None: ...


class SimServer:
    """Serves one World over the wire protocol until stopped."""

    def __init__(
        self,
        world: World,
        *,
        host: str = "127.0.0.1",
        port: int = 47100,
        agent_ports: int = 0,
        can_udp_port: int = 0,
        observers: Sequence[StepObserver] = (),
        pace_report_s: float = REPORT_INTERVAL_S,
        token: str = "",
    ) -> None:
        """Listen on `host`: the control channel on `port`, each agent's sensor and vehicle channels
        on ports of the system's choice, or with `agent_ports` > 0 on agent_ports + 2 i and
        agent_ports + 2 i + 1 for agent i (fixed ports, for a firewall or an SSH tunnel).

        Each Maxxum's CAN bus is a UDP port of the system's choice, announced in HELLO; with
        `can_udp_port` > 0 the first Maxxum's is that port and HELLO leaves it out, as the game's
        -RlCanUdp= does: the bridge is then told it by its can_udp_port parameter.

        Each of `observers` sees every step the world makes (after its data is queued for the
        bridge) and every change of the episode, and is closed when the server closes: the
        episode log is one. In free run the pace is reported at most every `pace_report_s`.
        With a session's `token`, only a bridge that says it is served (acres_bridge.wire.session_token).
        """
        self._warn = RateLimitedLog(_log)  # bad input: each kind at once, then at most every 5 s
        self.world = world
        self._observers = tuple(observers)
        # Free run renders in a thread of its own; lockstep renders inline, deterministic in its order.
        world.defer_perception = not world.lockstep
        self.clients = Clients(self._warn, on_accept=self._greet, on_drop=self._on_drop)
        self._connections = self.clients.connections  # the one list of connections
        self.renders = RenderThread(self.clients)
        self.commands = VehicleCommands(
            world, self.clients, self._warn, receive=self._receive, stopping=lambda: self._stopping
        )
        self.control_port = self.clients.listen(host, port, "control", 0)
        agents = []
        self._can: dict[int, CanPort] = {}
        announced: set[int] = set()
        for index, name in enumerate(world.agent_names):
            base = agent_ports + 2 * index if agent_ports > 0 else 0
            sensor_port = self.clients.listen(host, base, "sensor", index)
            vehicle_port = self.clients.listen(host, base + 1 if base else 0, "vehicle", index)
            vehicle = world.agent(index).vehicle
            if vehicle == Vehicle.MAXXUM:
                fixed = can_udp_port if can_udp_port and not self._can else 0
                can = self._can[index] = CanPort(host, index, port=fixed)
                self.clients.selector.register(can.sock, selectors.EVENT_READ, can)
                if not fixed:
                    announced.add(index)
            agents.append(
                AgentEntry(
                    index=index,
                    name=name,
                    vehicle=vehicle,
                    sensor_port=sensor_port,
                    vehicle_port=vehicle_port,
                    can_port=self._can[index].port if index in announced else 0,
                )
            )
        self.hello = session_hello(world, agents)
        self._handshake = Handshake(world, self.hello, self.clients, on_control=self._on_control, token=token)
        self._stopping = False
        self._demands: dict[Client, dict[int, frozenset[int]]] = {}  # SENSOR_DEMAND, by bridge
        self._recv_buffer = bytearray(1 << 20)
        self._recv_view = memoryview(self._recv_buffer)
        self.pacer = RealTimePacer(1.0 / PHYSICS_HZ, report_interval_s=pace_report_s)

    def can_port(self, agent: int) -> CanPort:
        """The CAN transport of a Maxxum agent (KeyError for an agent without one)."""
        return self._can[agent]

    # ---- the loop ----------------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping = True

    def serve_forever(self) -> None:
        try:
            while not self._stopping:
                self._follow_state()
                self._poll(self._timeout())
                self._follow_state()
                if self.world.state is SimState.PLAYING:
                    self._run_paced_steps()
                self._send_renders(wait=False)
        finally:
            self.close()

    def _follow_state(self) -> None:
        """The pacer runs exactly while the world plays; a pause is not counted as lost time."""
        playing = self.world.state is SimState.PLAYING
        if playing and self.pacer.next_slot_s is None:
            self.pacer.start(time.monotonic())
        elif not playing and self.pacer.next_slot_s is not None:
            self.pacer.stop()

    def _timeout(self) -> float:
        timeout = self.pacer.timeout_s(time.monotonic())
        if timeout is not None:
            return min(timeout, 0.005) if self.renders.busy else timeout
        return 0.005 if self.renders.busy else 0.2

    def _poll(self, timeout: float) -> None:
        ready = self.clients.selector.select(timeout)
        # The connections first: a bridge sends its CLIENT_HELLO, which names its CAN ports, before
        # its first datagram, so a datagram that came with it is taken once its sender is known.
        for key, events in sorted(ready, key=lambda item: isinstance(item[0].data, CanPort)):
            if isinstance(key.data, CanPort):
                self._can_commands(key.data)
            elif isinstance(key.data, Listener):
                self.clients.accept(key.data)
            else:
                if events & selectors.EVENT_WRITE:
                    self._flush(key.data)
                if events & selectors.EVENT_READ and key.data in self._connections:
                    self._receive(key.data)
        self.clients.expire_handshakes()

    def _run_paced_steps(self) -> None:
        """The steps whose wall-time slot has come (acres_sim.server.pacing: never faster than real time),
        then, at a limited rate, a word on the pace when it is slow or perception was skipped."""
        while self.world.state is SimState.PLAYING and self.pacer.due(time.monotonic()):
            self._emit(self.world.advance())
            self._flush_all()
            self.pacer.stepped(time.monotonic())
        report = self.pacer.report(time.monotonic(), self.renders.skipped, self.world.stamp_ns)
        if report is not None:
            _log.warning(
                "%s (%s)",
                report.line(),
                "slower than real time" if report.real_time_factor < SLOW_RTF else "keeping real time",
            )

    # ---- connections -------------------------------------------------------------------------

    def _greet(self, connection: Client) -> None:
        self._handshake.greet(connection)

    def _on_drop(self, connection: Client) -> None:
        if connection.listener == "control" and connection.ready:
            self._share_bridge_hosts()
            if self._demands.pop(connection, None) is not None:
                for agent in range(len(self.world.agent_names)):
                    self._make_wanted_frames(agent)

    def _drop(self, connection: Client, reason: str) -> None:
        self.clients.drop(connection, reason)

    def _on_control(self, connection: Client, hello: ClientHello) -> None:
        """A control channel accepted: its host is the bridge's, and the CAN ports its CLIENT_HELLO
        names are the controllers of those agents' buses."""
        self._share_bridge_hosts()
        try:
            host = connection.sock.getpeername()[0]
        except OSError:
            return
        for agent, port in hello.can_ports:
            can = self._can.get(agent)
            if can is not None:
                can.announce((host, port))

    def _share_bridge_hosts(self) -> None:
        """Tell each CAN port the hosts of the session's bridge: those of the accepted control
        channels (acres_sim.server.can_bus: only they may become the tractor's controller)."""
        hosts = set()
        for connection in self._connections:
            if connection.listener == "control" and connection.ready:
                with contextlib.suppress(OSError):
                    hosts.add(connection.sock.getpeername()[0])
        for can in self._can.values():
            can.set_bridge_hosts(frozenset(hosts))

    def _receive(self, connection: Client) -> None:
        try:
            size = connection.sock.recv_into(self._recv_buffer)  # reused: recv(n) allocates n each time
        except (BlockingIOError, InterruptedError, TimeoutError):
            return
        except OSError as error:
            self._drop(connection, str(error))
            return
        if not size:
            self._drop(connection, "closed by the peer")
            return
        connection.reader.feed(self._recv_view[:size])
        self._handle_frames(connection)

    def _handle_frames(self, connection: Client) -> None:
        reader = connection.reader
        for frame in reader.frames():
            try:
                message = decode(frame)
            except ProtocolError as error:
                if error.version_mismatch is not None:
                    self._handshake.refuse(connection, str(error))
                    return
                self._warn.warning(
                    f"payload/{connection.listener}/{connection.agent}",
                    f"{connection.listener}/{connection.agent}: dropped a frame: {error}",
                )
                continue
            if not connection.ready:
                if not self._handshake.accept(connection, message):
                    return
                continue
            self._handle(connection, message)
            if connection not in self._connections:
                return
        if reader.version_mismatch is not None and not connection.ready:
            self._handshake.refuse(
                connection,
                f"the bridge speaks protocol version {reader.version_mismatch}, "
                f"this simulator speaks {PROTOCOL_VERSION}",
            )
        if reader.dropped:
            self._warn.warning(
                f"framing/{connection.listener}/{connection.agent}",
                f"{connection.listener}/{connection.agent}: dropped frames {dict(reader.dropped)}",
            )
            reader.dropped.clear()
        self._flush(connection)

    # ---- control -----------------------------------------------------------------------------

    def _handle(self, connection: Client, message: object) -> None:
        world = self.world
        if isinstance(message, DbwCommand | MaxxumCommand) and connection.listener == "vehicle":
            self.commands.take(connection, message.seq, message)
        elif isinstance(message, StepRequest) and connection.listener == "control":
            self._step_request(connection, message)
        elif isinstance(message, SensorDemand) and connection.listener == "control":
            self._want_frames(connection, message)
        elif isinstance(message, SetState):
            self._set_state(SimState(message.state))
        elif isinstance(message, ResetSession):
            world.reset_session()
            self._broadcast_episode()
        elif isinstance(message, AgentReset):
            if not 0 <= message.agent < len(world.agent_names):
                _log.warning("AGENT_RESET of unknown agent %d ignored", message.agent)
                return
            world.reset_agent(message.agent, x=message.x_m, y=message.y_m, yaw=message.yaw_rad)
            self._broadcast_episode()
        else:
            self._warn.warning(
                f"unexpected/{connection.listener}/{type(message).__name__}",
                f"{connection.listener}/{connection.agent}: unexpected {type(message).__name__} ignored",
            )

    def _want_frames(self, connection: Client, demand: SensorDemand) -> None:
        """SENSOR_DEMAND of one bridge: what it wants of an agent's frames, from the next step."""
        if not 0 <= demand.agent < len(self.world.agent_names):
            _log.warning("SENSOR_DEMAND of unknown agent %d ignored", demand.agent)
            return
        self._demands.setdefault(connection, {})[demand.agent] = frozenset(demand.sensors)
        self._make_wanted_frames(demand.agent)

    def _make_wanted_frames(self, agent: int) -> None:
        """Make the frames of an agent that any bridge wants: every frame while one of them has
        said nothing of the agent (a bridge wants all until it says otherwise), else the union."""
        world = self.world
        rig = world.sensors(agent)
        if rig is None:
            return
        sets = [
            self._demands.get(c, {}).get(agent)
            for c in self._connections
            if c.listener == "control" and c.ready
        ]
        wanted = None if not sets or None in sets else frozenset().union(*(s for s in sets if s is not None))
        if wanted == rig.wanted:
            return
        world.want_frames(agent, wanted)
        mounts = world.agent(agent).params.mounts
        names = (
            "every sensor"
            if wanted is None
            else ", ".join(mounts[i].frame if i < len(mounts) else f"#{i}" for i in sorted(wanted))
        )
        _log.info("agent %d: frames wanted of %s", agent, names or "no sensor")

    def _can_commands(self, can: CanPort) -> None:
        """The frames a controller sent on a Maxxum's CAN bus, as tractor commands."""
        for command in can.receive():
            self.world.apply_tractor_command(can.agent, command)

    def _set_state(self, state: SimState) -> None:
        world = self.world
        if state is SimState.PLAYING and world.lockstep:
            _log.warning("play refused: this is a lockstep session")
        elif state is SimState.STOPPED and world.state is not SimState.STOPPED:
            world.reset_session()
            world.set_state(SimState.STOPPED)
        elif state is not world.state:
            world.set_state(state)
        self._broadcast_episode()

    def _step_request(self, connection: Client, request: StepRequest) -> None:
        world = self.world
        status: StepStatus | None = None
        if request.steps > MAX_STEPS_PER_REQUEST:
            status = StepStatus.TOO_MANY_STEPS  # a request runs to its end: the bound keeps it short
        elif world.state is not SimState.PAUSED:
            status = StepStatus.STOPPED if world.state is SimState.STOPPED else StepStatus.NOT_PAUSED
        if status is not None:
            self._send(
                connection,
                encode(StepDone(request_id=request.request_id, last_step=world.step, status=status)),
            )
            return
        self.commands.wait_for(request.command_seqs, _HOUSEKEEPING_S)
        self.commands.apply_held(request.command_seqs)
        next_housekeeping = time.monotonic() + _HOUSEKEEPING_S
        for _ in range(request.steps):
            if self._stopping:  # SIGINT or SIGTERM mid-request: end now; closing tells the bridge
                return
            self._emit(world.advance())
            if any(c.pending > _FLUSH_BYTES for c in self._connections):
                self._flush_all()
                self.clients.wait_for_readers(_FLUSH_BYTES, _HOUSEKEEPING_S, lambda: self._stopping)
            if time.monotonic() >= next_housekeeping:
                self.clients.serve_new_and_writable()
                next_housekeeping = time.monotonic() + _HOUSEKEEPING_S
        self._send_renders(wait=True)  # every cloud and image of these steps goes before the mark
        mark = encode(StreamMark(last_step=world.step))
        for stream in self._connections:
            if stream.ready and stream.listener != "control":
                self._send(stream, mark)
        self._send(connection, encode(StepDone(request_id=request.request_id, last_step=world.step)))
        self._flush_all()

    # ---- output ------------------------------------------------------------------------------

    def _episode(self) -> EpisodeInfo:
        return self.world.episode_snapshot()

    def _broadcast_episode(self) -> None:
        for observer in self._observers:
            observer.on_episode(self.world)
        frame = encode(self._episode())
        for connection in self._connections:
            if connection.ready and connection.listener == "control":
                self._send(connection, frame)
        self._flush_all()

    def _emit(self, output: StepOutput) -> None:
        for observer in self._observers:
            observer.on_step(self.world, output)
        clock = encode(Clock(step=output.step, stamp_ns=output.stamp_ns))
        ins = [encode(wire_ins(sample)) for sample in output.ins]
        reports = {index: encode(report) for index, report in output.dbw}
        for index, observation in output.tractors:
            reports[index] = encode(observation_message(observation))
            self._can[index].send_group(observation)
        if self.world.lockstep:
            for can in self._can.values():
                can.send_barrier(output.step, output.stamp_ns)
        if output.capture is not None:
            self.renders.submit(output.capture)
        perception = perception_frames(self._connections, output.step, output.stamp_ns, output.frames)
        for connection in self._connections:
            if not connection.ready:
                continue
            if connection.listener == "control":
                connection.out += clock
            elif connection.listener == "sensor":
                if connection.agent < len(ins):
                    connection.out += ins[connection.agent]
                for data in perception.get(connection.agent, ()):
                    connection.out += data
            elif connection.listener == "vehicle" and connection.agent in reports:
                connection.out += reports[connection.agent]

    def _send_renders(self, *, wait: bool) -> None:
        """Send the sensor frames the render thread has made, in step order (all, with wait)."""
        if self.renders.queue_ready(wait=wait) and not wait:
            self._flush_all()

    def _send(self, connection: Client, frame: bytes) -> None:
        connection.out += frame

    def _flush(self, connection: Client) -> None:
        self.clients.flush(connection)

    def _flush_all(self) -> None:
        self.clients.flush_all()

    def perception_summary(self) -> str:
        """Each agent's frames made and not wanted, and the rays cast (logged at the end)."""
        parts = []
        for index in range(len(self.world.agent_names)):
            rig = self.world.sensors(index)
            if rig is not None:
                parts.append(f"agent {index}: {rig.rays_cast} rays cast, {rig.skipped} frames not wanted")
        return "perception: " + ("; ".join(parts) if parts else "off")

    def close(self) -> None:
        _log.info("%s", self.perception_summary())
        self.renders.close()
        for observer in self._observers:
            observer.close()
        for can in self._can.values():
            self.clients.selector.unregister(can.sock)
            can.close()
        self.clients.close()
