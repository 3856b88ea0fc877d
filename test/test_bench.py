"""Smoke test of the benchmarks: `python -m bench --quick` runs and prints every row.

No figure is checked: performance is read from the table, not asserted by tests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]  # the quick run is in a fixture

ROOT = Path(__file__).resolve().parents[1]
QUICK_TIMEOUT_S = 480.0  # a bound against a hang: the quick run takes about 3 min on 2 busy cores
# The first rows of the table (bench/README.md); later benchmarks add more.
REQUIRED_ROWS = (
    "lockstep throughput via bridge, 120 steps/call",
    "lockstep round trip via bridge, 1 step/call",
    "simulator alone, 120 steps/call",
    "bridge CPU per simulated second, lockstep",
    "simulator CPU per simulated second, lockstep",
    "sample-to-publish latency /oxts/imu p50",
    "sample-to-publish latency /oxts/imu p99",
)


def bench(*args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


@pytest.fixture(scope="module")
def row_names() -> list[str]:
    listed = bench("--list", timeout_s=60.0)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.splitlines()


@pytest.fixture(scope="module")
def quick_run() -> subprocess.CompletedProcess[str]:
    return bench("--quick", timeout_s=QUICK_TIMEOUT_S)


def test_the_list_has_the_first_rows(row_names):
    assert [name for name in REQUIRED_ROWS if name not in row_names] == []


def test_quick_run_succeeds(quick_run):
    assert quick_run.returncode == 0, f"stdout:\n{quick_run.stdout}\nstderr:\n{quick_run.stderr}"


def test_quick_run_prints_every_row(quick_run, row_names):
    table = [line for line in quick_run.stdout.splitlines() if line.startswith("| ")]
    missing = [name for name in row_names if not any(line.startswith(f"| {name} ") for line in table)]
    assert missing == [], quick_run.stdout
