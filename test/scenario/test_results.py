"""The results table: appended as results come, read back for --resume, and the exit status."""

from __future__ import annotations

from acres_bridge.scenario.results import (
    RESULTS_FILE,
    EpisodeResult,
    Verdict,
    append_result,
    exit_status,
    read_results,
)


def result(name: str, verdict: Verdict) -> EpisodeResult:
    criteria = (
        {
            "name": "max_speed",
            "kind": "max_speed",
            "passed": verdict is not Verdict.FAIL,
            "value": 3.5,
            "rule": "<= 3 m/s",
        },
    )
    return EpisodeResult(
        episode=name, scenario="s", verdict=verdict, criteria=criteria, metrics={"sim_time_s": 5.0}
    )


def test_results_are_read_back_as_written(tmp_path):
    append_result(tmp_path, result("s/a", Verdict.PASS))
    append_result(tmp_path, result("s/b", Verdict.FAIL))
    found = read_results(tmp_path)
    assert list(found) == ["s/a", "s/b"]
    assert found["s/b"] == result("s/b", Verdict.FAIL)
    assert found["s/b"].failed == ["max_speed=3.5"]


def test_a_line_cut_short_by_a_killed_run_is_ignored(tmp_path):
    append_result(tmp_path, result("s/a", Verdict.PASS))
    with (tmp_path / RESULTS_FILE).open("a") as table:
        table.write('{"episode": "s/b", "verd')
    assert list(read_results(tmp_path)) == ["s/a"]


def test_no_table_is_no_results(tmp_path):
    assert read_results(tmp_path) == {}


def test_the_exit_status_gates_a_ci_job():
    assert exit_status([result("a", Verdict.PASS)]) == 0
    assert exit_status([result("a", Verdict.PASS), result("b", Verdict.FAIL)]) == 1
    assert exit_status([result("a", Verdict.FAIL), result("b", Verdict.ERROR)]) == 2
    assert exit_status([]) == 0
