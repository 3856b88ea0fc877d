"""Fixtures of the container tests: an rclpy Context per test, its executor, and a real container process.

Every wait is a poll with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from acres_bridge.container import ComponentManager

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 20.0  # seconds for any one wait: discovery, a service answer, a message

SpinUntil = Callable[..., None]


def _unique_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """unique_name(prefix): a node name that no other test or test run uses."""
    return _unique_name


@pytest.fixture
def context() -> Iterator[Context]:
    ctx = Context()
    rclpy.init(context=ctx, args=[])
    yield ctx
    ctx.try_shutdown()


@pytest.fixture
def executor(context: Context) -> Iterator[SingleThreadedExecutor]:
    ex = SingleThreadedExecutor(context=context)
    yield ex
    ex.shutdown()


@pytest.fixture
def spin_until(executor: SingleThreadedExecutor) -> SpinUntil:
    """spin_until(condition, what, timeout=TIMEOUT): spin the executor until condition() is true."""

    def spin(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout} s waiting for {what}")
            executor.spin_once(timeout_sec=0.05)

    return spin


@pytest.fixture
def probe(context: Context, executor: SingleThreadedExecutor) -> Iterator[Node]:
    """A node of the test itself: clients, subscriptions and graph queries."""
    node = Node(_unique_name("probe"), context=context)
    executor.add_node(node)
    yield node
    executor.remove_node(node)
    node.destroy_node()


@pytest.fixture
def manager(context: Context, executor: SingleThreadedExecutor) -> Iterator[ComponentManager]:
    node = ComponentManager(executor, node_name=_unique_name("container"), context=context)
    executor.add_node(node)
    yield node
    executor.remove_node(node)
    node.destroy_node()


@pytest.fixture
def call(spin_until: SpinUntil) -> Callable[[Any, Any], Any]:
    """call(client, request): the response, once the service is up and has answered."""

    def call_service(client: Any, request: Any) -> Any:
        spin_until(client.service_is_ready, f"service {client.srv_name}")
        future = client.call_async(request)
        spin_until(future.done, f"an answer from {client.srv_name}")
        return future.result()

    return call_service


@dataclass
class ContainerProcess:
    """A component_container subprocess and where its output goes."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, signum: int) -> int:
        """Send the signal; the exit status, once the process has ended."""
        self.process.send_signal(signum)
        return self.process.wait(timeout=TIMEOUT)


@pytest.fixture
def container(tmp_path: Path) -> Iterator[ContainerProcess]:
    """component_container in a subprocess, named uniquely; killed at teardown if still running."""
    name = _unique_name("container")
    log = tmp_path / "container.log"
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    # The source tree first, so the subprocess runs the code under test, not an installed copy.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "acres_bridge.container.main", "--ros-args", "-r", f"__node:={name}"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield ContainerProcess(name, process, log)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=TIMEOUT)
