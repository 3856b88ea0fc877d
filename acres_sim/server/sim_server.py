"""The network side of the reference simulator: docs/protocol.md, served over loopback by default.

One thread, one selector: the control listener, each agent's sensor and vehicle listeners, and
every accepted connection. In free run (PLAYING) the world advances paced to wall time and never
faster (acres_sim.server.pacing: no catching up in bursts; a slow pace is reported); in
lockstep only on step requests, as fast as it can. In free run the clouds and images are made in
a render thread (numpy lets go of the GIL), so a camera frame never holds up the physics, the
INS and the clock; their frames follow as soon as they are ready, stamped with their step. A step
request (lockstep, or a paused free-run session) sends its STREAM_MARK only after every cloud and
image of its steps. Output is buffered per connection and
flushed after each step (free run) or each request (lockstep), so a long request costs a
handful of system calls, not one per message.

The vehicle channel of a Polaris carries its drive-by-wire: each DBW_COMMAND goes to the world as
soon as it is read in free run (it applies from the next physics step); in lockstep it waits for
the first STEP_REQUEST whose command_seqs counts it and applies from that request's first step
(a request with 0 applies all that came), so however commands and requests interleave on their
two sockets, the same requests give the same steps. Each report line (50 Hz) goes out on that
agent's vehicle channel. MAXXUM_COMMAND is held and applied the same way. A
command for a Maxxum or with an invalid value is logged and ignored; it still counts for the
command numbers that STEP_REQUEST waits for.

The vehicle channel of a Maxxum carries MAXXUM_COMMAND (acres_bridge.wire.maxxum.MaxxumCommand,
numbered as the drive-by-wire commands are) to its tractor model and MaxxumObservation each 0.1 s
of simulation time from it. Each Maxxum also has a CAN port (UDP, `can_port` in HELLO,
acres_sim.server.can_bus): the tractor's J1939 group each 0.1 s, a barrier after each lockstep step.
"""

from __future__ import annotations

import contextlib
import logging
import select
import selectors
import time
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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
    ErrorReply,
    Hello,
    ProtocolError,
    ResetSession,
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
from acres_sim import __version__
from acres_sim.clock import PHYSICS_RATE_HZ as PHYSICS_HZ
from acres_sim.errors import AcresSimError
from acres_sim.sensors.rig import CaptureJob
from acres_sim.sensors.sensor_model import SensorFrame
from acres_sim.server.can_bus import CanPort
from acres_sim.server.clients import Client, Clients, Listener
from acres_sim.server.pacing import REPORT_INTERVAL_S, SLOW_RTF, RealTimePacer
from acres_sim.vehicles.tractor import command_from_message, observation_message
from acres_sim.world.model import StepOutput, World
from acres_sim.world.wire import scene_layout, sensor_frame, sensor_meta, wire_ins

__all__ = ["SimServer", "StepObserver"]

_log = logging.getLogger("acres_sim.server")
_FLUSH_BYTES = 1 << 20
_COMMAND_WAIT_S = 10.0  # a step request waits this long for the commands sent before it
_HELD_COMMANDS = 4096  # lockstep: commands held for their request, at most (a client that never steps)
_HOUSEKEEPING_S = 0.1  # while stepping: new clients, pending output, handshakes, this often
# Free run: one perception step at a time with the render thread. A step that comes while it is
# busy is skipped, so a frame is never more than one render late and frames never bunch up.
_RENDERS_IN_FLIGHT = 1

