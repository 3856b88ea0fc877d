"""The spinning LiDAR: an organised cloud of range returns, ray-cast in the scene.

A scan is a snapshot: every beam of every column is cast from the pose of the vehicle at the scan's
step (no motion skew within a revolution). Column ``c`` points at azimuth ``c * 360 / columns`` deg in
the ``lidar`` frame, counter-clockwise from its x axis seen from above (column 0 straight ahead);
ring ``r`` has the elevation ``lower + r * (upper - lower) / (rings - 1)``, ring 0 the lowest. The
cloud is a (columns, rings, 4) float32 array of x, y, z (m, in the ``lidar`` frame) and intensity, so
that ``cloud.tobytes()`` is the data of an organised sensor_msgs/PointCloud2 with height = columns,
width = rings, point_step 16, row_step = rings * 16, little-endian.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from acres_bridge.wire.perception import LidarLayout, encode_lidar_frame
from acres_bridge.wire.vocabulary import SensorKind
from acres_sim.errors import ParamsError, require_finite
from acres_sim.sensors._raycast import BASE_FRAME, F32, RayFan, as_f32, rotation_matrix
from acres_sim.sensors.compiled_cast import Backend
from acres_sim.sensors.lidar_kernels import beam_intensity, noisy_cloud
from acres_sim.sensors.scene import Box, Hits, Scene, Surface
from acres_sim.sensors.sensor_model import Cast, FrameData, MountedFan
from acres_sim.vehicles.kinematics import VehicleState
from acres_sim.vehicles.params import MountPose

__all__ = [
    "INTENSITY_HALF_RANGE_M",
    "MAXXUM_LIDAR",
    "POLARIS_LIDAR",
    "REFLECTIVITY",
    "Lidar",
    "LidarParams",
    "beam_directions",
]

# Diffuse reflectivity (0..1) at the LiDAR's wavelength (905 nm) of what a beam can hit.
REFLECTIVITY: Final = {
    Surface.GROUND: 0.25,  # dry soil
    Surface.BUILDING: 0.6,  # painted sheet metal, timber
    Surface.CROP: 0.45,  # green leaves reflect strongly in the near infrared
    Surface.VEHICLE: 0.8,  # paint and retro-reflectors
}
INTENSITY_HALF_RANGE_M: Final = 40.0  # the range at which the intensity has fallen to half
INTENSITY_SCALE: Final = 255.0


def _reflect_table() -> F32:
    """255 x reflectivity by surface (0 where nothing was hit), float32 as the intensity takes it."""
    table = np.zeros(len(Surface), dtype=np.float32)
    for surface, rho in REFLECTIVITY.items():
        table[surface] = INTENSITY_SCALE * rho
    table.setflags(write=False)
    return table


_REFLECT: Final = _reflect_table()
# The noise of a LiDAR is the child (stream, _NOISE_KEY) of the session's seed: apart from the INS's.
_NOISE_KEY: Final = 1


@dataclass(frozen=True, kw_only=True)
class LidarParams:
    """A spinning multi-beam LiDAR.

    ``columns`` azimuth steps per revolution, ``rings`` beams from ``lower_fov_deg`` to
    ``upper_fov_deg`` (elevation, deg, evenly spaced), returns between ``min_range_m`` and
    ``max_range_m`` (m), ``rate_hz`` revolutions per second, Gaussian range noise of standard deviation
    ``range_noise_m`` (m).
    """

    columns: int
    rings: int
    lower_fov_deg: float
    upper_fov_deg: float
    min_range_m: float
    max_range_m: float
    rate_hz: float = 10.0
    range_noise_m: float = 0.0

    def __post_init__(self) -> None:
        """Reject a layout or range that no sensor could have."""
        for name in ("columns", "rings"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParamsError(f"LidarParams.{name}: expected an integer >= 1, got {value!r}")
        lower, upper = self.lower_fov_deg, self.upper_fov_deg
        if not (math.isfinite(lower) and math.isfinite(upper) and -90.0 <= lower <= upper <= 90.0):
            raise ParamsError(
                f"LidarParams.lower_fov_deg, upper_fov_deg: expected -90 <= lower <= upper <= 90, "
                f"got {lower!r}, {upper!r}"
            )
        if (self.rings > 1) != (lower < upper):
            raise ParamsError(
                f"LidarParams: expected lower_fov_deg < upper_fov_deg with several rings and equal with "
                f"one, got {self.rings} rings from {lower} to {upper}"
            )
        if not (math.isfinite(self.min_range_m) and 0.0 <= self.min_range_m < self.max_range_m):
            raise ParamsError(
                f"LidarParams.min_range_m: expected 0 <= min_range_m < max_range_m ({self.max_range_m!r}), "
                f"got {self.min_range_m!r}"
            )
        require_finite(self, positive=("max_range_m", "rate_hz"), non_negative=("range_noise_m",))

    @property
    def points(self) -> int:
        """The number of beams (points) of a scan."""
        return self.columns * self.rings


# The Polaris's roof LiDAR: a Velodyne HDL-32E (32 beams, +10.67 to -30.67 deg in 1.33 deg steps,
# 100 m, +-2 cm), at 0.2 deg azimuth steps (1800 columns) and 10 Hz.
POLARIS_LIDAR: Final = LidarParams(
    columns=1800,
    rings=32,
    lower_fov_deg=-30.67,
    upper_fov_deg=10.67,
    min_range_m=1.0,
    max_range_m=100.0,
    range_noise_m=0.02,
)
# The Maxxum's cab-roof LiDAR: an 8-beam sensor of the Quanergy M8 class (+3 to -17 deg), 100 m,
# +-3 cm, at 2 deg azimuth steps (180 columns) and 10 Hz: the spec's default layout.
MAXXUM_LIDAR: Final = LidarParams(
    columns=180,
    rings=8,
    lower_fov_deg=-17.0,
    upper_fov_deg=3.0,
    min_range_m=1.0,
    max_range_m=100.0,
    range_noise_m=0.03,
)


def beam_directions(params: LidarParams) -> F32:
    """The unit beam directions in the ``lidar`` frame: (columns, rings, 3) float32, the cloud's layout."""
    azimuth = np.arange(params.columns, dtype=np.float64) * (2.0 * math.pi / params.columns)
    if params.rings > 1:
        elevation = np.radians(np.linspace(params.lower_fov_deg, params.upper_fov_deg, params.rings))
    else:
        elevation = np.radians(np.array([params.lower_fov_deg]))
    az, el = np.meshgrid(azimuth, elevation, indexing="ij")
    directions = np.stack((np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)), axis=-1)
    return directions.astype(np.float32)


