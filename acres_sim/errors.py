"""The exceptions of acres_sim. Each says when it is raised.

``require_finite`` is the one check of a parameter record's numeric fields, for every subpackage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = [
    "AcresSimError",
    "AgentError",
    "DbwCommandError",
    "EpisodeLogError",
    "ParamsError",
    "WorldStateError",
    "require_finite",
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


def require_finite(
    record: object,
    *,
    positive: Iterable[str] = (),
    non_negative: Iterable[str] = (),
    fraction: Iterable[str] = (),
    finite: Iterable[str] = (),
) -> None:
    """Refuse a named field of ``record`` that is not finite and > 0 (``positive``), finite and >= 0
    (``non_negative``), between 0 and 1 exclusive (``fraction``) or finite (``finite``).

    The groups are checked in that order, each field in the order given; the ParamsError names the
    record's type, the field and the value found.
    """
    owner = type(record).__name__
    for name in positive:
        value = getattr(record, name)
        if not (math.isfinite(value) and value > 0.0):
            raise ParamsError(f"{owner}.{name}: expected a finite value > 0, got {value!r}")
    for name in non_negative:
        value = getattr(record, name)
        if not (math.isfinite(value) and value >= 0.0):
            raise ParamsError(f"{owner}.{name}: expected a finite value >= 0, got {value!r}")
    for name in fraction:
        value = getattr(record, name)
        if not (math.isfinite(value) and 0.0 < value < 1.0):
            raise ParamsError(f"{owner}.{name}: expected a value between 0 and 1, got {value!r}")
    for name in finite:
        value = getattr(record, name)
        if not math.isfinite(value):
            raise ParamsError(f"{owner}.{name}: expected a finite number, got {value!r}")
