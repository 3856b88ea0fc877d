"""The world: stepping, the episode clock, resets, commands and determinism."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from acres_bridge.wire.vocabulary import SimState, Source, Vehicle
from acres_sim.clock import ins_due, step_stamp_ns
from acres_sim.errors import AgentError, ParamsError, WorldStateError
from acres_sim.vehicles.tractor import TractorCommand
from acres_sim.world.model import AgentSpec, Pose2D, StepOutput, World

START = datetime(2026, 10, 2, 7, 23, 9, tzinfo=UTC)


def _world(seed: int = 42, **kwargs: Any) -> World:
    kwargs.setdefault("perception", False)  # the sensors have tests of their own
    return World(seed=seed, start_utc=START, **kwargs)


@pytest.fixture
def world() -> World:
    return _world()


@pytest.fixture
def fleet() -> World:
    return _world(
        agents=(
            AgentSpec(name="polaris", autopilot=True),
            AgentSpec(name="polaris2", autopilot=True),
            AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM),
        )
    )


def _run(world: World, steps: int) -> list[StepOutput]:
    return [world.advance() for _ in range(steps)]


def test_initial_session(world: World) -> None:
    snap = world.episode_snapshot()
    assert snap.episode_id == "20261002T072309-0000"
    assert (snap.episode, snap.reset_epoch, snap.step, snap.stamp_ns, snap.episode_time_s) == (
        0,
        0,
        0,
        0,
        0.0,
    )
    assert snap.state is SimState.PLAYING
    assert (snap.lockstep, snap.seed, snap.source, snap.map, snap.agents) == (
        False,
        42,
        Source.UNREAL,
        "V03ACRE",
        ("polaris",),
    )
    assert snap.source == "unreal"
    assert int(snap.state) == 1


def test_lockstep_starts_paused_and_steps() -> None:
    world = _world(lockstep=True, source=Source.UNREAL)
    assert world.state is SimState.PAUSED
    assert world.episode_snapshot().lockstep
    assert world.episode_snapshot().source == "unreal"
    assert world.advance().step == 1


def test_episode_id_is_utc() -> None:
    local = START.astimezone(timezone(timedelta(hours=-4)))
    world = World(seed=0, start_utc=local, perception=False)
    assert world.episode_id == "20261002T072309-0000"
    assert re.fullmatch(r"\d{8}T\d{6}-\d{4}", world.episode_id)


def test_naive_start_time_is_rejected() -> None:
    with pytest.raises(ParamsError, match="timezone-aware"):
        World(seed=0, start_utc=datetime(2026, 10, 2, 7, 23, 9))


def test_steps_stamps_and_ins(fleet: World) -> None:
    outs = _run(fleet, 240)
    assert [o.step for o in outs] == list(range(1, 241))
    assert [o.stamp_ns for o in outs] == [step_stamp_ns(k) for k in range(1, 241)]
    with_ins = [o for o in outs if o.ins]
    assert len(with_ins) == 200
    assert all(ins_due(o.step) for o in with_ins)
    for o in with_ins:
        assert len(o.ins) == 3
        assert [s.step for s in o.ins] == [o.step] * 3
        assert all(s.stamp_ns == o.stamp_ns for s in o.ins)
    assert all(len(o.states) == len(o.motions) == 3 for o in outs)
    assert fleet.step == 240
    assert fleet.episode_time_s == pytest.approx(2.0)


def test_episode_time_matches_the_spec_example(world: World) -> None:
    _run(world, 1405)
    assert world.episode_snapshot().episode_time_s == pytest.approx(11.708333333)


def test_autopilot_drives_and_maxxum_stands_still(fleet: World) -> None:
    outs = _run(fleet, 10 * 120)
    last = outs[-1]
    # Both Polaris at cruise speed, or slowed for a turn.
    assert all(3.0 < s.speed <= 4.0 for s in last.states[:2])
    maxxum = fleet.agent(2)
    assert maxxum.vehicle is Vehicle.MAXXUM
    assert maxxum.state.speed == 0.0
    assert (maxxum.state.x, maxxum.state.y) == (maxxum.start.x, maxxum.start.y)
    route = fleet.route
    assert route.distance_to(last.states[0].x, last.states[0].y) < 0.5
    # The second Polaris started 25 m behind the first on the route and stays behind it.
    gap0 = (
        route.project(fleet.agent(0).start.x, fleet.agent(0).start.y)[0]
        - route.project(fleet.agent(1).start.x, fleet.agent(1).start.y)[0]
    ) % route.length
    assert gap0 == pytest.approx(25.0)
    s0, _ = route.project(last.states[0].x, last.states[0].y)
    s1, _ = route.project(last.states[1].x, last.states[1].y)
    assert 15.0 < (s0 - s1) % route.length < 35.0


def test_a_polaris_stands_parked_by_default(world: World) -> None:
    status = world.agent(0)
    assert not status.autopilot
    out = _run(world, 240)[-1]
    assert (out.states[0].x, out.states[0].y, out.states[0].speed) == (status.start.x, status.start.y, 0.0)
    report = world.dbw_report(0)
    assert (report.gear, report.flags) == (1, 0)  # P, the drive-by-wire disabled


def test_stopped_world_refuses_to_advance(world: World) -> None:
    world.set_state(SimState.STOPPED)
    with pytest.raises(WorldStateError, match="stopped"):
        world.advance()
    assert world.step == 0
    world.set_state(2)
    assert world.state is SimState.PAUSED
    world.advance()
    with pytest.raises(ParamsError, match="state 7"):
        world.set_state(7)


def test_reset_session(fleet: World) -> None:
    _run(fleet, 600)
    fleet.set_command(0, accel_mps2=-1.0, steer_rad=0.2)
    _run(fleet, 10)
    fleet.reset_session()
    snap = fleet.episode_snapshot()
    assert (snap.episode, snap.reset_epoch, snap.step) == (1, 0, 610)
    assert snap.episode_id == "20261002T072309-0001"
    assert snap.episode_time_s == 0.0
    for i in range(3):
        status = fleet.agent(i)
        assert (status.state.x, status.state.y, status.state.yaw) == pytest.approx(
            (status.start.x, status.start.y, status.start.yaw)
        )
        assert status.state.speed == 0.0
        assert status.episode == 1
    assert fleet.agent(0).autopilot  # back to its default driver
    out = fleet.advance()
    assert out.step == 611  # the clock goes on
    assert fleet.episode_time_s == pytest.approx(1 / 120, abs=1e-9)


def test_reset_agent_zero_is_a_reset_and_a_new_episode(fleet: World) -> None:
    _run(fleet, 300)
    fleet.reset_agent(0, x=38.1, y=70.0, yaw=math.pi / 2)
    snap = fleet.episode_snapshot()
    assert (snap.episode, snap.reset_epoch, snap.episode_time_s) == (1, 1, 0.0)
    status = fleet.agent(0)
    assert (status.state.x, status.state.y, status.state.yaw, status.state.speed) == (
        38.1,
        70.0,
        math.pi / 2,
        0.0,
    )
    assert status.episode == 1
    assert fleet.agent(1).episode == 0


def test_reset_other_agent_is_its_own_episode(fleet: World) -> None:
    _run(fleet, 300)
    fleet.reset_agent(2, x=0.0, y=0.0, yaw=0.0)
    snap = fleet.episode_snapshot()
    assert (snap.episode, snap.reset_epoch) == (0, 0)
    assert fleet.agent(2).episode == 1
    assert (fleet.agent(2).state.x, fleet.agent(2).state.y) == (0.0, 0.0)


def test_commands(world: World) -> None:
    world.set_command(0, accel_mps2=2.0, steer_rad=0.0)
    assert not world.agent(0).autopilot
    out = _run(world, 120)[-1]
    assert out.states[0].speed == pytest.approx(2.0)
    world.set_autopilot(0, True)
    assert world.agent(0).autopilot
    with pytest.raises(ParamsError, match="accel_mps2"):
        world.set_command(0, accel_mps2=math.nan, steer_rad=0.0)
    with pytest.raises(AgentError, match="agent index 1"):
        world.set_command(1, accel_mps2=0.0, steer_rad=0.0)
    with pytest.raises(ParamsError, match="yaw"):
        world.reset_agent(0, x=0.0, y=0.0, yaw=math.inf)


def test_agents_are_validated() -> None:
    with pytest.raises(AgentError, match="unique"):
        _world(agents=(AgentSpec(name="a"), AgentSpec(name="a")))
    with pytest.raises(AgentError, match="at least one"):
        _world(agents=())
    with pytest.raises(AgentError, match="tractor"):
        AgentSpec(name="t", vehicle="tractor")  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="non-empty"):
        AgentSpec(name="")
    assert AgentSpec(name="m", vehicle="maxxum").vehicle is Vehicle.MAXXUM  # type: ignore[arg-type]
    with pytest.raises(ParamsError, match="seed"):
        _world(seed=-1)
    with pytest.raises(ParamsError, match="source"):
        _world(source="gazebo")


def test_agent_lookup(fleet: World) -> None:
    assert fleet.agent_names == ("polaris", "polaris2", "maxxum")
    assert fleet.index_of("maxxum") == 2
    with pytest.raises(AgentError, match="tractor"):
        fleet.index_of("tractor")


def test_custom_start_pose() -> None:
    world = _world(agents=(AgentSpec(name="p", start=Pose2D(10.0, -3.0, 0.5), autopilot=False),))
    assert (world.agent(0).state.x, world.agent(0).state.y, world.agent(0).state.yaw) == (10.0, -3.0, 0.5)
    world.advance()
    assert world.agent(0).state.x == 10.0


def _scenario(seed: int) -> list[str]:
    """A session with resets and commands; every step's output as text (NaN compares equal as text)."""
    world = _world(
        seed=seed,
        agents=(AgentSpec(name="polaris"), AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM)),
    )
    out = []
    for k in range(1, 1201):
        if k == 300:
            world.set_command(1, accel_mps2=0.5, steer_rad=0.3)
        if k == 500:
            world.reset_agent(0, x=5.0, y=5.0, yaw=1.0)
        if k == 900:
            world.reset_session()
        out.append(repr(world.advance()))
    out.append(repr(world.episode_snapshot()))
    return out


