"""acres_scenario: run a scenario's episodes, each in a session of its own, and give a verdict.

    acres_scenario run examples/scenarios/polaris_route.yaml --output runs/today
    acres_scenario run FILE --only "polaris_route/seed=1,*"     # a subset (one alone runs here, no Ray)
    acres_scenario run FILE --output runs/today --resume        # only the episodes without a result
    acres_scenario run FILE --address 127.0.0.1:6379            # on an existing Ray cluster
    acres_scenario check FILE | list FILE | schema

The run's folder must be new or empty (the runner marks it, and each episode's folder, as its
own), or with --resume one an earlier run made; any other is refused before anything starts, so
the runner never removes or overwrites what it did not make.

Exit status of run: 0 every episode passed, 1 a criterion failed, 2 an episode could not run (or
the file, the run's folder or the Ray options are not valid: nothing starts). A stop (Ctrl-C,
SIGTERM) ends every process of the run and exits 0 after saying which episodes have no result.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from acres_bridge.scenario.episode import episode_topics, run_episode
from acres_bridge.scenario.errors import ScenarioError, ScenarioFileError
from acres_bridge.scenario.loader import load_scenario
from acres_bridge.scenario.ray_options import MAX_CPUS, check_ray_options, parse_address, probe_ray_address
from acres_bridge.scenario.results import (
    RESULTS_FILE,
    TORN_FILE,
    EpisodeResult,
    Verdict,
    append_result,
    exit_status,
)
from acres_bridge.scenario.run_folder import check_run_folder, claim_run_folder
from acres_bridge.scenario.schema import Scenario
from acres_bridge.scenario.stack import check_stack
from acres_bridge.scenario.sweep import Episode, expand
from acres_bridge.scenario.sweep_runner import SweepOptions, SweepOutcome, run_sweep
from acres_bridge.text_tables import format_table

__all__ = ["main", "prepare"]

EXIT_BAD_FILE = 2
MAX_PATTERN_TEXT = 1024  # characters of an --only pattern


def prepare(path: Path) -> tuple[Scenario, list[Episode]]:
    """Everything that can be checked before anything starts: the file, its sweep, the stack's
    command, the criteria's topics. ScenarioFileError naming the file (and line and field)."""
    scenario = load_scenario(path)
    try:
        episodes = expand(scenario)
    except ScenarioFileError as error:
        raise ScenarioFileError(f"{path}: {error}") from None
    check_stack(scenario.stack, path.parent, str(path))
    try:
        episode_topics(scenario)
    except ScenarioFileError as error:
        raise ScenarioFileError(f"{path}: criteria: {error}") from None
    return scenario, episodes


def _select(episodes: list[Episode], patterns: Sequence[str]) -> list[Episode]:
    if not patterns:
        return episodes
    chosen = [e for e in episodes if any(e.name == p or fnmatch.fnmatchcase(e.name, p) for p in patterns)]
    if not chosen:
        names = "\n  ".join(e.name for e in episodes[:20])
        raise ScenarioFileError(f"--only {' '.join(patterns)}: no such episode; the episodes are:\n  {names}")
    return chosen


