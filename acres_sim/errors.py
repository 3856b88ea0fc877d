"""The exceptions of acres_sim. Each says when it is raised."""

from __future__ import annotations

__all__ = [
    "AcresSimError",
    "AgentError",
    "DbwCommandError",
    "EpisodeLogError",
    "ParamsError",
    "WorldStateError",
]


class AcresSimError(Exception):
    """Base of every error that acres_sim raises on purpose."""


class ParamsError(AcresSimError, ValueError):
    """Raised when a parameter or an input value is invalid: not finite, out of range, inconsistent.

    The message names the parameter, the value found and what was expected.
    """


class AgentError(AcresSimError, LookupError):
    """Raised when an agent index or name does not exist, or an agent list is malformed."""


class WorldStateError(AcresSimError):
    """Raised when an operation is not allowed in the current simulation state (advance while stopped)."""


class DbwCommandError(AcresSimError, ValueError):
    """Raised when a drive-by-wire command is refused before it reaches the vehicle.

    That is: an unknown target, cmd_type or flag, a value that is not finite or out of its range, a
    gear value that is no gear (0 included), or a command for an agent without drive-by-wire (a
    Maxxum). The message names the field, the value found and what was expected.
    """


class EpisodeLogError(AcresSimError):
    """Raised when the episode log cannot be created (the file exists, the directory is missing, a
    definition is not installed) or is used after it was closed."""
