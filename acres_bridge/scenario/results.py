"""An episode's result and the run's results table (JSON lines, ``results.jsonl`` in the run's folder).

Each result is appended, and flushed to the disk, the moment it is known, so an interrupted run
loses none; ``--resume`` reads the table and runs only the episodes it has no line for. A line
that cannot be read (a run killed in the middle of a write) is ignored, and its episode runs again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

__all__ = ["RESULTS_FILE", "EpisodeResult", "Verdict", "append_result", "exit_status", "read_results"]

RESULTS_FILE: Final = "results.jsonl"


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
    def from_dict(cls, data: dict[str, Any]) -> EpisodeResult:
        return cls(
            episode=str(data["episode"]),
            scenario=str(data["scenario"]),
            verdict=Verdict(data["verdict"]),
            criteria=tuple(data.get("criteria", ())),
            metrics=dict(data.get("metrics", {})),
            error=data.get("error"),
            folder=str(data.get("folder", "")),
            wall_s=float(data.get("wall_s", 0.0)),
        )


def append_result(run_dir: Path, result: EpisodeResult) -> None:
    """Append one result to the run's table and flush it to the disk."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / RESULTS_FILE).open("a", encoding="utf-8") as table:
        table.write(json.dumps(result.as_dict(), sort_keys=True) + "\n")
        table.flush()
        os.fsync(table.fileno())


def read_results(run_dir: Path) -> dict[str, EpisodeResult]:
    """The results in the run's table by episode name (the last line of an episode wins)."""
    path = run_dir / RESULTS_FILE
    results: dict[str, EpisodeResult] = {}
    if not path.exists():
        return results
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            result = EpisodeResult.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue
        results[result.episode] = result
    return results


def exit_status(results: Iterable[EpisodeResult]) -> int:
    """0 when every episode passed, 2 when one could not run, else 1 (a criterion failed)."""
    verdicts = {r.verdict for r in results}
    if Verdict.ERROR in verdicts:
        return 2
    return 1 if Verdict.FAIL in verdicts else 0
