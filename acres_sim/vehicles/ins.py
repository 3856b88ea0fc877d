"""The INS model: the pose, velocity, rates and specific force of a vehicle as an RTK-aided INS reports them.

Each reported quantity carries, per axis, white noise plus a bias that drifts as a first-order
Gauss-Markov process, started in its stationary distribution. The error of every sample is thus
zero-mean with the constant variance white^2 + bias^2, which is what the sample reports as its
covariance. Position errors are along east, north, up; attitude errors on roll, pitch, yaw; the others
along the body axes x forward, y left, z up. The random numbers come from
``numpy.random.Generator(PCG64(...))`` seeded by (seed, stream), a fixed count per sample, so the same
seed and states give the same samples.

The GNSS has no fix during the first ``fix_delay_ns`` of the session: those samples have no position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from acres_bridge.geo.georef import Georeference
from acres_bridge.geo.rotation import Quaternion, Vec3, quaternion_from_rpy
from acres_bridge.wire.clock import NS_PER_S
from acres_sim.clock import step_stamp_ns
from acres_sim.errors import ParamsError, require_finite
from acres_sim.vehicles.kinematics import BodyMotion, VehicleState

__all__ = ["ErrorModel", "InsModel", "InsParams", "InsSample"]

_NAN3: Final = (math.nan, math.nan, math.nan)
_QUANTITIES: Final = ("position", "velocity", "attitude", "angular_rate", "specific_force")
_AXES: Final = 3 * len(_QUANTITIES)


@dataclass(frozen=True, kw_only=True)
class ErrorModel:
    """The error of one three-axis quantity: 1-sigma white noise and 1-sigma Gauss-Markov bias per axis.

    ``tau_s`` is the correlation time of the bias, in s. Units are those of the quantity.
    """

    white: Vec3
    bias: Vec3
    tau_s: float

    def __post_init__(self) -> None:
        """Sigmas must be finite and >= 0, the correlation time finite and > 0."""
        for name in ("white", "bias"):
            values = getattr(self, name)
            if len(values) != 3 or not all(math.isfinite(v) and v >= 0.0 for v in values):
                raise ParamsError(f"ErrorModel.{name}: expected three finite sigmas >= 0, got {values!r}")
        require_finite(self, positive=("tau_s",))

    @property
    def variance(self) -> Vec3:
        """The variance of the total error per axis (white^2 + bias^2)."""
        w, b = self.white, self.bias
        return (w[0] ** 2 + b[0] ** 2, w[1] ** 2 + b[1] ** 2, w[2] ** 2 + b[2] ** 2)


# Of the order of an RTK-aided tactical-grade INS such as the OxTS RT3000 (its datasheet: about 1-2 cm
# RTK position, 0.05 km/h velocity, 0.03 deg roll and pitch, 0.1 deg heading, gyro random walk about
# 0.2 deg/sqrt(h)); the total sigmas below match those. The accelerometer noise (0.02 m/s^2 at 100 Hz,
# vibration included), the split between white noise and bias and the correlation times are assumed.
_DEFAULT_POSITION: Final = ErrorModel(white=(0.008, 0.008, 0.015), bias=(0.012, 0.012, 0.02), tau_s=60.0)
_DEFAULT_VELOCITY: Final = ErrorModel(white=(0.01, 0.01, 0.01), bias=(0.005, 0.005, 0.005), tau_s=30.0)
_DEFAULT_ATTITUDE: Final = ErrorModel(white=(3e-4, 3e-4, 8e-4), bias=(4e-4, 4e-4, 1.5e-3), tau_s=120.0)
_DEFAULT_ANGULAR_RATE: Final = ErrorModel(white=(5e-4, 5e-4, 5e-4), bias=(5e-5, 5e-5, 5e-5), tau_s=300.0)
_DEFAULT_SPECIFIC_FORCE: Final = ErrorModel(white=(0.02, 0.02, 0.02), bias=(2e-3, 2e-3, 2e-3), tau_s=300.0)


@dataclass(frozen=True, kw_only=True)
class InsParams:
    """The error model of the INS and the delay of the first GNSS fix (ns since the session start).

    ``position`` in m (east, north, up), ``velocity`` in m/s, ``attitude`` in rad (roll, pitch, yaw),
    ``angular_rate`` in rad/s and ``specific_force`` in m/s^2, the last three in the body axes.
    """

    position: ErrorModel = _DEFAULT_POSITION
    velocity: ErrorModel = _DEFAULT_VELOCITY
    attitude: ErrorModel = _DEFAULT_ATTITUDE
    angular_rate: ErrorModel = _DEFAULT_ANGULAR_RATE
    specific_force: ErrorModel = _DEFAULT_SPECIFIC_FORCE
    fix_delay_ns: int = 250_000_000

    def __post_init__(self) -> None:
        """The fix delay must be >= 0."""
        if self.fix_delay_ns < 0:
            raise ParamsError(f"InsParams.fix_delay_ns: expected >= 0, got {self.fix_delay_ns}")


@dataclass(frozen=True, slots=True, kw_only=True)
class InsSample:
    """One INS sample of base_footprint, with its errors, and the exact values it was made from.

    ``step`` is the physics step that made it and ``stamp_ns`` that step's time (ns since the session
    start). Without a GNSS fix (``has_position`` false) the position, the latitude, the longitude and
    the position covariance are NaN. Positions are UTM (easting, northing, ellipsoidal height) in m;
    latitude and longitude in deg (WGS 84) of the erroneous UTM position. Orientations are quaternions
    (x, y, z, w) of base_footprint in the UTM grid / ENU frame (yaw counter-clockwise from grid east).
    Velocity (m/s), angular rate (rad/s) and specific force (m/s^2) are in the body axes x forward,
    y left, z up. Covariances are diagonals of variances: position (east, north, up; m^2), velocity
    (m^2/s^2), attitude (roll, pitch, yaw; rad^2), angular rate (rad^2/s^2), specific force (m^2/s^4).
    ``true_speed`` is the exact signed forward speed in m/s.
    """

    step: int
    stamp_ns: int
    has_position: bool
    position_utm: Vec3
    latitude_deg: float
    longitude_deg: float
    orientation: Quaternion
    velocity: Vec3
    angular_rate: Vec3
    specific_force: Vec3
    position_cov: Vec3
    velocity_cov: Vec3
    attitude_cov: Vec3
    angular_rate_cov: Vec3
    specific_force_cov: Vec3
    true_position_utm: Vec3
    true_orientation: Quaternion
    true_speed: float


@dataclass
class _Transition:
    """The Gauss-Markov update over one interval: b' = phi * b + q * N(0, 1)."""

    phi: NDArray[np.float64]
    q: NDArray[np.float64]


