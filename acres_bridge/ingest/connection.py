"""What the ingest node and its connection to a simulator expect of each other.

`SimulatorConnection` is what the node needs of a connection (`ingest.link.SimulatorLink` is the
one; tests give their own), `LinkListener` what the connection calls back, from its I/O thread,
and `LinkCounters` what it counts of the bad input it dropped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from acres_bridge.ingest.steps import StepOutcome
from acres_bridge.wire import Hello, SimState

__all__ = ["LinkCounters", "LinkListener", "Logger", "SimulatorConnection"]


class Logger(Protocol):
    """The logging calls the link makes: rclpy's node logger and logging.Logger both have them."""

    def debug(self, message: str) -> Any: ...
    def info(self, message: str) -> Any: ...
    def warning(self, message: str) -> Any: ...
    def error(self, message: str) -> Any: ...


class LinkListener(Protocol):
    """What the link calls, from its I/O thread: the session, each sample as it is decoded (every
    message of `wire.SAMPLE_TYPES`, and each CAN frame of a tractor), and the end of the session."""

    def on_session(self, hello: Hello) -> None: ...
    def on_sample(self, agent: int, sample: object) -> None: ...
    def on_disconnect(self, reason: str) -> None: ...


class SimulatorConnection(Protocol):
    """What the ingest node needs of its connection to a simulator (SimulatorLink is the one)."""

    @property
    def hello(self) -> Hello | None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def request_steps(self, steps: int, *, timeout_s: float) -> StepOutcome: ...
    def abort_pending(self, reason: str) -> None: ...
    def send(self, agent: int, sample: object) -> bool: ...
    def set_state(self, state: SimState) -> bool: ...
    def reset_session(self, reason: str = "") -> bool: ...


@dataclass
class LinkCounters:
    """What the link dropped or refused, by reason; read by diagnostics and tests."""

    dropped_frames: Counter[str] = field(default_factory=Counter)
    bad_payloads: Counter[str] = field(default_factory=Counter)
    unexpected: Counter[str] = field(default_factory=Counter)
    sessions: int = 0
    can_frames: int = 0  # frames of the tractors' CAN buses handed to the listener
    can_problems: Counter[str] = field(default_factory=Counter)  # datagrams refused, frames lost, ...
