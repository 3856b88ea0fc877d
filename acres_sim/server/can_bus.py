"""The CAN transport of one Maxxum: its J1939 frames over UDP (docs/protocol.md "CAN transport").

The simulator binds a UDP port per Maxxum (the agent's `can_port` in HELLO) and sends its
datagrams to the session's controller: the bridge's UDP port that its control channel's
CLIENT_HELLO names for the agent (`can_ports`, on the control channel's host: `announce`), or, from
a bridge that names none, the address of the first datagram that decodes and comes from the host
of the session's bridge (a host with an accepted control channel: `bridge_hosts`). Until then
nothing goes out; a datagram from any other address, or one that does not decode, changes nothing
(it is dropped, counted and logged), so no other sender, not even another process on the bridge's
host once the controller is named, can take the tractor's CAN output or drive it. When the
session's bridge goes (its last control channel closes) the controller is forgotten, and the next
bridge names it again (or its first datagram sets it). Frames from the controller become tractor
commands (acres_sim.vehicles.j1939.command_from_frame).
"""

from __future__ import annotations

import logging
import socket
from collections import Counter

from acres_bridge.wire.can import CanFrame, barrier_frame, decode_datagram, encode_datagram, is_barrier
from acres_bridge.wire.errors import ProtocolError
from acres_sim.errors import AcresSimError
from acres_sim.vehicles.j1939 import command_from_frame, frames_from_observation
from acres_sim.vehicles.tractor import TractorCommand, TractorObservation

__all__ = ["CanPort"]

_log = logging.getLogger("acres_sim.can")
_DATAGRAM_BYTES = 65536


class CanPort:
    """The UDP socket of one Maxxum's CAN bus."""

    def __init__(self, host: str, agent: int, *, port: int = 0) -> None:
        """Bind `port` on `host`, or a port of the system's choice with 0."""
        self.agent = agent
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.bind((host, port))
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.port: int = self.sock.getsockname()[1]
        self._peer: tuple[str, int] | None = None
        self.bridge_hosts: frozenset[str] = frozenset()  # hosts with an accepted control channel
        self._sent_since_barrier = 0
        self.dropped: Counter[str] = Counter()
        self.taken = 0  # datagrams taken from the controller

    @property
    def peer(self) -> tuple[str, int] | None:
        """The session's controller, where the tractor's frames go (None: not known yet)."""
        return self._peer

    def announce(self, controller: tuple[str, int]) -> None:
        """The controller a bridge named in its CLIENT_HELLO: its datagrams are taken from the first."""
        self._peer = controller
        _log.info("can/%d: the controller is %s:%d, as its bridge announced", self.agent, *controller)

    def set_bridge_hosts(self, hosts: frozenset[str]) -> None:
        """The hosts of the session's bridge; without one the controller is forgotten."""
        self.bridge_hosts = hosts
        if self._peer is not None and self._peer[0] not in hosts:
            self._peer = None

    def receive(self) -> list[TractorCommand]:
        """Every datagram waiting: the tractor commands of its frames (a barrier commands nothing)."""
        commands: list[TractorCommand] = []
        while True:
            try:
                data, peer = self.sock.recvfrom(_DATAGRAM_BYTES)
            except (BlockingIOError, InterruptedError):
                return commands
            except OSError as error:
                self._drop("socket", f"receive failed: {error}")
                return commands
            try:
                frames = decode_datagram(data)
            except ProtocolError as error:
                self._drop("datagram", str(error))
                continue
            if not self._from_controller(peer):
                continue
            self.taken += 1
            for frame in frames:
                if is_barrier(frame):
                    continue
                try:
                    command = command_from_frame(frame)
                except AcresSimError as error:
                    self._drop("frame", f"frame 0x{frame.can_id:08X}: {error}")
                    continue
                if command is not None:
                    commands.append(command)

    def _from_controller(self, peer: tuple[str, int]) -> bool:
        """Whether a decoded datagram comes from the session's controller (the first one from the
        bridge's host becomes it); else it is dropped and counted."""
        if self._peer is None and peer[0] in self.bridge_hosts:
            self._peer = peer
            _log.info("can/%d: the controller is %s:%d", self.agent, peer[0], peer[1])
        if peer == self._peer:
            return True
        self._drop("foreign", f"a datagram from {peer[0]}:{peer[1]}, not the session's controller")
        return False

    def send_group(self, observation: TractorObservation) -> None:
        """The 13 frames of the tractor's group for this observation, in one datagram."""
        self._send(frames_from_observation(observation))

    def send_barrier(self, step: int, stamp_ns: int) -> None:
        """The barrier after a lockstep step: every frame of the step has been sent."""
        frame = barrier_frame(step=step, stamp_ns=stamp_ns, frames_sent=self._sent_since_barrier)
        self._send((frame,), counted=False)
        self._sent_since_barrier = 0

    def _send(self, frames: tuple[CanFrame, ...], *, counted: bool = True) -> None:
        if self._peer is None:
            return  # no controller has spoken yet: nobody to send to
        try:
            self.sock.sendto(encode_datagram(frames), self._peer)
        except OSError as error:
            self._drop("socket", f"send failed: {error}")
            return
        if counted:
            self._sent_since_barrier += len(frames)

    def _drop(self, reason: str, message: str) -> None:
        self.dropped[reason] += 1
        count = self.dropped[reason]
        if count in (1, 10, 100) or count % 1000 == 0:
            _log.warning("can/%d: %s (%d dropped for this reason)", self.agent, message, count)

    def close(self) -> None:
        self.sock.close()
