"""The simulator's TCP clients: taken within limits, and sent to without ever waiting on one.

One thread serves every client, so no client may hold it: sockets are non-blocking, and what a
client has not yet taken waits in its own queue, bounded per channel (`MAX_QUEUED_BYTES`) and
for all of them together (`MAX_TOTAL_QUEUED_BYTES`). A client whose queue overflows is dropped
and logged; the others go on. A connection that has not
completed its handshake within `HANDSHAKE_TIMEOUT_S` is dropped, at most `MAX_CLIENTS` are
served at once (the next one gets an ERROR "busy" and is closed), and running out of file
descriptors (EMFILE) costs the one connection that could not be taken, not the simulator.
A client reads only the kinds of frame a bridge sends, each within its size (wire.frames), so no
header can make the simulator allocate what a bridge never sends.

`Clients` holds the listeners and the connections and does all of the above; it knows nothing of
the protocol beyond the refusal it sends: the server says what a new client gets first and what
a dropped one means (`on_accept`, `on_drop`), and reads what clients send.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from acres_bridge.rate_limited_log import RateLimitedLog
from acres_bridge.wire import ErrorReply, FrameReader, encode
from acres_bridge.wire.frames import TO_SIMULATOR_KINDS

__all__ = [
    "HANDSHAKE_TIMEOUT_S",
    "MAX_CLIENTS",
    "MAX_QUEUED_BYTES",
    "MAX_TOTAL_QUEUED_BYTES",
    "STALL_S",
    "Client",
    "Clients",
    "DescriptorReserve",
    "Listener",
    "accept_client",
]

_log = logging.getLogger("acres_sim.server")

MAX_CLIENTS = 64  # connections served at once, every channel of every bridge together
HANDSHAKE_TIMEOUT_S = 5.0  # from accept to an accepted CLIENT_HELLO
# What a client may leave unread, by channel: a sensor channel carries clouds and images (about
# 3 MB each), the others a few hundred bytes per step. Beyond it the client has fallen behind.
MAX_QUEUED_BYTES = {"control": 4 << 20, "sensor": 64 << 20, "vehicle": 4 << 20}
MAX_TOTAL_QUEUED_BYTES = 256 << 20  # all clients together: beyond it the furthest behind is dropped
_COMPACT_BYTES = 1 << 20  # sent bytes are cut off the queue's front once this many have gone
STALL_S = 10.0  # lockstep: a client that takes none of its queued data for this long is dropped


def _client_reader() -> FrameReader:
    return FrameReader(kinds=TO_SIMULATOR_KINDS)


@dataclass(eq=False)
class Listener:
    """A listening socket: the channel it serves, and for which agent."""

    sock: socket.socket
    role: str  # "control", "sensor", "vehicle"
    agent: int


@dataclass(eq=False)
class Client:
    """One accepted connection: its channel, its reader and the bytes it has yet to take."""

    sock: socket.socket
    listener: str  # "control", "sensor", "vehicle"
    agent: int
    reader: FrameReader = field(default_factory=_client_reader)
    ready: bool = False  # the client's CLIENT_HELLO was accepted
    out: bytearray = field(default_factory=bytearray)  # queued frames; the first `sent` have gone
    sent: int = 0
    command_seq: int = 0
    # Lockstep: the vehicle commands read and not yet applied, (seq, command), until the step request
    # whose command_seqs counts them (acres_sim.server.vehicle_commands: VehicleCommands.apply_held).
    held: list[tuple[int, object]] = field(default_factory=list)
    accepted_at: float = field(default_factory=time.monotonic)

    @property
    def pending(self) -> int:
        """Bytes queued and not yet taken by the socket."""
        return len(self.out) - self.sent

    @property
    def overflowing(self) -> bool:
        return self.pending > MAX_QUEUED_BYTES[self.listener]

    def handshake_expired(self, now: float) -> bool:
        return not self.ready and now - self.accepted_at > HANDSHAKE_TIMEOUT_S

    def send_pending(self) -> None:
        """Hand the socket what it takes now, never waiting; OSError when the connection failed."""
        while self.pending:
            try:
                with memoryview(self.out) as view:
                    taken = self.sock.send(view[self.sent :])
            except (BlockingIOError, InterruptedError):
                break
            if taken <= 0:
                break
            self.sent += taken
        if self.sent == len(self.out):
            self.out.clear()
            self.sent = 0
        elif self.sent >= _COMPACT_BYTES and self.sent * 2 >= len(self.out):
            del self.out[: self.sent]
            self.sent = 0


class DescriptorReserve:
    """One file descriptor held back, so that a listener can still take (and close) a connection
    when the process has run out of them; else the pending connection would wake the loop forever."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self._reopen()

    def _reopen(self) -> None:
        try:
            self._fd = os.open(os.devnull, os.O_RDONLY)
        except OSError:
            self._fd = None

    def refuse_one(self, listener: socket.socket) -> None:
        """Take the connection waiting on `listener` with the held descriptor and close it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        try:
            sock, _ = listener.accept()
            sock.close()
        except OSError:
            pass
        self._reopen()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def accept_client(
    listener: socket.socket, reserve: DescriptorReserve
) -> tuple[socket.socket | None, str | None]:
    """The next connection of `listener`, non-blocking; or None and why none was taken (None: none
    was waiting). Out of descriptors, the waiting connection is taken and closed."""
    try:
        sock, _ = listener.accept()
    except (BlockingIOError, InterruptedError):
        return None, None
    except OSError as error:
        if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
            reserve.refuse_one(listener)
            return None, f"out of file descriptors ({error.strerror}): a connection was refused"
        return None, f"accept failed: {error}"
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock, None


class Clients:
    """The listeners and connections of one simulator, on one selector; never waits on a client."""

    def __init__(
        self,
        warn: RateLimitedLog,
        *,
        on_accept: Callable[[Client], None],
        on_drop: Callable[[Client], None],
    ) -> None:
        """`on_accept` sees each connection taken (to queue what it gets first); `on_drop` each one
        closed, after it is gone from `connections`."""
        self.selector = selectors.DefaultSelector()
        self.listeners: list[Listener] = []
        self.connections: list[Client] = []
        self._warn = warn
        self._on_accept = on_accept
        self._on_drop = on_drop
        self._reserve = DescriptorReserve()  # a descriptor kept back: EMFILE costs one connection

    def listen(self, host: str, port: int, role: str, agent: int) -> int:
        """Listen for one channel on `host`:`port` (0: a port of the system's choice); the port."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(8)
        sock.setblocking(False)
        listener = Listener(sock, role, agent)
        self.listeners.append(listener)
        self.selector.register(sock, selectors.EVENT_READ, listener)
        bound: int = sock.getsockname()[1]
        return bound

    def accept(self, listener: Listener) -> None:
        """Take a waiting connection, within MAX_CLIENTS (beyond: ERROR busy, closed)."""
        sock, problem = accept_client(listener.sock, self._reserve)
        if problem is not None:
            self._warn.warning(f"accept/{listener.role}", f"{listener.role}: {problem}")
        if sock is None:
            return
        client = Client(sock, listener.role, listener.agent)
        if len(self.connections) >= MAX_CLIENTS:
            busy = f"this simulator serves at most {MAX_CLIENTS} connections"
            self._warn.warning("accept/limit", f"{listener.role}: refused a connection: {busy}")
            client.out += encode(ErrorReply(code="busy", message=busy))
            with contextlib.suppress(OSError):
                client.send_pending()
            sock.close()
            return
        self.connections.append(client)
        self.selector.register(sock, selectors.EVENT_READ, client)
        self._on_accept(client)

    def drop(self, client: Client, reason: str) -> None:
        _log.info("closing %s connection of agent %d: %s", client.listener, client.agent, reason)
        if client in self.connections:
            self.connections.remove(client)
            self.selector.unregister(client.sock)
        client.sock.close()
        self._on_drop(client)

    def expire_handshakes(self) -> None:
        """Drop the connections that have not said CLIENT_HELLO in time."""
        now = time.monotonic()
        for client in [c for c in self.connections if c.handshake_expired(now)]:
            self._warn.warning(
                f"handshake/{client.listener}",
                f"{client.listener}/{client.agent}: no CLIENT_HELLO in time: closed",
            )
            self.drop(client, "no CLIENT_HELLO in time")

    def flush(self, client: Client) -> None:
        """Send what the socket takes now; a client whose queue overflows has fallen behind and is
        dropped (the others go on). The selector wakes when the socket takes more."""
        if client not in self.connections:
            return
        had_pending = client.pending > 0
        try:
            client.send_pending()
        except OSError as error:
            self.drop(client, f"send failed: {error}")
            return
        if client.overflowing:
            self._warn.warning(
                f"behind/{client.listener}",
                f"{client.listener}/{client.agent}: fell behind, {client.pending >> 20} MiB unread: closed",
            )
            self.drop(client, "fell behind")
            return
        if had_pending or client.pending:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.pending else 0)
            self.selector.modify(client.sock, events, client)

    def flush_all(self) -> None:
        """Flush every client; beyond MAX_TOTAL_QUEUED_BYTES the furthest behind are dropped."""
        for client in list(self.connections):
            self.flush(client)
        while (total := sum(c.pending for c in self.connections)) > MAX_TOTAL_QUEUED_BYTES:
            furthest = max(self.connections, key=lambda c: c.pending)
            self._warn.warning(
                "behind/total",
                f"{total >> 20} MiB unread by the clients together: closed "
                f"{furthest.listener}/{furthest.agent}, the furthest behind",
            )
            self.drop(furthest, "fell behind")

    def serve_new_and_writable(self) -> None:
        """While the server is busy with a request: take new connections, send what sockets take,
        drop late handshakes. Nothing is read, so no other request starts meanwhile."""
        readable, writable, _ = select.select(
            [listener.sock for listener in self.listeners],
            [c.sock for c in self.connections if c.pending],
            [],
            0,
        )
        for listener in self.listeners:
            if listener.sock in readable:
                self.accept(listener)
        for client in list(self.connections):
            if client.sock in writable:
                self.flush(client)
        self.expire_handshakes()

    def wait_for_readers(self, high_water: int, poll_s: float, stopping: Callable[[], bool]) -> None:
        """Lockstep: wait until no client has more than `high_water` bytes queued, so a request of
        many steps does not pile up in memory; a client that takes nothing for STALL_S is
        dropped; new connections are served meanwhile, and `stopping()` ends the wait."""
        deadline = time.monotonic() + STALL_S
        while not stopping():
            behind = [c for c in self.connections if c.pending > high_water]
            if not behind:
                return
            if time.monotonic() > deadline:
                for client in behind:
                    self._warn.warning(
                        f"stalled/{client.listener}",
                        f"{client.listener}/{client.agent}: took nothing for {STALL_S:g} s: closed",
                    )
                    self.drop(client, "stalled")
                return
            _, writable, _ = select.select([], [c.sock for c in behind], [], poll_s)
            progressed = False
            for client in behind:
                if client.sock in writable:
                    before = client.pending
                    self.flush(client)
                    progressed = progressed or client.pending < before
            if progressed:
                deadline = time.monotonic() + STALL_S
            self.serve_new_and_writable()

    def close(self) -> None:
        for client in list(self.connections):
            self.drop(client, "simulator stopping")
        for listener in self.listeners:
            self.selector.unregister(listener.sock)
            listener.sock.close()
        self.listeners.clear()
        self.selector.close()
        self._reserve.close()
