"""The simulator's server in a thread of the test, on loopback ports of the system's choice."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest

from acres_sim.server import SimServer
from acres_sim.world.model import AgentSpec, World

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[tuple[SimServer, threading.Thread]] = []

    def start(
        *,
        lockstep: bool = True,
        seed: int = 42,
        agents: Sequence[AgentSpec] | None = None,
        perception: bool = False,
        token: str = "",
    ) -> SimServer:
        world = World(
            seed=seed,
            start_utc=START,
            lockstep=lockstep,
            agents=agents or (AgentSpec(name="polaris"),),
            perception=perception,
        )
        server = SimServer(world, port=0, token=token)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.stop()
        thread.join(5)
