"""The farm's grid: square cells over each crop field, aligned with the world axes, numbered globally
over all fields; which cells are farmland and which lie on a crop row (acres_sim.world.farm.model keeps the
crop and soil of each cell)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from acres_sim.sensors.scene import CropField

__all__ = ["FarmGrid", "FieldGrid", "Heights"]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

Heights = Callable[[F64, F64], NDArray[np.floating]]
"""The ground heights (m) at world positions (x, y), vectorised (e.g. HeightField.heights)."""


@dataclass(frozen=True, eq=False)
class FieldGrid:
    """One field's cells: centres at (x0 + (i + 0.5) cell, y0 + (j + 0.5) cell), i < nx, j < ny,
    at global indices offset + j nx + i."""

    x0: float
    y0: float
    nx: int
    ny: int
    offset: int
    bounds: tuple[float, float, float, float]  # x_min, y_min, x_max, y_max

    @property
    def cells(self) -> slice:
        """The field's global cell indices, as a slice of the farm's arrays."""
        return slice(self.offset, self.offset + self.nx * self.ny)


class FarmGrid:
    """The cells of all crop fields: where a world point falls, where a cell lies, what it is."""

    def __init__(self, fields: Sequence[CropField], cell_m: float, heights: Heights) -> None:
        """Cells of ``cell_m`` over the bounds of each field; ``heights`` gives each centre's z."""
        self.cell_m = cell_m
        grids: list[FieldGrid] = []
        offset = 0
        for f in fields:
            (x_min, y_min), (x_max, y_max) = f.bounds()
            nx = max(1, math.ceil((x_max - x_min) / cell_m))
            ny = max(1, math.ceil((y_max - y_min) / cell_m))
            grids.append(FieldGrid(x_min, y_min, nx, ny, offset, (x_min, y_min, x_max, y_max)))
            offset += nx * ny
        self.grids: tuple[FieldGrid, ...] = tuple(grids)
        self.size = offset
        self._x0 = np.array([g.x0 for g in grids], dtype=np.float64)
        self._y0 = np.array([g.y0 for g in grids], dtype=np.float64)
        self._nx = np.array([g.nx for g in grids], dtype=np.int64)
        self._offset = np.array([g.offset for g in grids], dtype=np.int64)
        self.farmland = np.zeros(offset, dtype=np.bool_)
        """Whether a cell's centre lies on its field's rectangle."""
        self.rows = np.zeros(offset, dtype=np.bool_)
        """Whether a farmland cell's centre lies on a crop row."""
        self.ground_z = np.zeros(offset, dtype=np.float32)
        """The ground height of each cell's centre."""
        for f, g in zip(fields, self.grids, strict=True):
            x, y = self._field_centres(g)
            self.farmland[g.cells] = f.contains(x, y)
            self.rows[g.cells] = self.farmland[g.cells] & _in_row(f, x, y)
            self.ground_z[g.cells] = heights(x, y)

    def _field_centres(self, g: FieldGrid) -> tuple[F64, F64]:
        xs = g.x0 + (np.arange(g.nx, dtype=np.float64) + 0.5) * self.cell_m
        ys = g.y0 + (np.arange(g.ny, dtype=np.float64) + 0.5) * self.cell_m
        gx, gy = np.meshgrid(xs, ys)
        return gx.ravel(), gy.ravel()

    def cell_index(self, x: F64 | float, y: F64 | float) -> I64:
        """The global cell index of world points (x, y): -1 where no farmland lies."""
        xa, ya = np.broadcast_arrays(
            np.atleast_1d(np.asarray(x, dtype=np.float64)), np.atleast_1d(np.asarray(y, dtype=np.float64))
        )
        return self.cells(self.grids, xa, ya)

    def cells(self, grids: Sequence[FieldGrid], x: F64, y: F64) -> I64:
        """The global cell of each point on farmland of these grids, -1 elsewhere (the fields are
        expected not to overlap: where they do, the later field's cell counts)."""
        out = np.full(x.shape, -1, dtype=np.int64)
        cell = self.cell_m
        for g in grids:
            ix = np.floor((x - g.x0) / cell).astype(np.int64)
            iy = np.floor((y - g.y0) / cell).astype(np.int64)
            inside = (ix >= 0) & (ix < g.nx) & (iy >= 0) & (iy < g.ny)
            index = np.where(inside, g.offset + iy * g.nx + ix, 0)
            inside &= self.farmland[index]
            out = np.where(inside, index, out)
        return out

    def near(self, reach_m: float, x: float, y: float) -> tuple[FieldGrid, ...]:
        """The fields whose bounds come within ``reach_m`` of (x, y) (plain floats: it runs every step)."""
        r = reach_m
        return tuple(
            g
            for g in self.grids
            if g.bounds[0] - r <= x <= g.bounds[2] + r and g.bounds[1] - r <= y <= g.bounds[3] + r
        )

    def centres(self, index: I64) -> tuple[F64, F64, F64]:
        """World (x, y, z) of the centres of global cells."""
        grid = np.searchsorted(self._offset, index, side="right") - 1
        local = index - self._offset[grid]
        nx = self._nx[grid]
        x = self._x0[grid] + (local % nx + 0.5) * self.cell_m
        y = self._y0[grid] + (local // nx + 0.5) * self.cell_m
        return x, y, self.ground_z[index].astype(np.float64)

    def farmland_area_m2(self, g: FieldGrid) -> float:
        """The area of a field's farmland cells."""
        return float(np.count_nonzero(self.farmland[g.cells])) * self.cell_m**2


def _in_row(f: CropField, x: F64, y: F64) -> NDArray[np.bool_]:
    """Whether world points lie on one of the field's rows (across: within half a row width of a
    row's centre line; the field's rectangle is checked by the caller)."""
    c, s = math.cos(f.yaw), math.sin(f.yaw)
    u = -s * (x - f.x) + c * (y - f.y)  # across the rows, to the left of row 0
    k = np.clip(np.rint(u / f.row_spacing_m), 0, f.rows - 1)
    return np.abs(u - k * f.row_spacing_m) <= 0.5 * f.row_width_m
