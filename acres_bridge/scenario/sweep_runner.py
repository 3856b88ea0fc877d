"""A sweep on Ray: each episode a Ray task, results streamed back as they finish.

Local by default (``ray.init`` on this machine, on loopback, with nothing to start first), an
existing cluster (``address``), or the Ray this process has already initialised. Each result is
appended to the run's table the moment it arrives (acres_bridge.scenario.results), so an
interrupted sweep loses nothing and ``resume`` runs only what is missing. An episode that crashes
or hangs is an ERROR and the others go on; a task that outlives its episode's wall-clock limit (a
worker that does not answer) is cancelled and its processes ended. A stop (SIGINT, SIGTERM) ends
every process of every episode of the run, and leaves the episodes that had not finished without
a result.

Before any episode runs, the Ray options are checked (acres_bridge.scenario.ray_options): at
least one CPU, an episode's CPUs within what the local Ray, or the largest node of the cluster,
has; and an ``address`` is probed within seconds before ``ray.init`` is given it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Final

from acres_bridge.scenario.episode import run_episode, wall_clock_limit_s
from acres_bridge.scenario.errors import RayOptionsError
from acres_bridge.scenario.ray_options import (
    check_ray_options,
    is_loopback,
    largest_node_cpus,
    parse_address,
    probe_ray_address,
)
from acres_bridge.scenario.results import (
    EpisodeResult,
    Verdict,
    append_result,
    read_results_table,
    set_aside_torn_tail,
)
from acres_bridge.scenario.run_folder import claim_run_folder
from acres_bridge.scenario.sweep import Episode
from acres_bridge.session.reaper import end_run_processes

__all__ = ["LOOPBACK", "SweepOptions", "SweepOutcome", "init_local_ray", "prepare_worker", "run_sweep"]

LOOPBACK: Final = "127.0.0.1"  # Ray's node address: it never probes an outside one
WORKER_GRACE_S: Final = 60.0  # past an episode's own limit, before its task is cancelled
_WAIT_S: Final = 0.2
_CHECK_S: Final = 2.0  # how often the running tasks are checked against their limits
_FENCE: Final = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
_LOOPBACK_SWITCH: Final = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_RUNTIME_ENV: Final = {
    "env_vars": dict(_FENCE),
    "worker_process_setup_hook": "acres_bridge.scenario.sweep_runner.prepare_worker",
}
ResultCallback = Callable[[EpisodeResult, int, int], None]  # (result, done, total)
StatusCallback = Callable[[int, int], None]  # (running, waiting)


@dataclass(frozen=True, kw_only=True)
class SweepOptions:
    """How a sweep runs: where its results go, on which Ray, with how much of it per episode."""

    output: Path
    scenario_dir: Path
    address: str | None = None  # an existing cluster; None: a local Ray of `cpus` CPUs
    cpus: int | None = None  # the local Ray's CPUs (default: this machine's)
    cpus_per_episode: float = 1.0
    resume: bool = False


@dataclass
class SweepOutcome:
    """The results of the sweep's episodes (those run now and, with resume, those found), in the
    sweep's order, and whether it was stopped before the end."""

    results: list[EpisodeResult] = field(default_factory=list)
    interrupted: bool = False
    torn: bytes = b""  # a torn last line of the table, set aside to results.torn on resume
    skipped: tuple[str, ...] = ()  # lines of the table that are not whole results, as read on resume


def _check_cluster_cpus(ray: Any, options: SweepOptions) -> None:
    """RayOptionsError when no live node of the Ray has the CPUs an episode takes."""
    largest = largest_node_cpus(ray.nodes())
    if options.cpus_per_episode > largest:
        where = f"the cluster at {options.address}" if options.address is not None else "the Ray"
        raise RayOptionsError(
            f"--cpus-per-episode {options.cpus_per_episode:g} is more than the largest node of {where} has "
            f"({largest:g} CPUs): no episode could ever start"
        )