class Progress:
    """A line per finished episode, and on a terminal a status line: done, failed, running, ETA."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.running = 0
        self.waiting = total
        self.counts = dict.fromkeys(Verdict, 0)
        self.done = 0

    def status(self, running: int, waiting: int) -> None:
        """The episodes running now and those waiting for a worker."""
        self.running, self.waiting = running, waiting
        self._clear()
        self._status()

    def result(self, result: EpisodeResult, done: int, total: int) -> None:
        self.counts[result.verdict] += 1
        self.running = max(0, self.running - 1)
        self.done, self.total = done, total
        detail = ""
        if result.verdict is Verdict.FAIL:
            detail = "  " + ", ".join(result.failed)
        elif result.error:
            detail = "  " + result.error.splitlines()[0]
        self._clear()
        print(
            f"[{done}/{total}] {result.verdict:5} {result.episode} ({result.wall_s:.1f} s){detail}",
            file=self.stream,
        )
        self._status()

    def _clear(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K")

    def _status(self) -> None:
        if not self.tty:
            return
        elapsed = time.monotonic() - self.started
        finished = sum(self.counts.values())  # in this run (with --resume, done counts the earlier too)
        left = self.total - self.done
        eta = f"{elapsed / finished * left:.0f} s" if finished else "?"
        failed = self.counts[Verdict.FAIL] + self.counts[Verdict.ERROR]
        done = f"done {self.done}/{self.total}  failed {failed}"
        self.stream.write(f"{done}  running {self.running}  waiting {self.waiting}  ETA {eta}")
        self.stream.flush()


def summary(results: Sequence[EpisodeResult]) -> str:
    """The table printed at the end of a run."""
    rows = []
    for r in results:
        why = (
            ", ".join(r.failed)
            if r.verdict is Verdict.FAIL
            else (r.error or "").splitlines()[0]
            if r.error
            else ""
        )
        rows.append((r.verdict.value, r.episode, f"{r.wall_s:.1f}", why[:100]))
    counts = {v: sum(1 for r in results if r.verdict is v) for v in Verdict}
    totals = ", ".join(f"{n} {v.value}" for v, n in counts.items())
    return format_table(rows, ("verdict", "episode", "wall s", "failed criteria / error")) + f"\n{totals}"


def _default_output(scenario: Scenario) -> Path:
    """acres_runs/NAME-UTC, with -2, -3, ... where a run of the same second has it already."""
    base = Path("acres_runs") / f"{scenario.name}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    path, number = base, 1
    while path.exists():
        number += 1
        path = base.with_name(f"{base.name}-{number}")
    return path


def _run(options: argparse.Namespace) -> int:
    path = Path(options.file)
    scenario, episodes = prepare(path)
    chosen = _select(episodes, options.only)
    if options.resume and options.output is None:
        raise ScenarioFileError("--resume needs --output: the folder of the run to resume")
    output = Path(options.output) if options.output is not None else _default_output(scenario)
    check_run_folder(output, scenario.name, resume=options.resume)
    sweep = SweepOptions(
        output=output,
        scenario_dir=path.parent,
        address=options.address,
        cpus=options.cpus,
        cpus_per_episode=options.cpus_per_episode,
        resume=options.resume,
    )
    check_ray_options(cpus=options.cpus, cpus_per_episode=options.cpus_per_episode, address=options.address)
    if options.address is not None:
        probe_ray_address(options.address)
    progress = Progress(len(chosen), sys.stdout)
    print(f"acres_scenario: {len(chosen)} episode(s) of {scenario.name}; results in {output / RESULTS_FILE}")
    if len(chosen) == 1 and options.address is None and not options.resume:
        results, interrupted = _run_here(chosen[0], output, path.parent, progress)
    else:
        outcome = run_sweep(chosen, sweep, on_result=progress.result, on_status=progress.status)
        results, interrupted = outcome.results, outcome.interrupted
        _say_what_was_skipped(output, outcome)
    print(file=sys.stdout)
    print(summary(results))
    if interrupted:
        missing = len(chosen) - len(results)
        print(f"stopped: {missing} episode(s) have no result; --output {output} --resume runs them")
        return 0
    return exit_status(results)


def _run_here(
    episode: Episode, output: Path, scenario_dir: Path, progress: Progress
) -> tuple[list[EpisodeResult], bool]:
    """One episode in this process, without Ray."""
    run_dir = claim_run_folder(output, episode.scenario.name, resume=False)
    progress.status(1, 0)
    try:
        result = run_episode(episode, run_dir, scenario_dir=scenario_dir)
    except KeyboardInterrupt:
        return [], True
    append_result(run_dir, result)
    progress.result(result, 1, 1)
    return [result], False


def _say_what_was_skipped(output: Path, outcome: SweepOutcome) -> None:
    """On resume: a torn last line set aside, and lines of the table that are not results."""
    if outcome.torn:
        print(
            f"acres_scenario: {output / RESULTS_FILE}: a torn last line ({len(outcome.torn)} bytes, a run "
            f"killed while writing it) moved to {output / TORN_FILE}; its episode runs again",
            file=sys.stderr,
        )
    for line in outcome.skipped:
        print(f"acres_scenario: warning: {output / RESULTS_FILE}: {line}; skipped", file=sys.stderr)


def _cpu_count(text: str) -> int:
    """--cpus: a whole number of CPUs, 1 .. MAX_CPUS."""
    try:
        cpus = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of CPUs, found {text!r}") from None
    if not 1 <= cpus <= MAX_CPUS:
        raise argparse.ArgumentTypeError(f"a local Ray has 1 .. {MAX_CPUS} CPUs, found {cpus}")
    return cpus


def _episode_cpus(text: str) -> float:
    """--cpus-per-episode: a number of CPUs above 0, at most MAX_CPUS."""
    try:
        cpus = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of CPUs, found {text!r}") from None
    if not math.isfinite(cpus) or not 0 < cpus <= MAX_CPUS:
        raise argparse.ArgumentTypeError(
            f"an episode takes more than 0 CPUs, at most {MAX_CPUS}; found {text}"
        )
    return cpus


def _address(text: str) -> str:
    """--address: HOST:PORT."""
    try:
        parse_address(text)
    except ScenarioError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--address {text!r}: ")) from None
    return text


def _pattern(text: str) -> str:
    """--only: a name or a glob of at most MAX_PATTERN_TEXT characters."""
    if len(text) > MAX_PATTERN_TEXT:
        raise argparse.ArgumentTypeError(f"a pattern of {len(text)} characters; at most {MAX_PATTERN_TEXT}")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="acres_scenario", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the episodes of a scenario file")
    run.add_argument("file", help="the scenario file (YAML, acres_scenario: 1)")
    run.add_argument("--output", "-o", help="the run's folder (default acres_runs/NAME-UTC)")
    run.add_argument(
        "--only",
        action="append",
        default=[],
        type=_pattern,
        metavar="NAME",
        help="an episode, or a glob (repeat)",
    )
    run.add_argument(
        "--resume", action="store_true", help="run only the episodes without a result in --output"
    )
    run.add_argument(
        "--address", type=_address, help="an existing Ray cluster (HOST:PORT); default: Ray on this machine"
    )
    run.add_argument(
        "--cpus", type=_cpu_count, help=f"CPUs of the local Ray, 1 .. {MAX_CPUS} (default: this machine's)"
    )
    run.add_argument(
        "--cpus-per-episode",
        type=_episode_cpus,
        default=1.0,
        help="Ray CPUs per episode, above 0 and at most a node's (default 1)",
    )
    for name, what in (
        ("check", "check a scenario file; start nothing"),
        ("list", "list a scenario's episodes"),
    ):
        command = commands.add_parser(name, help=what)
        command.add_argument("file")
    commands.add_parser("schema", help="print the scenario file's JSON Schema")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    try:
        if options.command == "schema":
            print(json.dumps(Scenario.model_json_schema(), indent=2))
            return 0
        if options.command in ("check", "list"):
            scenario, episodes = prepare(Path(options.file))
            if options.command == "list":
                print("\n".join(e.name for e in episodes))
            else:
                print(f"{options.file}: {scenario.name}, {len(episodes)} episode(s): valid")
            return 0
        return _run(options)
    except ScenarioError as error:
        print(f"acres_scenario: {error}", file=sys.stderr)
        return EXIT_BAD_FILE
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
