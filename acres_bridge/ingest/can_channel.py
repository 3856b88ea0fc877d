"""The bridge's end of one Maxxum's CAN transport: a UDP socket connected to the agent's can_port.

docs/protocol.md, "CAN transport": the simulator sends its datagrams to the session's controller.
The bridge names its channel's UDP port (``local_port``) in its control channel's CLIENT_HELLO, so
the simulator knows the controller before any datagram; for a simulator that predates that, the
controller is the address of the first datagram from the bridge's host, so the channel's first
keepalive, a datagram holding a barrier frame (which the tractor ignores), goes out as soon as the
handshake is done, and one again each ``keepalive_s`` (1 s) while it has sent nothing else. The I/O
thread of the link reads the socket (``receive``); any thread may send (``send``).

The barriers the simulator sends after each lockstep step are transport marks, not frames of the
bus: ``receive`` takes them out, keeps the step of the last one (``marked_step``, like a
STREAM_MARK on a TCP stream) and compares the frames the barrier announces with those that came,
so a lost datagram is counted rather than unnoticed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from acres_bridge.wire.can import (
    MAX_FRAMES_PER_DATAGRAM,
    CanFrame,
    barrier_frame,
    decode_barrier,
    decode_datagram,
    encode_datagram,
    is_barrier,
)
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.messages import Hello
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["KEEPALIVE_S", "CanChannel", "CanProblem", "CanReceipt", "can_ports"]

KEEPALIVE_S: Final = 1.0
_DATAGRAM_BYTES: Final = 65536
_RECEIVE_BUFFER_BYTES: Final = 4 * 1024 * 1024  # a long lockstep request sends a barrier per step


def can_ports(hello: Hello, can_udp_port: int = 0) -> dict[int, int]:
    """The CAN port of each agent that has one: as HELLO announces it, except that a nonzero
    `can_udp_port` (the bridge's parameter, the game's -RlCanUdp=) is the first Maxxum's, announced or not."""
    ports = {agent.index: agent.can_port for agent in hello.agents if agent.can_port}
    if can_udp_port:
        first_maxxum = next((agent.index for agent in hello.agents if agent.vehicle == Vehicle.MAXXUM), None)
        if first_maxxum is not None:
            ports[first_maxxum] = can_udp_port
    return ports


@dataclass(frozen=True, slots=True)
class CanProblem:
    """Something the channel dropped or missed: a short reason to count by, a message to log, and
    how many frames or datagrams it concerns."""

    reason: str
    message: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class CanReceipt:
    """What one read of the socket brought: the tractor's frames in arrival order (no barriers), the
    step of the last barrier (None if none came) and the problems met."""

    frames: tuple[CanFrame, ...]
    marked_step: int | None
    problems: tuple[CanProblem, ...]


class CanChannel:
    """One Maxxum's CAN transport, connected to ``(host, port)``."""

    def __init__(
        self,
        *,
        agent: int,
        host: str,
        port: int,
        keepalive_s: float = KEEPALIVE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Open the socket (its first keepalive is due at once); OSError when it cannot be made."""
        self.agent = agent
        self.name = f"can/{agent}"
        self._keepalive_s = keepalive_s
        self._clock = clock
        self._send_lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            with contextlib.suppress(OSError):  # the kernel may cap it; a smaller buffer still works
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RECEIVE_BUFFER_BYTES)
            self.sock.connect((host, port))
            self.sock.setblocking(False)
        except OSError:
            self.sock.close()
            raise
        self.local_port: int = self.sock.getsockname()[1]  # what CLIENT_HELLO's can_ports announces
        self.marked_step = -1
        self._since_barrier = 0
        self._last_sent = -float("inf")

    def fileno(self) -> int:
        return self.sock.fileno()

    # ---- sending (any thread) ----------------------------------------------------------------

    def send(self, frames: Sequence[CanFrame]) -> None:
        """Send ``frames`` in as few datagrams as the transport allows; OSError when the socket fails."""
        with self._send_lock:
            for start in range(0, len(frames), MAX_FRAMES_PER_DATAGRAM):
                self.sock.send(encode_datagram(frames[start : start + MAX_FRAMES_PER_DATAGRAM]))
            self._last_sent = self._clock()

    def keepalive(self) -> bool:
        """Send a barrier when nothing went out for keepalive_s; True if one was sent.

        OSError when the socket fails (for example an ICMP "port unreachable" from a simulator that
        has gone), which the caller counts; the next keepalive tries again.
        """
        if self._clock() - self._last_sent < self._keepalive_s:
            return False
        self.send((barrier_frame(step=0, stamp_ns=0, frames_sent=0),))
        return True

    def seconds_to_keepalive(self) -> float:
        """How long until the next keepalive is due (0 when it is)."""
        return max(0.0, self._keepalive_s - (self._clock() - self._last_sent))

    # ---- receiving (the I/O thread) ----------------------------------------------------------

    def receive(self) -> CanReceipt:
        """Every datagram waiting on the socket, decoded; a malformed datagram is refused whole."""
        frames: list[CanFrame] = []
        problems: list[CanProblem] = []
        marked: int | None = None
        while True:
            try:
                data = self.sock.recv(_DATAGRAM_BYTES)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as error:
                problems.append(CanProblem("socket", f"{self.name}: receive failed: {error}"))
                break
            try:
                decoded = decode_datagram(data)
            except ProtocolError as error:
                problems.append(CanProblem("datagram", f"{self.name}: dropped a datagram: {error}"))
                continue
            for frame in decoded:
                if not is_barrier(frame):
                    frames.append(frame)
                    self._since_barrier += 1
                    continue
                problem = self._barrier(frame)
                if problem is not None:
                    problems.append(problem)
                marked = self.marked_step
        return CanReceipt(tuple(frames), marked, tuple(problems))

    def _barrier(self, frame: CanFrame) -> CanProblem | None:
        """Take a barrier: its step becomes the mark; a shortfall of frames is a problem."""
        received, self._since_barrier = self._since_barrier, 0
        self.marked_step = max(self.marked_step, frame.step)
        try:
            barrier = decode_barrier(frame)
        except ProtocolError as error:
            return CanProblem("barrier", f"{self.name}: a malformed barrier: {error}")
        lost = barrier.frames_sent - received
        if lost > 0:
            return CanProblem(
                "lost",
                f"{self.name}: {lost} of {barrier.frames_sent} frames before step {frame.step} lost",
                lost,
            )
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
