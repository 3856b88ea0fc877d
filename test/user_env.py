"""The environment a user's command runs in, for tests that run one as its own process: this
virtual environment's executables first on PATH (ros2 and the package's scripts beside this
Python), and nothing a test of this worker may have left (PYTHONPATH, the xdist worker's name)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["user_environment"]


def user_environment(**extra: str) -> dict[str, str]:
    """os.environ as a user's shell would have it, with `extra` set."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, **extra, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTHONPATH", None)  # the package as installed, not what another test set
    return env