def _connect_ray(ray: Any, address: str) -> None:
    """ray.init on the cluster at `address` (probed already); RayOptionsError in one line if it fails."""
    host, _ = parse_address(address)
    node = {"_node_ip_address": LOOPBACK} if is_loopback(host) else {}
    try:
        ray.init(address=address, log_to_driver=False, runtime_env=_RUNTIME_ENV, **node)
    except Exception as error:  # Ray's own reasons, as one line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RayOptionsError(f"no Ray cluster answers at {address}: {first}") from None


def prepare_worker() -> None:
    """Ray's setup hook of each worker process, run as it starts (before its first task): the fence
    for the worker's own nodes, and the episode's imports (rclpy, the interfaces), so that the
    first episode of a worker does not pay them."""
    os.environ.update(_FENCE)
    os.environ.pop("ROS_STATIC_PEERS", None)
    import acres_bridge.scenario.episode  # noqa: F401, PLC0415


def _episode_task(episode: Episode, run_dir: str, scenario_dir: str) -> dict[str, Any]:
    """The body of a Ray task: one episode in this worker."""
    prepare_worker()  # again: a cluster's workers may have been started without the hook
    result = run_episode(episode, Path(run_dir), scenario_dir=Path(scenario_dir))
    return result.as_dict()


def init_local_ray(cpus: int | None = None) -> None:
    """Start Ray on this machine with `cpus` CPUs (default: the machine's), on loopback: it takes
    loopback as this node's address as it is, without first looking up the route to a public one
    (a switch read when Ray is first imported), and its workers keep DDS on this machine.

    A Ray of its own (``address="local"``): without an address Ray joins the last cluster that
    ``ray start`` made on the machine, and refuses the CPU count there."""
    os.environ.setdefault(_LOOPBACK_SWITCH, "0")
    import ray  # noqa: PLC0415 (Ray's import takes a second: only sweeps pay it)

    ray.init(
        address="local",
        num_cpus=cpus or os.cpu_count() or 1,
        include_dashboard=False,
        _node_ip_address=LOOPBACK,
        log_to_driver=False,
        runtime_env=_RUNTIME_ENV,
    )


