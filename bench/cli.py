"""python -m bench: run the benchmarks of bench.registry and print one table.

    python -m bench            the full run (about two minutes)
    python -m bench --quick    a short run, for a smoke test
    python -m bench --list     the row names, one per line
    python -m bench --only lockstep

Exit status 0 when every benchmark produced its rows, 1 when one failed (its rows then say why).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from bench.core import Benchmark, Outcome, Row, Settings
from bench.registry import BENCHMARKS

__all__ = ["format_table", "format_value", "main"]

COLUMNS = ("benchmark", "value", "unit", "notes")


def format_value(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_table(rows: Sequence[Row]) -> str:
    """A markdown table with aligned columns; values right-aligned."""
    cells = [COLUMNS, *((row.name, format_value(row.value), row.unit, row.notes) for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]

    def line(values: Sequence[str]) -> str:
        padded = [
            value.rjust(width) if i == 1 else value.ljust(width)
            for i, (value, width) in enumerate(zip(values, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    dashes = ["-" * (width + 1) + (":" if i == 1 else "-") for i, width in enumerate(widths)]
    rule = "|" + "|".join(dashes) + "|"
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for text in cpuinfo:
                if text.startswith("model name"):
                    return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _network() -> str:
    names = [name for _index, name in socket.if_nameindex()]
    if names == ["lo"]:
        return "private network namespace, loopback only"
    return f"host network ({', '.join(names)}); DDS discovery limited to localhost"


def _revision() -> str:
    """The git revision of the tree the bench runs from, '+' marking uncommitted changes."""
    try:
        found = subprocess.run(
            ["git", "describe", "--always", "--dirty=+"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
            cwd=Path(__file__).resolve().parents[1],
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return found.stdout.strip() or "unknown"


def header(argv: Sequence[str], settings: Settings) -> str:
    command = shlex.join([os.path.relpath(sys.executable), "-m", "bench", *argv])
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [
        "acres_bridge benchmarks",
        f"command:  {command}",
        f"mode:     {'quick (smoke test: short windows, one repetition)' if settings.quick else 'full'}",
        f"machine:  nproc {len(os.sched_getaffinity(0))}, {_cpu_model()}, {platform.system()} "
        f"{platform.release()} {platform.machine()}, load average {load} at start",
        f"python:   {platform.python_implementation()} {platform.python_version()}; code: git {_revision()}",
        f"ROS:      {os.environ.get('RMW_IMPLEMENTATION', 'default RMW')}, ROS_DOMAIN_ID "
        f"{os.environ.get('ROS_DOMAIN_ID', '0')}, ROS_AUTOMATIC_DISCOVERY_RANGE "
        f"{os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE']}, {_network()}",
    ]
    return "\n".join(lines)


def _fence_dds() -> None:
    """Keep every DDS participant of the run on this machine, in a domain of its own."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    # A domain of this run: parallel runs (and tests) on the machine do not see our services.
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))


def _run(benchmark: Benchmark, settings: Settings) -> tuple[Outcome, bool]:
    try:
        outcome = benchmark.run(settings)
    except Exception as error:
        traceback.print_exc()
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        rows = tuple(
            Row(name=name, value=None, unit=unit, notes=f"failed: {reason}") for name, unit in benchmark.rows
        )
        return Outcome(rows=rows), False
    by_name = {row.name: row for row in outcome.rows}
    unknown = set(by_name) - set(benchmark.row_names)
    if unknown:
        raise RuntimeError(f"benchmark {benchmark.key} returned rows it does not declare: {sorted(unknown)}")
    rows = tuple(
        by_name.get(name, Row(name=name, value=None, unit=unit, notes="not measured"))
        for name, unit in benchmark.rows
    )
    return Outcome(rows=rows, footnotes=outcome.footnotes), len(by_name) == len(benchmark.rows)


def _stop_on_term(_number: int, _frame: FrameType | None) -> None:
    """SIGTERM (a timeout, a CI job's end) stops the run as Ctrl-C does, so each benchmark's
    processes are stopped on the way out instead of left running."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    keys = [benchmark.key for benchmark in BENCHMARKS]
    parser = argparse.ArgumentParser(prog="python -m bench", description="Print the benchmark table.")
    parser.add_argument(
        "--quick", action="store_true", help="short run for a smoke test (about 3 min on 2 cores)"
    )
    parser.add_argument("--list", action="store_true", help="print the row names, one per line, and exit")
    parser.add_argument("--only", action="append", choices=keys, help="run only this benchmark (repeatable)")
    args = parser.parse_args(arguments)
    chosen = [b for b in BENCHMARKS if not args.only or b.key in args.only]
    if args.list:
        print("\n".join(name for benchmark in chosen for name in benchmark.row_names))
        return 0
    settings = Settings(quick=args.quick)
    _fence_dds()
    signal.signal(signal.SIGTERM, _stop_on_term)
    print(header(arguments, settings), flush=True)
    start = time.monotonic()
    rows: list[Row] = []
    footnotes: list[str] = []
    ok = True
    try:
        for benchmark in chosen:
            print(f"running {benchmark.key} ...", file=sys.stderr, flush=True)
            outcome, succeeded = _run(benchmark, settings)
            ok = ok and succeeded
            rows.extend(outcome.rows)
            footnotes.extend(outcome.footnotes)
    except KeyboardInterrupt:
        print(f"stopped after {len(rows)} rows; every benchmark process ended", file=sys.stderr, flush=True)
        return 0
    print()
    print(format_table(rows))
    if footnotes:
        print()
        print("\n".join(footnotes))
    print(f"\n{len(rows)} rows in {time.monotonic() - start:.0f} s{'' if ok else '; SOME BENCHMARKS FAILED'}")
    return 0 if ok else 1
