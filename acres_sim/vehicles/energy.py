"""Where an agent's energy goes: the EnergyLedger of /sim/agent_states, from the motion and the powertrain.

An ``EnergyMeter`` per agent is stepped once per physics step with the speed before and after the
step and what the powertrain did besides moving the vehicle (brake, implement, soil). It keeps the
cumulative sums of the ledger since the start of the agent's episode (``reset``). The model is
simple and closes exactly, step by step:

Wheels
    The net force along the body x axis is m (v1 - v0) / dt, and the distance the mean speed
    (v0 + v1) / 2 over dt: their product is the change of kinetic energy, exactly. Against the
    motion act rolling resistance (a coefficient times the weight), aerodynamic drag (a constant
    times the mean speed squared) and the implement's draft (``drawbar_force_n``). The wheels thus
    did W = dKE + (rolling + drag + draft) * distance, plus the soil's deformation work
    (``soil_work_j``, acres_sim.world.farm), which counts as rolling loss. The brakes dissipated at least
    what the brake actuator's force (``brake`` times the full-brake deceleration times the mass) did
    over the distance, and at least -W; the driven wheels did the rest, so that
    ``traction_work_j - brake_loss_j = W``. Aerodynamic drag has no field in the message: it is
    ``drag_loss_j`` of ``EnergyLedger``, and
    ``traction_work_j - brake_loss_j - rolling_loss_j - drawbar_work_j - drag_loss_j`` is the
    change of kinetic energy since the start of the episode (to rounding). Slopes are not in the
    balance, as the powertrain models do not model them.
Slip
    The slip ratio grows linearly with the traction force to ``slip_at_traction_limit`` at the
    traction limit (a coefficient times the weight), as acres_sim.vehicles.tractor models it; a caller that
    knows the slip (the tractor model) gives it. The driven wheels turn faster than the ground
    moves: the slip loss is the traction work times s / (1 - s).
Engine
    The crankshaft delivers the wheels' work and the slip loss through the driveline efficiency,
    the PTO work, the hitch's lifting work through the hydraulic efficiency and the accessories'
    constant power. The engine runs for the whole session (idling while the vehicle stands). Its
    speed follows a continuously variable transmission's schedule, idle plus the span to the rated
    speed times the square root of the power beyond the accessories' over the rated power, with a
    lag of ``engine_tau_s``;
    a caller that knows the speed (the tractor model) gives it.
Fuel
    A Willans line: the fuel's power is the idle fuel flow's plus the engine power over the marginal
    efficiency; its volume from the lower heating value.

``POLARIS_ENERGY`` takes its resistance and brake constants from acres_sim.vehicles.powertrain and
``MAXXUM_ENERGY`` from acres_sim.vehicles.tractor, so that the ledger agrees with the forces that moved the
vehicle; the engine and fuel constants are assumed (documented at each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Final

from acres_sim.clock import PHYSICS_DT_S
from acres_sim.errors import ParamsError, require_finite
from acres_sim.vehicles.kinematics import STANDARD_GRAVITY
from acres_sim.vehicles.params import POLARIS, MaxxumParams, PolarisParams, VehicleParams
from acres_sim.vehicles.powertrain import PowertrainParams
from acres_sim.vehicles.tractor import TractorParams

__all__ = [
    "DIESEL_LHV_J_PER_L",
    "GASOLINE_LHV_J_PER_L",
    "MAXXUM_ENERGY",
    "POLARIS_ENERGY",
    "EnergyLedger",
    "EnergyMeter",
    "EnergyParams",
    "energy_params",
]

GASOLINE_LHV_J_PER_L: Final = 32.2e6  # 43.4 MJ/kg at 0.742 kg/l
DIESEL_LHV_J_PER_L: Final = 35.8e6  # 42.6 MJ/kg at 0.84 kg/l
_SECONDS_PER_HOUR: Final = 3600.0


@dataclass(frozen=True, kw_only=True)
class EnergyParams:
    """The constants of one vehicle's energy model (the module docstring gives the model).

    ``rolling_resistance`` and ``traction_coefficient`` are fractions of the weight;
    ``drag_n_s2_per_m2`` the drag force per speed squared; ``brake_decel_mps2`` the deceleration of
    the full brake; efficiencies are fractions in (0, 1].
    """

    rolling_resistance: float
    drag_n_s2_per_m2: float
    brake_decel_mps2: float
    traction_coefficient: float
    slip_at_traction_limit: float
    driveline_efficiency: float
    hydraulic_efficiency: float
    accessory_power_w: float
    idle_rpm: float
    rated_rpm: float
    rated_power_w: float
    engine_tau_s: float
    idle_fuel_l_per_h: float
    marginal_efficiency: float
    fuel_lhv_j_per_l: float

    def __post_init__(self) -> None:
        """Every value finite and >= 0; those that divide or scale > 0; efficiencies and slip below 1."""
        require_finite(self, non_negative=[f.name for f in fields(self)])
        for name in (
            "brake_decel_mps2",
            "traction_coefficient",
            "driveline_efficiency",
            "hydraulic_efficiency",
            "idle_rpm",
            "rated_power_w",
            "engine_tau_s",
            "marginal_efficiency",
            "fuel_lhv_j_per_l",
        ):
            if getattr(self, name) <= 0.0:
                raise ParamsError(f"EnergyParams.{name}: expected a value > 0, got {getattr(self, name)!r}")
        for name in ("driveline_efficiency", "hydraulic_efficiency", "marginal_efficiency"):
            if getattr(self, name) > 1.0:
                raise ParamsError(f"EnergyParams.{name}: expected at most 1, got {getattr(self, name)!r}")
        if self.slip_at_traction_limit >= 1.0:
            raise ParamsError(
                f"EnergyParams.slip_at_traction_limit: expected below 1, got {self.slip_at_traction_limit!r}"
            )
        if self.rated_rpm <= self.idle_rpm:
            raise ParamsError(
                f"EnergyParams.rated_rpm: expected above idle_rpm ({self.idle_rpm}), got {self.rated_rpm!r}"
            )


def _polaris_energy(powertrain: PowertrainParams, vehicle: VehicleParams) -> EnergyParams:
    """The Polaris: resistance and brakes of acres_sim.vehicles.powertrain; a 999 cm^3 gasoline twin of 61 kW
    at 6500 r/min idling at 1200 r/min on 0.7 l/h, a CVT driveline of 0.80, 0.6 of traction on farm
    tracks, 400 W for the drive-by-wire kit and the sensors (all assumed)."""
    return EnergyParams(
        rolling_resistance=powertrain.rolling_resistance_mps2 / STANDARD_GRAVITY,
        drag_n_s2_per_m2=powertrain.drag_per_m * vehicle.mass_kg,
        brake_decel_mps2=powertrain.brake_decel_mps2,
        traction_coefficient=0.6,
        slip_at_traction_limit=0.15,
        driveline_efficiency=0.80,
        hydraulic_efficiency=0.7,
        accessory_power_w=400.0,
        idle_rpm=1200.0,
        rated_rpm=6500.0,
        rated_power_w=61_000.0,
        engine_tau_s=0.3,
        idle_fuel_l_per_h=0.7,
        marginal_efficiency=0.30,
        fuel_lhv_j_per_l=GASOLINE_LHV_J_PER_L,
    )


def _maxxum_energy(tractor: TractorParams) -> EnergyParams:
    """The Maxxum: rolling resistance, traction (open differential), slip, transmission, accessories,
    engine speeds and power of acres_sim.vehicles.tractor; drag of 0.5 * 1.2 kg/m^3 * 0.9 * 6.4 m^2; a diesel
    idling on 2.5 l/h with a marginal efficiency of 0.40, hydraulics of 0.7 (assumed)."""
    return EnergyParams(
        rolling_resistance=tractor.rolling_resistance,
        drag_n_s2_per_m2=0.5 * 1.2 * 0.9 * 6.4,
        brake_decel_mps2=tractor.brake_decel_mps2,
        traction_coefficient=tractor.traction_coefficient * tractor.difflock_traction[0],
        slip_at_traction_limit=tractor.slip_at_traction_limit,
        driveline_efficiency=tractor.transmission_efficiency,
        hydraulic_efficiency=0.7,
        accessory_power_w=tractor.accessory_kw * 1000.0,
        idle_rpm=tractor.idle_rpm,
        rated_rpm=tractor.rated_rpm,
        rated_power_w=tractor.rated_power_kw * 1000.0,
        engine_tau_s=tractor.engine_tau_s,
        idle_fuel_l_per_h=2.5,
        marginal_efficiency=0.40,
        fuel_lhv_j_per_l=DIESEL_LHV_J_PER_L,
    )


POLARIS_ENERGY: Final = _polaris_energy(PowertrainParams(), POLARIS)
MAXXUM_ENERGY: Final = _maxxum_energy(TractorParams())


def energy_params(vehicle: VehicleParams) -> EnergyParams:
    """The energy constants of a vehicle: a Polaris (PolarisParams) or a Maxxum (MaxxumParams), with
    the models the world drives it with."""
    if isinstance(vehicle, MaxxumParams):
        return _maxxum_energy(TractorParams(vehicle=vehicle))
    if isinstance(vehicle, PolarisParams):
        return _polaris_energy(PowertrainParams(), vehicle)
    raise ParamsError(
        f"energy_params: expected PolarisParams or MaxxumParams, got {type(vehicle).__name__} "
        f"('{vehicle.vehicle}')"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EnergyLedger:
    """The EnergyLedger message's fields (J, l, W; sums since the start of the episode), plus
    ``drag_loss_j``, the aerodynamic drag's work, which the message has no field for."""

    fuel_used_l: float = 0.0
    fuel_energy_j: float = 0.0
    engine_work_j: float = 0.0
    traction_work_j: float = 0.0
    drawbar_work_j: float = 0.0
    pto_work_j: float = 0.0
    hitch_work_j: float = 0.0
    brake_loss_j: float = 0.0
    rolling_loss_j: float = 0.0
    slip_loss_j: float = 0.0
    engine_power_w: float = 0.0
    drag_loss_j: float = 0.0


