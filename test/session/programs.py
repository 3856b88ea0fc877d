"""Programs the session tests start and kill."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from acres_bridge.processes import localhost_environment

__all__ = ["killed_at_the_end"]


@contextmanager
def killed_at_the_end(code: str) -> Iterator[list[int]]:
    """A Python program running `code`, which prints one line of numbers and then waits: those
    numbers. The program is killed with SIGKILL when the block ends, so it closes nothing."""
    program = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=localhost_environment()
    )
    try:
        assert program.stdout is not None
        yield [int(value) for value in program.stdout.readline().split()]
    finally:
        program.kill()
        program.wait(10)
