"""Fixtures of the integration tests: the reference simulator and the bridge as real processes,
and a ROS node of the test that subscribes, calls services and reads the graph.

Every process is ended at teardown, also when the test fails; every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from simulation_interfaces.srv import StepSimulation

TIMEOUT_S = 30.0
START_UTC = "20261002T072309"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class Process:
    """A child process whose output is collected in the background."""

    name: str
    popen: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, text: str, timeout_s: float = TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines):
            if self.popen.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{self.name} did not print {text!r}; its output:\n{self.output}")
            time.sleep(0.02)

    def stop(self, timeout_s: float = 10.0) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout_s)
        return self.popen.returncode


def start_process(name: str, args: list[str]) -> Process:
    popen = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(), start_new_session=True
    )
    return Process(name, popen)


class Processes:
    """Starts the simulator and the bridge; stops every one of them at teardown."""

    def __init__(self) -> None:
        self.started: list[Process] = []

    def simulator(self, port: int, *extra: str, seed: int = 42, lockstep: bool = True) -> Process:
        args = [sys.executable, "-m", "acres_sim.cli", "--port", str(port), "--seed", str(seed)]
        args += ["--start-utc", START_UTC, *(["--lockstep"] if lockstep else []), *extra]
        process = start_process("acres_sim", args)
        self.started.append(process)
        process.wait_for_line("listening on")
        return process

    def bridge(self, port: int, **parameters: Any) -> Process:
        args = [sys.executable, "-m", "acres_bridge.sim_bridge", "--ros-args", "-p", f"control_port:={port}"]
        for name, value in parameters.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            args += ["-p", f"{name}:={text}"]
        process = start_process("sim_bridge", args)
        self.started.append(process)
        return process

    def script(self, name: str, args: list[str]) -> Process:
        process = start_process(name, args)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            process.stop()


@pytest.fixture
def processes() -> Iterator[Processes]:
    started = Processes()
    yield started
    started.stop_all()


@pytest.fixture(scope="module")
def module_processes() -> Iterator[Processes]:
    started = Processes()
    yield started
    started.stop_all()


class Ros:
    """The test's own ROS node. It spins only inside wait_until and call, in the test's thread,
    so creating and destroying subscriptions and clients never races the executor."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context, args=[])
        self.node = Node(f"probe_{uuid.uuid4().hex[:8]}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def wait_until(self, condition: Callable[[], object], what: str, timeout_s: float = TIMEOUT_S) -> None:
        """Spin until condition() holds; fail the test after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout_s} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.01)

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)

    def collect(self, message_type: type, topic: str, qos: QoSProfile | int = 1000) -> list[Any]:
        """A list that fills with every message of the topic."""
        received: list[Any] = []
        self.node.create_subscription(message_type, topic, received.append, qos)
        return received

    def call(self, service_type: type, name: str, request: Any, timeout_s: float = TIMEOUT_S) -> Any:
        client = self.node.create_client(service_type, name)
        try:
            self.wait_until(client.service_is_ready, f"service {name}", timeout_s)
            future = client.call_async(request)
            self.wait_until(future.done, f"the answer of {name}", timeout_s)
            return future.result()
        finally:
            self.node.destroy_client(client)

    def step(self, steps: int) -> None:
        """Run steps through /step_simulation and check they were acknowledged as done."""
        response = self.call(StepSimulation, "/step_simulation", StepSimulation.Request(steps=steps))
        assert response.result.result == 1, response.result.error_message

    def shutdown(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


@pytest.fixture
def ros() -> Iterator[Ros]:
    node = Ros()
    yield node
    node.shutdown()


@pytest.fixture(scope="module")
def module_ros() -> Iterator[Ros]:
    node = Ros()
    yield node
    node.shutdown()
