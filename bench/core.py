"""What a benchmark is and what it returns: settings in, rows of the table out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Benchmark", "Outcome", "Row", "Settings"]

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Settings:
    """How long to measure: the full run, or the short smoke-test run (--quick)."""

    quick: bool = False

    def pick(self, full: T, quick: T) -> T:
        """`full` for the full run, `quick` for --quick."""
        return quick if self.quick else full


@dataclass(frozen=True, kw_only=True)
class Row:
    """One line of the table. `value` None means the figure could not be measured."""

    name: str
    value: float | None
    unit: str
    notes: str = ""


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a benchmark measured: its rows, and notes printed under the table."""

    rows: tuple[Row, ...]
    footnotes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    """A benchmark: its key (for --only), the rows it prints (name, unit) in order, and its run."""

    key: str
    rows: tuple[tuple[str, str], ...]
    run: Callable[[Settings], Outcome]

    @property
    def row_names(self) -> tuple[str, ...]:
        return tuple(name for name, _unit in self.rows)
