"""Integer nanoseconds of the simulation clock <-> builtin_interfaces/Time, pure."""

from __future__ import annotations

from typing import Any

from builtin_interfaces.msg import Time

from acres_bridge.wire.clock import NS_PER_S

__all__ = ["stamp", "time_ns"]


def stamp(stamp_ns: int) -> Time:
    """builtin_interfaces/Time of integer nanoseconds."""
    return Time(sec=stamp_ns // NS_PER_S, nanosec=stamp_ns % NS_PER_S)


def time_ns(time: Any) -> int:
    """The integer nanoseconds of a builtin_interfaces/Time (or anything with sec and nanosec)."""
    return int(time.sec) * NS_PER_S + int(time.nanosec)
