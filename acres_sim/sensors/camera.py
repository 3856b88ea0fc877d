"""The camera: a raw (distorted) bgr8 image ray-cast in the scene, and its plumb_bob projection.

Each pixel (u, v) (integer coordinates at pixel centres, u right, v down) looks along the ray that
the camera model maps onto it: normalised distorted coordinates from K, then the plumb_bob
distortion D inverted by Newton's method, once, when the camera is made. The plumb_bob polynomial
can fold back: for the Polaris's calibration r -> r (1 + k1 r^2 + k2 r^4 + k3 r^6) stops increasing
at r = 1.08 (47 deg off the axis), and the image's corners and side edges lie beyond what it reaches.
From the radius where its slope falls to 0.1 (r = 1.045 there) this model keeps the radial factor
constant, so that every pixel has a ray and ``project`` stays one-to-one; inside that radius
``project`` is plumb_bob exactly as OpenCV and image_geometry compute it.

Shading: a sky gradient, and Lambert shading of the ground, buildings, crop rows and vehicles under a
fixed sun, with a soil texture on the ground and haze with distance. Rays that go down but meet
nothing within ``max_range_m`` show the haze of the far field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import numba
import numpy as np
from numpy.typing import NDArray

from acres_bridge.wire.perception import CameraIntrinsics, encode_camera_frame
from acres_bridge.wire.vocabulary import SensorKind, Vehicle
from acres_sim.errors import ParamsError, require_finite
from acres_sim.sensors._raycast import F32, F64, I64, RayFan, mount_in_base, turn
from acres_sim.sensors.compiled_cast import Backend
from acres_sim.sensors.scene import Box, Hits, Scene, Surface
from acres_sim.sensors.sensor_model import Cast, FrameData, MountedFan
from acres_sim.sensors.shade_kernels import shade_pixels
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import VehicleParams

__all__ = [
    "MAXXUM_CAMERA",
    "OPTICAL_FRAMES",
    "POLARIS_CAMERA",
    "Camera",
    "CameraParams",
    "camera_mount",
    "projection_matrix",
]

Image = NDArray[np.uint8]

# The optical frame of each vehicle's camera (z forward, x right, y down).
OPTICAL_FRAMES: Final = {Vehicle.POLARIS: "reolink_camera_optical", Vehicle.MAXXUM: "camera_optical"}

# Newton steps of the undistortion, and the largest residual (normalised units) of a valid pixel ray.
_UNDISTORT_ITERATIONS: Final = 20
_UNDISTORT_TOLERANCE: Final = 1e-9
# The radial factor is held constant from where the slope of r -> r * radial falls to this: the
# plumb_bob polynomial then folds back soon after, and the tangential terms can fold it before.
_MIN_RADIAL_SLOPE: Final = 0.1

# Colours (B, G, R) and lighting.
_SKY_HORIZON: Final = (232, 216, 200)
_SKY_ZENITH: Final = (205, 140, 80)
_HAZE: Final = (175, 185, 190)
_SOIL: Final = (60, 88, 115)
_SUN: Final = (-0.45, -0.35, 0.82)  # towards the sun: south-west, 55 deg high (normalised when used)
_AMBIENT: Final = 0.45
_DIFFUSE: Final = 0.55  # ambient + diffuse = 1: a lit colour never exceeds its base
_HAZE_DISTANCE_M: Final = 600.0  # haze covers 1 - 1/e of a colour at this distance
_TEXTURE_CELL_M: Final = 0.5
_TEXTURE_SIZE: Final = 64  # texels per side of the repeating soil texture
_TEXTURE_SEED: Final = 7
_TEXTURE_CONTRAST: Final = 0.15
_SKY_SLOPE: Final = 1.6  # the sky reaches the zenith's colour at this sine of the elevation (x 1/1.6)
# The same as the compiled shading takes them (acres_sim.sensors.shade_kernels.shade_pixels).
_LIGHT_TERMS: Final = np.array([_AMBIENT, _DIFFUSE, 1.0 / _TEXTURE_CELL_M, _SKY_SLOPE], dtype=np.float32)
_CHANNELS: Final = np.array(
    [(_HAZE[c], _SKY_HORIZON[c], _SKY_ZENITH[c] - _SKY_HORIZON[c]) for c in range(3)], dtype=np.float32
)


@dataclass(frozen=True, kw_only=True)
class CameraParams:
    """A pinhole camera with plumb_bob distortion.

    ``width`` x ``height`` pixels; ``k`` the camera matrix K (9 floats, row-major: fx s cx, 0 fy cy,
    0 0 1), ``d`` the distortion (k1, k2, p1, p2, k3); ``rate_hz`` frames per second; ``max_range_m``
    how far the rays reach (m).
    """

    width: int
    height: int
    k: tuple[float, ...]
    d: tuple[float, ...]
    rate_hz: float = 10.0
    max_range_m: float = 300.0

    def __post_init__(self) -> None:
        """K a camera matrix, D five numbers, sizes and rates positive."""
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 16384:
                raise ParamsError(f"CameraParams.{name}: expected an integer 1..16384, got {value!r}")
        k = tuple(float(v) for v in self.k)
        d = tuple(float(v) for v in self.d)
        if len(k) != 9 or not all(math.isfinite(v) for v in k):
            raise ParamsError(f"CameraParams.k: expected 9 finite numbers, got {self.k!r}")
        if not (k[0] > 0.0 and k[4] > 0.0 and k[3] == 0.0 and k[6:] == (0.0, 0.0, 1.0)):
            raise ParamsError(
                f"CameraParams.k: expected a camera matrix (fx > 0, fy > 0, row 2 = 0 fy cy, row 3 = 0 0 1), "
                f"got {self.k!r}"
            )
        if len(d) != 5 or not all(math.isfinite(v) for v in d):
            raise ParamsError(f"CameraParams.d: expected 5 finite numbers (k1 k2 p1 p2 k3), got {self.d!r}")
        require_finite(self, positive=("rate_hz", "max_range_m"))
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "d", d)


# The Polaris's Reolink camera: the spec's calibration of the 896 x 512 image.
POLARIS_CAMERA: Final = CameraParams(
    width=896,
    height=512,
    k=(599.5261980366653, 0.0, 440.1304622044219, 0.0, 592.3778194293697, 270.80532448208777, 0.0, 0.0, 1.0),
    d=(
        -0.5538868812746999,
        0.40841873696727643,
        -0.009978535293476691,
        0.004423926017374143,
        -0.16673270849069252,
    ),
)
# The Maxxum's cab-roof camera: a 640 x 480 machine-vision camera with a 90 deg horizontal field of
# view (fx = 320 px) and mild barrel distortion, enough to see the headland and the implement while
# costing two thirds of the Polaris's image to render.
MAXXUM_CAMERA: Final = CameraParams(
    width=640,
    height=480,
    k=(320.0, 0.0, 319.5, 0.0, 320.0, 239.5, 0.0, 0.0, 1.0),
    d=(-0.08, 0.012, 0.0, 0.0, 0.0),
)


def projection_matrix(k: Sequence[float]) -> tuple[float, ...]:
    """P = [K | 0], 12 floats row-major: the projection of camera_info for a camera matrix K."""
    if len(k) != 9:
        raise ParamsError(f"projection_matrix k: expected 9 numbers, got {len(k)}")
    return (k[0], k[1], k[2], 0.0, k[3], k[4], k[5], 0.0, k[6], k[7], k[8], 0.0)


def camera_mount(vehicle: VehicleParams, frame: str | None = None) -> tuple[F64, F64]:
    """(translation, rotation) of a camera's optical frame in base_footprint, composed from the mounts.

    ``frame`` defaults to the vehicle's optical frame (``OPTICAL_FRAMES``).
    """
    if frame is None:
        frame = OPTICAL_FRAMES.get(vehicle.vehicle)
        if frame is None:
            raise ParamsError(
                f"camera_mount: vehicle '{vehicle.vehicle}' has no known camera; expected one of "
                f"{sorted(str(v) for v in OPTICAL_FRAMES)} or an explicit frame"
            )
    return mount_in_base(vehicle.mounts, frame)


@dataclass(frozen=True, slots=True)
class _Distortion:
    """plumb_bob with the radial factor held constant beyond the fold radius (normalised units)."""

    k1: float
    k2: float
    p1: float
    p2: float
    k3: float
    fold_r2: float  # r^2 where d(r * radial)/dr first falls to _MIN_RADIAL_SLOPE; inf if never

    @classmethod
    def of(cls, d: Sequence[float]) -> _Distortion:
        k1, k2, p1, p2, k3 = d
        # d(r (1 + k1 r^2 + k2 r^4 + k3 r^6))/dr = 1 + 3 k1 s + 5 k2 s^2 + 7 k3 s^3 with s = r^2: the
        # first s where it falls to _MIN_RADIAL_SLOPE.
        coefficients = [7.0 * k3, 5.0 * k2, 3.0 * k1, 1.0 - _MIN_RADIAL_SLOPE]
        roots = np.roots(np.trim_zeros(coefficients, "f")) if any((k1, k2, k3)) else np.array([])
        real = [float(r.real) for r in np.atleast_1d(roots) if abs(r.imag) < 1e-12 and r.real > 0.0]
        return cls(k1, k2, p1, p2, k3, min(real, default=math.inf))

    def radial(self, r2: F64) -> tuple[F64, F64]:
        """The radial factor and its derivative with respect to r^2."""
        s = np.minimum(r2, self.fold_r2)
        factor = 1.0 + s * (self.k1 + s * (self.k2 + s * self.k3))
        slope = np.where(r2 < self.fold_r2, self.k1 + s * (2.0 * self.k2 + 3.0 * s * self.k3), 0.0)
        return factor, slope

    def apply(self, x: F64, y: F64) -> tuple[F64, F64]:
        """Distorted normalised coordinates of undistorted (x, y)."""
        r2 = x * x + y * y
        g, _ = self.radial(r2)
        xy = x * y
        xd = x * g + 2.0 * self.p1 * xy + self.p2 * (r2 + 2.0 * x * x)
        yd = y * g + self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * xy
        return xd, yd

    def invert(self, xd: F64, yd: F64) -> tuple[F64, F64, NDArray[np.bool_]]:
        """Undistorted (x, y) of distorted (xd, yd), and where the inversion converged."""
        # Start from the radial inverse (tabulated: the radial map is monotonic up to the fold, and
        # linear beyond), then Newton on the full model.
        rd = np.hypot(xd, yd)
        r_top = max(2.0 * float(rd.max()) + 1.0, 1.0)
        r_tab = np.linspace(0.0, r_top, 20001)
        g_tab, _ = self.radial(r_tab * r_tab)
        rd_tab = np.maximum.accumulate(r_tab * g_tab)
        r = np.interp(rd, rd_tab, r_tab)
        scale = np.divide(r, rd, out=np.ones_like(rd), where=rd > 0.0)
        x, y = xd * scale, yd * scale
        for _ in range(_UNDISTORT_ITERATIONS):
            r2 = x * x + y * y
            g, dg = self.radial(r2)
            ex, ey = self.apply(x, y)
            ex -= xd
            ey -= yd
            j11 = g + 2.0 * x * x * dg + 2.0 * self.p1 * y + 6.0 * self.p2 * x
            j12 = 2.0 * x * y * dg + 2.0 * self.p1 * x + 2.0 * self.p2 * y
            j22 = g + 2.0 * y * y * dg + 6.0 * self.p1 * y + 2.0 * self.p2 * x
            det = j11 * j22 - j12 * j12
            safe = np.abs(det) > 1e-12
            det = np.where(safe, det, 1.0)
            x = x - np.where(safe, (j22 * ex - j12 * ey) / det, 0.0)
            y = y - np.where(safe, (j11 * ey - j12 * ex) / det, 0.0)
        ex, ey = self.apply(x, y)
        ok = np.hypot(ex - xd, ey - yd) <= _UNDISTORT_TOLERANCE
        return x, y, ok


def _texture() -> F32:
    """The repeating soil brightness texture: 1 +- _TEXTURE_CONTRAST, smoothed noise."""
    rng = np.random.Generator(np.random.PCG64(_TEXTURE_SEED))
    noise = rng.uniform(-1.0, 1.0, (_TEXTURE_SIZE, _TEXTURE_SIZE))
    smooth = (noise + np.roll(noise, 1, 0) + np.roll(noise, 1, 1) + np.roll(noise, (1, 1), (0, 1))) / 4.0
    smooth /= np.abs(smooth).max()
    return (1.0 + _TEXTURE_CONTRAST * smooth).astype(np.float32).ravel()


def _pixel_rays(params: CameraParams) -> tuple[F32, NDArray[np.bool_]]:
    """Unit rays of all pixels, row by row, and whether the distortion could be inverted there."""
    p = params
    fx, skew, cx, _, fy, cy = p.k[:6]
    v, u = np.mgrid[0 : p.height, 0 : p.width].astype(np.float64)
    yd = (v - cy) / fy
    xd = (u - cx - skew * yd) / fx
    x, y, ok = _Distortion.of(p.d).invert(xd.ravel(), yd.ravel())
    norm = np.sqrt(x * x + y * y + 1.0)
    rays = np.stack((x / norm, y / norm, 1.0 / norm), axis=1)
    rays[~ok] = (0.0, 0.0, 1.0)
    return rays.astype(np.float32), ok


@cache
def _pixel_fan(params: CameraParams) -> tuple[I64, RayFan]:
    """The pixels whose ray exists and the fan of their rays, made once per camera model: undistorting
    every pixel takes most of a second, and every camera of a session of the same model shares it."""
    rays, valid = _pixel_rays(params)
    indices: I64 = np.flatnonzero(valid)
    return indices, RayFan(rays[indices], up=(0.0, -1.0, 0.0), forward=(0.0, 0.0, 1.0))


class Camera:
    """A camera mounted on a vehicle: ``render`` ray-casts one raw bgr8 image in a scene.

    ``mount`` is the optical frame's (translation (3,), rotation (3, 3)) in base_footprint
    (``camera_mount`` composes it from a vehicle's mounts). Making a camera undistorts every pixel
    once. A frame from the same pose, agents and flags as the previous one (a parked vehicle) is a
    copy of the previous image.
    """

    kind: Final = SensorKind.CAMERA

    def __init__(
        self,
        params: CameraParams,
        mount: tuple[F64, F64],
        *,
        body: str = "",
        backend: Backend = Backend.COMPILED,
    ) -> None:
        """Precompute the pixel rays (and their directional index) and the shading tables. ``body``:
        the mount of the camera body, under which SENSOR_META lists the camera (its optical frame is
        below it); ``backend``: which ray caster casts the pixels' rays (the same hits either way)."""
        translation = np.asarray(mount[0], dtype=np.float64)
        rotation = np.asarray(mount[1], dtype=np.float64)
        if translation.shape != (3,) or not np.all(np.isfinite(translation)):
            raise ParamsError(
                f"Camera mount translation: expected 3 finite numbers, got {translation.tolist()}"
            )
        if rotation.shape != (3, 3) or not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-9):
            raise ParamsError(
                f"Camera mount rotation: expected a 3 x 3 rotation matrix, got {rotation.tolist()}"
            )
        self._params = params
        self._backend = backend
        self._translation = translation
        self._rotation = rotation
        self._body = body
        self._distortion = _Distortion.of(params.d)
        self._valid, fan = _pixel_fan(params)
        self._texture = _texture()
        sun = np.array(_SUN)
        self._sun: F32 = (sun / np.linalg.norm(sun)).astype(np.float32)
        self._fan: MountedFan[Image] = MountedFan(
            fan, translation, rotation, max_range_m=params.max_range_m, backend=backend, make=self._shade
        )

    @property
    def params(self) -> CameraParams:
        """The camera's parameters."""
        return self._params

    @property
    def mount(self) -> tuple[F64, F64]:
        """The optical frame's (translation, rotation) in base_footprint."""
        return self._translation.copy(), self._rotation.copy()

    @property
    def pixel_rays(self) -> F32:
        """The unit ray of every pixel in the optical frame: (height, width, 3) float32, NaN where the
        distortion cannot be inverted (none for the cameras defined here)."""
        p = self._params
        out = np.full((p.height * p.width, 3), np.nan, dtype=np.float32)
        out[self._valid] = self._fan.fan.directions
        return out.reshape(p.height, p.width, 3)

    def project(self, points: NDArray[np.floating]) -> tuple[F64, F64]:
        """Pixel coordinates (u, v) of points (N, 3) in the optical frame; NaN for points not in front."""
        pts = np.asarray(points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise ParamsError(f"Camera.project points: expected an (N, 3) array, got shape {pts.shape}")
        fx, skew, cx, _, fy, cy = self._params.k[:6]
        z = pts[:, 2]
        front = z > 0.0
        safe_z = np.where(front, z, 1.0)
        xd, yd = self._distortion.apply(pts[:, 0] / safe_z, pts[:, 1] / safe_z)
        u = np.where(front, fx * xd + skew * yd + cx, np.nan)
        v = np.where(front, fy * yd + cy, np.nan)
        return u, v

    @property
    def rate_hz(self) -> float:
        return self._params.rate_hz

    @property
    def mount_frame(self) -> str:
        return self._body

    def settings(self) -> dict[str, Any]:
        """SENSOR_META: the intrinsics (size, K and the plumb_bob distortion)."""
        p = self._params
        return CameraIntrinsics(p.width, p.height, p.k, p.d).settings()

    def capture(self, scene: Scene, state: VehicleState, *, agents: Sequence[Box], crop: bool) -> Image:
        """An image (the rig's name for ``render``)."""
        return self.render(scene, state, agents=agents, crop=crop)

    def skip(self) -> None:
        """An image nobody wants: nothing to cast, nothing to move on (the camera has no noise)."""

    @property
    def rays_cast(self) -> int:
        """The pixel rays cast so far."""
        return self._fan.rays_cast

    def wire_frame(self, *, step: int, stamp_ns: int, sensor: int, data: FrameData) -> bytes:
        """The CAMERA frame of an image."""
        height, width, _ = data.shape
        return encode_camera_frame(
            step=step, stamp_ns=stamp_ns, sensor=sensor, width=width, height=height, pixels=data
        )

    def render(
        self, scene: Scene, state: VehicleState, *, agents: Sequence[Box] = (), crop: bool = True
    ) -> Image:
        """One raw image from a vehicle in ``state``: (height, width, 3) uint8 bgr8, C-contiguous.

        ``agents``: the bodies of the other vehicles (``acres_sim.sensors.tile.vehicle_box``); ``crop=False``
        leaves the crop out.
        """
        image, _ = self._fan.product(scene, state, tuple(agents), crop)
        return image.copy()

    def _shade(self, cast: Cast) -> Image:
        """Colour every pixel from what its ray hit (no value can leave 0..255: light <= 1), with the
        compiled shading or the numpy reference (the same image)."""
        p = self._params
        scene, agents, origin, hits, world = cast.scene, cast.agents, cast.origin, cast.hits, cast.world
        # Base colours by material: 0 sky, 1 ground, then the buildings, crop fields and agents.
        palette = np.array(
            [_SKY_HORIZON, _SOIL]
            + [b.color for b in scene.buildings]
            + [c.color for c in scene.crop]
            + [a.color for a in agents],
            dtype=np.float32,
        ).T.copy()
        nb, nc = len(scene.buildings), len(scene.crop)
        first = np.array([1, 2, 2, 2 + nb, 2 + nb + nc], dtype=np.int16)  # by Surface, plus the item
        if self._backend is Backend.NUMPY:
            return self._shade_reference(origin, world, hits, palette, first)
        out = np.zeros((p.height * p.width, 3), dtype=np.uint8)
        shade_pixels(
            origin[:2].astype(np.float32),
            world,
            hits.range,
            hits.surface,
            np.ascontiguousarray(hits.normal.T),
            hits.item,
            first,
            palette,
            self._sun,
            self._texture,
            _LIGHT_TERMS,
            _CHANNELS,
            self._valid,
            out,
            numba.get_num_threads(),
        )
        return out.reshape(p.height, p.width, 3)

    def _shade_reference(
        self, origin: F64, world: F32, hits: Hits, palette: F32, first: NDArray[np.int16]
    ) -> Image:
        """The shading in numpy: what the compiled shading (acres_sim.sensors.shade_kernels) is checked
        against."""
        p = self._params
        material = first.take(hits.surface)
        material += hits.item
        light, fog = self._light(origin, world, hits)
        # No hit: sky from the horizon to the zenith with the ray's elevation; going down: far haze.
        sky = hits.surface == Surface.NONE
        far = world[2] < 0
        up = world[2] * np.float32(_SKY_SLOPE)
        np.clip(up, np.float32(0.0), np.float32(1.0), out=up)
        planes = np.empty((3, world.shape[1]), dtype=np.uint8)
        channel = np.empty(world.shape[1], dtype=np.float32)
        scratch = np.empty_like(channel)
        for c in range(3):
            palette[c].take(material, out=channel)
            channel *= light
            np.multiply(fog, np.float32(_HAZE[c]), out=scratch)
            channel += scratch
            np.multiply(up, np.float32(_SKY_ZENITH[c] - _SKY_HORIZON[c]), out=scratch)
            scratch += np.float32(_SKY_HORIZON[c])
            np.copyto(scratch, np.float32(_HAZE[c]), where=far)
            np.copyto(channel, scratch, where=sky)
            planes[c] = channel
        out = np.zeros((p.height * p.width, 3), dtype=np.uint8)
        if self._valid.size == out.shape[0]:
            out[...] = planes.T
        else:
            out[self._valid] = planes.T
        return out.reshape(p.height, p.width, 3)

    def _light(self, origin: F64, world: F32, hits: Hits) -> tuple[F32, F32]:
        """(light, haze) per ray: how much of its base colour a hit shows, and how much haze covers it.

        Light: ambient + diffuse x max(0, n . sun), times the soil texture on the ground, times
        exp(-range / 600 m); haze: 1 - exp(-range / 600 m) (1 for a miss).
        """
        light = turn(self._sun[np.newaxis], hits.normal.T)[0]  # n . sun; the normals: a (3, N) block
        np.maximum(light, np.float32(0.0), out=light)
        light *= np.float32(_DIFFUSE)
        light += np.float32(_AMBIENT)
        ground = np.flatnonzero(hits.surface == Surface.GROUND)
        if ground.size:
            t = hits.range.take(ground)
            cell = np.float32(1.0 / _TEXTURE_CELL_M)
            gx = t * world[0].take(ground)
            gx += np.float32(origin[0])
            gx *= cell
            gy = t * world[1].take(ground)
            gy += np.float32(origin[1])
            gy *= cell
            ix = np.floor(gx).astype(np.int32) & (_TEXTURE_SIZE - 1)
            iy = np.floor(gy).astype(np.int32) & (_TEXTURE_SIZE - 1)
            iy *= _TEXTURE_SIZE
            iy += ix
            light[ground] *= self._texture.take(iy)
        # The exponential in float64, rounded once: the compiled shading gets the same float32.
        fog = np.exp(hits.range.astype(np.float64) * (-1.0 / _HAZE_DISTANCE_M)).astype(np.float32)
        light *= fog
        np.subtract(np.float32(1.0), fog, out=fog)
        return light, fog
