"""The runner writes only in folders it made and marked: a user's folder is refused before
anything starts, and nothing of the user's is removed or overwritten."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acres_bridge.processes import localhost_environment
from acres_bridge.scenario.episode import run_episode
from acres_bridge.scenario.loader import parse_scenario
from acres_bridge.scenario.results import RESULTS_FILE, Verdict
from acres_bridge.scenario.run_folder import (
    EPISODE_MARK,
    RUN_MARK,
    RunFolderError,
    claim_run_folder,
    fresh_episode_folder,
)
from acres_bridge.scenario.sweep import expand

SCENARIO = """\
acres_scenario: 1
name: route
session: {vehicle: polaris}
duration_s: 2
stack: {builtin: autopilot}
criteria:
  - {kind: max_speed, max_mps: 5}
"""


def user_file(folder: Path, name: str = "thesis.tex") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("a user's work\n")
    return path


def acres_scenario(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acres_bridge.scenario.cli", *args],
        capture_output=True,
        text=True,
        env={**localhost_environment(), "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_a_new_folder_is_made_and_marked(tmp_path):
    run = claim_run_folder(tmp_path / "runs" / "today", "route", resume=False)
    assert run == (tmp_path / "runs" / "today").absolute()
    assert sorted(p.name for p in run.iterdir()) == [RUN_MARK]


def test_an_empty_folder_is_taken_and_marked(tmp_path):
    assert claim_run_folder(tmp_path, "route", resume=False) == tmp_path
    assert (tmp_path / RUN_MARK).is_file()


def test_a_folder_with_other_content_is_refused_and_left_as_it_was(tmp_path):
    mine = user_file(tmp_path)
    with pytest.raises(RunFolderError, match="not empty and not made by acres_scenario"):
        claim_run_folder(tmp_path, "route", resume=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name]


def test_an_earlier_run_is_resumed_only_when_asked_and_only_for_its_scenario(tmp_path):
    claim_run_folder(tmp_path, "route", resume=False)
    with pytest.raises(RunFolderError, match=r"holds a run already \(of route\); --resume"):
        claim_run_folder(tmp_path, "route", resume=False)
    with pytest.raises(RunFolderError, match="holds a run of route, not of other"):
        claim_run_folder(tmp_path, "other", resume=True)
    assert claim_run_folder(tmp_path, "route", resume=True) == tmp_path


def test_resume_needs_a_run_to_resume(tmp_path):
    with pytest.raises(RunFolderError, match="no run to resume"):
        claim_run_folder(tmp_path, "route", resume=True)
    user_file(tmp_path)
    with pytest.raises(RunFolderError, match="no run to resume"):
        claim_run_folder(tmp_path, "route", resume=True)


def test_a_file_or_a_link_is_not_a_run_folder(tmp_path):
    mine = user_file(tmp_path / "elsewhere")
    (tmp_path / "link").symlink_to(mine.parent)
    with pytest.raises(RunFolderError, match="not a folder"):
        claim_run_folder(mine, "route", resume=False)
    with pytest.raises(RunFolderError, match="not a folder"):
        claim_run_folder(tmp_path / "link", "route", resume=False)
    assert mine.read_text() == "a user's work\n"


def test_an_episode_run_again_replaces_only_the_folder_the_runner_made(tmp_path):
    first = fresh_episode_folder(tmp_path, "route/seed=1")
    (first / "stack.log").write_text("an attempt cut short\n")
    again = fresh_episode_folder(tmp_path, "route/seed=1")
    assert sorted(p.name for p in again.iterdir()) == [EPISODE_MARK]


def test_an_episode_folder_the_runner_did_not_make_is_left_as_it_is(tmp_path):
    mine = user_file(tmp_path / "route" / "seed=1")
    with pytest.raises(RunFolderError, match="not made by acres_scenario; left as it is"):
        fresh_episode_folder(tmp_path, "route/seed=1")
    assert mine.read_text() == "a user's work\n"


@pytest.mark.parametrize("relative", ["../outside", "/etc", "route/../../x", ".", ""])
def test_an_episode_folder_stays_inside_the_run(tmp_path, relative):
    with pytest.raises(RunFolderError, match="plain path inside the run"):
        fresh_episode_folder(tmp_path / "run", relative)
    assert list(tmp_path.iterdir()) == []


def test_a_link_on_the_way_to_an_episode_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    mine = user_file(outside / "seed=1")
    run = tmp_path / "run"
    run.mkdir()
    (run / "route").symlink_to(outside)
    with pytest.raises(RunFolderError, match="a link"):
        fresh_episode_folder(run, "route/seed=1")
    assert mine.read_text() == "a user's work\n"
    assert not (outside / "seed=1" / EPISODE_MARK).exists()


def test_an_episode_whose_folder_is_a_users_is_an_error_and_starts_nothing(tmp_path):
    episode = expand(parse_scenario(SCENARIO, "route.yaml"))[0]
    mine = user_file(tmp_path / episode.folder)
    result = run_episode(episode, tmp_path, scenario_dir=tmp_path)
    assert result.verdict is Verdict.ERROR
    assert "not made by acres_scenario" in str(result.error)
    assert sorted(p.name for p in mine.parent.iterdir()) == [mine.name]


def test_the_runner_refuses_a_users_folder_before_anything_starts(tmp_path):
    """The finding: `-o DIR` where DIR/<scenario>/ held a user's file; the file was removed."""
    scenario = tmp_path / "route.yaml"
    scenario.write_text(SCENARIO)
    run = tmp_path / "results"
    mine = user_file(run / "route")
    done = acres_scenario("run", str(scenario), "-o", str(run), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not empty and not made by acres_scenario" in done.stderr
    assert "Traceback" not in done.stderr
    assert mine.read_text() == "a user's work\n"
    assert sorted(p.name for p in run.rglob("*")) == ["route", mine.name]
    assert not (run / RESULTS_FILE).exists()


def test_the_runner_refuses_the_working_folder_when_it_holds_anything(tmp_path):
    scenario = tmp_path / "route.yaml"
    scenario.write_text(SCENARIO)
    done = acres_scenario("run", str(scenario), "-o", ".", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not empty and not made by acres_scenario" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["route.yaml"]
