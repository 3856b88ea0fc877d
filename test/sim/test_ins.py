"""The INS model: schedule, fix delay, error statistics against the reported covariance, determinism."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.geo.rotation import rpy_from_quaternion, wrap_angle
from acres_sim.clock import PHYSICS_RATE_HZ, ins_due, step_stamp_ns
from acres_sim.errors import ParamsError
from acres_sim.vehicles.ins import ErrorModel, InsModel, InsParams, InsSample
from acres_sim.vehicles.kinematics import VehicleState, at_rest, place, step
from acres_sim.vehicles.params import POLARIS

G = ACRE_GEOREFERENCE
QUANTITIES = ("position", "velocity", "attitude", "angular_rate", "specific_force")


def _model(seed: int, stream: int = 0, params: InsParams | None = None) -> InsModel:
    return InsModel(params=params or InsParams(), georef=G, seed=seed, stream=stream)


def _drive(model: InsModel, steps: int) -> list[InsSample]:
    """Samples of a Polaris accelerating into a gentle left turn, on the 100 Hz schedule."""
    state = place(POLARIS, 38.0, 63.0, 1.2)
    out = []
    for k in range(1, steps + 1):
        state, motion = step(state, POLARIS, 1.0, 0.1, 1.0 / PHYSICS_RATE_HZ)
        if ins_due(k):
            out.append(model.sample(step=k, state=state, motion=motion))
    return out


def _errors(sample: InsSample, state: VehicleState) -> dict[str, np.ndarray]:
    """The error of each quantity of a sample of a vehicle at rest in ``state``."""
    motion = at_rest(state, POLARIS)
    truth_rpy = (state.roll, state.pitch, state.yaw)
    rpy = rpy_from_quaternion(sample.orientation)
    return {
        "position": np.subtract(sample.position_utm, sample.true_position_utm),
        "velocity": np.subtract(sample.velocity, motion.velocity),
        "attitude": np.array([wrap_angle(a - b) for a, b in zip(rpy, truth_rpy, strict=True)]),
        "angular_rate": np.subtract(sample.angular_rate, motion.angular_rate),
        "specific_force": np.subtract(sample.specific_force, motion.specific_force),
    }


def _covariances(sample: InsSample) -> dict[str, np.ndarray]:
    return {
        "position": np.array(sample.position_cov),
        "velocity": np.array(sample.velocity_cov),
        "attitude": np.array(sample.attitude_cov),
        "angular_rate": np.array(sample.angular_rate_cov),
        "specific_force": np.array(sample.specific_force_cov),
    }


def test_schedule_stamps_and_fix() -> None:
    samples = _drive(_model(1), 360)
    assert len(samples) == 300
    assert [s.step for s in samples] == [k for k in range(1, 361) if ins_due(k)]
    assert all(s.stamp_ns == step_stamp_ns(s.step) for s in samples)
    no_fix = [s for s in samples if not s.has_position]
    # No position during the first 0.25 s of the session, then always.
    assert {s.stamp_ns < 250_000_000 for s in no_fix} == {True}
    assert all(s.has_position for s in samples if s.stamp_ns >= 250_000_000)
    assert len(no_fix) == sum(ins_due(k) for k in range(1, 30))
    first = no_fix[0]
    assert all(
        math.isnan(v)
        for v in (*first.position_utm, first.latitude_deg, first.longitude_deg, *first.position_cov)
    )
    # Everything else is there from the first sample.
    assert all(math.isfinite(v) for v in (*first.orientation, *first.velocity, *first.true_position_utm))


def test_sample_contents() -> None:
    samples = _drive(_model(2), 240)
    last = samples[-1]
    lat, lon, h = G.utm_to_geodetic(*last.position_utm)
    assert (last.latitude_deg, last.longitude_deg) == (lat, lon)
    assert last.position_utm[2] == pytest.approx(h)
    error = np.subtract(last.position_utm, last.true_position_utm)
    assert math.hypot(error[0], error[1]) < 0.3
    assert last.true_speed == pytest.approx(2.0)
    assert last.velocity[0] == pytest.approx(2.0, abs=0.1)
    assert last.specific_force[2] == pytest.approx(9.80665, abs=0.2)
    assert math.fsum(c * c for c in last.orientation) == pytest.approx(1.0)


def test_errors_are_consistent_with_the_reported_covariance() -> None:
    # Many independent INS units, each sampled every 2 s over 20 s: the errors pooled per quantity
    # must have unit normalised variance and about 95 % within 1.96 sigma.
    state = place(POLARIS, -12.0, 40.0, 2.0)
    motion = at_rest(state, POLARIS)
    normalised: dict[str, list[np.ndarray]] = {q: [] for q in QUANTITIES}
    for seed in range(300):
        model = _model(seed)
        for k in range(1, 11):
            sample = model.sample(step=240 * k, state=state, motion=motion)
            errors, cov = _errors(sample, state), _covariances(sample)
            for q in QUANTITIES:
                normalised[q].append(errors[q] / np.sqrt(cov[q]))
    for q in QUANTITIES:
        z = np.concatenate(normalised[q])
        assert 0.85 < float(np.mean(z * z)) < 1.15, q
        assert 0.93 < float(np.mean(np.abs(z) < 1.96)) < 0.97, q
        assert abs(float(np.mean(z))) < 0.15, q


def test_bias_drifts_slowly_and_white_noise_is_white() -> None:
    # Consecutive samples share the bias: their difference carries (almost only) the white noise.
    params = InsParams()
    state = place(POLARIS, 0.0, 0.0, 0.0)
    motion = at_rest(state, POLARIS)
    diffs = []
    for seed in range(100):
        model = _model(seed, params=params)
        prev = None
        for k in range(30, 90):
            e = _errors(model.sample(step=k, state=state, motion=motion), state)["position"]
            if prev is not None:
                diffs.append(e - prev)
            prev = e
    white = np.array(params.position.white)
    ratio = np.var(np.array(diffs), axis=0) / (2 * white**2)
    assert np.all((ratio > 0.9) & (ratio < 1.1))


def test_same_seed_same_samples_other_seed_other_samples() -> None:
    a = _drive(_model(42), 600)
    b = _drive(_model(42), 600)
    c = _drive(_model(43), 600)
    d = _drive(_model(42, stream=1), 600)
    assert repr(a) == repr(b)
    assert repr(a) != repr(c)
    assert repr(a) != repr(d)
    assert [s.true_position_utm for s in a] == [s.true_position_utm for s in c]


def test_steps_must_increase() -> None:
    model = _model(3)
    state = VehicleState()
    motion = at_rest(state, POLARIS)
    model.sample(step=5, state=state, motion=motion)
    with pytest.raises(ParamsError, match="step 5"):
        model.sample(step=5, state=state, motion=motion)


def test_zero_error_model_is_exact() -> None:
    exact = ErrorModel(white=(0.0, 0.0, 0.0), bias=(0.0, 0.0, 0.0), tau_s=1.0)
    params = InsParams(
        position=exact,
        velocity=exact,
        attitude=exact,
        angular_rate=exact,
        specific_force=exact,
        fix_delay_ns=0,
    )
    sample = _drive(_model(4, params=params), 120)[-1]
    assert sample.position_utm == sample.true_position_utm
    assert sample.orientation == sample.true_orientation
    assert sample.position_cov == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"white": (0.1, -0.1, 0.1), "bias": (0.0, 0.0, 0.0), "tau_s": 1.0}, "white"),
        ({"white": (0.1, 0.1, 0.1), "bias": (0.0, math.nan, 0.0), "tau_s": 1.0}, "bias"),
        ({"white": (0.1, 0.1, 0.1), "bias": (0.0, 0.0, 0.0), "tau_s": 0.0}, "tau_s"),
    ],
)
def test_error_model_is_validated(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        ErrorModel(**kwargs)
