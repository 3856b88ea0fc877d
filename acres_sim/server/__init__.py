"""The simulator's server: the wire protocol served over sockets (docs/protocol.md).

It owns the network side and nothing of the world's models: the server loop (`sim_server`), the
accepted connections and their bounded output (`clients`), their HELLO and CLIENT_HELLO
(`handshake`), the vehicle commands, held in lockstep for their step request (`vehicle_commands`),
the clouds and images and free run's render thread (`rendering`), a Maxxum's CAN transport
(`can_bus`) and real-time pacing (`pacing`). It imports the world, the sensors' frames
and the bridge's wire; nothing of the simulator imports it but the command line (`acres_sim.cli`),
which test/test_layers.py enforces.
"""

from __future__ import annotations

from acres_sim.server.sim_server import SimServer, StepObserver

__all__ = ["SimServer", "StepObserver"]
