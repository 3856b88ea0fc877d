"""The sweep runner's Ray options are checked before anything starts: a clear one-line error and
exit status 2, never a traceback, never a wait on a Ray that cannot run the sweep."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from acres_bridge.scenario import cli as scenario_cli
from acres_bridge.scenario import expand, parse_scenario, ray_options
from acres_bridge.scenario.errors import RayOptionsError
from acres_bridge.scenario.ray_options import largest_node_cpus, parse_address, probe_ray_address
from acres_bridge.scenario.sweep_runner import SweepOptions, run_sweep

SWEEP = """\
acres_scenario: 1
name: route
session: {vehicle: polaris}
duration_s: 5
stack: {builtin: autopilot}
criteria: [{kind: max_speed, max_mps: 5}]
sweep: {matrix: {seed: [1, 2]}}
"""


@pytest.fixture(autouse=True)
def ray_switch_stays_in_the_test(monkeypatch):
    """run_sweep sets Ray's loopback switch in this process's environment before it imports Ray:
    undone after each test, so that a later test of this worker (a `ray start` of its own, which
    refuses a cluster of several nodes with the switch at 0) never inherits it."""
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture
def nothing_runs(monkeypatch):
    """Any episode, sweep or Ray start fails the test: the refusals come before them."""

    def ran(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("an episode or a Ray started")

    monkeypatch.setattr(scenario_cli, "run_episode", ran)
    monkeypatch.setattr(scenario_cli, "run_sweep", ran)


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "route.yaml"
    path.write_text(SWEEP)
    return path


def run(capsys, *argv: str) -> tuple[int, str]:
    """main's exit status (argparse's too) and what it wrote to stderr."""
    try:
        status = scenario_cli.main(list(argv))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    return status, capsys.readouterr().err


@pytest.mark.parametrize("cpus", ["0", "-1", "two", "100000"])
def test_a_local_ray_of_fewer_than_one_cpu_is_refused(capsys, nothing_runs, scenario_file, tmp_path, cpus):
    status, err = run(capsys, "run", str(scenario_file), "-o", str(tmp_path / "run"), "--cpus", cpus)
    assert status == 2
    assert "argument --cpus:" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("per_episode", ["0", "-1", "nan", "inf", "many"])
def test_an_episode_of_no_cpu_is_refused(capsys, nothing_runs, scenario_file, tmp_path, per_episode):
    status, err = run(
        capsys, "run", str(scenario_file), "-o", str(tmp_path / "run"), "--cpus-per-episode", per_episode
    )
    assert status == 2
    assert "argument --cpus-per-episode:" in err
    assert "Traceback" not in err


def test_an_episode_that_needs_more_cpus_than_the_local_ray_has_is_refused(
    capsys, nothing_runs, scenario_file, tmp_path
):
    status, err = run(
        capsys,
        "run",
        str(scenario_file),
        "-o",
        str(tmp_path / "run"),
        "--cpus",
        "2",
        "--cpus-per-episode",
        "3",
    )
    assert status == 2
    assert err == (
        "acres_scenario: --cpus-per-episode 3 is more than the local Ray's --cpus 2: "
        "no episode could ever start\n"
    )
    assert not (tmp_path / "run").exists()


def test_an_episode_that_needs_more_cpus_than_this_machine_has_is_refused(
    capsys, nothing_runs, scenario_file, tmp_path, monkeypatch
):
    monkeypatch.setattr(ray_options.os, "cpu_count", lambda: 2)
    status, err = run(
        capsys, "run", str(scenario_file), "-o", str(tmp_path / "run"), "--cpus-per-episode", "2.5"
    )
    assert status == 2
    assert "--cpus-per-episode 2.5 is more than this machine's 2 CPUs" in err


@pytest.mark.parametrize("address", ["localhost", "host:0", "host:65536", ":6379", "host:port"])
def test_an_address_that_is_no_host_and_port_is_refused(capsys, nothing_runs, scenario_file, address):
    status, err = run(capsys, "run", str(scenario_file), "--address", address)
    assert status == 2
    assert "argument --address: expected HOST:PORT of a Ray cluster" in err
    with pytest.raises(RayOptionsError, match="expected HOST:PORT"):
        parse_address(address)


@pytest.fixture
def ray_must_not_start(monkeypatch):
    """ray.init fails the test: an address where no Ray answers is refused before it."""
    ray = pytest.importorskip("ray")

    def init(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("ray.init was given an address where nothing answers")

    monkeypatch.setattr(ray, "init", init)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that is bound (so that nothing else takes it) and does not listen."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def test_an_address_where_nothing_listens_is_refused_within_seconds(
    capsys, ray_must_not_start, scenario_file, tmp_path, closed_port
):
    started = time.monotonic()
    status, err = run(
        capsys,
        "run",
        str(scenario_file),
        "-o",
        str(tmp_path / "run"),
        "--address",
        f"127.0.0.1:{closed_port}",
    )
    assert time.monotonic() - started < 30
    assert status == 2
    assert err.startswith(f"acres_scenario: no Ray cluster answers at 127.0.0.1:{closed_port}: ")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "run").exists()


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A loopback port that accepts connections and never says anything."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        yield server.getsockname()[1]


def test_an_address_where_something_listens_without_answering_is_refused(silent_listener, monkeypatch):
    monkeypatch.setattr(ray_options, "PROBE_S", 0.5)
    with pytest.raises(
        RayOptionsError, match=r"no Ray cluster answers at 127\.0\.0\.1:\d+: no answer within 0\.5 s"
    ):
        probe_ray_address(f"127.0.0.1:{silent_listener}")


@pytest.fixture
def http1_server() -> Iterator[int]:
    """A loopback port whose server answers anything with an HTTP/1.1 error and closes."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def serve() -> None:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        with connection:
            connection.recv(1024)
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.close()
    thread.join(timeout=5)


def test_an_address_where_another_server_answers_is_refused(http1_server):
    with pytest.raises(RayOptionsError, match="something listens there, but it does not answer as Ray's GCS"):
        probe_ray_address(f"127.0.0.1:{http1_server}")


def test_the_largest_live_node_sets_what_an_episode_may_take():
    nodes = [
        {"Alive": True, "Resources": {"CPU": 2.0}},
        {"Alive": False, "Resources": {"CPU": 64.0}},
        {"Alive": True, "Resources": {"CPU": 4.0, "memory": 1e9}},
        {"Alive": True, "Resources": {}},
    ]
    assert largest_node_cpus(nodes) == 4.0
    assert largest_node_cpus([]) == 0.0


def test_a_ray_whose_nodes_are_too_small_is_refused_before_any_episode_is_submitted(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "nodes", lambda: [{"Alive": True, "Resources": {"CPU": 2.0}}])

    def remote(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("an episode was submitted")

    monkeypatch.setattr(ray, "remote", remote)
    episodes = expand(parse_scenario(SWEEP))
    options = SweepOptions(output=tmp_path / "run", scenario_dir=tmp_path, cpus_per_episode=4.0)
    with pytest.raises(
        RayOptionsError, match=r"--cpus-per-episode 4 is more than the largest node of the Ray has \(2 CPUs\)"
    ):
        run_sweep(episodes, options)
