"""Scalar helpers shared by the bridge's controllers and the simulator's models."""

from __future__ import annotations

__all__ = ["clamp"]


def clamp(value: float, low: float, high: float) -> float:
    """``value`` within low .. high (NaN stays NaN: callers refuse it first)."""
    return low if value < low else high if value > high else value
