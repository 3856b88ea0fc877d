"""An episode's result and the run's results table (JSON lines, ``results.jsonl`` in the run's folder).

Each result is appended as one whole line in one write, and flushed to the disk, the moment it is
known, so an interrupted run loses none; ``--resume`` reads the table and runs only the episodes it
has no line for. A run killed in the middle of a write leaves a torn last line: ``--resume`` first
moves it, as it is, to ``results.torn`` beside the table (set_aside_torn_tail), so the next result
starts a line of its own. A line that cannot be read as a result (torn, of the wrong types, too
long or too deep) is skipped by every reader and named in ReadResults.skipped.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO, Final

__all__ = [
    "MAX_RESULT_LINE_BYTES",
    "RESULTS_FILE",
    "TORN_FILE",
    "EpisodeResult",
    "ReadResults",
    "Verdict",
    "append_result",
    "exit_status",
    "read_results",
    "read_results_table",
    "set_aside_torn_tail",
]

RESULTS_FILE: Final = "results.jsonl"
TORN_FILE: Final = "results.torn"  # torn last lines, set aside by --resume as they were
MAX_RESULT_LINE_BYTES: Final = 4 * 1024 * 1024  # a result is a few kB; a longer line is skipped


class Verdict(StrEnum):
    """PASS: every criterion held. FAIL: one or more did not. ERROR: the episode could not run to
    its end (a process crashed or hung, the session did not start)."""

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"


@dataclass(frozen=True, kw_only=True)
class EpisodeResult:
    """What an episode gave: its verdict, each criterion's result, its metrics and, for ERROR, the cause."""

    episode: str
    scenario: str
    verdict: Verdict
    criteria: tuple[dict[str, Any], ...] = ()
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    folder: str = ""
    wall_s: float = 0.0

    @property
    def failed(self) -> list[str]:
        """The names of the criteria that did not hold, with their values."""
        return [f"{c['name']}={c['value']}" for c in self.criteria if not c["passed"]]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        data["criteria"] = list(self.criteria)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> EpisodeResult:
        """The result a table line holds; ValueError naming the first field of the wrong type."""
        if not isinstance(data, dict):
            raise ValueError(f"a result is a JSON object, found {type(data).__name__}")
        criteria = data.get("criteria", [])
        if not isinstance(criteria, list | tuple) or not all(_is_criterion(c) for c in criteria):
            raise ValueError("criteria: expected a list of objects with a text name and a true/false passed")
        wall_s = data.get("wall_s", 0.0)
        if isinstance(wall_s, bool) or not isinstance(wall_s, int | float) or not math.isfinite(wall_s):
            raise ValueError("wall_s: expected a finite number")
        return cls(
            episode=_text(data, "episode"),
            scenario=_text(data, "scenario"),
            verdict=Verdict(_text(data, "verdict")),
            criteria=tuple(criteria),
            metrics=_object(data, "metrics"),
            error=None if data.get("error") is None else _text(data, "error"),
            folder=_text(data, "folder", ""),
            wall_s=float(wall_s),
        )


def _text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key}: expected text, found {type(value).__name__}")
    return value


def _object(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"{key}: expected an object, found {type(value).__name__}")
    return value


def _is_criterion(criterion: Any) -> bool:
    return (
        isinstance(criterion, dict)
        and isinstance(criterion.get("name"), str)
        and isinstance(criterion.get("passed"), bool)
    )


@dataclass(frozen=True)
class ReadResults:
    """A results table as read: the results by episode name (the last line of an episode wins),
    and each line skipped, as ``line N: why``."""

    results: dict[str, EpisodeResult]
    skipped: tuple[str, ...] = ()


def append_result(run_dir: Path, result: EpisodeResult) -> None:
    """Append one result to the run's table as one whole line, in one write, flushed to the disk."""
    line = (json.dumps(result.as_dict(), sort_keys=True) + "\n").encode("utf-8")
    descriptor = os.open(run_dir / RESULTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = 0
        while written < len(line):  # a regular file takes it in one write but for a full disk
            written += os.write(descriptor, line[written:])
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def set_aside_torn_tail(run_dir: Path) -> bytes:
    """Move a torn last line of the run's table (a run killed in the middle of a write) to
    ``results.torn``, as it was, and cut it from the table; the bytes moved (none: nothing torn)."""
    path = run_dir / RESULTS_FILE
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return b""
    with path.open("r+b") as table:
        if size == 0:
            return b""
        table.seek(size - 1)
        if table.read(1) == b"\n":
            return b""
        start = _torn_tail_start(table, size)
        table.seek(start)
        torn = table.read()
        with (run_dir / TORN_FILE).open("ab") as aside:
            aside.write(torn + b"\n")
            aside.flush()
            os.fsync(aside.fileno())
        table.truncate(start)
        table.flush()
        os.fsync(table.fileno())
    return torn


def _torn_tail_start(table: BinaryIO, size: int) -> int:
    """Where the table's last line starts: after its last newline (read back in blocks)."""
    end = size
    while end > 0:
        start = max(0, end - 65_536)
        table.seek(start)
        block = table.read(end - start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def read_results_table(run_dir: Path) -> ReadResults:
    """The run's table as read, each line that is not a whole result skipped and named."""
    path = run_dir / RESULTS_FILE
    results: dict[str, EpisodeResult] = {}
    skipped: list[str] = []
    if not path.is_file():
        return ReadResults(results)
    with path.open("rb") as table:
        for number, raw in enumerate(_bounded_lines(table), start=1):
            if raw is None:
                skipped.append(f"line {number}: longer than {MAX_RESULT_LINE_BYTES} bytes")
                continue
            if not raw.endswith(b"\n"):
                skipped.append(f"line {number}: torn (no end of line): a run killed while writing it")
                continue
            try:
                result = EpisodeResult.from_dict(json.loads(raw))
            except (ValueError, RecursionError) as error:
                skipped.append(f"line {number}: {type(error).__name__}: {str(error)[:120]}")
                continue
            results[result.episode] = result
    return ReadResults(results, tuple(skipped))


def _bounded_lines(table: BinaryIO) -> Iterator[bytes | None]:
    """Each line of a binary file, or None for one longer than MAX_RESULT_LINE_BYTES (read past
    in blocks, never held whole)."""
    while raw := table.readline(MAX_RESULT_LINE_BYTES + 1):
        if len(raw) <= MAX_RESULT_LINE_BYTES:
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = table.readline(MAX_RESULT_LINE_BYTES)
        yield None


def read_results(run_dir: Path) -> dict[str, EpisodeResult]:
    """The results in the run's table by episode name (the last line of an episode wins); lines
    that are not whole results are skipped (read_results_table names them)."""
    return read_results_table(run_dir).results


def exit_status(results: Iterable[EpisodeResult]) -> int:
    """0 when every episode passed, 2 when one could not run, else 1 (a criterion failed)."""
    verdicts = {r.verdict for r in results}
    if Verdict.ERROR in verdicts:
        return 2
    return 1 if Verdict.FAIL in verdicts else 0