def test_same_seed_same_session() -> None:
    assert _scenario(7) == _scenario(7)


def test_other_seed_other_noise_same_truth() -> None:
    a = World(seed=1, start_utc=START, perception=False)
    b = World(seed=2, start_utc=START, perception=False)
    outs_a, outs_b = _run(a, 120), _run(b, 120)
    assert [o.states for o in outs_a] == [o.states for o in outs_b]
    assert [o.ins[0].orientation for o in outs_a if o.ins] != [o.ins[0].orientation for o in outs_b if o.ins]


# ---- the tractor of a Maxxum ------------------------------------------------------------------------


def _maxxum_world() -> World:
    return _world(agents=(AgentSpec(name="maxxum", vehicle=Vehicle.MAXXUM),))


def test_a_maxxum_stands_braked_until_a_command_and_drives_with_its_pedal() -> None:
    world = _maxxum_world()
    outputs = [world.advance() for _ in range(120)]
    assert world.agent(0).state.speed == 0.0
    observations = [obs for output in outputs for _, obs in output.tractors]
    assert [obs.step for obs in observations] == list(range(12, 121, 12))  # 10 Hz
    assert all(obs.stale for obs in observations)  # the safety brake holds it
    for _ in range(240):  # commands keep coming, as the bridge sends them at 20 Hz
        if world.step % 6 == 0:
            world.apply_tractor_command(0, TractorCommand(pedal=0.3, brake=0.0, curvature_1pm=0.0))
        world.advance()
    assert world.agent(0).state.speed > 1.0
    assert not world.tractor_observation(0).stale