class Lidar:
    """A LiDAR mounted on a vehicle: ``scan`` ray-casts one revolution in a scene.

    ``mount`` is the ``lidar`` frame's pose in base_footprint. The range noise comes from a numpy
    Generator seeded by (``seed``, ``stream``): the same seed, stream and calls give byte-identical
    scans. A scan from the same pose, agents and flags as the previous one (a parked vehicle) reuses
    the previous ray cast and draws fresh noise. A sensor model of the rig (acres_sim.sensors.sensor_model).
    """

    kind: Final = SensorKind.LIDAR

    def __init__(
        self,
        params: LidarParams,
        mount: MountPose,
        *,
        seed: int,
        stream: int,
        backend: Backend = Backend.COMPILED,
    ) -> None:
        """Precompute the beam directions and their directional index; seed the noise. ``backend``:
        which ray caster casts the beams (the same hits either way)."""
        if mount.parent != BASE_FRAME:
            raise ParamsError(
                f"Lidar mount {mount.frame!r}: expected parent {BASE_FRAME!r}, got {mount.parent!r}"
            )
        for name, value in (("seed", seed), ("stream", stream)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ParamsError(f"Lidar {name}: expected an integer >= 0, got {value!r}")
        self._params = params
        self._mount = mount
        self._backend = backend
        directions = beam_directions(params).reshape(-1, 3)
        self._fan: MountedFan[tuple[F32, F32]] = MountedFan(
            RayFan(directions, up=(0.0, 0.0, 1.0), forward=(1.0, 0.0, 0.0)),
            np.array(mount.translation, dtype=np.float64),
            rotation_matrix(mount.roll, mount.pitch, mount.yaw),
            max_range_m=params.max_range_m,
            backend=backend,
            make=self._range_and_intensity,
        )
        self._rng = np.random.Generator(
            np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(stream, _NOISE_KEY)))
        )

    @property
    def params(self) -> LidarParams:
        """The sensor's parameters."""
        return self._params

    @property
    def mount(self) -> MountPose:
        """The ``lidar`` frame's pose in base_footprint."""
        return self._mount

    @property
    def rate_hz(self) -> float:
        return self._params.rate_hz

    @property
    def mount_frame(self) -> str:
        return self._mount.frame

    def settings(self) -> dict[str, Any]:
        """SENSOR_META: the cloud's layout, the vertical field of view and the range limits."""
        p = self._params
        return {
            **LidarLayout(p.columns, p.rings).settings(),
            "vertical_fov_deg": [p.lower_fov_deg, p.upper_fov_deg],
            "range_m": [p.min_range_m, p.max_range_m],
        }

    def beam_directions(self) -> F32:
        """The unit beam directions in the ``lidar`` frame: (columns, rings, 3) float32."""
        p = self._params
        return self._fan.fan.directions.reshape(p.columns, p.rings, 3)

    def capture(
        self, scene: Scene, state: VehicleState, *, agents: Sequence[Box], crop: bool
    ) -> NDArray[np.float32]:
        """A scan (the rig's name for ``scan``)."""
        return self.scan(scene, state, agents=agents, crop=crop)

    def skip(self) -> None:
        """A scan nobody wants: no ray is cast, the noise of the scan is drawn and dropped."""
        self._rng.standard_normal(self._params.points, dtype=np.float32)

    @property
    def rays_cast(self) -> int:
        """The beams cast so far."""
        return self._fan.rays_cast

    def wire_frame(self, *, step: int, stamp_ns: int, sensor: int, data: FrameData) -> bytes:
        """The LIDAR frame of a cloud."""
        columns, rings, _ = data.shape
        return encode_lidar_frame(
            step=step, stamp_ns=stamp_ns, sensor=sensor, columns=columns, rings=rings, points=data
        )

    def scan(
        self, scene: Scene, state: VehicleState, *, agents: Sequence[Box] = (), crop: bool = True
    ) -> NDArray[np.float32]:
        """One revolution from a vehicle in ``state``: (columns, rings, 4) float32, C-contiguous.

        ``agents``: the bodies of the other vehicles (``acres_sim.sensors.tile.vehicle_box``; not this
        vehicle's own). ``crop=False`` leaves the crop out (ACRES Core). A beam without a return, or
        whose noisy range falls outside [min_range_m, max_range_m], has NaN in x, y, z and intensity 0.
        """
        (ranges, intensity), _ = self._fan.product(scene, state, tuple(agents), crop)
        p = self._params
        noise = self._rng.standard_normal(p.points, dtype=np.float32)
        cloud = np.empty((p.columns, p.rings, 4), dtype=np.float32)
        if self._backend is Backend.NUMPY:
            self._cloud_reference(ranges, noise, intensity, cloud.reshape(p.points, 4))
        else:
            noisy_cloud(
                ranges,
                noise,
                np.float32(p.range_noise_m),
                self._fan.fan.directions_t,
                intensity,
                np.float32(p.min_range_m),
                np.float32(p.max_range_m),
                cloud.reshape(p.points, 4),
            )
        return cloud

    def _cloud_reference(self, ranges: F32, noise: F32, intensity: F32, flat: F32) -> None:
        """The cloud in numpy, into ``flat`` (N, 4): what the compiled one
        (acres_sim.sensors.lidar_kernels.noisy_cloud) is checked against."""
        p = self._params
        noise *= np.float32(p.range_noise_m)
        r = ranges + noise
        valid = (r >= np.float32(p.min_range_m)) & (r <= np.float32(p.max_range_m))
        r = np.where(valid, r, np.float32(np.nan))
        d = self._fan.fan.directions_t
        for k in range(3):
            np.multiply(d[k], r, out=flat[:, k])
        flat[:, 3] = np.where(valid, intensity, np.float32(0.0))

    def _range_and_intensity(self, cast: Cast) -> tuple[F32, F32]:
        """The noiseless range and the intensity of every beam: 255 x reflectivity x cos(incidence)
        / (1 + (range / 40 m)^2), 0 without a hit; compiled or the numpy reference (the same)."""
        hits, world = cast.hits, cast.world
        if self._backend is Backend.NUMPY:
            return hits.range, self._intensity_reference(hits, world)
        intensity = np.empty(hits.range.shape[0], dtype=np.float32)
        beam_intensity(
            hits.range,
            hits.surface,
            np.ascontiguousarray(hits.normal.T),
            world,
            _REFLECT,
            np.float32(INTENSITY_HALF_RANGE_M),
            intensity,
        )
        return hits.range, intensity

    @staticmethod
    def _intensity_reference(hits: Hits, world: F32) -> F32:
        """The intensity in numpy: what the compiled one (acres_sim.sensors.lidar_kernels.beam_intensity) is
        checked against."""
        cos_incidence = -(
            hits.normal[:, 0] * world[0] + hits.normal[:, 1] * world[1] + hits.normal[:, 2] * world[2]
        )
        r = hits.range / np.float32(INTENSITY_HALF_RANGE_M)
        falloff = np.float32(1.0) / (np.float32(1.0) + r * r)
        return as_f32(_REFLECT.take(hits.surface) * np.clip(cos_incidence, 0.0, 1.0) * falloff)