class EnergyMeter:
    """The ledger of one agent, stepped once per physics step. Plain float arithmetic: it runs for
    every agent in every step, where numpy's per-call cost would dominate."""

    def __init__(self, params: EnergyParams, *, mass_kg: float) -> None:
        """A meter for a vehicle of ``mass_kg`` (with what it carries), at the start of an episode."""
        if not (math.isfinite(mass_kg) and mass_kg > 0.0):
            raise ParamsError(f"EnergyMeter mass_kg: expected a finite value > 0, got {mass_kg!r}")
        self._p = params
        self._mass = mass_kg
        self._weight = mass_kg * STANDARD_GRAVITY
        self._fuel_idle_w = params.idle_fuel_l_per_h * params.fuel_lhv_j_per_l / _SECONDS_PER_HOUR
        self.reset()

    def reset(self) -> None:
        """Zero the sums (a new episode of the agent); the engine speed goes back to idle."""
        self._fuel_energy = 0.0
        self._engine = 0.0
        self._traction = 0.0
        self._drawbar = 0.0
        self._pto = 0.0
        self._hitch = 0.0
        self._brake = 0.0
        self._rolling = 0.0
        self._slip_loss = 0.0
        self._drag = 0.0
        self._power = 0.0
        self._slip = 0.0
        self._rpm = self._p.idle_rpm

    @property
    def params(self) -> EnergyParams:
        """The constants."""
        return self._p

    @property
    def mass_kg(self) -> float:
        """The mass the meter accelerates, in kg."""
        return self._mass

    @property
    def slip(self) -> float:
        """The slip ratio of the driven wheels in the last step (0 .. 1)."""
        return self._slip

    @property
    def engine_rpm(self) -> float:
        """The engine speed after the last step, in r/min."""
        return self._rpm

    @property
    def ledger(self) -> EnergyLedger:
        """The sums since the start of the episode and the last step's engine power."""
        return EnergyLedger(
            fuel_used_l=self._fuel_energy / self._p.fuel_lhv_j_per_l,
            fuel_energy_j=self._fuel_energy,
            engine_work_j=self._engine,
            traction_work_j=self._traction,
            drawbar_work_j=self._drawbar,
            pto_work_j=self._pto,
            hitch_work_j=self._hitch,
            brake_loss_j=self._brake,
            rolling_loss_j=self._rolling,
            slip_loss_j=self._slip_loss,
            engine_power_w=self._power,
            drag_loss_j=self._drag,
        )

    def ledger_values(self) -> tuple[float, ...]:
        """The EnergyLedger message's fields in its order (fuel_used_l .. engine_power_w): ``ledger``
        without building it, for the 120 Hz channel."""
        return (
            self._fuel_energy / self._p.fuel_lhv_j_per_l,
            self._fuel_energy,
            self._engine,
            self._traction,
            self._drawbar,
            self._pto,
            self._hitch,
            self._brake,
            self._rolling,
            self._slip_loss,
            self._power,
        )

    def step(
        self,
        *,
        speed_before_mps: float,
        speed_after_mps: float,
        dt_s: float = PHYSICS_DT_S,
        brake: float = 0.0,
        soil_work_j: float = 0.0,
        drawbar_force_n: float = 0.0,
        pto_power_w: float = 0.0,
        hitch_work_j: float = 0.0,
        slip: float | None = None,
        engine_rpm: float | None = None,
    ) -> None:
        """Account for one step of ``dt_s`` in which the signed speed went from ``speed_before_mps``
        to ``speed_after_mps``.

        ``brake`` is the brake actuator's output (0 .. 1 of the full brake); ``soil_work_j`` the
        soil's deformation work under the tyres in this step; ``drawbar_force_n`` the implement's
        draft; ``pto_power_w`` the PTO's power; ``hitch_work_j`` the work of lifting the implement in
        this step; ``slip`` and ``engine_rpm`` the values of a model that knows them (else this
        meter's models). The inputs are trusted (the world makes them).
        """
        p = self._p
        v0, v1 = speed_before_mps, speed_after_mps
        mean = 0.5 * (v0 + v1)
        distance = abs(mean) * dt_s
        kinetic = 0.5 * self._mass * (v1 * v1 - v0 * v0)
        rolling = p.rolling_resistance * self._weight * distance + soil_work_j
        drag = p.drag_n_s2_per_m2 * mean * mean * distance
        drawbar = drawbar_force_n * distance
        wheels = kinetic + rolling + drag + drawbar
        braking = max(brake * p.brake_decel_mps2 * self._mass * distance, -wheels, 0.0)
        traction = wheels + braking
        if slip is None:
            limit = p.traction_coefficient * self._weight
            force = traction / distance if distance > 0.0 else 0.0
            slip = p.slip_at_traction_limit * min(force / limit, 1.0)
        slip_loss = traction * slip / (1.0 - slip)
        hitch = max(hitch_work_j, 0.0)
        pto = max(pto_power_w, 0.0) * dt_s
        engine = (
            (traction + slip_loss) / p.driveline_efficiency
            + pto
            + hitch / p.hydraulic_efficiency
            + p.accessory_power_w * dt_s
        )
        power = engine / dt_s

        self._traction += traction
        self._brake += braking
        self._rolling += rolling
        self._drag += drag
        self._drawbar += drawbar
        self._pto += pto
        self._hitch += hitch
        self._slip_loss += slip_loss
        self._engine += engine
        self._fuel_energy += (self._fuel_idle_w + power / p.marginal_efficiency) * dt_s
        self._power = power
        self._slip = slip
        if engine_rpm is None:
            load = min(max(power - p.accessory_power_w, 0.0) / p.rated_power_w, 1.0)
            target = p.idle_rpm + (p.rated_rpm - p.idle_rpm) * math.sqrt(load)
            self._rpm += (target - self._rpm) * (1.0 - math.exp(-dt_s / p.engine_tau_s))
        else:
            self._rpm = engine_rpm