Captured = tuple[SensorFrame, ...]  # the sensor frames of a step
# Free run: one perception step at a time with the render thread. A step that comes while it is
# busy is skipped, so a frame is never more than one render late and frames never bunch up.


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
        """
        self._warn = RateLimitedLog(_log)  # bad input: each kind at once, then at most every 5 s
        self.world = world
        self._observers = tuple(observers)
        # Free run renders in a thread of its own; lockstep renders inline, deterministic in its order.
        world.defer_perception = not world.lockstep
        self._renderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="acres-render")
        self._renders: deque[tuple[int, int, Future[Captured]]] = deque()
        self.skipped_renders = 0
        self.clients = Clients(self._warn, on_accept=self._greet, on_drop=self._on_drop)
        self._connections = self.clients.connections  # the one list of connections
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
        self.hello = Hello(
            protocol_version=PROTOCOL_VERSION,
            simulator=f"acres_sim {__version__}",
            session_start_utc=f"{world.start_utc:%Y%m%dT%H%M%S}",
            map=world.map_name,
            source=world.source,
            lockstep=world.lockstep,
            seed=world.seed,
            physics_hz=PHYSICS_HZ,
            agents=tuple(agents),
            scene=scene_layout(world.scene, world.map_name),
        )
        self._metas = [sensor_meta(world, index) for index in range(len(agents))]
        self._stopping = False
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
            return min(timeout, 0.005) if self._renders else timeout
        return 0.005 if self._renders else 0.2

    def _poll(self, timeout: float) -> None:
        for key, events in self.clients.selector.select(timeout):
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
        report = self.pacer.report(time.monotonic(), self.skipped_renders, self.world.stamp_ns)
        if report is not None:
            _log.warning(
                "%s (%s)",
                report.line(),
                "slower than real time" if report.real_time_factor < SLOW_RTF else "keeping real time",
            )

    # ---- connections -------------------------------------------------------------------------

    def _greet(self, connection: Client) -> None:
        """A new connection: a control channel gets the session's HELLO at once."""
        if connection.listener == "control":
            self._send(connection, encode(self.hello))
            self._flush(connection)

    def _on_drop(self, connection: Client) -> None:
        if connection.listener == "control" and connection.ready:
            self._share_bridge_hosts()

    def _drop(self, connection: Client, reason: str) -> None:
        self.clients.drop(connection, reason)

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
                    self._refuse(connection, str(error))
                    return
                self._warn.warning(
                    f"payload/{connection.listener}/{connection.agent}",
                    f"{connection.listener}/{connection.agent}: dropped a frame: {error}",
                )
                continue
            if not connection.ready:
                if not self._handshake(connection, message):
                    return
                continue
            self._handle(connection, message)
            if connection not in self._connections:
                return
        if reader.version_mismatch is not None and not connection.ready:
            self._refuse(
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

    def _refuse(self, connection: Client, message: str) -> None:
        _log.error("refusing a %s connection: %s", connection.listener, message)
        self._send(connection, encode(ErrorReply(code="version", message=message)))
        self._flush(connection)
        self._drop(connection, message)

    def _handshake(self, connection: Client, message: object) -> bool:
        if not isinstance(message, ClientHello):
            self._drop(connection, f"expected CLIENT_HELLO first, got {type(message).__name__}")
            return False
        if message.role != connection.listener or (
            message.role != "control" and message.agent != connection.agent
        ):
            self._send(
                connection,
                encode(
                    ErrorReply(
                        code="role",
                        message=f"this port serves the {connection.listener} channel "
                        f"of agent {connection.agent}",
                    )
                ),
            )
            self._flush(connection)
            self._drop(connection, "wrong role")
            return False
        connection.ready = True
        if connection.listener == "control":
            self._share_bridge_hosts()
            self._send(connection, encode(self._episode()))
        elif connection.listener == "sensor":
            self._send(connection, encode(self._metas[connection.agent]))
        self._flush(connection)
        return True

    # ---- control -----------------------------------------------------------------------------

    def _handle(self, connection: Client, message: object) -> None:
        world = self.world
        if isinstance(message, DbwCommand | MaxxumCommand) and connection.listener == "vehicle":
            self._vehicle_command(connection, message.seq, message)
        elif isinstance(message, StepRequest) and connection.listener == "control":
            self._step_request(connection, message)
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

    def _vehicle_command(self, connection: Client, seq: int, command: DbwCommand | MaxxumCommand) -> None:
        """Number the command on its channel, then hand it to the world (or log why not)."""
        if seq <= connection.command_seq:
            _log.warning(
                "vehicle/%d: command %d after command %d: numbers must increase",
                connection.agent,
                seq,
                connection.command_seq,
            )
        connection.command_seq = max(connection.command_seq, seq)
        if self.world.lockstep:
            # Applied by the request that counts it, not by whichever read came first: the same
            # requests then give the same steps, however the commands and requests interleave.
            connection.held.append((seq, command))
            if len(connection.held) > _HELD_COMMANDS:  # a client that never steps: apply the oldest
                self._apply_command(connection.agent, *connection.held.pop(0))
            return
        self._apply_command(connection.agent, seq, command)

    def _apply_held(self, seqs: Sequence[int]) -> None:
        """Apply each vehicle channel's held commands that the request counts (``seqs``, per agent:
        the last command the bridge sent before it; 0 counts them all, for a client that does not
        number its requests' commands); later ones wait for a later request."""
        for connection in self._connections:
            if connection.listener != "vehicle" or not connection.held:
                continue
            wanted = seqs[connection.agent] if connection.agent < len(seqs) else 0
            due = [(q, c) for q, c in connection.held if wanted == 0 or q <= wanted]
            connection.held = [(q, c) for q, c in connection.held if not (wanted == 0 or q <= wanted)]
            for seq, command in due:
                self._apply_command(connection.agent, seq, command)

    def _apply_command(self, agent: int, seq: int, command: object) -> None:
        """Hand a vehicle command to the world (or log why not)."""
        try:
            if isinstance(command, DbwCommand):
                self.world.apply_dbw_command(agent, command)
            else:
                assert isinstance(command, MaxxumCommand)
                self.world.apply_tractor_command(agent, command_from_message(command))
        except AcresSimError as error:
            reason = str(error)  # one kind per reason: a flood of one bad command is one line per 5 s
            self._warn.warning(
                f"command/{agent}/{reason}",
                f"vehicle/{agent}: command {seq} ignored: {reason}",
            )

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
        self._await_commands(request.command_seqs)
        self._apply_held(request.command_seqs)
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

    def _await_commands(self, seqs: Iterable[int]) -> None:
        """Read each agent's vehicle channel until it has the commands the bridge sent before the request.

        A vehicle channel that is still being opened is accepted here too. Nothing else is read, so
        no other request starts while this one waits; after 10 s it steps without the command.
        """
        deadline = time.monotonic() + _COMMAND_WAIT_S
        for agent, wanted in enumerate(seqs):
            while wanted > 0 and not self._stopping and not self._has_commands(agent, wanted):
                remaining = deadline - time.monotonic()
                self.clients.serve_new_and_writable()
                if remaining <= 0.0 or not self._poll_vehicle(agent, min(remaining, _HOUSEKEEPING_S)):
                    _log.error("agent %d: command %d never arrived; stepping without it", agent, wanted)
                    break

    def _has_commands(self, agent: int, wanted: int) -> bool:
        return any(
            c.listener == "vehicle" and c.agent == agent and c.command_seq >= wanted
            for c in self._connections
        )

    def _poll_vehicle(self, agent: int, timeout: float) -> bool:
        """Accept and read the vehicle channel of ``agent`` for up to ``timeout`` s; False if it has none."""
        listeners = [x for x in self.clients.listeners if x.role == "vehicle" and x.agent == agent]
        if not listeners:
            return False
        connections = [c for c in self._connections if c.listener == "vehicle" and c.agent == agent]
        socks = [x.sock for x in listeners] + [c.sock for c in connections]
        readable, _, _ = select.select(socks, [], [], timeout)
        for listener in listeners:
            if listener.sock in readable:
                self.clients.accept(listener)
        for connection in connections:
            if connection.sock in readable:
                self._receive(connection)
        return True

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
            self._render(output.capture)
        perception = self._perception_frames(output.step, output.stamp_ns, output.frames)
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

    def _perception_frames(
        self, step: int, stamp_ns: int, sensors: Sequence[SensorFrame]
    ) -> dict[int, list[bytes]]:
        """The sensor frames of a step on the wire, by agent, for the agents whose stream is open."""
        frames: dict[int, list[bytes]] = {}
        if sensors:
            readers = {c.agent for c in self._connections if c.ready and c.listener == "sensor"}
            for frame in sensors:
                if frame.agent in readers:
                    frames.setdefault(frame.agent, []).append(sensor_frame(step, stamp_ns, frame))
        return frames

    def _render(self, job: CaptureJob) -> None:
        """Hand a perception step to the render thread, unless it is still busy with the last one:
        then the frames of this step are skipped and counted, as a real sensor that cannot keep up
        skips them, so that neither memory nor the frames' delay grows, and frames never come in a
        burst. The pace report says how many were skipped."""
        if len(self._renders) >= _RENDERS_IN_FLIGHT:
            self.skipped_renders += 1
            if self.skipped_renders == 1:
                _log.warning(
                    "rendering cannot keep up with real time: skipped the clouds and images of step %d "
                    "(the pace reports count what is skipped)",
                    job.step,
                )
            return
        self._renders.append((job.step, job.stamp_ns, self._renderer.submit(job.run)))

    def _send_renders(self, *, wait: bool) -> None:
        """Send the sensor frames the render thread has made, in step order (all, with wait)."""
        sent = False
        while self._renders and (wait or self._renders[0][2].done()):
            step, stamp_ns, render = self._renders.popleft()
            for agent, frames in self._perception_frames(step, stamp_ns, render.result()).items():
                for connection in self._connections:
                    if connection.ready and connection.listener == "sensor" and connection.agent == agent:
                        connection.out += b"".join(frames)
            sent = True
        if sent and not wait:
            self._flush_all()

    def _send(self, connection: Client, frame: bytes) -> None:
        connection.out += frame

    def _flush(self, connection: Client) -> None:
        self.clients.flush(connection)

    def _flush_all(self) -> None:
        self.clients.flush_all()

    def close(self) -> None:
        self._renderer.shutdown(wait=True, cancel_futures=True)
        for observer in self._observers:
            observer.close()
        for can in self._can.values():
            self.clients.selector.unregister(can.sock)
            can.close()
        self.clients.close()
