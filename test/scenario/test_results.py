"""The results table: appended as results come, read back for --resume, and the exit status."""

from __future__ import annotations

import pytest

from acres_bridge.scenario.results import (
    MAX_RESULT_LINE_BYTES,
    RESULTS_FILE,
    TORN_FILE,
    EpisodeResult,
    Verdict,
    append_result,
    exit_status,
    read_results,
    read_results_table,
    set_aside_torn_tail,
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


def test_a_torn_last_line_is_set_aside_and_the_next_result_starts_a_line_of_its_own(tmp_path):
    """The finding: after a SIGKILL mid-write, --resume appended onto the half line."""
    append_result(tmp_path, result("s/a", Verdict.PASS))
    torn = b'{"episode": "s/b", "verdict": "PA'
    with (tmp_path / RESULTS_FILE).open("ab") as table:
        table.write(torn)
    assert set_aside_torn_tail(tmp_path) == torn
    assert (tmp_path / TORN_FILE).read_bytes() == torn + b"\n"
    append_result(tmp_path, result("s/b", Verdict.FAIL))
    table = read_results_table(tmp_path)
    assert list(table.results) == ["s/a", "s/b"]
    assert table.skipped == ()
    assert set_aside_torn_tail(tmp_path) == b""  # a whole table: nothing to set aside


def test_a_torn_line_is_named_by_the_readers(tmp_path):
    append_result(tmp_path, result("s/a", Verdict.PASS))
    with (tmp_path / RESULTS_FILE).open("ab") as table:
        table.write(b'{"episode": "s/b"')
    table = read_results_table(tmp_path)
    assert list(table.results) == ["s/a"]
    assert table.skipped == ("line 2: torn (no end of line): a run killed while writing it",)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"episode": "s/x", "scenario": "s", "verdict": "PASS", "error": 123}', "error: expected text"),
        ('{"episode": "s/x", "scenario": "s", "verdict": "PASS", "criteria": "abc"}', "criteria: expected"),
        ('{"episode": "s/x", "scenario": "s", "verdict": "MAYBE"}', "'MAYBE' is not a valid Verdict"),
        ('{"episode": 5, "scenario": "s", "verdict": "PASS"}', "episode: expected text"),
        ('{"episode": "s/x", "scenario": "s", "verdict": "PASS", "metrics": []}', "metrics: expected"),
        ('{"episode": "s/x", "scenario": "s", "verdict": "PASS", "wall_s": NaN}', "wall_s: expected"),
        ("[1, 2]", "a result is a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "RecursionError"),
    ],
)
def test_a_line_of_the_wrong_types_is_skipped_and_named(tmp_path, line, why):
    append_result(tmp_path, result("s/a", Verdict.PASS))
    with (tmp_path / RESULTS_FILE).open("a") as table:
        table.write(line + "\n")
    append_result(tmp_path, result("s/c", Verdict.PASS))
    table = read_results_table(tmp_path)
    assert list(table.results) == ["s/a", "s/c"]
    assert len(table.skipped) == 1
    assert table.skipped[0].startswith("line 2: ")
    assert why in table.skipped[0]


def test_a_line_too_long_is_skipped_without_being_held(tmp_path):
    with (tmp_path / RESULTS_FILE).open("a") as table:
        table.write("x" * (MAX_RESULT_LINE_BYTES + 10) + "\n")
    append_result(tmp_path, result("s/a", Verdict.PASS))
    table = read_results_table(tmp_path)
    assert list(table.results) == ["s/a"]
    assert table.skipped == (f"line 1: longer than {MAX_RESULT_LINE_BYTES} bytes",)
