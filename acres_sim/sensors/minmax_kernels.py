"""numpy's element-wise minimum and maximum on float32 scalars, compiled inline into the ray kernels.

The compiled caster gives the numpy reference's hits bit for bit only where it treats NaN as numpy
does, and numpy's four differ: ``maximum`` and ``minimum`` pass a NaN on, ``fmin`` and ``fmax``
skip it. The box and crop tests (acres_sim.sensors.cast_kernels) and the height field's solver
(acres_sim.sensors.terrain_kernels) both take them from here: one definition for every kernel.

numba inlines them (``inline="always"``) into the kernel that calls them and caches that kernel
keyed on its own file alone: after a change here, delete the kernels' cache files (``*.nbi``,
``*.nbc`` in ``acres_sim/sensors/__pycache__``) so that they are compiled again.
"""

from __future__ import annotations

import math
from typing import Final

import numba

__all__ = ["fmax", "fmin", "maximum", "minimum"]

_JIT: Final = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(inline="always", **_JIT)
def maximum(a: float, b: float) -> float:
    """np.maximum: NaN if either is NaN."""
    if math.isnan(a) or math.isnan(b):
        return a + b
    return a if a >= b else b


@numba.njit(inline="always", **_JIT)
def minimum(a: float, b: float) -> float:
    """np.minimum: NaN if either is NaN."""
    if math.isnan(a) or math.isnan(b):
        return a + b
    return a if a <= b else b


@numba.njit(inline="always", **_JIT)
def fmin(a: float, b: float) -> float:
    """np.fmin: the other one where one is NaN."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a <= b else b


@numba.njit(inline="always", **_JIT)
def fmax(a: float, b: float) -> float:
    """np.fmax: the other one where one is NaN."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a >= b else b
