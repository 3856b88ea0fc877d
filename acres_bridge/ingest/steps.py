"""The step requests a bridge has sent and not yet seen answered, and when each is complete.

A request is complete when the simulator has answered it (STEP_DONE) and every stream of the
session has marked its last step (STREAM_MARK): only then has every sample of its steps been handed
over. Threads that request steps wait on their request; the link's I/O thread answers them. No I/O.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Final

from acres_bridge.wire import StepDone, StepStatus
from acres_bridge.wire.clock import MAX_STEPS_PER_REQUEST

__all__ = ["PendingStep", "PendingSteps", "StepOutcome"]

_REFUSALS: Final = {
    StepStatus.NOT_PAUSED: "the simulation is not paused",
    StepStatus.STOPPED: "the simulation is stopped",
    StepStatus.TOO_MANY_STEPS: f"more than {MAX_STEPS_PER_REQUEST} steps in one request",
}

_MAX_REQUEST_ID = 0xFFFFFFFF  # request ids are uint32 on the wire, from 1


@dataclass(frozen=True)
class StepOutcome:
    """How a step request ended: done (with the last step) or refused/failed (with the reason)."""

    ok: bool
    last_step: int = 0
    message: str = ""


@dataclass
class PendingStep:
    """One request: its id, the simulator's last step once it answered, and how it ended."""

    request_id: int
    done: threading.Event = field(default_factory=threading.Event)
    last_step: int | None = None
    outcome: StepOutcome | None = None

    def end(self, outcome: StepOutcome) -> None:
        self.outcome = outcome
        self.done.set()


class PendingSteps:
    """The open requests, safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, PendingStep] = {}
        self._next_id = 1

    def open(self) -> PendingStep:
        """A new request with the next id (ids wrap within uint32 and skip 0)."""
        with self._lock:
            pending = PendingStep(self._next_id)
            self._next_id = self._next_id % _MAX_REQUEST_ID + 1
            self._open[pending.request_id] = pending
        return pending

    def forget(self, pending: PendingStep) -> None:
        """Drop a request that will not be answered (not sent, or timed out)."""
        with self._lock:
            self._open.pop(pending.request_id, None)

    def answered(self, message: StepDone, marked: int | None) -> bool:
        """The simulator's answer: a refusal ends the request; a DONE waits for the marks (`marked`,
        the lowest step every stream has marked; None without streams). False for an id not open."""
        with self._lock:
            pending = self._open.get(message.request_id)
            if pending is None:
                return False
            if message.status != StepStatus.DONE:
                del self._open[message.request_id]
        if message.status != StepStatus.DONE:
            pending.end(
                StepOutcome(False, message=f"the simulator refused the steps: {_REFUSALS[message.status]}")
            )
            return True
        pending.last_step = message.last_step
        self.marked(marked)
        return True

    def marked(self, marked: int | None) -> None:
        """Every stream has marked step `marked` (None: there are no streams): end each answered
        request whose last step that covers."""
        with self._lock:
            complete = [
                p
                for p in self._open.values()
                if p.last_step is not None and (marked is None or marked >= p.last_step)
            ]
            for pending in complete:
                del self._open[pending.request_id]
        for pending in complete:
            assert pending.last_step is not None
            pending.end(StepOutcome(True, last_step=pending.last_step))

    def fail_all(self, reason: str) -> None:
        """End every open request with a failure (the session ended, or the bridge is stopping)."""
        with self._lock:
            pending = list(self._open.values())
            self._open.clear()
        for step in pending:
            step.end(StepOutcome(False, message=reason))