class InsModel:
    """The INS of one vehicle: a seeded error state that each ``sample`` call advances.

    ``stream`` separates the random streams of several vehicles in one session that share a seed.
    """

    def __init__(self, *, params: InsParams, georef: Georeference, seed: int, stream: int = 0) -> None:
        """Seed the generator and draw the initial biases from their stationary distribution."""
        if seed < 0 or stream < 0:
            raise ParamsError(f"InsModel: expected seed and stream >= 0, got seed={seed}, stream={stream}")
        self._params = params
        self._georef = georef
        models = [getattr(params, name) for name in _QUANTITIES]
        self._rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(stream,))))
        self._white = np.array([m.white for m in models], dtype=np.float64).reshape(_AXES)
        self._bias_sigma = np.array([m.bias for m in models], dtype=np.float64).reshape(_AXES)
        self._tau_ns = np.repeat([m.tau_s * NS_PER_S for m in models], 3)
        self._bias = self._bias_sigma * self._rng.standard_normal(_AXES)
        self._covariances: tuple[Vec3, ...] = tuple(m.variance for m in models)
        self._transitions: dict[int, _Transition] = {}
        self._last_step = 0

    @property
    def params(self) -> InsParams:
        """The error model."""
        return self._params

    def _transition(self, dt_ns: int) -> _Transition:
        """The bias update over ``dt_ns``; the few intervals that occur are computed once."""
        cached = self._transitions.get(dt_ns)
        if cached is None:
            phi = np.exp(-dt_ns / self._tau_ns)
            cached = _Transition(phi=phi, q=self._bias_sigma * np.sqrt(1.0 - phi * phi))
            self._transitions[dt_ns] = cached
        return cached

    def sample(self, *, step: int, state: VehicleState, motion: BodyMotion) -> InsSample:
        """The INS sample made at physics step ``step`` by a vehicle in ``state`` moving as ``motion``.

        Steps must increase from one call to the next. Each call draws the same number of random
        values whether or not the sample has a position, so the errors depend only on the seed and
        the steps sampled.
        """
        if step <= self._last_step:
            raise ParamsError(
                f"InsModel.sample: step {step} is not after the last sampled step {self._last_step}"
            )
        stamp_ns = step_stamp_ns(step)
        tr = self._transition(stamp_ns - step_stamp_ns(self._last_step))
        self._last_step = step
        noise = self._rng.standard_normal(2 * _AXES)
        self._bias = tr.phi * self._bias + tr.q * noise[_AXES:]
        e = (self._white * noise[:_AXES] + self._bias).tolist()

        georef = self._georef
        true_utm = georef.world_to_utm(state.x, state.y, state.z)
        pos_cov, vel_cov, att_cov, rate_cov, force_cov = self._covariances
        has_position = stamp_ns >= self._params.fix_delay_ns
        if has_position:
            utm = (true_utm[0] + e[0], true_utm[1] + e[1], true_utm[2] + e[2])
            lat, lon, _ = georef.utm_to_geodetic(*utm)
        else:
            utm, lat, lon, pos_cov = _NAN3, math.nan, math.nan, _NAN3
        v, w, f = motion.velocity, motion.angular_rate, motion.specific_force
        return InsSample(
            step=step,
            stamp_ns=stamp_ns,
            has_position=has_position,
            position_utm=utm,
            latitude_deg=lat,
            longitude_deg=lon,
            orientation=quaternion_from_rpy(state.roll + e[6], state.pitch + e[7], state.yaw + e[8]),
            velocity=(v[0] + e[3], v[1] + e[4], v[2] + e[5]),
            angular_rate=(w[0] + e[9], w[1] + e[10], w[2] + e[11]),
            specific_force=(f[0] + e[12], f[1] + e[13], f[2] + e[14]),
            position_cov=pos_cov,
            velocity_cov=vel_cov,
            attitude_cov=att_cov,
            angular_rate_cov=rate_cov,
            specific_force_cov=force_cov,
            true_position_utm=true_utm,
            true_orientation=quaternion_from_rpy(state.roll, state.pitch, state.yaw),
            true_speed=state.speed,
        )
