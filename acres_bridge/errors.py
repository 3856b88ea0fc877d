"""The exceptions of acres_bridge. Each says when it is raised."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AcresBridgeError",
    "CommandRefusedError",
    "ComponentError",
    "ParameterError",
    "ProcessFailedError",
    "ProfileError",
    "SteppingError",
]


class AcresBridgeError(Exception):
    """Base of every error that acres_bridge raises on purpose."""


class CommandRefusedError(AcresBridgeError, ValueError):
    """Raised when a command must not reach the vehicle: the message names the field and its value."""


class ParameterError(AcresBridgeError, ValueError):
    """Raised when a node's or the bridge's parameter has a value it cannot take: the message names
    the parameter, the value found and what is expected."""


class ProfileError(AcresBridgeError):
    """Raised when a msg_profiles file is missing, malformed or contradicts itself.

    The message names the file and, where there is one, the row (1-based) and the topic.
    """

    def __init__(self, file: str, message: str, *, row: int | None = None, topic: str | None = None) -> None:
        where = file
        if row is not None:
            where += f", row {row}"
        if topic:
            where += f" ({topic})"
        super().__init__(f"{where}: {message}")
        self.file = file
        self.row = row
        self.topic = topic


class ComponentError(AcresBridgeError):
    """Raised when the component container cannot find, build or unload a node class.

    The message names the plugin (``package::ClassName``) or the unique id concerned and the reason;
    for an unknown plugin it lists what is registered.
    """


class ProcessFailedError(AcresBridgeError):
    """Raised when a child process ended before it should have, or did not print an awaited line in time.

    The message names the process, what went wrong and the last lines of its output. ``returncode``
    is the exit status when the process has ended (negative: the signal that ended it), else None.
    """

    def __init__(
        self, process: str, problem: str, output: Sequence[str] = (), *, returncode: int | None = None
    ) -> None:
        super().__init__(f"{process} {problem}{self.describe_output(output)}")
        self.process = process
        self.problem = problem
        self.output = tuple(output)
        self.returncode = returncode

    @staticmethod
    def describe_output(output: Sequence[str]) -> str:
        """The end of a message about a process: its output lines, indented, or that there were none."""
        if not output:
            return "; it printed nothing"
        return "; its last output:\n" + "\n".join(f"  {line}" for line in output)


class SteppingError(AcresBridgeError):
    """Raised by the stepping client when a step request is refused or its messages do not all
    arrive in time: the message says which request and, per topic, how many are missing."""