def run_sweep(
    episodes: Sequence[Episode],
    options: SweepOptions,
    *,
    on_result: ResultCallback | None = None,
    on_status: StatusCallback | None = None,
) -> SweepOutcome:
    """Run `episodes` on Ray; `on_result(result, done, total)` as each finishes, and
    `on_status(running, waiting)` once they are submitted and every few seconds. SIGINT or SIGTERM
    stop it (the outcome says so). RayOptionsError, before any episode runs, for options that cannot
    run it (check_sweep_options), an address where no Ray answers, or an episode that needs more
    CPUs than any node of the Ray has."""
    if options.address is None:
        os.environ.setdefault(_LOOPBACK_SWITCH, "0")  # before Ray's first import: init_local_ray
    import ray  # noqa: PLC0415 (Ray's import takes a second: only sweeps pay it)

    owned = not ray.is_initialized()  # a Ray the caller started is used as it is, and left running
    check_ray_options(
        cpus=options.cpus,
        cpus_per_episode=options.cpus_per_episode,
        address=options.address,
        starts_ray=owned,
    )
    if owned and options.address is not None:
        probe_ray_address(options.address)  # before the run's folder is made

    scenario = episodes[0].scenario.name if episodes else ""
    run_dir = claim_run_folder(options.output, scenario, resume=options.resume)
    found: dict[str, EpisodeResult] = {}
    outcome = SweepOutcome()
    if options.resume:
        outcome.torn = set_aside_torn_tail(run_dir)
        table = read_results_table(run_dir)
        found, outcome.skipped = table.results, table.skipped
    todo = [e for e in episodes if e.name not in found]
    done_before = len(episodes) - len(todo)
    sweep = _Sweep(ray, run_dir, options, on_result, on_status, outcome=outcome, done_before=done_before)
    previous = {s: signal.signal(s, sweep.on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if todo:
            if owned and options.address is not None:
                _connect_ray(ray, options.address)
            elif owned:
                init_local_ray(options.cpus)
            if not owned or options.address is not None:
                _check_cluster_cpus(ray, options)
            sweep.submit(todo)
            sweep.collect()
    finally:
        if owned and ray.is_initialized():
            ray.shutdown()
        end_run_processes(run_dir)  # whatever a cancelled task's episode had left
        for number, handler in previous.items():
            signal.signal(number, handler)
    by_name = {**found, **{r.episode: r for r in sweep.outcome.results}}
    sweep.outcome.results = [by_name[e.name] for e in episodes if e.name in by_name]
    return sweep.outcome


class _Sweep:
    """The running sweep: its pending tasks, the results taken so far, and the stop request."""

    def __init__(
        self,
        ray: Any,
        run_dir: Path,
        options: SweepOptions,
        on_result: ResultCallback | None,
        on_status: StatusCallback | None,
        *,
        outcome: SweepOutcome,
        done_before: int,
    ) -> None:
        self.ray = ray
        self.run_dir = run_dir
        self.options = options
        self.on_result = on_result
        self.on_status = on_status
        self.done_before = done_before
        self.total = done_before
        self.outcome = outcome
        self.stop = threading.Event()
        self.pending: dict[Any, Episode] = {}
        self.started: dict[Any, float] = {}  # monotonic time each running episode was first seen started
        self.submitted = time.time()

    def on_signal(self, _number: int, _frame: FrameType | None) -> None:
        self.stop.set()

    def submit(self, todo: Sequence[Episode]) -> None:
        task = self.ray.remote(num_cpus=self.options.cpus_per_episode, max_retries=0)(_episode_task)
        scenario_dir = str(self.options.scenario_dir.resolve())
        for episode in todo:
            self.pending[task.remote(episode, str(self.run_dir), scenario_dir)] = episode
        self.total += len(todo)
        self.submitted = time.time()
        self._report_status()

    def collect(self) -> None:
        """Take the results as they come until all are in, or end everything at a stop."""
        next_check = 0.0
        while self.pending:
            if self.stop.is_set():
                self.outcome.interrupted = True
                end_run_processes(self.run_dir, grace_s=1.0)
                for ref in self.pending:
                    self.ray.cancel(ref, force=True)
                return
            ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=_WAIT_S)
            for ref in ready:
                episode = self.pending.pop(ref)
                try:
                    result = EpisodeResult.from_dict(self.ray.get(ref))
                except Exception as error:  # a worker that died: an ERROR, and the others go on
                    result = self._worker_error(
                        episode, f"its Ray task failed: {type(error).__name__}: {error}"
                    )
                self._take(result)
            now = time.monotonic()
            if now >= next_check:
                next_check = now + _CHECK_S
                self._cancel_overdue(now)
                self._report_status()

    def _cancel_overdue(self, now: float) -> None:
        """Cancel each task that has run longer than its episode's wall-clock limit and a grace."""
        for ref, episode in list(self.pending.items()):
            if ref not in self.started and _has_started(self.run_dir / episode.folder, self.submitted):
                self.started[ref] = now
            if (
                ref in self.started
                and now - self.started[ref] > wall_clock_limit_s(episode.scenario) + WORKER_GRACE_S
            ):
                self.ray.cancel(ref, force=True)
                del self.pending[ref]
                self._take(
                    self._worker_error(episode, "its Ray task outlived its wall-clock limit; cancelled")
                )

    def _report_status(self) -> None:
        if self.on_status is not None:
            running = sum(1 for ref in self.pending if ref in self.started)
            self.on_status(running, len(self.pending) - running)

    def _take(self, result: EpisodeResult) -> None:
        append_result(self.run_dir, result)
        self.outcome.results.append(result)
        if self.on_result is not None:
            self.on_result(result, self.done_before + len(self.outcome.results), self.total)

    def _worker_error(self, episode: Episode, why: str) -> EpisodeResult:
        """The ERROR of an episode whose worker gave no result; its processes are ended."""
        folder = self.run_dir / episode.folder
        end_run_processes(folder)
        return EpisodeResult(
            episode=episode.name,
            scenario=episode.scenario.name,
            verdict=Verdict.ERROR,
            error=why,
            folder=str(folder),
        )


def _has_started(folder: Path, since: float) -> bool:
    """True once the episode's simulator log exists, written since the sweep began."""
    try:
        return (folder / "simulator.log").stat().st_mtime >= since - 1.0
    except OSError:
        return False
