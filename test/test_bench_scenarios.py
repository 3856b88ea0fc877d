"""Smoke test of the Ray benchmark (bench/scenarios.py): its quick run succeeds and prints every
row of it. A file of its own, so that it runs beside test/test_bench.py (test/bench_smoke.py)."""

from __future__ import annotations

import subprocess

import pytest
from bench_smoke import SEPARATE, listed_rows, quick, rows_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]  # the quick run is in a fixture


@pytest.fixture(scope="module")
def row_names() -> list[str]:
    return listed_rows(SEPARATE)


@pytest.fixture(scope="module")
def quick_run() -> subprocess.CompletedProcess[str]:
    return quick(SEPARATE)


def test_the_list_has_the_ray_rows(row_names):
    assert row_names[0] == "scenario episodes per hour, perception off, 1 Ray worker"
    assert len(row_names) == 6


def test_quick_run_succeeds(quick_run):
    assert quick_run.returncode == 0, f"stdout:\n{quick_run.stdout}\nstderr:\n{quick_run.stderr}"


def test_quick_run_prints_every_row(quick_run, row_names):
    assert rows_missing(quick_run, row_names) == [], quick_run.stdout
