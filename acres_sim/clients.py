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
"""

from __future__ import annotations

import errno
import os
import socket
import time
from dataclasses import dataclass, field

from acres_bridge.wire import FrameReader
from acres_bridge.wire.frames import TO_SIMULATOR_KINDS

__all__ = [
    "HANDSHAKE_TIMEOUT_S",
    "MAX_CLIENTS",
    "MAX_QUEUED_BYTES",
    "MAX_TOTAL_QUEUED_BYTES",
    "Client",
    "DescriptorReserve",
    "accept_client",
]

MAX_CLIENTS = 64  # connections served at once, every channel of every bridge together
HANDSHAKE_TIMEOUT_S = 5.0  # from accept to an accepted CLIENT_HELLO
# What a client may leave unread, by channel: a sensor channel carries clouds and images (about
# 3 MB each), the others a few hundred bytes per step. Beyond it the client has fallen behind.
MAX_QUEUED_BYTES = {"control": 4 << 20, "sensor": 64 << 20, "vehicle": 4 << 20}
MAX_TOTAL_QUEUED_BYTES = 256 << 20  # all clients together: beyond it the furthest behind is dropped
_COMPACT_BYTES = 1 << 20  # sent bytes are cut off the queue's front once this many have gone


def _client_reader() -> FrameReader:
    return FrameReader(kinds=TO_SIMULATOR_KINDS)


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
