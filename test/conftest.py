"""The whole suite: each process of a parallel run (pytest -n, pytest-xdist) in a DDS domain of its
own, so that two tests running at once never see each other's topics, services or nodes.

The processes a test starts inherit the domain through the environment.
"""

from __future__ import annotations

import os

DOMAIN_BASE = 40  # worker gwN uses domain 40 + N; a serial run keeps the environment's


def _worker_domain() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and worker[2:].isdigit():
        os.environ["ROS_DOMAIN_ID"] = str(DOMAIN_BASE + int(worker[2:]))


_worker_domain()
