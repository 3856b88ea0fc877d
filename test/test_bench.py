"""Smoke test of the benchmarks: `python -m bench --quick` runs and prints every row, and a
SIGTERM ends a run with every process it started. The Ray benchmark's quick run is in
test/test_bench_scenarios.py (test/bench_smoke.py says why).

No figure is checked: performance is read from the table, not asserted by tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_smoke import ROOT, keys_besides_separate, listed_rows, quick, rows_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]  # the quick run is in a fixture

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


@pytest.fixture(scope="module")
def keys() -> list[str]:
    return keys_besides_separate()


@pytest.fixture(scope="module")
def row_names(keys: list[str]) -> list[str]:
    return listed_rows(keys)


@pytest.fixture(scope="module")
def quick_run(keys: list[str]) -> subprocess.CompletedProcess[str]:
    return quick(keys)


def test_the_list_has_the_first_rows(row_names):
    assert [name for name in REQUIRED_ROWS if name not in row_names] == []


def test_quick_run_succeeds(quick_run):
    assert quick_run.returncode == 0, f"stdout:\n{quick_run.stdout}\nstderr:\n{quick_run.stderr}"


def test_quick_run_prints_every_row(quick_run, row_names):
    assert rows_missing(quick_run, row_names) == [], quick_run.stdout


def _children(pid: int) -> list[int]:
    """The ids of the live processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def test_sigterm_stops_a_run_and_every_process_it_started() -> None:
    """A bench killed by a timeout or a CI job's end leaves no simulator or bridge running."""
    started: list[int] = []
    run = subprocess.Popen(
        [sys.executable, "-m", "bench", "--only", "lockstep", "--quick"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(started := _children(run.pid)) < 2:  # the simulator and the bridge
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the bench started no processes"
            time.sleep(0.1)
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
        left = [pid for pid in started if _alive(pid)]
        for pid in left:  # what a failed stop left: ended here, and the test fails on it below
            os.kill(pid, signal.SIGKILL)
    assert run.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr
    assert "stopped after" in stderr
    assert left == []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
