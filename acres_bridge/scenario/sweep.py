"""A scenario's sweep expanded into named episodes: pure, no I/O.

    polaris_route/seed=3,start_utc=2026-06-21T05:30:00Z

is the episode of the scenario polaris_route with seed 3 and that start time. The matrix gives
every combination of its lists (seed, start, start_utc, then the stack's arguments in file order),
the list one episode per point; a scenario without a sweep is one episode named after it.

The episodes are counted before any is made (at most MAX_SWEEP_EPISODES), and each episode's
folder is a safe name of at most MAX_FOLDER_BYTES bytes, unlike any other episode's.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from acres_bridge.scenario.errors import ScenarioFileError
from acres_bridge.scenario.schema import MAX_SWEEP_EPISODES, Scenario, StartPoseSpec, SweepPoint

__all__ = ["MAX_FOLDER_BYTES", "Episode", "expand", "folder_name", "utc_text"]

MAX_FOLDER_BYTES: Final = 255  # a file system's longest name of one folder
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.,=+-]")


@dataclass(frozen=True)
class Episode:
    """One episode of a sweep: its name and the scenario with the sweep's values in place (its own
    ``sweep`` dropped)."""

    name: str
    scenario: Scenario

    @property
    def folder(self) -> str:
        """The episode's folder under the run's: its name made safe for a file system."""
        return folder_name(self.name)


def utc_text(moment: datetime) -> str:
    """2026-06-21T05:30:00Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def folder_name(name: str) -> str:
    """A folder for an episode name: each ':' and each character unsafe in a file name becomes '-'
    ('polaris_route/seed=3,start_utc=2026-06-21T05-30-00Z')."""
    scenario, _, variant = name.partition("/")
    safe = _UNSAFE.sub("-", variant.replace(":", "-"))
    return f"{scenario}/{safe}" if variant else scenario


def expand(scenario: Scenario) -> list[Episode]:
    """The episodes of a scenario, in order; ScenarioFileError for a sweep of more than
    MAX_SWEEP_EPISODES (counted before any is made), one that names two episodes alike or gives
    two the same folder, or one whose episode's folder name is longer than MAX_FOLDER_BYTES."""
    if scenario.sweep is None:
        return [Episode(scenario.name, scenario.model_copy(update={"sweep": None}))]
    count = scenario.sweep.episode_count
    if count > MAX_SWEEP_EPISODES:
        raise ScenarioFileError(f"sweep: {count} episodes; at most {MAX_SWEEP_EPISODES}")
    points = [*_matrix_points(scenario), *scenario.sweep.list]
    episodes = [_episode(scenario, point, index) for index, point in enumerate(points)]
    _check_folders(episodes)
    return episodes


def _check_folders(episodes: list[Episode]) -> None:
    """ScenarioFileError for an episode's folder name longer than MAX_FOLDER_BYTES, or two episodes
    named alike or in the same folder."""
    for episode in episodes:
        variant = episode.folder.partition("/")[2]
        if len(variant.encode()) > MAX_FOLDER_BYTES:
            raise ScenarioFileError(
                f"sweep: episode {episode.name[:80]}...: its folder's name would be {len(variant.encode())} "
                f"bytes; at most {MAX_FOLDER_BYTES} (vary fewer arguments, or shorter ones)"
            )
    doubled = sorted(name for name, n in Counter(e.name for e in episodes).items() if n > 1)
    if doubled:
        raise ScenarioFileError(f"sweep: episodes named alike: {', '.join(doubled)} (name the start poses)")
    by_folder: dict[str, str] = {}
    for episode in episodes:
        other = by_folder.setdefault(episode.folder, episode.name)
        if other != episode.name:
            raise ScenarioFileError(
                f"sweep: episodes {other} and {episode.name} would share the folder {episode.folder} "
                "(values that differ only in characters a folder's name cannot hold)"
            )


def _matrix_points(scenario: Scenario) -> Iterator[SweepPoint]:
    assert scenario.sweep is not None
    axes = scenario.sweep.matrix.axes
    if not axes:
        return
    for combination in itertools.product(*(values for _, values in axes)):
        fields: dict[str, Any] = {"args": {}}
        for (key, _), value in zip(axes, combination, strict=True):
            if key.startswith("args."):
                fields["args"][key.removeprefix("args.")] = value
            else:
                fields[key] = value
        yield SweepPoint(**fields)


def _episode(scenario: Scenario, point: SweepPoint, index: int) -> Episode:
    """The scenario with one point's values, named by them."""
    session = scenario.session
    labels: list[str] = []
    updates: dict[str, Any] = {}
    if point.seed is not None:
        updates["seed"] = point.seed
        labels.append(f"seed={point.seed}")
    if point.start is not None:
        updates["start"] = point.start
        labels.append(f"start={_start_label(scenario, point.start)}")
    if point.start_utc is not None:
        updates["start_utc"] = point.start_utc.astimezone(UTC)
        labels.append(f"start_utc={utc_text(point.start_utc)}")
    if session.agents is not None and point.start is not None:
        first = session.agents[0].model_copy(update={"start": point.start})
        updates["agents"] = (first, *session.agents[1:])
        del updates["start"]
    stack = scenario.stack
    if point.args:
        stack = stack.model_copy(update={"args": {**stack.args, **point.args}})
        labels += [f"{name}={value}" for name, value in point.args.items()]
    name = f"{scenario.name}/{','.join(labels)}" if labels else f"{scenario.name}/{index}"
    varied = scenario.model_copy(
        update={"session": session.model_copy(update=updates), "stack": stack, "sweep": None}
    )
    return Episode(name, varied)


def _start_label(scenario: Scenario, start: StartPoseSpec) -> str:
    if start.name is not None:
        return start.name
    assert scenario.sweep is not None
    poses = scenario.sweep.matrix.start or ()
    return str(poses.index(start)) if start in poses else f"{start.x:g};{start.y:g};{start.yaw_deg:g}"
