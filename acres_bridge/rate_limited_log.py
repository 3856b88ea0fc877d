"""Warnings about repeated events, at a bounded rate: the first of a kind at once, then at most one
per interval with the count of those in between, so a flood of bad input cannot flood the log."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Protocol

__all__ = ["RateLimitedLog", "WarningLogger"]


class WarningLogger(Protocol):
    """What the log needs of a logger: rclpy's node logger and logging.Logger both have it."""

    def warning(self, message: str) -> Any: ...


class RateLimitedLog:
    """Log once per kind, then at most once per interval, with the count in between."""

    def __init__(self, logger: WarningLogger, interval_s: float = 5.0) -> None:
        self._logger = logger
        self._interval_s = interval_s
        self._last: dict[str, float] = {}
        self._suppressed: Counter[str] = Counter()

    def warning(self, kind: str, message: str) -> None:
        now = time.monotonic()
        if now - self._last.get(kind, -1e9) < self._interval_s:
            self._suppressed[kind] += 1
            return
        skipped = self._suppressed.pop(kind, 0)
        self._last[kind] = now
        self._logger.warning(message + (f" ({skipped} more since the last report)" if skipped else ""))
