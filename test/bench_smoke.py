"""The benchmarks' smoke run, shared by test/test_bench.py and test/test_bench_scenarios.py.

The quick run is split over two test files, so that a run of the suite on several workers smokes
the Ray benchmark (the longest) beside the others instead of after them. No figure is checked:
performance is read from the table, not asserted by tests.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICK_TIMEOUT_S = 480.0  # a bound against a hang: a quick run takes a few minutes on 2 busy cores
# The benchmarks whose quick run is in a file of its own.
SEPARATE = ("scenarios",)


def bench(*args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """`python -m bench ARGS` from the project's root, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def only(keys: Sequence[str]) -> list[str]:
    """The --only arguments that pick `keys`."""
    return [f"--only={key}" for key in keys]


def listed_rows(keys: Sequence[str]) -> list[str]:
    """The row names `python -m bench --list` gives for the benchmarks of `keys`."""
    listed = bench("--list", *only(keys), timeout_s=60.0)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.splitlines()


def quick(keys: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """The quick run of the benchmarks of `keys`."""
    return bench("--quick", *only(keys), timeout_s=QUICK_TIMEOUT_S)


def keys_besides_separate() -> list[str]:
    """Every benchmark's key but those of SEPARATE, in the table's order."""
    from bench.registry import BENCHMARKS  # noqa: PLC0415 (in the worker that runs the smoke only)

    return [b.key for b in BENCHMARKS if b.key not in SEPARATE]


def rows_missing(run: subprocess.CompletedProcess[str], row_names: Sequence[str]) -> list[str]:
    """The rows of `row_names` that the table a run printed lacks."""
    table = [line for line in run.stdout.splitlines() if line.startswith("| ")]
    return [name for name in row_names if not any(line.startswith(f"| {name} ") for line in table)]
