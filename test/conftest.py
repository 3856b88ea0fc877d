"""The whole suite: DDS discovery on this machine only, and each process of a parallel run (pytest
-n, pytest-xdist) in a DDS domain of its own, so that two tests running at once never see each
other's topics, services or nodes.

ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST is set here, before rclpy is imported, for the tests' own
nodes and every process they start: however pytest is started, no DDS traffic leaves the machine.

The processes a test starts inherit the domain through the environment. A worker also gets the
default SIGINT back: xdist's workers ignore it, and a child inherits an ignored signal, so the
processes the tests start would not answer Ctrl-C as they do for a user.

A test may change this process's environment (launch's SetEnvironmentVariable writes os.environ,
simulation_launch_description sets ROS_DOMAIN_ID): PYTHONPATH and ROS_DOMAIN_ID are put back
after each test, so that a later test of the same worker, and what it starts, sees neither.

Where launch_testing is installed, its pytest plugin imports `launch`, which makes every logger
created afterwards non-propagating (launch.logging sets its logger class): the standard class is
put back, so that the loggers of the modules under test reach pytest's log capture.
"""

from __future__ import annotations

import logging
import os
import signal

DOMAIN_BASE = 40  # worker gwN uses domain 40 + N; a serial run keeps the environment's


def _worker_domain() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and worker[2:].isdigit():
        os.environ["ROS_DOMAIN_ID"] = str(DOMAIN_BASE + int(worker[2:]))
        signal.signal(signal.SIGINT, signal.default_int_handler)


os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_STATIC_PEERS", None)
_worker_domain()
logging.setLoggerClass(logging.Logger)
_KEPT = {name: os.environ.get(name) for name in ("PYTHONPATH", "ROS_DOMAIN_ID")}


def pytest_runtest_teardown(item: object, nextitem: object) -> None:
    for name, value in _KEPT.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
