"""The camera's shading compiled: every pixel's colour from what its ray hit, in parallel.

The same float32 operations, in the same order, as the numpy shading of acres_sim.sensors.camera (the
reference, ``Camera._shade_reference``), so both give the same image byte for byte: Lambert light
under the sun with the soil texture on the ground, haze with distance (its exponential in float64,
as the reference computes it), the sky's gradient and the far haze. Compiled by numba like
acres_sim.sensors.cast_kernels (``nogil``, ``cache``); ``warm_up`` compiles it before the first frame.
"""

from __future__ import annotations

import math
from typing import Final

import numba
import numpy as np

from acres_sim.sensors import cast_kernels  # noqa: F401  (sets the worker threads' wait policy first)

__all__ = ["shade_pixels", "warm_up"]

_JIT: Final = {"nogil": True, "cache": True, "error_model": "numpy"}
_BLOCK: Final = 4096  # pixels a worker takes at a time

# Surfaces (acres_sim.sensors.scene.Surface) as the kernel reads them.
_NONE: Final = 0
_GROUND: Final = 1


@numba.njit(parallel=True, **_JIT)
def shade_pixels(
    origin_xy: np.ndarray,
    world: np.ndarray,
    ranges: np.ndarray,
    surface: np.ndarray,
    normal: np.ndarray,
    item: np.ndarray,
    first: np.ndarray,
    palette: np.ndarray,
    sun: np.ndarray,
    texture: np.ndarray,
    light_terms: np.ndarray,
    colours: np.ndarray,
    pixel: np.ndarray,
    out: np.ndarray,
    threads: int,
) -> None:
    """Colour ray ``i`` into ``out[pixel[i]]`` (bgr8), on ``threads`` threads (numba.get_num_threads()).

    ``origin_xy`` (2,) float32; ``world`` (3, N) float32 ray directions; the hits (``ranges``,
    ``surface``, ``normal`` (3, N), ``item``); ``first`` (5,) int16, a surface's first palette entry;
    ``palette`` (3, M) float32 base colours; ``sun`` (3,) float32; ``texture`` (64 * 64,) float32;
    ``light_terms`` float32: ambient, diffuse, 1 / texture cell (m), sky slope; ``colours`` (3, 3)
    float32 per channel: haze, sky at the horizon, zenith minus horizon.
    """
    n = world.shape[1]
    zero = np.float32(0.0)
    one = np.float32(1.0)
    ambient = light_terms[0]
    diffuse = light_terms[1]
    cell = light_terms[2]
    sky_slope = light_terms[3]
    ox = origin_xy[0]
    oy = origin_xy[1]
    size = np.int32(64)
    blocks = (n + _BLOCK - 1) // _BLOCK
    threads = max(threads, 1)
    per_thread = (blocks + threads - 1) // threads
    for q in numba.prange(per_thread * threads):
        block = (q % per_thread) * threads + q // per_thread  # each thread's blocks spread over the image
        for i in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            s = surface[i]
            target = pixel[i]
            if s == _NONE:
                dz = world[2, i]
                up = dz * sky_slope
                up = min(max(up, zero), one)
                for c in range(3):
                    value = colours[c, 0] if dz < 0 else up * colours[c, 2] + colours[c, 1]
                    out[target, c] = np.uint8(value)
                continue
            light = normal[0, i] * sun[0]
            light = light + normal[1, i] * sun[1]
            light = light + normal[2, i] * sun[2]
            light = max(light, zero) * diffuse + ambient
            t = ranges[i]
            if s == _GROUND:
                gx = (t * world[0, i] + ox) * cell
                gy = (t * world[1, i] + oy) * cell
                ix = np.int32(np.floor(gx)) & (size - 1)
                iy = np.int32(np.floor(gy)) & (size - 1)
                light = light * texture[iy * size + ix]
            fog = np.float32(math.exp(np.float64(t) * (-1.0 / 600.0)))
            light = light * fog
            fog = one - fog
            material = first[s] + item[i]
            for c in range(3):
                out[target, c] = np.uint8(palette[c, material] * light + fog * colours[c, 0])


def warm_up() -> None:
    """Compile the kernel now (or load it from numba's cache on disk), not in a camera's first frame."""
    world = np.array([[0.0, 0.0], [0.0, 0.0], [-1.0, 1.0]], dtype=np.float32)
    out = np.zeros((2, 3), dtype=np.uint8)
    shade_pixels(
        np.zeros(2, dtype=np.float32),
        world,
        np.array([1.0, np.inf], dtype=np.float32),
        np.array([1, 0], dtype=np.uint8),
        np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]], dtype=np.float32),
        np.array([-1, -1], dtype=np.int16),
        np.array([1, 2, 2, 2, 2], dtype=np.int16),
        np.ones((3, 2), dtype=np.float32),
        np.array([0.0, 0.0, 1.0], dtype=np.float32),
        np.ones(64 * 64, dtype=np.float32),
        np.array([0.45, 0.55, 2.0, 1.6], dtype=np.float32),
        np.ones((3, 3), dtype=np.float32),
        np.arange(2, dtype=np.intp),
        out,
        1,
    )
