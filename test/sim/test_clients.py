"""A client's queue: bytes leave in the order they were queued, however the socket takes them,
and the queue's bound says when a client has fallen behind."""

from __future__ import annotations

import socket

from acres_sim.server import clients
from acres_sim.server.clients import Client


def test_queued_bytes_arrive_whole_and_in_order_through_partial_sends() -> None:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.settimeout(5.0)
    client = Client(ours, "sensor", 0)
    sent = bytearray()
    received = bytearray()
    try:
        for piece in range(40):  # 40 frames of 128 KiB, the peer reading a little between them
            frame = bytes([piece % 251]) * (128 * 1024) + piece.to_bytes(4, "little")
            client.out += frame
            sent += frame
            client.send_pending()  # takes what the socket takes now, never waits
            received += theirs.recv(64 * 1024)
        while client.pending:
            client.send_pending()
            received += theirs.recv(1 << 20)
        theirs.setblocking(False)
        while len(received) < len(sent):
            try:
                received += theirs.recv(1 << 20)
            except BlockingIOError:
                break
    finally:
        ours.close()
        theirs.close()
    assert received == sent
    assert client.pending == 0
    assert client.sent == 0
    assert not client.out


def test_a_queue_beyond_its_channels_bound_has_fallen_behind() -> None:
    ours, theirs = socket.socketpair()
    try:
        client = Client(ours, "control", 0)
        client.out += bytes(clients.MAX_QUEUED_BYTES["control"])
        assert not client.overflowing
        client.out += b"x"
        assert client.overflowing
    finally:
        ours.close()
        theirs.close()
