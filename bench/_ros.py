"""The benchmark's own ROS node: its Context, one node, one executor spun only from this thread.

Calls wait with `spin_once` until their future is done. (rclpy's `spin_until_future_complete`
adds a done callback on every spin; in long call loops that grows into a busy executor whose cost
would be counted against the bridge.)
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import rclpy
from rclpy.client import Client
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from bench._processes import Child
from bench.errors import BenchError

__all__ = ["BenchNode"]

CALL_TIMEOUT_S = 60.0


class BenchNode:
    """`with BenchNode() as ros:` a node in a context of its own, shut down on exit."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context, args=[])
        self.node = Node(f"bench_{uuid.uuid4().hex[:8]}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def __enter__(self) -> BenchNode:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()

    def wait_until(
        self, condition: Callable[[], object], what: str, timeout_s: float, *, watch: Sequence[Child] = ()
    ) -> None:
        """Spin until condition() holds; BenchError after timeout_s or when a watched process ends."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            for child in watch:
                child.check_alive()
            if time.monotonic() > deadline:
                raise BenchError(f"timed out after {timeout_s} s waiting for {what}")
            self.executor.spin_once(timeout_sec=0.01)

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.executor.spin_once(timeout_sec=min(left, 0.05))

    def client(
        self, service_type: type, name: str, timeout_s: float = 30.0, *, watch: Sequence[Child] = ()
    ) -> Client:
        """A client of a service, once the service is there."""
        client = self.node.create_client(service_type, name)
        self.wait_until(client.service_is_ready, f"the service {name}", timeout_s, watch=watch)
        return client

    def call(self, client: Client, request: Any, timeout_s: float = CALL_TIMEOUT_S) -> Any:
        """Call and wait for the answer, spinning this thread's executor meanwhile."""
        future = client.call_async(request)
        deadline = time.monotonic() + timeout_s
        while not future.done():
            left = deadline - time.monotonic()
            if left <= 0:
                client.remove_pending_request(future)
                raise BenchError(f"no answer from {client.srv_name} within {timeout_s} s")
            self.executor.spin_once(timeout_sec=min(left, 1.0))
        return future.result()
