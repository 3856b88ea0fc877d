"""The connection to a simulator: sockets, handshake, decoding, dispatch, reconnection.

One I/O thread owns every socket of the session (the control channel, each agent's sensor
and vehicle channels, and each Maxxum's CAN transport over UDP). It decodes frames as they arrive
and hands each message to the `LinkListener` at once, in that thread, so a sample is published
without a queue or a thread switch in between. Requests (steps, state changes, resets, commands,
CAN frames) come from other threads and are sent under a lock per socket.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from acres_bridge import __version__
from acres_bridge.ingest.can_channel import CanChannel, CanProblem, can_ports
from acres_bridge.ingest.connection import LinkCounters, LinkListener, Logger
from acres_bridge.ingest.steps import PendingSteps, StepOutcome
from acres_bridge.rate_limited_log import RateLimitedLog
from acres_bridge.wire import (
    PROTOCOL_VERSION,
    SAMPLE_TYPES,
    AgentReset,
    ClientHello,
    ClientRole,
    ErrorReply,
    FrameKind,
    FrameReader,
    Hello,
    ProtocolError,
    ResetSession,
    SensorDemand,
    SetState,
    SimState,
    StepDone,
    StepRequest,
    StreamMark,
    decode,
    encode,
)
from acres_bridge.wire.can import CanFrame
from acres_bridge.wire.frames import FROM_SIMULATOR_KINDS, Frame
from acres_bridge.wire.messages import SENSOR_DEMAND_FEATURE

__all__ = ["SimulatorLink", "receive_into"]

_log = logging.getLogger("acres_bridge.ingest")
_RECV_BYTES = 4 * 1024 * 1024
# How long a lockstep step waits, after its TCP streams are marked and while the CAN transport is
# quiet (no frames being handed over), for the CAN barrier of its last step: UDP may lose that
# datagram, and a lost one must not hold the step until its timeout.
CAN_MARK_WAIT_S = 0.5


def receive_into(sock: socket.socket, reader: FrameReader, buffer: memoryview) -> int:
    """One receive from a socket into a frame reader; the byte count, 0 when the peer closed.

    The rest of a large payload goes straight into the buffer the reader assembles it in;
    anything else into `buffer`, one reused buffer (recv(n) would allocate n bytes each time),
    and from there into the reader.
    """
    space = reader.bulk_space()
    if space is not None:
        size = sock.recv_into(space)
        reader.bulk_received(size)
        return size
    size = sock.recv_into(buffer)
    reader.feed(buffer[:size])
    return size


@dataclass
class _Channel:
    name: str  # "control", "sensor/0", "vehicle/0"
    sock: socket.socket
    reader: FrameReader
    agent: int = 0
    send_lock: threading.Lock = field(default_factory=threading.Lock)
    marked_step: int = -1


class SimulatorLink:
    """The bridge's side of the wire protocol, for one simulator session at a time."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        listener: LinkListener,
        reconnect_interval_s: float = 0.5,
        connect_timeout_s: float = 2.0,
        can_udp_port: int = 0,
        token: str = "",
        logger: Logger = _log,
    ) -> None:
        self._log = logger
        self._token = token  # the session's, said in every CLIENT_HELLO (wire.session_token)
        self._host = host
        self._port = port
        self._can_udp_port = can_udp_port
        self._listener = listener
        self._reconnect_interval_s = reconnect_interval_s
        self._connect_timeout_s = connect_timeout_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._channels: list[_Channel] = []
        self._control: _Channel | None = None
        self._hello: Hello | None = None
        self._pending = PendingSteps()
        self._command_seqs: list[int] = []
        self._can: dict[int, CanChannel] = {}
        # Per agent, the step of the last CAN barrier whose frames the listener has been handed: the
        # channel's marked_step moves as the barrier is read, before its frames are dispatched.
        self._can_handed: dict[int, int] = {}
        # Whether the CAN transport is being read and its frames handed to the listener now, and since
        # when it has not been (monotonic s): a barrier behind those frames in the socket is read only
        # after them, and is not lost.
        self._can_busy = False
        self._can_quiet_since = 0.0
        self._can_marked = threading.Condition()
        self._wake_r, self._wake_w = socket.socketpair()
        self.counters = LinkCounters()
        self._warn = RateLimitedLog(logger)
        self._connected = threading.Event()

    # ---- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="acres-ingest", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the I/O thread and close the link's sockets; once stopped, a call does nothing."""
        if self._wake_w.fileno() < 0:
            return
        self._stop.set()
        self._wake_w.send(b"x")
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        self._wake_r.close()
        self._wake_w.close()

    @property
    def hello(self) -> Hello | None:
        """The current session, or None while not connected."""
        return self._hello

    def wait_connected(self, timeout_s: float) -> bool:
        return self._connected.wait(timeout_s)

    # ---- requests (any thread) ---------------------------------------------------------------

    def request_steps(self, steps: int, *, timeout_s: float) -> StepOutcome:
        """Run `steps` physics steps and wait until their data has been handed to the listener."""
        control = self._control
        if control is None or self._hello is None:
            return StepOutcome(False, message="not connected to a simulator")
        pending = self._pending.open()
        request = StepRequest(
            request_id=pending.request_id, steps=steps, command_seqs=tuple(self._command_seqs)
        )
        if not self._send(control, encode(request)):
            self._pending.forget(pending)
            return StepOutcome(False, message="the simulator connection failed while sending")
        deadline = time.monotonic() + timeout_s
        if not pending.done.wait(timeout_s):
            self._pending.forget(pending)
            return StepOutcome(False, message=f"no answer to the step request within {timeout_s} s")
        assert pending.outcome is not None
        if pending.outcome.ok:
            self._wait_can_marks(pending.outcome.last_step, deadline)
        return pending.outcome

    def abort_pending(self, reason: str) -> None:
        """Answer every step request still waiting with a failure (the bridge is stopping)."""
        self._pending.fail_all(reason)

    def _wait_can_marks(self, last_step: int, deadline: float) -> None:
        """Wait until every CAN channel that has sent barriers has had the frames up to the barrier of
        `last_step` handed to the listener, so that they are published before the step is
        acknowledged. A barrier not read once the transport has been quiet (no frames being handed
        over) for CAN_MARK_WAIT_S is taken as lost (counted); one that has come, or frames read before
        it and still being handed over, are waited for until `deadline`, however long that takes."""

        def handed_over() -> bool:
            handed = self._can_handed
            return all(c.marked_step < 0 or handed.get(a, -1) >= last_step for a, c in self._can.items())

        def barriers_read() -> bool:
            return all(c.marked_step < 0 or c.marked_step >= last_step for c in self._can.values())

        answered = time.monotonic()
        with self._can_marked:
            while not handed_over():
                if barriers_read() or self._can_busy:
                    give_up = deadline
                else:
                    give_up = min(deadline, max(answered, self._can_quiet_since) + CAN_MARK_WAIT_S)
                left = give_up - time.monotonic()
                if left <= 0.0:
                    break
                self._can_marked.wait(left)
            else:
                return
        self.counters.can_problems["barrier missing"] += 1
        self._warn.warning(
            "can/barrier",
            f"no CAN barrier for step {last_step} within {CAN_MARK_WAIT_S} s: its frames may follow "
            "the acknowledgement (a lost datagram)",
        )

    def send_command(self, agent: int, command: Any) -> bool:
        """Number a vehicle command (drive-by-wire or Maxxum) on the agent's vehicle channel and send it
        at once; False when the agent has no vehicle channel or the send failed."""
        channel = next((c for c in self._channels if c.name == f"vehicle/{agent}"), None)
        if channel is None or agent >= len(self._command_seqs):
            return False
        with channel.send_lock:
            seq = self._command_seqs[agent] + 1
            try:
                channel.sock.sendall(encode(dataclasses.replace(command, seq=seq)))
            except OSError as error:
                self._warn.warning(f"send/{channel.name}", f"sending on {channel.name} failed: {error}")
                return False
            # Counted only once sent, so a step request never waits for a command that was not.
            self._command_seqs[agent] = seq
        return True

    def send_can(self, agent: int, frames: tuple[CanFrame, ...]) -> bool:
        """Send frames on the agent's CAN transport; False when it has none or the send failed."""
        channel = self._can.get(agent)
        if channel is None:
            return False
        try:
            channel.send(frames)
        except OSError as error:
            self._can_problem(CanProblem("socket", f"{channel.name}: sending failed: {error}"))
            return False
        return True

    def set_state(self, state: SimState) -> bool:
        return self._send_control(encode(SetState(state=state)))

    def reset_session(self, reason: str = "") -> bool:
        return self._send_control(encode(ResetSession(reason=reason)))

    def reset_agent(self, agent: int, x_m: float, y_m: float, yaw_rad: float) -> bool:
        return self._send_control(encode(AgentReset(agent=agent, x_m=x_m, y_m=y_m, yaw_rad=yaw_rad)))

    def send(self, agent: int, sample: object) -> bool:
        """Send one sample of the bridge's nodes for an agent where its kind goes: a CAN frame on the
        agent's CAN transport, a reset on the control channel, any other (a vehicle command, which
        carries a seq) numbered on the agent's vehicle channel; a SENSOR_DEMAND on the control
        channel, to a simulator whose HELLO lists it. False when it could not be sent."""
        if isinstance(sample, CanFrame):
            return self.send_can(agent, (sample,))
        if isinstance(sample, AgentReset):
            return self.reset_agent(agent, sample.x_m, sample.y_m, sample.yaw_rad)
        if isinstance(sample, SensorDemand):
            hello = self._hello
            if hello is None or SENSOR_DEMAND_FEATURE not in hello.features:
                return False
            return self._send_control(encode(replace(sample, agent=agent)))
        return self.send_command(agent, sample)

    def _send_control(self, data: bytes) -> bool:
        control = self._control
        return control is not None and self._send(control, data)

    def _send(self, channel: _Channel, data: bytes) -> bool:
        try:
            with channel.send_lock:
                channel.sock.sendall(data)
        except OSError as error:
            self._warn.warning(f"send/{channel.name}", f"sending on {channel.name} failed: {error}")
            return False
        return True

    # ---- I/O thread --------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            reason = "stopped"
            try:
                if self._open_session():
                    reason = self._serve()
            except OSError as error:
                reason = f"connection error: {error}"
            finally:
                was_connected = self._hello is not None
                self._close_session(reason)
                if was_connected and not self._stop.is_set():
                    self._listener.on_disconnect(reason)
            self._stop.wait(self._reconnect_interval_s)

    def _connect(self, port: int, name: str) -> socket.socket:
        sock = socket.create_connection((self._host, port), timeout=self._connect_timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(self._connect_timeout_s)
        self._log.debug(f"connected {name} to {self._host}:{port}")
        return sock

    def _read_frame(self, channel: _Channel, kind: FrameKind) -> Frame:
        """Block (with the socket's timeout) for the first frame of a channel, which must be `kind`."""
        while True:
            for frame in channel.reader.frames():
                if frame.kind is FrameKind.ERROR:
                    reply = decode(frame)
                    assert isinstance(reply, ErrorReply)
                    raise ProtocolError(f"the simulator refused {channel.name}: {reply.message}")
                if frame.kind is not kind:
                    raise ProtocolError(
                        f"{channel.name}: expected {kind.name} first, found {frame.kind.name}"
                    )
                return frame
            if channel.reader.version_mismatch is not None:
                raise ProtocolError(
                    f"the simulator speaks protocol version {channel.reader.version_mismatch}, "
                    f"this bridge speaks {PROTOCOL_VERSION}: update the bridge or the simulator",
                    version_mismatch=channel.reader.version_mismatch,
                )
            data = channel.sock.recv(_RECV_BYTES)
            if not data:
                raise ConnectionError(f"{channel.name} closed during the handshake")
            channel.reader.feed(data)

    def _open_session(self) -> bool:
        try:
            sock = self._connect(self._port, "control")
        except OSError:
            return False
        control = _Channel("control", sock, FrameReader(kinds=FROM_SIMULATOR_KINDS["control"]))
        self._channels = [control]
        try:
            hello = decode(self._read_frame(control, FrameKind.HELLO))
            assert isinstance(hello, Hello)
            self._open_can(hello)  # before CLIENT_HELLO, which names their ports
            client = ClientHello(
                protocol_version=PROTOCOL_VERSION,
                client=f"acres_bridge {__version__}",
                role=ClientRole.CONTROL,
                can_ports=tuple((agent, channel.local_port) for agent, channel in self._can.items()),
                token=self._token,
            )
            control.sock.sendall(encode(client))
            for agent in hello.agents:
                for role, port in (
                    (ClientRole.SENSOR, agent.sensor_port),
                    (ClientRole.VEHICLE, agent.vehicle_port),
                ):
                    if port == 0:
                        continue
                    reader = FrameReader(kinds=FROM_SIMULATOR_KINDS[str(role)])
                    channel = _Channel(f"{role}/{agent.index}", self._connect(port, role), reader)
                    channel.agent = agent.index
                    self._channels.append(channel)
                    hello_frame = ClientHello(
                        protocol_version=PROTOCOL_VERSION,
                        client=f"acres_bridge {__version__}",
                        role=role,
                        agent=agent.index,
                        token=self._token,
                    )
                    channel.sock.sendall(encode(hello_frame))
        except ProtocolError as error:
            self._log.error(str(error))
            return False
        except (OSError, AssertionError) as error:
            self._warn.warning("handshake", f"handshake with the simulator failed: {error}")
            return False
        self._control = control
        self._command_seqs = [0] * len(hello.agents)
        self._hello = hello
        self.counters.sessions += 1
        agents = ", ".join(f"{a.name} ({a.vehicle})" for a in hello.agents)
        mode = "lockstep" if hello.lockstep else "free run"
        self._log.info(
            f"connected to {hello.simulator}: map {hello.map}, source {hello.source}, {mode}, agents {agents}"
        )
        self._listener.on_session(hello)
        self._connected.set()
        return True

    def _open_can(self, hello: Hello) -> None:
        """A CAN channel for each agent with a CAN port; one that cannot be opened is logged and left out."""
        channels: dict[int, CanChannel] = {}
        for index, port in can_ports(hello, self._can_udp_port).items():
            try:
                channels[index] = CanChannel(agent=index, host=self._host, port=port)
            except OSError as error:
                self._warn.warning(
                    f"can/{index}",
                    f"the CAN transport of agent {index} ({self._host}:{port}) could not be opened: {error}",
                )
        with self._can_marked:
            self._can = channels
            self._can_handed = {}

    def _can_problem(self, problem: CanProblem) -> None:
        self.counters.can_problems[problem.reason] += problem.count
        self._warn.warning(f"can/{problem.reason}", problem.message)

    def _receive_can(self, channel: CanChannel) -> None:
        with self._can_marked:
            self._can_busy = True
        try:
            receipt = channel.receive()
            for problem in receipt.problems:
                self._can_problem(problem)
            if receipt.frames:
                self.counters.can_frames += len(receipt.frames)
                for frame in receipt.frames:
                    self._listener.on_sample(channel.agent, frame)
            if receipt.marked_step is not None:
                with self._can_marked:
                    self._can_handed[channel.agent] = receipt.marked_step
        finally:
            with self._can_marked:
                self._can_busy = False
                self._can_quiet_since = time.monotonic()
                self._can_marked.notify_all()

    def _keep_can_open(self) -> float:
        """Send the keepalives that are due; the seconds until the next one (at most 1)."""
        wait_s = 1.0
        for channel in self._can.values():
            try:
                channel.keepalive()
            except OSError as error:
                self._can_problem(CanProblem("socket", f"{channel.name}: the keepalive failed: {error}"))
            wait_s = min(wait_s, channel.seconds_to_keepalive())
        return max(wait_s, 0.01)

    def _serve(self) -> str:
        selector = selectors.DefaultSelector()
        for channel in self._channels:
            channel.sock.setblocking(False)
            selector.register(channel.sock, selectors.EVENT_READ, channel)
        for can in self._can.values():
            selector.register(can.sock, selectors.EVENT_READ, can)
        selector.register(self._wake_r, selectors.EVENT_READ, None)
        receive = bytearray(_RECV_BYTES)
        view = memoryview(receive)
        try:
            # Frames that arrived together with the handshake are already buffered.
            for channel in self._channels:
                self._dispatch_buffered(channel)
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=self._keep_can_open()):
                    channel = key.data
                    if channel is None:
                        self._wake_r.recv(64)
                        continue
                    if isinstance(channel, CanChannel):
                        self._receive_can(channel)
                        continue
                    try:
                        size = receive_into(channel.sock, channel.reader, view)
                    except (BlockingIOError, InterruptedError):
                        continue
                    if not size:
                        if channel is self._control:
                            return "the simulator closed the control channel"
                        selector.unregister(channel.sock)
                        self._warn.warning(f"closed/{channel.name}", f"the simulator closed {channel.name}")
                        continue
                    self._dispatch_buffered(channel)
            return "stopped"
        finally:
            selector.close()

    def _dispatch_buffered(self, channel: _Channel) -> None:
        """Hand on every whole frame the channel has buffered, up to a stop: one receive can
        hold thousands of a long request's frames, and a stop must not wait for all of them."""
        reader = channel.reader
        for frame in reader.frames():
            if self._stop.is_set():
                break
            try:
                message = decode(frame)
            except ProtocolError as error:
                self.counters.bad_payloads[frame.kind.name] += 1
                self._warn.warning(f"payload/{frame.kind.name}", f"{channel.name}: dropped a frame: {error}")
                continue
            self._dispatch(channel, message)
        if reader.dropped:
            for reason, count in reader.dropped.items():
                self.counters.dropped_frames[reason] += count
                self._warn.warning(f"frame/{reason}", f"{channel.name}: dropped {count} frame(s): {reason}")
            reader.dropped.clear()

    def _dispatch(self, channel: _Channel, message: object) -> None:
        if type(message) in SAMPLE_TYPES:
            self._listener.on_sample(channel.agent, message)
            return
        handler = self._handlers.get(type(message))
        if handler is None:
            name = type(message).__name__
            self.counters.unexpected[name] += 1
            self._warn.warning(f"unexpected/{name}", f"{channel.name}: unexpected {name}, ignored")
            return
        handler(self, channel, message)

    def _on_mark(self, channel: _Channel, message: StreamMark) -> None:
        channel.marked_step = message.last_step
        self._pending.marked(self._marked_step())

    def _on_step_done(self, channel: _Channel, message: StepDone) -> None:
        if not self._pending.answered(message, self._marked_step()):
            self.counters.unexpected["StepDone"] += 1

    def _on_error(self, channel: _Channel, message: ErrorReply) -> None:
        self._log.error(f"the simulator reports on {channel.name}: {message.message} ({message.code})")

    def _marked_step(self) -> int | None:
        """The lowest step that every stream of the session has marked (None: no streams)."""
        streams = [c for c in self._channels if c is not self._control]
        return min((c.marked_step for c in streams), default=None)

    # The control plane; every sample goes to the listener as it is (above).
    _handlers: ClassVar[dict[type, Callable[[SimulatorLink, _Channel, Any], None]]] = {
        StreamMark: _on_mark,
        StepDone: _on_step_done,
        ErrorReply: _on_error,
    }

    def _close_session(self, reason: str) -> None:
        self._connected.clear()
        self._hello = None
        self._control = None
        for channel in self._channels:
            with contextlib.suppress(OSError):
                channel.sock.close()
        self._channels = []
        with self._can_marked:
            for can in self._can.values():
                can.close()
            self._can = {}
            self._can_handed = {}
            self._can_marked.notify_all()
        self._pending.fail_all(f"the simulator went away: {reason}")