def test_a_maxxum_brakes_to_a_stop_when_commands_go_stale() -> None:
    world = _maxxum_world()
    for _ in range(240):
        if world.step % 6 == 0:
            world.apply_tractor_command(0, TractorCommand(pedal=0.3, brake=0.0, curvature_1pm=0.0))
        world.advance()
    moving = world.agent(0).state.speed
    assert moving > 1.0
    for _ in range(360):  # no more commands
        world.advance()
    assert world.tractor_observation(0).stale
    assert world.agent(0).state.speed == pytest.approx(0.0, abs=1e-6)


def test_a_reset_puts_the_tractor_back_to_parked() -> None:
    world = _maxxum_world()
    for _ in range(60):
        if world.step % 6 == 0:
            world.apply_tractor_command(
                0, TractorCommand(pedal=0.3, brake=0.0, hitch_raise=False, pto_on=True)
            )
        world.advance()
    assert not world.tractor_observation(0).stale
    world.reset_session()
    observation = world.tractor_observation(0)
    assert observation.stale
    assert not observation.pto_on


def test_only_a_maxxum_has_a_tractor() -> None:
    world = _world()
    with pytest.raises(AgentError, match="has no tractor model"):
        world.apply_tractor_command(0, TractorCommand(pedal=0.5))
    assert world.advance().tractors == ()


def test_the_status_says_when_set_command_drives() -> None:
    world = _maxxum_world()
    assert not world.agent(0).manual  # the tractor model holds it
    world.set_command(0, accel_mps2=0.5, steer_rad=0.0)
    assert world.agent(0).manual
    world.set_autopilot(0, True)
    assert not world.agent(0).manual
