"""SessionSim: a Sim on an isolated session's node, with the session's processes (what the pytest
fixture ``acres_sim`` yields)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acres_bridge.processes import ChildProcess
from acres_bridge.session import IsolatedSession
from acres_bridge.testing.sim import Sim

__all__ = ["STACK_LOG_LINES", "SessionSim"]

STACK_LOG_LINES = 10  # of each stack's log, in an error that blames the stack


class SessionSim(Sim):
    """A Sim of a started IsolatedSession: ``start_stack`` starts the stack under test in the
    session's domain; ``domain_id`` and ``folder`` are the session's."""

    def __init__(self, session: IsolatedSession, **options: Any) -> None:
        super().__init__(session.node, vehicle=session.config.vehicle, **options)
        self.session = session
        self.domain_id = session.domain_id
        self.folder: Path = session.folder
        self._stacks: list[ChildProcess] = []

    def start_stack(
        self,
        args: Sequence[str],
        *,
        name: str = "stack",
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> ChildProcess:
        """Start the stack under test (its whole process group ends with the session); its output
        goes to ``folder/<name>.log``."""
        stack = self.session.start_process(name, list(args), env=env, cwd=cwd)
        self._stacks.append(stack)
        return stack

    def stack_logs(self) -> str:
        """The last lines of the log of each stack started here."""
        return "".join(
            f"\n--- last lines of {stack.name}.log ---\n" + "\n".join(stack.tail(STACK_LOG_LINES))
            for stack in self._stacks
        )

    def log(self, name: str = "stack") -> str:
        """The output so far of a process of the session (``stack``, ``bridge``, ``simulator``)."""
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""
