"""Scalar helpers shared by the bridge's controllers and the simulator's models."""

from __future__ import annotations

__all__ = ["clamp", "toward"]


def clamp(value: float, low: float, high: float) -> float:
    """``value`` within low .. high (NaN stays NaN: callers refuse it first)."""
    return low if value < low else high if value > high else value


def toward(value: float, target: float, max_step: float) -> float:
    """``value`` moved towards ``target`` by at most ``max_step`` (>= 0): one step of a rate limit.

    The one form of the rate-limited step the vehicle models share, so that each gives the same floats.
    """
    return value + clamp(target - value, -max_step, max_step)
