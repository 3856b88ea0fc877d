"""The reference simulator in free run, paced at 120 Hz, noting when it sends each step's data.

    python -m bench._paced_sim --port N --log PATH

The World and SimServer of acres_sim, configured as its command line does, with one addition in
a subclass: for every step, the CLOCK_MONOTONIC time (time.monotonic_ns, system-wide on Linux,
so the bench process can compare it with its own) just before the step's frames go to the
kernel (the flush after each paced step). On SIGINT or SIGTERM it stops and writes one line per
sent frame to PATH: `clock <stamp_ns> <sent_ns>` or `ins <stamp_ns> <sent_ns>` (agent 0's INS).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from acres_bridge.wire.vocabulary import Source, Vehicle
from acres_sim.server import SimServer
from acres_sim.world.model import AgentSpec, StepOutput, World

__all__ = ["SendLoggingServer", "main"]

START_UTC = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)


class SendLoggingServer(SimServer):
    """A SimServer that notes the send time of each step's clock and INS frames."""

    def __init__(self, world: World, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(world, host=host, port=port)
        self.sent: list[tuple[str, int, int]] = []  # (kind, stamp_ns, sent monotonic ns)
        self._unsent: list[tuple[str, int]] = []

    def _emit(self, output: StepOutput) -> None:
        super()._emit(output)
        self._unsent.append(("clock", output.stamp_ns))
        if output.ins:
            self._unsent.append(("ins", output.ins[0].stamp_ns))

    def _flush_all(self) -> None:
        if self._unsent:
            now = time.monotonic_ns()
            self.sent.extend((kind, stamp_ns, now) for kind, stamp_ns in self._unsent)
            self._unsent.clear()
        super()._flush_all()

    def write_log(self, path: Path) -> None:
        path.write_text("".join(f"{kind} {stamp} {sent}\n" for kind, stamp, sent in self.sent))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench._paced_sim", description=__doc__)
    parser.add_argument("--port", type=int, required=True, help="control port on loopback")
    parser.add_argument("--log", type=Path, required=True, help="where to write the send times")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    world = World(
        seed=args.seed,
        start_utc=START_UTC,
        agents=[AgentSpec(name="polaris", vehicle=Vehicle.POLARIS)],
        lockstep=False,
        source=Source.UNREAL,
        perception=False,  # the latency rows are the INS's and the clock's, without clouds and images
    )
    server = SendLoggingServer(world, port=args.port)

    def stop(_signum: int, _frame: FrameType | None) -> None:
        server.stop()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print(f"bench._paced_sim: listening on 127.0.0.1:{server.control_port} (free run, 120 Hz)", flush=True)
    server.serve_forever()
    server.write_log(args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
