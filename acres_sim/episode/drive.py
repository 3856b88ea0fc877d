"""What an agent's drive did in one step, as the episode log's AgentState and energy ledger take it:
from the Polaris's drive-by-wire report or the Maxxum's tractor model."""

from __future__ import annotations

from typing import NamedTuple

from acres_bridge.wire.dbw import DbwReport
from acres_sim.vehicles.implement import IMPLEMENTS
from acres_sim.vehicles.tractor import TractorObservation
from acres_sim.world.farm import IMPLEMENT_FOOTPRINTS, ImplementAction
from acres_sim.world.model import AgentStatus

__all__ = ["AgentDrive", "maxxum_drive", "polaris_drive"]


class AgentDrive(NamedTuple):
    """What an agent's drive did in one step, as the AgentState and the ledger take it (a tuple:
    one is made per agent and step)."""

    engine_rpm: float | None
    gear: int
    throttle_pct: float
    brake_pct: float
    dbw_enabled: bool
    safety_brake: bool
    drawbar_n: float = 0.0
    pto_w: float = 0.0
    slip: float | None = None
    lift_deg: float | None = None
    implement: ImplementAction | None = None


def polaris_drive(report: DbwReport, status: AgentStatus) -> AgentDrive:
    """The Polaris's gear and pedal outputs from its report; it has no engine speed of its own."""
    return AgentDrive(
        engine_rpm=None,
        gear=report.gear,
        throttle_pct=report.throttle_output_pct,
        brake_pct=report.brake_output_pct,
        dbw_enabled=status.dbw_enabled,
        safety_brake=False,
    )


def maxxum_drive(obs: TractorObservation, status: AgentStatus) -> AgentDrive:
    """The tractor model's controls and loads; none while the route follower or set_command drives."""
    if status.autopilot or status.manual:
        return AgentDrive(
            engine_rpm=None, gear=0, throttle_pct=0.0, brake_pct=0.0, dbw_enabled=False, safety_brake=False
        )
    implement = IMPLEMENTS.get(obs.implement)
    footprint = IMPLEMENT_FOOTPRINTS.get(obs.implement)
    action = None
    if implement is not None and footprint is not None:
        tills = implement.tillage and obs.implement_depth_m > 0.0
        cuts = not implement.tillage and obs.pto_on and not obs.raised
        if tills or cuts:
            action = ImplementAction(
                footprint=footprint, depth_m=obs.implement_depth_m, tills=tills, cuts=cuts
            )
    return AgentDrive(
        engine_rpm=obs.engine_rpm,
        gear=0,
        throttle_pct=100.0 * obs.pedal,
        brake_pct=100.0 * obs.brake,
        dbw_enabled=not obs.stale,
        safety_brake=obs.stale,
        drawbar_n=obs.draft_n,
        pto_w=1000.0 * obs.pto_kw,
        slip=obs.wheel_slip,
        lift_deg=obs.hitch_lift_deg,
        implement=action,
    )
