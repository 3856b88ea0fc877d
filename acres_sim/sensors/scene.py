"""The static scene (ground, buildings, crop) and the ray caster the LiDAR and the camera share (the
V03ACRE tile's own scene: acres_sim.sensors.tile).

A ``Scene`` is the ground (``FlatGround`` or ``HeightField``), farm buildings (oriented ``Box``es) and
crop fields (``CropField``: parallel rows of boxes on the ground). ``Scene.cast`` intersects many rays
at once with all of it plus the bodies of the agents (boxes given per call) and returns, per ray, the
range, what was hit and the surface normal. Costs: the ground is analytic (plane) or a few Newton
iterations (height field); a crop field is a periodic test, O(rays) whatever the number of rows; a box
is tested only on the rays within the cone of its bounding sphere (``Scene.cast_fan`` finds them from
a sensor's directional index, in time proportional to their number).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from acres_sim.errors import ParamsError, require_finite
from acres_sim.sensors._raycast import (
    F32,
    F64,
    I64,
    GroundContact,
    RayFan,
    Rays,
    RowLayout,
    as_f32,
    box_hits,
    crop_hits,
)
from acres_sim.sensors.terrain import FlatGround, HeightField

__all__ = [
    "BGR",
    "Box",
    "CropField",
    "FlatGround",
    "Ground",
    "HeightField",
    "Hits",
    "Scene",
    "Surface",
    "check_fan_pose",
]

BGR = tuple[int, int, int]
"""A colour as (blue, green, red), each 0..255: the channel order of a bgr8 image."""

Ground = FlatGround | HeightField
"""The ground a scene stands on."""


class Surface(IntEnum):
    """What a ray hit."""

    NONE = 0  # nothing within range (the sky)
    GROUND = 1
    BUILDING = 2
    CROP = 3
    VEHICLE = 4


def _check_colour(owner: str, colour: BGR) -> None:
    if len(colour) != 3 or not all(isinstance(v, int) and 0 <= v <= 255 for v in colour):
        raise ParamsError(f"{owner}.color: expected 3 integers 0..255 (blue, green, red), got {colour!r}")


@dataclass(frozen=True, kw_only=True)
class Box:
    """An oriented box: centre (x, y, z) in world m, full sizes (lx, ly, lz) in m along its own axes,
    turned by ``yaw`` rad about the world z axis (counter-clockwise from grid east).

    ``surface`` says what it is (a building or a vehicle); ``color`` is its camera colour (B, G, R).
    """

    x: float
    y: float
    z: float
    lx: float
    ly: float
    lz: float
    yaw: float = 0.0
    surface: Surface = Surface.BUILDING
    color: BGR = (128, 128, 128)

    def __post_init__(self) -> None:
        """Sizes finite and positive, a real surface, a colour of three bytes."""
        require_finite(self, finite=("x", "y", "z", "yaw"))
        require_finite(self, positive=("lx", "ly", "lz"))
        try:
            object.__setattr__(self, "surface", Surface(self.surface))
        except ValueError:
            raise ParamsError(f"Box.surface: expected a Surface, got {self.surface!r}") from None
        if self.surface in (Surface.NONE, Surface.GROUND):
            raise ParamsError(f"Box.surface: expected BUILDING, CROP or VEHICLE, got {self.surface.name}")
        _check_colour("Box", self.color)

    @property
    def radius(self) -> float:
        """The radius of the bounding sphere, in m."""
        return 0.5 * math.sqrt(self.lx * self.lx + self.ly * self.ly + self.lz * self.lz)


@dataclass(frozen=True, kw_only=True)
class CropField:
    """A rectangle of parallel crop rows standing on the ground.

    Row 0 starts at world (x, y) and runs ``length_m`` in the direction ``yaw`` (rad, counter-clockwise
    from grid east); rows 1 .. ``rows`` - 1 follow at ``row_spacing_m`` to the left of it. Each row is a
    box ``row_width_m`` wide and ``height_m`` tall above the ground; the gaps between rows show the
    ground. ``color`` is the camera colour (B, G, R).
    """

    x: float
    y: float
    yaw: float
    length_m: float
    rows: int
    row_spacing_m: float = 0.76
    row_width_m: float = 0.35
    height_m: float = 0.9
    color: BGR = (40, 130, 60)

    def __post_init__(self) -> None:
        """Finite geometry, at least one row, rows narrower than their spacing."""
        require_finite(self, finite=("x", "y", "yaw"))
        require_finite(self, positive=("length_m", "row_spacing_m", "row_width_m", "height_m"))
        if isinstance(self.rows, bool) or not isinstance(self.rows, int) or self.rows < 1:
            raise ParamsError(f"CropField.rows: expected an integer >= 1, got {self.rows!r}")
        if self.row_width_m >= self.row_spacing_m:
            raise ParamsError(
                f"CropField.row_width_m: expected less than row_spacing_m ({self.row_spacing_m}), "
                f"got {self.row_width_m}"
            )
        _check_colour("CropField", self.color)

    @property
    def width_m(self) -> float:
        """The width of the field across the rows, from the outer edge of row 0 to that of the last."""
        return (self.rows - 1) * self.row_spacing_m + self.row_width_m

    def layout(self) -> RowLayout:
        """The field as the periodic ray kernel takes it."""
        return RowLayout(
            x=self.x,
            y=self.y,
            yaw=self.yaw,
            length=self.length_m,
            rows=self.rows,
            spacing=self.row_spacing_m,
            width=self.row_width_m,
            height=self.height_m,
        )

    def bounds(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """((x_min, y_min), (x_max, y_max)) in world m: the axis-aligned box around the field."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        half = 0.5 * self.row_width_m
        us = (-half, (self.rows - 1) * self.row_spacing_m + half)
        xs = [self.x + c * v - s * u for u in us for v in (0.0, self.length_m)]
        ys = [self.y + s * v + c * u for u in us for v in (0.0, self.length_m)]
        return (min(xs), min(ys)), (max(xs), max(ys))

    def contains(self, x: ArrayLike, y: ArrayLike, *, margin_m: float = 0.0) -> NDArray[np.bool_]:
        """Whether world points (x, y) lie on the field's rectangle grown by ``margin_m`` on every side."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        rx = np.asarray(x, dtype=np.float64) - self.x
        ry = np.asarray(y, dtype=np.float64) - self.y
        u = -s * rx + c * ry
        v = c * rx + s * ry
        half = 0.5 * self.row_width_m
        u_max = (self.rows - 1) * self.row_spacing_m + half
        return (
            (u >= -half - margin_m)
            & (u <= u_max + margin_m)
            & (v >= -margin_m)
            & (v <= self.length_m + margin_m)
        )


@dataclass(frozen=True, eq=False)
class Hits:
    """What each of N rays hit.

    ``range`` (N,) float32: the distance in m along the unit direction, inf where nothing lies within
    the maximum range. ``surface`` (N,) uint8: a ``Surface`` value. ``normal`` (N, 3) float32: the unit
    surface normal in the world, facing the ray (zero where nothing was hit; a view of a (3, N) block,
    so ``normal[:, k]`` is contiguous). ``item`` (N,) int16: the index of the building, crop field or
    agent hit, in the order the scene or the call gave them; -1 for the ground and for no hit.
    """

    range: F32
    surface: NDArray[np.uint8]
    normal: F32
    item: NDArray[np.int16]

    @classmethod
    def empty(cls, n: int) -> Hits:
        """N rays that hit nothing (yet)."""
        return cls(
            range=np.full(n, np.inf, dtype=np.float32),
            surface=np.zeros(n, dtype=np.uint8),
            normal=np.zeros((3, n), dtype=np.float32).T,
            item=np.full(n, -1, dtype=np.int16),
        )

    def keep_nearer(
        self, rays: I64, t: F32, normal: tuple[F32, F32, F32], *, surface: Surface, item: int, limit: float
    ) -> None:
        """Record hits at ``t`` along ``rays`` where they are within ``limit`` and nearer than before."""
        nearer = (t < self.range.take(rays)) & (t <= np.float32(limit))
        idx = rays[nearer]
        self.range[idx] = t[nearer]
        self.surface[idx] = surface
        self.item[idx] = item
        for k in range(3):
            self.normal[:, k][idx] = normal[k][nearer]


def _as_rays(origins: ArrayLike, directions: ArrayLike) -> Rays:
    """Validated float32 rays from an origin (3,) or origins (N, 3), and directions (N, 3)."""
    d = np.asarray(directions, dtype=np.float32)
    if d.ndim != 2 or d.shape[1] != 3:
        raise ParamsError(f"Scene.cast directions: expected an (N, 3) array, got shape {d.shape}")
    o = np.asarray(origins, dtype=np.float32)
    if o.shape not in ((3,), d.shape):
        raise ParamsError(f"Scene.cast origins: expected shape (3,) or {d.shape}, got {o.shape}")
    if not (np.all(np.isfinite(o)) and np.all(np.isfinite(d))):
        raise ParamsError("Scene.cast: expected finite origins and directions")
    norms = np.einsum("ij,ij->i", d, d)
    if d.shape[0] and not np.all(np.abs(norms - 1.0) <= 1e-4):
        worst = int(np.argmax(np.abs(norms - 1.0)))
        raise ParamsError(
            f"Scene.cast directions: expected unit vectors, got {d[worst].tolist()} "
            f"(norm {norms[worst] ** 0.5:.6f})"
        )
    return Rays.of(o, d)


def _check_range(max_range_m: float) -> None:
    if not (math.isfinite(max_range_m) and max_range_m > 0.0):
        raise ParamsError(f"Scene.cast max_range_m: expected a finite value > 0, got {max_range_m!r}")


def check_fan_pose(origin: ArrayLike, rotation: ArrayLike, max_range_m: float) -> tuple[F64, F64]:
    """(origin (3,), rotation (3, 3)) as float64, checked as ``Scene.cast_fan`` takes them, with the range."""
    rot = np.asarray(rotation, dtype=np.float64)
    if rot.shape != (3, 3) or not np.allclose(rot @ rot.T, np.eye(3), atol=1e-6):
        raise ParamsError(f"Scene.cast_fan rotation: expected a 3 x 3 rotation matrix, got {rot.tolist()}")
    o = np.asarray(origin, dtype=np.float64)
    if o.shape != (3,) or not np.all(np.isfinite(o)):
        raise ParamsError(f"Scene.cast_fan origin: expected 3 finite numbers, got {o.tolist()}")
    _check_range(max_range_m)
    return o, rot


# The rays a box may hit (indices into the cast's rays; None: test them all), given its centre.
_Candidates = Callable[[Box, F64], I64 | None]


@dataclass(frozen=True, kw_only=True)
class Scene:
    """The static world the sensors see: the ground, buildings and crop fields (all immutable)."""

    terrain: Ground
    buildings: tuple[Box, ...] = ()
    crop: tuple[CropField, ...] = ()

    def __post_init__(self) -> None:
        """Store the buildings and crop fields as tuples and check their types."""
        if not isinstance(self.terrain, FlatGround | HeightField):
            raise ParamsError(
                f"Scene.terrain: expected FlatGround or HeightField, got {type(self.terrain).__name__}"
            )
        object.__setattr__(self, "buildings", tuple(self.buildings))
        object.__setattr__(self, "crop", tuple(self.crop))
        if not all(isinstance(b, Box) for b in self.buildings):
            raise ParamsError("Scene.buildings: expected Box values")
        if not all(isinstance(c, CropField) for c in self.crop):
            raise ParamsError("Scene.crop: expected CropField values")

    def cast(
        self,
        origins: ArrayLike,
        directions: ArrayLike,
        *,
        max_range_m: float,
        agents: Sequence[Box] = (),
        crop: bool = True,
    ) -> Hits:
        """Intersect N rays with the scene and the ``agents``' bodies.

        ``origins`` (3,) (one for all rays) or (N, 3), ``directions`` (N, 3) unit vectors, both in the
        world frame, float32 or float64. ``crop=False`` leaves the crop fields out (as ACRES Core's
        LiDAR). A box is slab-tested only on the rays that pass its bounding sphere, found by one
        dot product per ray; a sensor with a fixed fan of rays should use ``cast_fan``.
        """
        rays = _as_rays(origins, directions)
        _check_range(max_range_m)

        def candidates(box: Box, centre: F64) -> I64 | None:
            radius = np.float32(box.radius)
            rx = np.float32(centre[0]) - rays.ox
            ry = np.float32(centre[1]) - rays.oy
            rz = np.float32(centre[2]) - rays.oz
            along = rx * rays.dx + ry * rays.dy + rz * rays.dz
            miss2 = rx * rx + ry * ry + rz * rz - along * along
            inside = (rx * rx + ry * ry + rz * rz) <= radius * radius
            return np.flatnonzero(((miss2 <= radius * radius) & (along >= 0)) | inside)

        return self._cast(rays, max_range_m, agents=agents, crop=crop, candidates=candidates, fan=False)

    def cast_fan(
        self,
        origin: ArrayLike,
        rotation: ArrayLike,
        fan: RayFan,
        *,
        max_range_m: float,
        agents: Sequence[Box] = (),
        crop: bool = True,
    ) -> Hits:
        """``cast`` of a sensor's rays: ``fan.directions`` turned into the world by ``rotation`` (3, 3),
        all from ``origin`` (3,); the hits come in the fan's ray order. A box is slab-tested only on
        the rays of the fan's directional bins that its bounding sphere covers."""
        o, rot = check_fan_pose(origin, rotation, max_range_m)
        world = fan.in_world(rot)
        o32 = o.astype(np.float32)
        rays = Rays(o32[0:1], o32[1:2], o32[2:3], world[0], world[1], world[2])

        def candidates(box: Box, centre: F64) -> I64 | None:
            rel = centre - o
            dist = float(np.linalg.norm(rel))
            if dist <= box.radius:
                return None
            return fan.within(rot.T @ (rel / dist), math.asin(box.radius / dist))

        return self._cast(rays, max_range_m, agents=agents, crop=crop, candidates=candidates, fan=True)

    def _cast(
        self,
        rays: Rays,
        max_range_m: float,
        *,
        agents: Sequence[Box],
        crop: bool,
        candidates: _Candidates,
        fan: bool,
    ) -> Hits:
        """The ground first, then the boxes, then the crop canopies, each keeping the nearest hit.
        ``fan``: the rays are a sensor's fan, in its order (the ground solves them from neighbours)."""
        if not all(isinstance(a, Box) for a in agents):
            raise ParamsError(
                f"Scene.cast agents: expected Box values, got {[type(a).__name__ for a in agents]}"
            )
        hits = Hits.empty(rays.size)
        fields = self.crop if crop else ()
        # A ray parallel to a face, or grazing the ground, meets inf and NaN on the way (1 / 0,
        # inf * 0, an overflowed t): the cast means IEEE arithmetic there, as the compiled one does,
        # and decides such rays by comparisons that hold for them.
        with np.errstate(all="ignore"):
            ground = self._cast_ground(rays, max_range_m, fields, hits, fan=fan)
            for index, box in [*enumerate(self.buildings), *enumerate(agents)]:
                _cast_box(rays, max_range_m, hits, box=box, index=index, candidates=candidates)
            if fields and ground is not None:
                _cast_crop(rays, max_range_m, hits, fields=fields, ground=ground)
        return hits

    def _cast_ground(
        self, rays: Rays, max_range_m: float, fields: tuple[CropField, ...], hits: Hits, *, fan: bool
    ) -> tuple[I64, GroundContact] | None:
        """Cast the rays that can meet the ground (or a crop canopy on it) within range.

        Returns the rays that met the ground, in range or not (a canopy top can be in range when the
        ground behind it is not), and where.
        """
        _, z_max = self.terrain.z_range
        z_top = np.float32(z_max + max((f.height_m for f in fields), default=0.0))
        # From above every canopy top, a ray must come down to it within range; from lower, a ray can
        # meet rising ground only if it climbs less steeply than the steepest slope.
        steepest = np.float32(self.terrain.max_slope)
        climb = np.where(rays.oz > z_top, (z_top - rays.oz) / np.float32(max_range_m), steepest)
        picked = np.flatnonzero(rays.dz < climb)
        if picked.size == 0:
            return None
        sub = rays.take(picked)
        ground = self.terrain.intersect(sub, reach=max_range_m, index=picked if fan else None)
        met = np.flatnonzero(np.isfinite(ground.t))
        gx, gy = ground.grad_x.take(met), ground.grad_y.take(met)
        scale = np.float32(1.0) / np.sqrt(np.float32(1.0) + gx * gx + gy * gy)
        t = ground.t.take(met)
        dx, dy, dz = sub.dx.take(met), sub.dy.take(met), sub.dz.take(met)
        contact = GroundContact(
            t=t, sink=dz - gx * dx - gy * dy, nx=as_f32(-gx * scale), ny=as_f32(-gy * scale), nz=as_f32(scale)
        )
        picked = picked[met]
        hits.keep_nearer(
            picked,
            t,
            (contact.nx, contact.ny, contact.nz),
            surface=Surface.GROUND,
            item=-1,
            limit=max_range_m,
        )
        return picked, contact


