"""The weather and the soil water of the farm (/sim/conditions), deterministic from a seed.

``Weather`` gives the conditions at any simulation time of a session: a pure function of the
seed, the session's start (UTC), the latitude and the longitude of the tile, and the time. Two
sessions with the same seed see the same weather at the same UTC time; nothing reads a clock.

The models, each simple and documented, with values for the ACRE tile (West Lafayette, Indiana,
humid continental climate; all assumed unless they say otherwise):

Sun
    The solar elevation of NOAA's general solar position equations (fractional year, equation of
    time, declination, hour angle). The local solar hour is UTC plus the longitude (4 min per
    degree) plus the equation of time.
Randomness
    Smooth noise: standard normal values at evenly spaced knots of UTC time (a hash of the seed,
    the quantity and the knot index: splitmix64), joined by smoothstep interpolation.
Air temperature
    The seasonal mean (11.5 deg C, +-13 deg C, warmest on day 200), plus a day-to-day anomaly (knots
    each UTC day, 3 deg C), plus a diurnal wave of +-5.5 deg C with its maximum at 15:00 solar time,
    damped by up to half under full cloud; rain cools by up to 2 deg C.
Humidity
    The dew point lies near the day's minimum temperature, a little below it (knots each 6 h); rain
    raises it to 0.5 deg C below the air temperature. Relative humidity from the two with the
    Magnus formula, within 5 .. 100 %.
Cloud cover
    A logistic function of smooth noise (knots each 3 h), about 45 % on average; at least 95 %
    while it rains.
Wind
    A mean of 3.5 m/s at 2 m, log-normally varied (knots each hour), 30 % stronger in the afternoon,
    2 m/s more in rain; from the south-west (225 deg) +-70 deg (knots each 6 h) +-30 deg (each hour).
Rain
    Episodes: each UTC day has a Poisson number of them (0.35 a day on average, at most 8), each
    with a uniform start within the day, a duration of 0.5 h plus an exponential of mean 1.5 h
    (at most 8 h) and a constant rate of at least 0.3 mm/h, exponential with mean 3 mm/h. Episodes
    add up where they overlap. The precipitation changes only at the start and the end of an
    episode (``next_change_ns``).
Solar irradiance
    Global horizontal irradiance of a clear sky after Haurwitz (1098 sin(e) exp(-0.057 / sin(e)) W/m^2
    for a solar elevation e), reduced by cloud after Kasten and Czeplak (1 - 0.75 c^3.4, c the cloud
    fraction); 0 while the sun is below the horizon.
Soil water
    A bucket of the top 0.3 m of a silt loam (wilting point 12 %, field capacity 32 %, saturation
    45 % by volume), integrated in steps of 60 s of simulation time from the session's start: rain
    infiltrates (what exceeds saturation runs off), evaporation takes 0.6 of the irradiance's
    energy as latent heat (2.45 MJ/kg) scaled down linearly from field capacity to the wilting
    point, and water above field capacity drains with a time constant of 12 h. The start value is
    6 % below field capacity +-6 % (a normal value per UTC day of the start).
Soil temperature
    At 0.1 m: the day's mean air temperature plus the diurnal wave damped by exp(-z/D) and delayed
    by z/D radians, D = sqrt(2 kappa / omega) with a thermal diffusivity kappa of 5e-7 m^2/s.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import IntEnum
from typing import Final

from acres_sim.clock import NS_PER_S
from acres_sim.errors import ParamsError, require_finite

__all__ = [
    "Conditions",
    "Weather",
    "WeatherParams",
    "solar_elevation_deg",
]

_SECONDS_PER_DAY: Final = 86_400
_SECONDS_PER_HOUR: Final = 3_600
_MASK64: Final = (1 << 64) - 1
_DAYS_PER_YEAR: Final = 365.25
_LATENT_HEAT_J_PER_KG: Final = 2.45e6
_SOIL_STEP_S: Final = 60  # the soil water's integration step
_MAX_EPISODES_PER_DAY: Final = 8
_SOLAR_PEAK_HOUR: Final = 15.0  # the diurnal temperature maximum, solar time
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class _Stream(IntEnum):
    """The independent random quantities (each a stream of the seed)."""

    TEMPERATURE = 1
    CLOUD = 2
    WIND_SPEED = 3
    WIND_DIRECTION = 4
    WIND_VEER = 5
    DEW = 6
    RAIN_COUNT = 7
    RAIN_START = 8
    RAIN_DURATION = 9
    RAIN_RATE = 10
    SOIL = 11


@dataclass(frozen=True, kw_only=True)
class WeatherParams:
    """The climate and the soil of the tile; the module docstring gives the models they enter."""

    mean_temperature_c: float = 11.5
    seasonal_amplitude_c: float = 13.0
    warmest_day_of_year: float = 200.0
    daily_anomaly_c: float = 3.0
    diurnal_amplitude_c: float = 5.5
    mean_wind_mps: float = 3.5
    prevailing_wind_from_deg: float = 225.0
    rain_episodes_per_day: float = 0.35
    mean_rain_hours: float = 1.5
    mean_rain_mm_per_h: float = 3.0
    wilting_point_pct: float = 12.0
    field_capacity_pct: float = 32.0
    saturation_pct: float = 45.0
    soil_depth_m: float = 0.3
    drainage_time_constant_h: float = 12.0
    evaporation_fraction: float = 0.6
    soil_temperature_depth_m: float = 0.1
    soil_diffusivity_m2_per_s: float = 5e-7

    def __post_init__(self) -> None:
        """Positive amplitudes, rates and depths; the soil's water contents in order."""
        require_finite(
            self,
            positive=(
                "seasonal_amplitude_c",
                "daily_anomaly_c",
                "diurnal_amplitude_c",
                "mean_wind_mps",
                "rain_episodes_per_day",
                "mean_rain_hours",
                "mean_rain_mm_per_h",
                "soil_depth_m",
                "drainage_time_constant_h",
                "evaporation_fraction",
                "soil_temperature_depth_m",
                "soil_diffusivity_m2_per_s",
            ),
            finite=("mean_temperature_c", "warmest_day_of_year", "prevailing_wind_from_deg"),
        )
        if not 0.0 < self.wilting_point_pct < self.field_capacity_pct < self.saturation_pct < 100.0:
            raise ParamsError(
                "WeatherParams: expected 0 < wilting_point_pct < field_capacity_pct < saturation_pct < 100, "
                f"got {self.wilting_point_pct!r}, {self.field_capacity_pct!r}, {self.saturation_pct!r}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Conditions:
    """The fields of the Conditions message at simulation time ``stamp_ns`` (ns since the session start).

    ``local_time_ns`` is the simulated UTC time at the farm in ns since the Unix epoch.
    """

    stamp_ns: int
    local_time_ns: int
    air_temperature_c: float
    relative_humidity_pct: float
    wind_speed_mps: float
    wind_from_deg: float
    precipitation_mm_per_h: float
    cloud_cover_pct: float
    solar_irradiance_w_per_m2: float
    soil_water_pct: float
    soil_temperature_c: float


def _splitmix64(value: int) -> int:
    z = (value + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _uniform(seed: int, stream: _Stream, index: int) -> float:
    """A uniform number in [0, 1), the same for the same (seed, stream, index)."""
    h = _splitmix64(_splitmix64(_splitmix64(seed) ^ int(stream)) ^ (index & _MASK64))
    return (h >> 11) / float(1 << 53)


def _normal(seed: int, stream: _Stream, index: int) -> float:
    """A standard normal number, the same for the same (seed, stream, index) (Box-Muller)."""
    u1 = _uniform(seed, stream, 2 * index)
    u2 = _uniform(seed, stream, 2 * index + 1)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def _smooth(seed: int, stream: _Stream, utc_s: float, knot_s: float) -> float:
    """Smooth noise of unit scale at UTC time ``utc_s``: normal knots each ``knot_s``, smoothstep joins."""
    position = utc_s / knot_s
    k = math.floor(position)
    f = position - k
    a = _normal(seed, stream, k)
    b = _normal(seed, stream, k + 1)
    return a + (b - a) * f * f * (3.0 - 2.0 * f)


def _fractional_year(utc_s: float) -> tuple[float, float]:
    """(the NOAA fractional year in rad, the day of the year counted from 1, with its fraction)."""
    moment = datetime.fromtimestamp(utc_s, UTC)
    start = datetime(moment.year, 1, 1, tzinfo=UTC).timestamp()
    days = (utc_s - start) / _SECONDS_PER_DAY
    length = 366.0 if (moment.year % 4 == 0 and moment.year % 100 != 0) or moment.year % 400 == 0 else 365.0
    return 2.0 * math.pi * (days - 0.5) / length, days + 1.0


def _equation_of_time_min(gamma: float) -> float:
    return 229.18 * (
        0.000075
        + 0.001868 * math.cos(gamma)
        - 0.032077 * math.sin(gamma)
        - 0.014615 * math.cos(2.0 * gamma)
        - 0.040849 * math.sin(2.0 * gamma)
    )


def _declination_rad(gamma: float) -> float:
    return (
        0.006918
        - 0.399912 * math.cos(gamma)
        + 0.070257 * math.sin(gamma)
        - 0.006758 * math.cos(2.0 * gamma)
        + 0.000907 * math.sin(2.0 * gamma)
        - 0.002697 * math.cos(3.0 * gamma)
        + 0.00148 * math.sin(3.0 * gamma)
    )


def _solar_hour(utc_s: float, longitude_deg: float, gamma: float) -> float:
    """The true solar time in hours (0 .. 24) at a longitude (east positive)."""
    minutes = (utc_s % _SECONDS_PER_DAY) / 60.0 + 4.0 * longitude_deg + _equation_of_time_min(gamma)
    return (minutes / 60.0) % 24.0


def solar_elevation_deg(utc_s: float, latitude_deg: float, longitude_deg: float) -> float:
    """The sun's elevation above the horizon in degrees (negative below it) at a UTC time (s since
    the Unix epoch) and a place (NOAA's general solar position equations, about 0.5 deg)."""
    gamma, _ = _fractional_year(utc_s)
    hour_angle = math.radians(15.0 * _solar_hour(utc_s, longitude_deg, gamma) - 180.0)
    lat = math.radians(latitude_deg)
    decl = _declination_rad(gamma)
    cos_zenith = math.sin(lat) * math.sin(decl) + math.cos(lat) * math.cos(decl) * math.cos(hour_angle)
    return 90.0 - math.degrees(math.acos(max(-1.0, min(1.0, cos_zenith))))


def _magnus_hpa(temperature_c: float) -> float:
    """The saturation vapour pressure over water (hPa) at a temperature, Magnus formula."""
    return 6.1094 * math.exp(17.625 * temperature_c / (temperature_c + 243.04))


@dataclass(frozen=True, slots=True)
class _Episode:
    start_ns: int  # UTC ns since the epoch, on a whole second
    end_ns: int
    rate_mm_per_h: float


@dataclass(frozen=True, slots=True)
class _Air:
    """Everything but the soil water at one instant."""

    temperature_c: float
    day_mean_c: float
    diurnal_c: float  # the damped amplitude of the diurnal wave
    solar_phase: float  # 2 pi (solar hour - 15) / 24
    humidity_pct: float
    wind_mps: float
    wind_from_deg: float
    rain_mm_per_h: float
    cloud_pct: float
    irradiance_w_per_m2: float


class Weather:
    """The conditions of one session; ``at`` is a function of the simulation time alone.

    The soil water is integrated forwards and cached: asking for times in increasing order (as a
    simulator does) costs one 60-s step per simulated minute; asking for an earlier time starts
    over from the session's start, with the same result.
    """

    def __init__(
        self,
        *,
        seed: int,
        start_utc: datetime,
        latitude_deg: float,
        longitude_deg: float,
        params: WeatherParams | None = None,
    ) -> None:
        """The weather of the session that starts at ``start_utc`` (timezone-aware) at a place."""
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ParamsError(f"Weather seed: expected an integer >= 0, got {seed!r}")
        if start_utc.tzinfo is None or start_utc.utcoffset() is None:
            raise ParamsError(f"Weather start_utc: expected a timezone-aware datetime, got {start_utc!r}")
        if not (math.isfinite(latitude_deg) and -90.0 <= latitude_deg <= 90.0):
            raise ParamsError(f"Weather latitude_deg: expected -90 .. 90, got {latitude_deg!r}")
        if not (math.isfinite(longitude_deg) and -180.0 <= longitude_deg <= 180.0):
            raise ParamsError(f"Weather longitude_deg: expected -180 .. 180, got {longitude_deg!r}")
        self._seed = seed
        since_epoch = start_utc - _EPOCH
        self._start_ns = (
            since_epoch.days * _SECONDS_PER_DAY + since_epoch.seconds
        ) * NS_PER_S + since_epoch.microseconds * 1000
        self._lat = latitude_deg
        self._lon = longitude_deg
        self._p = params if params is not None else WeatherParams()
        self._episodes: dict[int, tuple[_Episode, ...]] = {}
        self._soil_start = self._initial_soil_water()
        self._soil_step = 0  # the soil water is known at the end of this many 60-s steps
        self._soil = self._soil_start

    @property
    def params(self) -> WeatherParams:
        """The climate and soil constants."""
        return self._p

    # ---- rain -------------------------------------------------------------------------------

    def _day_episodes(self, day: int) -> tuple[_Episode, ...]:
        """The rain episodes that start on UTC day ``day`` (days since the epoch)."""
        cached = self._episodes.get(day)
        if cached is not None:
            return cached
        p = self._p
        seed = self._seed
        # A Poisson count by inversion of one uniform number.
        u = _uniform(seed, _Stream.RAIN_COUNT, day)
        term = math.exp(-p.rain_episodes_per_day)
        total, count = term, 0
        while u > total and count < _MAX_EPISODES_PER_DAY:
            count += 1
            term *= p.rain_episodes_per_day / count
            total += term
        episodes = []
        for j in range(count):
            index = day * _MAX_EPISODES_PER_DAY + j
            start = day * _SECONDS_PER_DAY + math.floor(
                _uniform(seed, _Stream.RAIN_START, index) * _SECONDS_PER_DAY
            )
            hours = 0.5 - p.mean_rain_hours * math.log(1.0 - _uniform(seed, _Stream.RAIN_DURATION, index))
            rate = -p.mean_rain_mm_per_h * math.log(1.0 - _uniform(seed, _Stream.RAIN_RATE, index))
            end = start + round(min(hours, 8.0) * _SECONDS_PER_HOUR)
            episodes.append(_Episode(start * NS_PER_S, end * NS_PER_S, max(rate, 0.3)))
        result = tuple(episodes)
        if len(self._episodes) > 64:
            self._episodes.clear()
        self._episodes[day] = result
        return result

    def _rain(self, utc_ns: int) -> float:
        """The rain rate in mm/h at a UTC time in ns (episodes last at most 8 h: only the day and the
        day before can hold one)."""
        day = utc_ns // (_SECONDS_PER_DAY * NS_PER_S)
        return sum(
            e.rate_mm_per_h
            for d in (day - 1, day)
            for e in self._day_episodes(d)
            if e.start_ns <= utc_ns < e.end_ns
        )

    def next_change_ns(self, after_ns: int) -> int | None:
        """The first simulation time after ``after_ns`` at which the precipitation changes (an episode
        starts or ends), if one lies within the next two UTC days; else None (ask again later)."""
        utc_ns = self._start_ns + after_ns
        day = utc_ns // (_SECONDS_PER_DAY * NS_PER_S)
        edges = sorted(
            edge
            for d in (day - 1, day, day + 1)
            for e in self._day_episodes(d)
            for edge in (e.start_ns, e.end_ns)
        )
        i = bisect.bisect_right(edges, utc_ns)
        return edges[i] - self._start_ns if i < len(edges) else None

    # ---- the air ----------------------------------------------------------------------------

    def _air(self, utc_ns: int) -> _Air:
        p = self._p
        seed = self._seed
        utc_s = utc_ns / NS_PER_S
        gamma, day_of_year = _fractional_year(utc_s)
        solar_hour = _solar_hour(utc_s, self._lon, gamma)
        rain = self._rain(utc_ns)
        wet = min(1.0, rain / 2.0)  # 0 dry .. 1 from 2 mm/h on

        cloud = 100.0 / (
            1.0 + math.exp(-1.6 * _smooth(seed, _Stream.CLOUD, utc_s, 3 * _SECONDS_PER_HOUR) + 0.2)
        )
        if rain > 0.0:
            cloud = max(cloud, 95.0)
        c = cloud / 100.0

        season = p.mean_temperature_c + p.seasonal_amplitude_c * math.cos(
            2.0 * math.pi * (day_of_year - p.warmest_day_of_year) / _DAYS_PER_YEAR
        )
        day_mean = season + p.daily_anomaly_c * _smooth(seed, _Stream.TEMPERATURE, utc_s, _SECONDS_PER_DAY)
        diurnal = p.diurnal_amplitude_c * (1.0 - 0.5 * c)
        phase = 2.0 * math.pi * (solar_hour - _SOLAR_PEAK_HOUR) / 24.0
        temperature = day_mean + diurnal * math.cos(phase) - 2.0 * wet

        dew = day_mean - diurnal - 1.0 - 1.5 * abs(_smooth(seed, _Stream.DEW, utc_s, 6 * _SECONDS_PER_HOUR))
        if rain > 0.0:
            dew = max(dew, temperature - 0.5)
        dew = min(dew, temperature)
        humidity = min(100.0, max(5.0, 100.0 * _magnus_hpa(dew) / _magnus_hpa(temperature)))

        gust = math.exp(0.35 * _smooth(seed, _Stream.WIND_SPEED, utc_s, _SECONDS_PER_HOUR))
        afternoon = 1.0 + 0.3 * math.cos(2.0 * math.pi * (solar_hour - 14.0) / 24.0)
        wind = p.mean_wind_mps * gust * afternoon + (2.0 if rain > 0.0 else 0.0)
        direction = (
            p.prevailing_wind_from_deg
            + 70.0 * _smooth(seed, _Stream.WIND_DIRECTION, utc_s, 6 * _SECONDS_PER_HOUR)
            + 30.0 * _smooth(seed, _Stream.WIND_VEER, utc_s, _SECONDS_PER_HOUR)
        ) % 360.0

        elevation = math.radians(solar_elevation_deg(utc_s, self._lat, self._lon))
        sin_e = math.sin(elevation)
        clear = 1098.0 * sin_e * math.exp(-0.057 / sin_e) if sin_e > 0.0 else 0.0
        irradiance = clear * (1.0 - 0.75 * c**3.4)
        return _Air(
            temperature_c=temperature,
            day_mean_c=day_mean,
            diurnal_c=diurnal,
            solar_phase=phase,
            humidity_pct=humidity,
            wind_mps=wind,
            wind_from_deg=direction,
            rain_mm_per_h=rain,
            cloud_pct=cloud,
            irradiance_w_per_m2=irradiance,
        )

    # ---- the soil ---------------------------------------------------------------------------

    def _initial_soil_water(self) -> float:
        p = self._p
        day = self._start_ns // (_SECONDS_PER_DAY * NS_PER_S)
        start = p.field_capacity_pct - 6.0 + 6.0 * _normal(self._seed, _Stream.SOIL, day)
        return min(max(start, p.wilting_point_pct), p.saturation_pct)

    def _soil_rate(self, water_pct: float, air: _Air) -> float:
        """d(soil water)/dt in % per second for the water content and the air of one instant."""
        p = self._p
        per_mm = 100.0 / (p.soil_depth_m * 1000.0)  # % per mm of water in the layer
        dryness = (water_pct - p.wilting_point_pct) / (p.field_capacity_pct - p.wilting_point_pct)
        evaporation = (
            p.evaporation_fraction
            * air.irradiance_w_per_m2
            / _LATENT_HEAT_J_PER_KG
            * min(max(dryness, 0.0), 1.0)
        )  # mm/s (kg/m^2/s)
        drainage = max(water_pct - p.field_capacity_pct, 0.0) / (
            p.drainage_time_constant_h * _SECONDS_PER_HOUR
        )
        return per_mm * (air.rain_mm_per_h / _SECONDS_PER_HOUR - evaporation) - drainage

    def _advance_soil(self, water_pct: float, from_ns: int, duration_ns: int) -> float:
        """The soil water ``duration_ns`` after the simulation time ``from_ns``: one Euler step with the
        air of the step's middle."""
        air = self._air(self._start_ns + from_ns + duration_ns // 2)
        water = water_pct + self._soil_rate(water_pct, air) * duration_ns / NS_PER_S
        return min(max(water, self._p.wilting_point_pct), self._p.saturation_pct)

    def _soil_water(self, stamp_ns: int) -> float:
        step_ns = _SOIL_STEP_S * NS_PER_S
        steps = stamp_ns // step_ns
        if steps < self._soil_step:
            self._soil_step, self._soil = 0, self._soil_start
        while self._soil_step < steps:
            self._soil = self._advance_soil(self._soil, self._soil_step * step_ns, step_ns)
            self._soil_step += 1
        rest = stamp_ns - steps * step_ns
        if rest == 0:
            return self._soil
        return self._advance_soil(self._soil, steps * step_ns, rest)

    # ---- the conditions ---------------------------------------------------------------------

    def at(self, stamp_ns: int) -> Conditions:
        """The conditions at simulation time ``stamp_ns`` (ns since the session start, >= 0)."""
        if isinstance(stamp_ns, bool) or not isinstance(stamp_ns, int) or stamp_ns < 0:
            raise ParamsError(f"Weather.at stamp_ns: expected an integer >= 0, got {stamp_ns!r}")
        p = self._p
        air = self._air(self._start_ns + stamp_ns)
        omega = 2.0 * math.pi / _SECONDS_PER_DAY
        damping_depth = math.sqrt(2.0 * p.soil_diffusivity_m2_per_s / omega)
        ratio = p.soil_temperature_depth_m / damping_depth
        soil_temperature = air.day_mean_c + air.diurnal_c * math.exp(-ratio) * math.cos(
            air.solar_phase - ratio
        )
        return Conditions(
            stamp_ns=stamp_ns,
            local_time_ns=self._start_ns + stamp_ns,
            air_temperature_c=air.temperature_c,
            relative_humidity_pct=air.humidity_pct,
            wind_speed_mps=air.wind_mps,
            wind_from_deg=air.wind_from_deg,
            precipitation_mm_per_h=air.rain_mm_per_h,
            cloud_cover_pct=air.cloud_pct,
            solar_irradiance_w_per_m2=air.irradiance_w_per_m2,
            soil_water_pct=self._soil_water(stamp_ns),
            soil_temperature_c=soil_temperature,
        )
