"""Ray-casting kernels shared by the scene, the LiDAR and the camera.

Poses as numpy matrices, ray fans (a sensor's fixed ray directions with a directional index for
culling), and the two analytic intersections: an oriented box (slab test) and the periodic rows of a
crop field. Everything works on float32 arrays of many rays at once; there is no per-ray Python.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from acres_sim.errors import ParamsError
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MountPose

__all__ = [
    "BASE_FRAME",
    "F32",
    "F64",
    "I64",
    "BoxHits",
    "CropHits",
    "GroundContact",
    "RayFan",
    "Rays",
    "RowLayout",
    "as_f32",
    "box_hits",
    "crop_hits",
    "mount_in_base",
    "rotation_matrix",
    "sensor_in_world",
    "turn",
]

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
I64 = NDArray[np.intp]

BASE_FRAME: Final = "base_footprint"

# Directional bins of a ray fan, in degrees: about 10 LiDAR columns or 25 camera pixels each.
_BIN_DEG: Final = 2.0
# Angular margin (rad) added around a cone before picking bins: float32 directions and rounding.
_CONE_MARGIN_RAD: Final = 1e-3


def as_f32(a: ArrayLike) -> F32:
    """``a`` as a float32 array, without a copy when it is one already (numpy's stubs lose dtypes)."""
    return np.asarray(a, dtype=np.float32)


def turn(rotation: ArrayLike, vectors_t: F32) -> F32:
    """``rotation`` (M, 3) applied to the columns of ``vectors_t`` (3, N) float32, without BLAS (see
    ``RayFan.in_world``): (M, N) float32, each row the sum over the rotation's columns in their order."""
    r = np.asarray(rotation, dtype=np.float32)
    out = np.empty((r.shape[0], vectors_t.shape[1]), dtype=np.float32)
    scratch = np.empty(vectors_t.shape[1], dtype=np.float32)
    for row in range(r.shape[0]):
        np.multiply(vectors_t[0], r[row, 0], out=out[row])
        np.multiply(vectors_t[1], r[row, 1], out=scratch)
        out[row] += scratch
        np.multiply(vectors_t[2], r[row, 2], out=scratch)
        out[row] += scratch
    return out


def rotation_matrix(roll: float, pitch: float, yaw: float) -> F64:
    """The 3x3 matrix R = Rz(yaw) Ry(pitch) Rx(roll) (acres_bridge.geo.rotation's convention)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def mount_in_base(mounts: Sequence[MountPose], frame: str) -> tuple[F64, F64]:
    """(translation (3,) m, rotation (3, 3)) of sensor frame ``frame`` in base_footprint.

    Follows the mount's parent chain (camera_optical -> camera -> base_footprint) and composes the
    poses; ParamsError when a frame of the chain is missing or the chain loops.
    """
    by_frame = {m.frame: m for m in mounts}
    chain: list[MountPose] = []
    name = frame
    while name != BASE_FRAME:
        mount = by_frame.get(name)
        if mount is None:
            raise ParamsError(
                f"mount {name!r} (in the chain of {frame!r}): expected one of {sorted(by_frame)}"
            )
        if mount in chain:
            raise ParamsError(f"mount {frame!r}: its parent chain loops at {name!r}")
        chain.append(mount)
        name = mount.parent
    translation = np.zeros(3)
    rotation = np.eye(3)
    for mount in reversed(chain):
        translation = translation + rotation @ np.array(mount.translation)
        rotation = rotation @ rotation_matrix(mount.roll, mount.pitch, mount.yaw)
    return translation, rotation


def sensor_in_world(state: VehicleState, translation: F64, rotation: F64) -> tuple[F64, F64]:
    """(origin (3,), rotation (3, 3)) in the world of a sensor mounted at (translation, rotation)."""
    body = rotation_matrix(state.roll, state.pitch, state.yaw)
    origin = np.array([state.x, state.y, state.z]) + body @ translation
    return origin, body @ rotation


@dataclass(frozen=True, eq=False)
class RayFan:
    """The unit ray directions of a sensor, fixed in its frame, with a directional index.

    ``directions`` (N, 3) float32, read-only (``directions_t``: the same, (3, N)). The index sorts the
    rays into bins of about 2 deg of azimuth (about ``up``, from ``forward``) and elevation (from the
    plane normal to ``up``), so ``within`` finds the rays of a cone in time proportional to the rays
    it returns. Choose ``up`` away from the rays (a LiDAR: its z axis; a camera: minus the optical y
    axis).
    """

    directions: F32
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    forward: tuple[float, float, float] = (1.0, 0.0, 0.0)
    directions_t: F32 = field(init=False, repr=False)
    _axes: F64 = field(init=False, repr=False)
    _order: I64 = field(init=False, repr=False)
    _starts: I64 = field(init=False, repr=False)
    _n_az: int = field(init=False, repr=False)
    _n_el: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        """Validate, freeze the directions and build the bins."""
        d = np.array(self.directions, dtype=np.float32, order="C")
        if d.ndim != 2 or d.shape[1] != 3 or d.shape[0] == 0:
            raise ParamsError(f"RayFan.directions: expected an (N, 3) array with N >= 1, got {d.shape}")
        norms = np.linalg.norm(d.astype(np.float64), axis=1)
        if not np.all(np.abs(norms - 1.0) < 1e-5):
            raise ParamsError("RayFan.directions: expected unit vectors")
        up = np.array(self.up, dtype=np.float64)
        forward = np.array(self.forward, dtype=np.float64)
        if abs(np.linalg.norm(up) - 1.0) > 1e-9 or abs(float(up @ forward)) > 1e-9:
            raise ParamsError(f"RayFan: expected unit up and forward at right angles, got {up}, {forward}")
        left = np.cross(up, forward)
        axes = np.stack((forward, left, up))
        d.setflags(write=False)
        d_t = np.ascontiguousarray(d.T)
        d_t.setflags(write=False)
        object.__setattr__(self, "directions", d)
        object.__setattr__(self, "directions_t", d_t)
        object.__setattr__(self, "_axes", axes)

        local = d.astype(np.float64) @ axes.T
        elevation = np.arcsin(np.clip(local[:, 2], -1.0, 1.0))
        azimuth = np.arctan2(local[:, 1], local[:, 0])
        step = math.radians(_BIN_DEG)
        n_el = math.ceil(math.pi / step)
        n_az = math.ceil(2.0 * math.pi / step)
        el_bin = np.clip(((elevation + 0.5 * math.pi) / step).astype(np.intp), 0, n_el - 1)
        az_bin = np.clip(((azimuth + math.pi) / step).astype(np.intp), 0, n_az - 1)
        bins = el_bin * n_az + az_bin
        order = np.argsort(bins, kind="stable")
        starts = np.searchsorted(bins[order], np.arange(n_el * n_az + 1))
        object.__setattr__(self, "_order", order)
        object.__setattr__(self, "_starts", starts)
        object.__setattr__(self, "_n_az", n_az)
        object.__setattr__(self, "_n_el", n_el)

    @property
    def size(self) -> int:
        """The number of rays."""
        return int(self.directions.shape[0])

    def in_world(self, rotation: F64) -> F32:
        """The directions turned by ``rotation`` (3, 3): (3, N) float32, C-contiguous.

        Row by row, not through BLAS: for a product this size OpenBLAS starts its threads, which then
        spin for a tenth of a second on the core the physics and the bridge need, frame after frame.
        """
        return turn(rotation, self.directions_t)

    def within(self, axis: F64, half_angle: float) -> I64 | None:
        """The indices of every ray within ``half_angle`` rad of unit ``axis`` (sensor frame), and some near.

        None means possibly all rays (the cone is too wide to narrow down); the caller tests them all.
        """
        half = half_angle + _CONE_MARGIN_RAD
        if half >= 0.5 * math.pi:
            return None
        local = self._axes @ axis
        elevation = math.asin(max(-1.0, min(1.0, float(local[2]))))
        step = math.radians(_BIN_DEG)
        lo, hi = elevation - half, elevation + half
        e0 = max(0, math.floor((lo + 0.5 * math.pi) / step))
        e1 = min(self._n_el - 1, math.floor((hi + 0.5 * math.pi) / step))
        n_az = self._n_az
        spread = math.sin(half) / math.cos(elevation) if abs(elevation) < 0.5 * math.pi else 2.0
        if lo <= -0.5 * math.pi or hi >= 0.5 * math.pi or spread >= 1.0:
            a0, a1 = 0, n_az - 1
        else:
            azimuth = math.atan2(float(local[1]), float(local[0]))
            delta = math.asin(spread)
            a0 = math.floor((azimuth - delta + math.pi) / step)
            a1 = math.floor((azimuth + delta + math.pi) / step)
            if a1 - a0 + 1 >= n_az:
                a0, a1 = 0, n_az - 1
        starts, order = self._starts, self._order
        pieces: list[I64] = []
        for e in range(e0, e1 + 1):
            row = e * n_az
            if a0 < 0 or a1 >= n_az:  # the azimuth range wraps around +-pi
                first, last = a0 % n_az, a1 % n_az
                pieces.append(order[starts[row + first] : starts[row + n_az]])
                pieces.append(order[starts[row] : starts[row + last + 1]])
            else:
                pieces.append(order[starts[row + a0] : starts[row + a1 + 1]])
        if not pieces:
            return np.empty(0, dtype=np.intp)
        return np.concatenate(pieces)


@dataclass(frozen=True, slots=True)
class Rays:
    """Rays as separate contiguous float32 components, the layout the kernels gather fastest.

    The origin ``ox, oy, oz`` has shape (1,) (one origin for all rays) or (N,); the unit direction
    ``dx, dy, dz`` has shape (N,).
    """

    ox: F32
    oy: F32
    oz: F32
    dx: F32
    dy: F32
    dz: F32

    @classmethod
    def of(cls, origins: F32, directions: F32) -> Rays:
        """From an origin (3,) or origins (N, 3) and directions (N, 3), float32."""
        o = origins[None, :] if origins.ndim == 1 else origins
        o_t = np.ascontiguousarray(o.T)
        d_t = np.ascontiguousarray(directions.T)
        return cls(o_t[0], o_t[1], o_t[2], d_t[0], d_t[1], d_t[2])

    @property
    def size(self) -> int:
        """The number of rays."""
        return int(self.dx.shape[0])

    @property
    def one_origin(self) -> bool:
        """True when every ray starts at the same point."""
        return int(self.ox.shape[0]) == 1

    def take(self, idx: I64) -> Rays:
        """The rays at indices ``idx``."""
        if self.one_origin:
            ox, oy, oz = self.ox, self.oy, self.oz
        else:
            ox, oy, oz = self.ox.take(idx), self.oy.take(idx), self.oz.take(idx)
        return Rays(ox, oy, oz, self.dx.take(idx), self.dy.take(idx), self.dz.take(idx))


@dataclass(frozen=True, slots=True)
class BoxHits:
    """Rays that enter a box: ``rays`` (m,) indices into the rays given, ``t`` (m,) along them and the
    outward normal (``nx``, ``ny``, ``nz``) of the face they enter, each (m,) float32."""

    rays: I64
    t: F32
    nx: F32
    ny: F32
    nz: F32


def box_hits(
    rays: Rays,
    *,
    centre: tuple[float, float, float],
    half: tuple[float, float, float],
    yaw: float,
) -> BoxHits:
    """The entry of each ray into an oriented box (turned by ``yaw`` about world z), by the slab test.

    A ray starting inside the box does not hit it (a sensor inside its own vehicle's box sees out).
    """
    c, s = np.float32(math.cos(yaw)), np.float32(math.sin(yaw))
    rx = rays.ox - np.float32(centre[0])
    ry = rays.oy - np.float32(centre[1])
    # Into the box's axes: turn by -yaw about z.
    local = (
        (c * rx + s * ry, c * rays.dx + s * rays.dy, half[0]),
        (c * ry - s * rx, c * rays.dy - s * rays.dx, half[1]),
        (rays.oz - np.float32(centre[2]), rays.dz, half[2]),
    )
    near: list[F32] = []
    t_in = np.full(rays.size, -np.inf, dtype=np.float32)
    t_out = np.full(rays.size, np.inf, dtype=np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for p, q, h in local:
            inv = np.float32(1.0) / q
            t1 = (np.float32(-h) - p) * inv
            t2 = (np.float32(h) - p) * inv
            # fmin/fmax skip the NaN of 0 * inf (a ray in the plane of a face); a ray parallel to a
            # slab and outside it gets the same infinity from both and never enters.
            near.append(np.fmin(t1, t2))
            np.maximum(t_in, near[-1], out=t_in)
            np.fmin(t_out, np.fmax(t1, t2), out=t_out)
    picked = np.flatnonzero((t_in <= t_out) & (t_in > 0))
    t = t_in.take(picked)
    # The face entered: the slab whose entry is the last; its normal is against the direction.
    sign = []
    done = np.zeros(picked.size, dtype=np.bool_)  # an edge or a corner: the first slab only
    for k in range(3):
        q = local[k][1].take(picked)
        entered = (near[k].take(picked) == t) & ~done
        done |= entered
        sign.append(np.where(entered, np.where(q > 0, np.float32(-1.0), np.float32(1.0)), np.float32(0.0)))
    return BoxHits(
        rays=picked,
        t=t,
        nx=as_f32(c * sign[0] - s * sign[1]),
        ny=as_f32(s * sign[0] + c * sign[1]),
        nz=as_f32(sign[2]),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RowLayout:
    """A crop field in its own axes, as ``crop_hits`` takes it.

    Row 0 starts at world (``x``, ``y``) and runs ``length`` m in the direction ``yaw``; row i lies at
    i ``spacing`` m to the left of row 0, for i < ``rows``; each row is ``width`` m wide and ``height``
    m tall above the ground.
    """

    x: float
    y: float
    yaw: float
    length: float
    rows: int
    spacing: float
    width: float
    height: float


@dataclass(frozen=True, slots=True, kw_only=True)
class GroundContact:
    """Rays that met the ground: the distance ``t`` along each, the rate ``sink`` (< 0 for a ray going
    into the ground) at which its height above the ground changes per metre along it there, and the
    ground's unit normal (``nx``, ``ny``, ``nz``) there; all (k,) float32."""

    t: F32
    sink: F32
    nx: F32
    ny: F32
    nz: F32

    def take(self, idx: I64) -> GroundContact:
        """The contacts of the rays ``idx``."""
        return GroundContact(
            t=self.t.take(idx),
            sink=self.sink.take(idx),
            nx=self.nx.take(idx),
            ny=self.ny.take(idx),
            nz=self.nz.take(idx),
        )


@dataclass(frozen=True, slots=True)
class CropHits:
    """Rays that enter a crop canopy: ``rays`` (m,) indices into the rays given, ``t`` (m,) along them
    and the normal (``nx``, ``ny``, ``nz``) at the entry, each (m,) float32."""

    rays: I64
    t: F32
    nx: F32
    ny: F32
    nz: F32


def crop_hits(rays: Rays, *, ground: GroundContact, limit: F32, layout: RowLayout) -> CropHits:
    """The entry of each ray into the canopy of one crop field: rows of boxes standing on the ground.

    ``ground`` is where each ray met the ground; ``limit`` (k,) the distance beyond which a hit does not
    count (the range, or something nearer). The canopy layer is the ground's tangent plane at the
    contact raised by the crop height, so the ray is in the layer for t in
    [t - height / -sink, t]. That stretch is clipped to the field's rectangle; where the ray enters it,
    it is either over a row (a hit, on the top, an end face or the field's outer side) or over a gap,
    where it hits the side of the next row across if it gets there before the ground. O(rays),
    whatever the number of rows.
    """
    c, s = np.float32(math.cos(layout.yaw)), np.float32(math.sin(layout.yaw))
    # Across-row axis u to the left of the rows, along-row axis v along them.
    rx = rays.ox - np.float32(layout.x)
    ry = rays.oy - np.float32(layout.y)
    uo = c * ry - s * rx
    vo = c * rx + s * ry
    du = c * rays.dy - s * rays.dx
    dv = c * rays.dx + s * rays.dy
    half_w = np.float32(0.5 * layout.width)
    u_min, u_max = -half_w, np.float32((layout.rows - 1) * layout.spacing) + half_w
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t_top = ground.t + np.float32(layout.height) / ground.sink
        inv_du = np.float32(1.0) / du
        inv_dv = np.float32(1.0) / dv
        tu1 = (u_min - uo) * inv_du
        tu2 = (u_max - uo) * inv_du
        tv1 = -vo * inv_dv
        tv2 = (np.float32(layout.length) - vo) * inv_dv
    tv_in = np.fmin(tv1, tv2)
    t0 = np.maximum(np.maximum(t_top, np.fmin(tu1, tu2)), np.maximum(tv_in, np.float32(0.0)))
    t1 = np.minimum(np.minimum(ground.t, limit), np.minimum(np.fmax(tu1, tu2), np.fmax(tv1, tv2)))
    picked = np.flatnonzero(t0 < t1)

    # The rays that cross the field's part of the layer, from t0 to t1.
    t0 = t0.take(picked)
    t1 = t1.take(picked)
    du = du.take(picked)
    u0 = (uo if uo.shape[0] == 1 else uo.take(picked)) + t0 * du
    period = np.float32(layout.spacing)
    band = np.floor((u0 + half_w) / period)
    inside = (u0 + half_w - band * period) <= np.float32(layout.width)
    # Over a gap: the edge of the next row across, ahead of the ray.
    edge = np.where(du > 0, (band + np.float32(1.0)) * period - half_w, band * period + half_w)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t_edge = t0 + (edge - u0) / du
    hit = inside | ((t_edge >= t0) & (t_edge <= t1))  # -0.0 across makes -inf: behind, not ahead
    picked = picked[hit]
    t0, inside, du = t0[hit], inside[hit], du[hit]
    t = np.where(inside, t0, t_edge[hit])

    # Normals: a row's side (or the field's outer side) faces against the ray's motion across the
    # rows; an entry over a row at t0 is through the top (the ground's normal) or an end face.
    across = np.where(du > 0, np.float32(-1.0), np.float32(1.0))
    nx = -s * across
    ny = c * across
    nz = np.zeros_like(t)
    top = inside & (t0 == t_top.take(picked))
    end = inside & ~top & (t0 == tv_in.take(picked))
    along = np.where(dv.take(picked) > 0, np.float32(-1.0), np.float32(1.0))
    nx = np.where(top, ground.nx.take(picked), np.where(end, c * along, nx))
    ny = np.where(top, ground.ny.take(picked), np.where(end, s * along, ny))
    nz = np.where(top, ground.nz.take(picked), nz)
    return CropHits(rays=picked, t=t, nx=nx, ny=ny, nz=nz)
