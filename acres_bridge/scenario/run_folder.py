"""The folders a run writes to: made and marked by the runner, never anyone else's.

A run's folder is taken only when it is new, empty, or (to resume) one a run made before: the
runner writes ``.acres_run`` into it, and refuses, before anything starts, a folder with other
content (``-o .``, a home folder, a folder of the user's). Each episode's folder is made and
marked (``.acres_episode``) the same way; an episode run again (``--resume`` after a stop) removes
only an earlier folder that bears that mark, inside the run's folder, and refuses anything else.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from acres_bridge.scenario.errors import ScenarioError

__all__ = [
    "EPISODE_MARK",
    "RUN_MARK",
    "RunFolderError",
    "check_run_folder",
    "claim_run_folder",
    "fresh_episode_folder",
]

RUN_MARK: Final = ".acres_run"
EPISODE_MARK: Final = ".acres_episode"
_FORMAT: Final = 1


class RunFolderError(ScenarioError):
    """Raised when a folder the runner would write to is not one it made: nothing was written."""


def check_run_folder(path: Path, scenario: str, *, resume: bool) -> bool:
    """Whether `path` may be a run's folder of `scenario`: True when it is to be made (new or
    empty), False when it is an earlier run's to resume; RunFolderError otherwise. Writes nothing."""
    folder = path.absolute()
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise RunFolderError(f"{path}: not a folder; the run's folder must be a new or empty folder")
    mark = folder / RUN_MARK
    if folder.is_dir() and _is_mark(mark):
        made_for = _marked_scenario(mark)
        if not resume:
            raise RunFolderError(
                f"{path}: holds a run already (of {made_for}); --resume finishes it, or choose a new "
                "folder (nothing was changed)"
            )
        if made_for != scenario:
            raise RunFolderError(f"{path}: holds a run of {made_for}, not of {scenario}; nothing was changed")
        return False
    if resume:
        raise RunFolderError(f"{path}: no run to resume here (no {RUN_MARK}); nothing was changed")
    if folder.is_dir() and any(folder.iterdir()):
        raise RunFolderError(
            f"{path}: not empty and not made by acres_scenario; the run's folder must be new or empty "
            "(nothing was changed)"
        )
    return True


def claim_run_folder(path: Path, scenario: str, *, resume: bool) -> Path:
    """The run's folder, absolute: made and marked here when new or empty, or (with `resume`) one
    an earlier run of `scenario` made. RunFolderError for anything else, before anything is written."""
    folder = path.absolute()
    if check_run_folder(path, scenario, resume=resume):
        folder.mkdir(parents=True, exist_ok=True)
        _write_mark(folder / RUN_MARK, {"acres_run": _FORMAT, "scenario": scenario, "created_utc": _now()})
    return folder


def fresh_episode_folder(run_dir: Path, relative: str) -> Path:
    """An episode's folder under the run's, made and marked, empty: an earlier one of the same
    episode is removed only if this runner made it. RunFolderError for one it did not make, or a
    path that would leave the run's folder."""
    folder = run_dir / relative
    parts = Path(relative).parts
    if Path(relative).is_absolute() or not parts or any(p in ("", ".", "..") for p in parts):
        raise RunFolderError(f"{relative!r}: an episode's folder must be a plain path inside the run's")
    walked = run_dir
    for part in parts:  # no link on the way may lead out of the run's folder
        walked = walked / part
        if walked.is_symlink():
            raise RunFolderError(f"{walked}: a link; an episode's folder is never written through one")
    if folder.exists():
        if not (folder.is_dir() and _is_mark(folder / EPISODE_MARK)):
            raise RunFolderError(f"{folder}: exists and was not made by acres_scenario; left as it is")
        shutil.rmtree(folder)  # an earlier attempt at this episode, cut short: it starts from nothing
    folder.mkdir(parents=True)
    _write_mark(folder / EPISODE_MARK, {"acres_episode": _FORMAT, "created_utc": _now()})
    return folder


def _is_mark(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _marked_scenario(mark: Path) -> str:
    try:
        data = json.loads(mark.read_text(encoding="utf-8")[:4096])
        return str(data["scenario"])
    except (OSError, ValueError, KeyError, TypeError):
        return "an unknown scenario"


def _write_mark(path: Path, data: dict[str, object]) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as mark:
        mark.write(json.dumps(data, sort_keys=True) + "\n")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
