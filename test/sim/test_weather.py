"""The weather: deterministic from the seed, the start and the place; plausible ranges; the sun."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime, timedelta

import pytest

from acres_sim.clock import NS_PER_S
from acres_sim.errors import ParamsError
from acres_sim.world.weather import Conditions, Weather, WeatherParams, solar_elevation_deg

ACRE_LAT, ACRE_LON = 40.4698, -86.9953
START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)
HOUR_NS = 3600 * NS_PER_S


def _weather(seed: int = 42, start: datetime = START, **kwargs: object) -> Weather:
    return Weather(seed=seed, start_utc=start, latitude_deg=ACRE_LAT, longitude_deg=ACRE_LON, **kwargs)  # type: ignore[arg-type]


def _fields(c: Conditions) -> dict[str, float]:
    return {f.name: getattr(c, f.name) for f in dataclasses.fields(c)}


def _rain_episode(weather: Weather, within_ns: int) -> tuple[int, int]:
    """(start, end) in simulation ns of the first rain episode within ``within_ns``."""
    start = weather.next_change_ns(0)
    while start is not None and start < within_ns:
        if weather.at(start).precipitation_mm_per_h > 0.0:
            end = weather.next_change_ns(start)
            assert end is not None
            return start, end
        start = weather.next_change_ns(start)
    pytest.fail("no rain episode in the window; choose another seed")


def test_the_same_seed_start_and_place_give_the_same_conditions() -> None:
    a, b = _weather(), _weather()
    stamps = [0, 7 * NS_PER_S, 5 * HOUR_NS + 123, 30 * HOUR_NS]
    assert [a.at(s) for s in stamps] == [b.at(s) for s in stamps]


def test_asking_out_of_order_gives_what_asking_in_order_gives() -> None:
    forwards, backwards = _weather(), _weather()
    stamps = [k * HOUR_NS // 3 for k in range(12)]
    assert [forwards.at(s) for s in stamps] == [backwards.at(s) for s in reversed(stamps)][::-1]


@pytest.mark.parametrize(
    ("other", "what"),
    [
        ({"seed": 43}, "seed"),
        ({"start": START + timedelta(days=1)}, "start"),
    ],
)
def test_another_seed_or_start_gives_other_weather(other: dict[str, object], what: str) -> None:
    stamps = [k * HOUR_NS for k in range(24)]
    base = [_fields(_weather().at(s)) for s in stamps]
    changed = [_fields(_weather(**other).at(s)) for s in stamps]  # type: ignore[arg-type]
    assert [c["air_temperature_c"] for c in base] != [c["air_temperature_c"] for c in changed], what


def test_same_utc_time_same_weather_whatever_the_session_start() -> None:
    # The weather of a seed is one history of the place: a later session sees the same sky.
    early = _weather(start=datetime(2026, 10, 2, 6, 0, 0, tzinfo=UTC))
    late = _weather(start=datetime(2026, 10, 2, 7, 0, 0, tzinfo=UTC))
    a, b = early.at(HOUR_NS), late.at(0)
    assert a.local_time_ns == b.local_time_ns
    assert (a.air_temperature_c, a.wind_from_deg, a.cloud_cover_pct) == (
        b.air_temperature_c,
        b.wind_from_deg,
        b.cloud_cover_pct,
    )


def test_every_value_lies_in_its_range_over_ten_days() -> None:
    weather = _weather(seed=7, start=datetime(2026, 7, 1, tzinfo=UTC))
    samples = [weather.at(k * HOUR_NS // 4) for k in range(10 * 24 * 4)]
    for c in samples:
        assert -40.0 < c.air_temperature_c < 50.0
        assert 5.0 <= c.relative_humidity_pct <= 100.0
        assert 0.0 <= c.wind_speed_mps < 30.0
        assert 0.0 <= c.wind_from_deg < 360.0
        assert c.precipitation_mm_per_h >= 0.0
        assert 0.0 <= c.cloud_cover_pct <= 100.0
        assert 0.0 <= c.solar_irradiance_w_per_m2 <= 1100.0
        assert 12.0 <= c.soil_water_pct <= 45.0
        assert -20.0 < c.soil_temperature_c < 45.0
    # Summer in Indiana: warm afternoons, clear noons near 1000 W/m^2, some rain in ten days.
    assert max(c.air_temperature_c for c in samples) > 25.0
    assert max(c.solar_irradiance_w_per_m2 for c in samples) > 850.0
    assert any(c.precipitation_mm_per_h > 0.0 for c in samples)


def test_the_local_time_is_the_start_plus_the_simulation_time() -> None:
    c = _weather().at(90 * NS_PER_S + 5)
    assert c.stamp_ns == 90 * NS_PER_S + 5
    assert c.local_time_ns == round(START.timestamp()) * NS_PER_S + 90 * NS_PER_S + 5


def test_no_irradiance_at_night_and_sun_at_noon() -> None:
    # ACRE is at UTC-5:48 solar time: 06:00 UTC is about midnight, 18:00 UTC about noon.
    weather = _weather(start=datetime(2026, 6, 21, 0, 0, 0, tzinfo=UTC))
    night = [weather.at((6 * 60 + m) * 60 * NS_PER_S) for m in range(0, 120, 10)]
    assert all(c.solar_irradiance_w_per_m2 == 0.0 for c in night)
    assert weather.at(18 * HOUR_NS).solar_irradiance_w_per_m2 > 100.0


def test_solar_elevation_at_the_solstice() -> None:
    # At solar noon of the June solstice the sun stands 90 - (lat - 23.44) deg high.
    noon = datetime(2026, 6, 21, 17, 48, tzinfo=UTC).timestamp()
    peak = max(solar_elevation_deg(noon + m * 60.0, ACRE_LAT, ACRE_LON) for m in range(-30, 31))
    assert peak == pytest.approx(90.0 - (ACRE_LAT - 23.44), abs=0.5)
    midnight = datetime(2026, 6, 21, 5, 48, tzinfo=UTC).timestamp()
    assert solar_elevation_deg(midnight, ACRE_LAT, ACRE_LON) < -20.0


def test_afternoons_are_warmer_than_dawns() -> None:
    weather = _weather(seed=3, start=datetime(2026, 5, 1, tzinfo=UTC))
    warmer = 0
    for day in range(10):
        dawn = weather.at((day * 24 + 11) * HOUR_NS).air_temperature_c  # about 05:00 solar
        afternoon = weather.at((day * 24 + 21) * HOUR_NS).air_temperature_c  # about 15:00 solar
        warmer += afternoon > dawn
    assert warmer >= 9


def test_rain_raises_the_soil_water() -> None:
    weather = _weather(seed=11, start=datetime(2026, 7, 1, tzinfo=UTC))
    start, end = _rain_episode(weather, 20 * 24 * HOUR_NS)
    before = weather.at(start).soil_water_pct
    during = weather.at(end - 1)
    assert during.precipitation_mm_per_h > 0.0
    assert during.cloud_cover_pct >= 95.0
    assert during.relative_humidity_pct > 90.0
    assert during.soil_water_pct > before


def test_the_sun_dries_the_soil_on_a_dry_day() -> None:
    weather = _weather(seed=11, start=datetime(2026, 7, 1, tzinfo=UTC))
    for day in range(20):
        daytime = [weather.at((day * 24 + 14) * HOUR_NS + k * HOUR_NS // 2) for k in range(13)]  # 08-14 solar
        if all(c.precipitation_mm_per_h == 0.0 for c in daytime):
            assert daytime[-1].soil_water_pct < daytime[0].soil_water_pct
            return
    pytest.fail("no dry day in the window; choose another seed")


def test_next_change_is_where_the_precipitation_changes() -> None:
    weather = _weather(seed=11, start=datetime(2026, 7, 1, tzinfo=UTC))
    start, _ = _rain_episode(weather, 20 * 24 * HOUR_NS)
    assert weather.at(start - NS_PER_S).precipitation_mm_per_h == 0.0
    assert weather.at(start).precipitation_mm_per_h > 0.0
    assert weather.next_change_ns(start - 1) == start
    assert weather.next_change_ns(start) > start  # type: ignore[operator]


def test_params_change_the_climate() -> None:
    cold = _weather(params=WeatherParams(mean_temperature_c=-10.0))
    assert cold.at(0).air_temperature_c < _weather().at(0).air_temperature_c - 15.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, "seed: expected an integer >= 0"),
        ({"seed": True}, "seed: expected an integer >= 0"),
        ({"start": datetime(2026, 10, 2)}, "start_utc: expected a timezone-aware datetime"),
        ({"latitude_deg": 91.0}, "latitude_deg: expected -90 .. 90"),
        ({"longitude_deg": math.nan}, "longitude_deg: expected -180 .. 180"),
    ],
)
def test_bad_construction_is_refused(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {
        "seed": 1,
        "start_utc": START,
        "latitude_deg": ACRE_LAT,
        "longitude_deg": ACRE_LON,
    }
    if "start" in kwargs:
        args["start_utc"] = kwargs.pop("start")
    args.update(kwargs)
    with pytest.raises(ParamsError, match=match):
        Weather(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize("stamp", [-1, 1.5, True])
def test_bad_stamps_are_refused(stamp: object) -> None:
    with pytest.raises(ParamsError, match="stamp_ns: expected an integer >= 0"):
        _weather().at(stamp)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"diurnal_amplitude_c": 0.0}, "diurnal_amplitude_c: expected a finite value > 0"),
        ({"mean_wind_mps": math.inf}, "mean_wind_mps: expected a finite value > 0"),
        ({"mean_temperature_c": math.nan}, "mean_temperature_c: expected a finite number"),
        (
            {"field_capacity_pct": 50.0},
            "expected 0 < wilting_point_pct < field_capacity_pct < saturation_pct",
        ),
    ],
)
def test_bad_params_are_refused(params: dict[str, float], match: str) -> None:
    with pytest.raises(ParamsError, match=match):
        WeatherParams(**params)