def _cast_crop(
    rays: Rays,
    max_range_m: float,
    hits: Hits,
    *,
    fields: tuple[CropField, ...],
    ground: tuple[I64, GroundContact],
) -> None:
    """Test the crop fields on the rays that met the ground; keep the canopy hits nearer than before.

    A ray is tested against a field only where the stretch in which it is within the tallest crop's
    height above the ground has a bounding box that overlaps the field's.
    """
    picked, contact = ground
    sub = rays.take(picked)
    tallest = np.float32(max(f.height_m for f in fields))
    t_top = contact.t + tallest / contact.sink  # inf and NaN allowed: see Scene._cast
    x_top = sub.ox + t_top * sub.dx
    y_top = sub.oy + t_top * sub.dy
    x_end = sub.ox + contact.t * sub.dx
    y_end = sub.oy + contact.t * sub.dy
    x_lo, x_hi = np.minimum(x_top, x_end), np.maximum(x_top, x_end)
    y_lo, y_hi = np.minimum(y_top, y_end), np.maximum(y_top, y_end)
    for index, cf in enumerate(fields):
        (bx0, by0), (bx1, by1) = cf.bounds()
        near = np.flatnonzero((x_hi >= bx0) & (x_lo <= bx1) & (y_hi >= by0) & (y_lo <= by1))
        if near.size == 0:
            continue
        rays_near = picked[near]
        limit = np.minimum(hits.range.take(rays_near), np.float32(max_range_m))
        found = crop_hits(sub.take(near), ground=contact.take(near), limit=limit, layout=cf.layout())
        hits.keep_nearer(
            rays_near[found.rays],
            found.t,
            (found.nx, found.ny, found.nz),
            surface=Surface.CROP,
            item=index,
            limit=max_range_m,
        )


def _cast_box(
    rays: Rays, max_range_m: float, hits: Hits, *, box: Box, index: int, candidates: _Candidates
) -> None:
    """Slab-test one box on its candidate rays and keep the hits nearer than what the rays hit so far."""
    centre = np.array((box.x, box.y, box.z))
    if rays.one_origin:
        origin = np.array((rays.ox[0], rays.oy[0], rays.oz[0]), dtype=np.float64)
        if float(np.linalg.norm(centre - origin)) - box.radius > max_range_m:
            return
    picked = candidates(box, centre)
    if picked is None:
        picked = np.arange(rays.size)
    if picked.size == 0:
        return
    found = box_hits(
        rays.take(picked),
        centre=(box.x, box.y, box.z),
        half=(0.5 * box.lx, 0.5 * box.ly, 0.5 * box.lz),
        yaw=box.yaw,
    )
    hits.keep_nearer(
        picked[found.rays],
        found.t,
        (found.nx, found.ny, found.nz),
        surface=box.surface,
        item=index,
        limit=max_range_m,
    )
