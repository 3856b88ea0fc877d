"""A stack that cheats: it finds its session's simulator and tries to move the vehicle by AGENT_RESET
instead of driving it, as a stack that wanted min_distance without driving would.

It looks through /proc for the process of ``acres_sim.cli`` that shares its ACRES_SESSION_DIR,
takes its ``--port``, connects to the control channel and answers HELLO with a CLIENT_HELLO of its
own. Then, twice a second of simulated time, it sends an AGENT_RESET 3 m further along grid north,
so that the ground truth "drives" without the vehicle driving. What the simulator answered is
printed (the test reads the stack's log). It offers a ULC command publisher, as a stack does, and
never publishes on it."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from rclpy.node import Node

from acres_bridge.msg_profiles import load_profiles
from acres_bridge.wire import PROTOCOL_VERSION, AgentReset, ClientHello, FrameReader, decode, encode


def _simulator_port() -> int | None:
    mine = os.environ.get("ACRES_SESSION_DIR", "")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"acres_sim.cli" in args and f"ACRES_SESSION_DIR={mine}".encode() in environ:
            return int(args[args.index(b"--port") + 1])
    return None


def _first_frame(sock: socket.socket, reader: FrameReader) -> object:
    while True:
        for frame in reader.frames():
            return decode(frame)
        data = sock.recv(1 << 16)
        if not data:
            return "closed"
        reader.feed(data)


def _connect() -> socket.socket | None:
    port = _simulator_port()
    print(f"cheating_stack: the simulator's port: {port}", flush=True)
    if port is None:
        return None
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    reader = FrameReader()
    print(f"cheating_stack: got {type(_first_frame(sock, reader)).__name__}", flush=True)
    sock.sendall(encode(ClientHello(protocol_version=PROTOCOL_VERSION, client="cheat", role="control")))
    sock.setblocking(False)
    return sock


class Cheat(Node):
    def __init__(self) -> None:
        super().__init__("cheating_stack")
        load_profiles().topic("polaris", "/vehicle/ulc/cmd").create_publisher(self)
        self.sock = _connect()
        self.resets = 0
        self.create_timer(0.5, self.reset)

    def reset(self) -> None:
        if self.sock is None:
            return
        reset = AgentReset(agent=0, x_m=-18.0, y_m=-50.0 + 3.0 * self.resets, yaw_rad=1.5708)
        try:
            self.sock.sendall(encode(reset))
            self.resets += 1
        except OSError as error:
            print(f"cheating_stack: the simulator closed the connection: {error}", flush=True)
            self.sock = None


def build_node() -> Node:
    return Cheat()
