"""The LiDAR's intensity and cloud compiled: every beam in parallel, without the GIL.

The same float32 operations, in the same order, as the numpy ones of acres_sim.sensors.lidar (the reference,
``Lidar._intensity_reference`` and ``Lidar._cloud_reference``), so that both give the same cloud.
The range noise is not drawn here: it comes from the LiDAR's numpy Generator either way, so that a
seed gives the same scans on both. Compiled by numba like acres_sim.sensors.cast_kernels (``nogil``,
``cache``); ``warm_up`` compiles it before the first scan.
"""

from __future__ import annotations

from typing import Final

import numba
import numpy as np

from acres_sim.sensors import cast_kernels  # noqa: F401  (sets the worker threads' wait policy first)

__all__ = ["beam_intensity", "noisy_cloud", "warm_up"]

_JIT: Final = {"nogil": True, "cache": True, "error_model": "numpy"}
_BLOCK: Final = 4096  # beams a worker takes at a time


@numba.njit(parallel=True, **_JIT)
def beam_intensity(
    ranges: np.ndarray,
    surface: np.ndarray,
    normal: np.ndarray,
    world: np.ndarray,
    reflect: np.ndarray,
    half_range: float,
    out: np.ndarray,
) -> None:
    """Into ``out`` (N,) float32, each beam's intensity: ``reflect[surface]`` (255 x reflectivity)
    x cos(incidence), clipped to 0..1, / (1 + (range / ``half_range``)^2).

    ``ranges`` (N,) float32 (inf: no hit), ``surface`` (N,) uint8, ``normal`` and ``world`` (3, N)
    float32 (the hit's normal, the beam's direction), ``reflect`` float32 by surface, ``half_range``
    float32."""
    n = ranges.shape[0]
    zero = np.float32(0.0)
    one = np.float32(1.0)
    for block in numba.prange((n + _BLOCK - 1) // _BLOCK):
        for i in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            cos = normal[0, i] * world[0, i]
            cos = cos + normal[1, i] * world[1, i]
            cos = -(cos + normal[2, i] * world[2, i])
            if cos < zero:
                cos = zero
            elif cos > one:
                cos = one
            r = ranges[i] / half_range
            falloff = one / (one + r * r)
            out[i] = reflect[surface[i]] * cos * falloff


@numba.njit(parallel=True, **_JIT)
def noisy_cloud(
    ranges: np.ndarray,
    noise: np.ndarray,
    noise_m: float,
    directions_t: np.ndarray,
    intensity: np.ndarray,
    min_range: float,
    max_range: float,
    out: np.ndarray,
) -> None:
    """Into ``out`` (N, 4) float32, each beam's point: range + ``noise`` x ``noise_m`` along its
    direction in the sensor frame, and its intensity; NaN x, y, z and intensity 0 where that range
    falls outside [``min_range``, ``max_range``] (or the beam has no hit).

    ``ranges``, ``noise`` and ``intensity`` (N,) float32, ``directions_t`` (3, N) float32, the
    scalars float32."""
    n = ranges.shape[0]
    nan = np.float32(np.nan)
    zero = np.float32(0.0)
    for block in numba.prange((n + _BLOCK - 1) // _BLOCK):
        for i in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            r = ranges[i] + noise[i] * noise_m
            if r >= min_range and r <= max_range:
                out[i, 3] = intensity[i]
            else:
                r = nan
                out[i, 3] = zero
            out[i, 0] = directions_t[0, i] * r
            out[i, 1] = directions_t[1, i] * r
            out[i, 2] = directions_t[2, i] * r


def warm_up() -> None:
    """Compile both kernels now (or load them from numba's cache on disk)."""
    ones = np.ones(2, dtype=np.float32)
    directions = np.ones((3, 2), dtype=np.float32)
    intensity = np.empty(2, dtype=np.float32)
    reflect = np.ones(8, dtype=np.float32)
    surface = np.zeros(2, dtype=np.uint8)
    beam_intensity(ones, surface, directions, directions, reflect, np.float32(40.0), intensity)
    cloud = np.empty((2, 4), dtype=np.float32)
    noise_m, min_range, max_range = np.float32(0.02), np.float32(0.5), np.float32(100.0)
    noisy_cloud(ones, ones, noise_m, directions, intensity, min_range, max_range, cloud)
