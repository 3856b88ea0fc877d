"""The tractor's J1939 group, the controller frames it accepts, and the frame codec behind both."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acres_bridge.wire.can import CanFrame, decode_datagram, encode_datagram
from acres_sim.clock import PHYSICS_DT_S
from acres_sim.errors import ParamsError
from acres_sim.vehicles import j1939, kinematics
from acres_sim.vehicles.implement import DISK_MOWER
from acres_sim.vehicles.j1939 import (
    BARRIER_ID,
    COMMAND_FRAMES,
    GLOBAL_ADDRESS,
    GROUP_SIZE,
    STATUS_FRAMES,
    TRACTOR_ADDRESS,
    FrameSpec,
    J1939Id,
    Signal,
    command_from_frame,
    decode,
    encode_frame,
    frame_spec,
    frames_from_observation,
    j1939_id,
    parse_id,
)
from acres_sim.vehicles.params import MAXXUM
from acres_sim.vehicles.tractor import Difflock, HitchMode, TractorCommand, TractorModel, TractorObservation

PROPERTY = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "can.md"
ALL_FRAMES = (*STATUS_FRAMES, *COMMAND_FRAMES)


def observe(
    command: TractorCommand, seconds: float, *, model: TractorModel | None = None
) -> TractorObservation:
    model = model if model is not None else TractorModel()
    state = kinematics.place(MAXXUM, 0.0, 0.0, 0.0)
    steps = round(seconds * 120)
    for k in range(steps):
        if k % 6 == 0:
            model.command(command)
        accel, steer = model.step(state.speed)
        state, _ = kinematics.step(state, MAXXUM, accel, steer, PHYSICS_DT_S)
    return model.observation(step=steps, speed_mps=state.speed)


@pytest.fixture(scope="module")
def working() -> TractorObservation:
    """A tractor plowing in a left turn, PTO on, rear difflock."""
    command = TractorCommand(
        pedal=0.9,
        brake=0.0,
        hand_throttle=0.2,
        curvature_1pm=0.04,
        hitch_raise=False,
        hitch_lever=0.1,
        pto_on=True,
        difflock=Difflock.REAR,
    )
    return observe(command, 12.0)


def signals(frames: tuple[CanFrame, ...]) -> dict[str, dict[str, float | None]]:
    decoded = {}
    for frame in frames:
        d = decode(frame)
        assert d is not None
        decoded[d.name] = dict(d.signals)
    return decoded


# ---- the group -------------------------------------------------------------------------------------


def test_the_group_has_13_frames_with_29_bit_ids(working):
    frames = frames_from_observation(working)
    assert len(frames) == GROUP_SIZE == 13
    assert len({f.can_id for f in frames}) == 13
    for frame in frames:
        assert (frame.is_extended, frame.is_rtr, frame.is_error) == (True, False, False)
        assert 0 <= frame.can_id < 1 << 29
        assert (frame.dlc, len(frame.data)) == (8, 8)
        assert (frame.step, frame.stamp_ns) == (working.step, working.stamp_ns)
    assert decode_datagram(encode_datagram(frames)) == frames


def test_the_spec_identifier_style():
    frames = frames_from_observation(observe(TractorCommand(), 0.1))
    assert 0x18FF1580 in {f.can_id for f in frames}
    assert f"{419370368:#x}" == "0x18ff1580"
    assert parse_id(0x18FF1580) == J1939Id(priority=6, pgn=0xFF15, source=TRACTOR_ADDRESS, destination=None)
    # The spec's can/rx example decodes as the tractor's proprietary group 0xFF15.
    example = CanFrame(can_id=419370368, data=bytes([58, 250, 250, 79, 250, 128, 250, 250]), dlc=8)
    decoded = decode(example)
    assert decoded is not None
    assert (decoded.name, decoded.pgn, decoded.source) == ("POWER", 0xFF15, 0x80)


def test_standard_groups_use_their_pgns_and_proprietary_ones_pgn_ff00_to_ffff():
    pgns = {spec.name: spec.pgn for spec in STATUS_FRAMES}
    assert pgns["EEC1"] == 61444
    assert pgns["EEC2"] == 61443
    assert pgns["EBC1"] == 61441
    assert pgns["WBSD"] == 65096
    assert pgns["GBSD"] == 65097
    assert pgns["MSS"] == 61474
    assert pgns["RHS"] == 65093
    assert pgns["RPTO"] == 65091
    assert pgns["GMS"] == 44032
    proprietary = [spec for spec in STATUS_FRAMES if spec.pgn >= 0xFF00]
    assert [spec.pgn for spec in proprietary] == [0xFF12, 0xFF13, 0xFF14, 0xFF15]
    assert all(spec.priority == 6 and spec.source == TRACTOR_ADDRESS for spec in proprietary)


def test_the_group_shows_the_observation(working):
    o = working
    s = signals(frames_from_observation(o))
    assert o.speed_mps > 1.0
    assert o.implement_depth_m > 0.0
    assert o.pto_on
    assert s["EEC1"]["engine_speed_rpm"] == pytest.approx(o.engine_rpm, abs=0.0625)
    assert s["EEC1"]["actual_torque_pct"] == pytest.approx(100 * o.engine_load, abs=0.5)
    assert s["EEC1"]["drivers_demand_torque_pct"] == 90.0
    assert s["EEC1"]["torque_mode"] == 1
    assert s["EEC2"]["accelerator_pedal_pct"] == 90.0
    assert s["EEC2"]["remote_accelerator_pct"] == 20.0
    assert s["EBC1"]["brake_pedal_pct"] == 0.0
    assert s["WBSD"]["wheel_speed_mps"] == pytest.approx(o.wheel_speed_mps, abs=0.0005)
    assert s["WBSD"]["wheel_distance_m"] == pytest.approx(o.wheel_distance_m, abs=0.0005)
    assert (s["WBSD"]["direction"], s["WBSD"]["key_switch"], s["WBSD"]["start_stop"]) == (1, 1, None)
    assert s["GBSD"]["ground_speed_mps"] == pytest.approx(o.speed_mps, abs=0.0005)
    assert s["GBSD"]["ground_distance_m"] == pytest.approx(o.distance_m, abs=0.0005)
    assert s["MSS"]["selected_speed_mps"] == s["GBSD"]["ground_speed_mps"]
    assert (s["MSS"]["speed_source"], s["MSS"]["exit_code"]) == (1, 0)
    assert s["RHS"]["hitch_position_pct"] == pytest.approx(100 * o.hitch_position, abs=0.2)
    assert s["RHS"]["draft_n"] == pytest.approx(o.draft_n, abs=5.0)
    assert s["RHS"]["in_work"] == 1
    assert s["RHS"]["lower_link_force_pct"] == pytest.approx(100 * o.draft_n / 40_000, abs=0.4)
    assert s["RPTO"]["pto_speed_rpm"] == pytest.approx(o.pto_rpm, abs=0.0625)
    assert (s["RPTO"]["pto_set_point_rpm"], s["RPTO"]["engagement"], s["RPTO"]["mode_1000"]) == (540.0, 1, 0)
    # ISO 11783 counts a right turn positive: this left turn is negative on the bus.
    assert s["GMS"]["estimated_curvature_1pm"] == pytest.approx(-o.curvature_1pm, abs=0.000125)
    assert s["GMS"]["estimated_curvature_1pm"] < 0.0
    assert (s["GMS"]["steering_ready"], s["GMS"]["limit_status"], s["GMS"]["exit_code"]) == (1, 0, 0)
    assert s["DRIVE"] == pytest.approx(
        {
            "pedal_pct": 90.0,
            "brake_pct": 0.0,
            "hand_throttle_pct": 20.0,
            "difflock": 1,
            "safety_brake": 0,
            "accel_mps2": o.accel_mps2,
            "engine_set_rpm": o.engine_set_rpm,
        },
        abs=0.0625,
    )
    assert s["STEER"]["road_wheel_angle_rad"] == pytest.approx(o.steering_angle_rad, abs=0.00005)
    assert s["STEER"]["curvature_command_1pm"] == pytest.approx(0.04, abs=0.00005)
    assert s["HITCH"]["lift_deg"] == pytest.approx(o.hitch_lift_deg, abs=1 / 256)
    assert s["HITCH"]["working_depth_m"] == pytest.approx(o.implement_depth_m, abs=0.00005)
    assert (s["HITCH"]["hitch_mode"], s["HITCH"]["raise_command"], s["HITCH"]["raised"]) == (0, 0, 0)
    assert s["POWER"]["drawbar_power_kw"] == pytest.approx(o.drawbar_kw, abs=0.005)
    assert s["POWER"]["engine_power_kw"] == pytest.approx(o.engine_kw, abs=0.005)
    assert s["POWER"]["wheel_slip_pct"] == pytest.approx(100 * o.wheel_slip, abs=0.2)
    assert s["POWER"]["implement_code"] == 1


def test_a_stale_tractor_says_so_on_the_bus():
    o = observe(TractorCommand(curvature_1pm=-1.0), 2.0)
    assert o.stale
    s = signals(frames_from_observation(o))
    assert s["DRIVE"]["safety_brake"] == 1
    assert s["MSS"]["exit_code"] == 0b000101  # remote command timeout
    assert s["GMS"]["exit_code"] == 0b000101
    assert s["EBC1"]["brake_pedal_pct"] == 100.0
    assert s["HITCH"]["raised"] == 1
    assert s["RHS"]["in_work"] == 0
    # Locked to the right: ISO right-positive, so the curvature is limited from above.
    assert s["GMS"]["limit_status"] == 0b010
    assert s["STEER"]["at_angle_limit"] == 1


def test_a_left_lock_limits_the_iso_curvature_from_below():
    s = signals(frames_from_observation(observe(TractorCommand(curvature_1pm=1.0), 2.0)))
    assert s["GMS"]["limit_status"] == 0b011


def test_draft_and_float_modes_on_the_bus():
    for mode, code in ((HitchMode.DRAFT, 1), (HitchMode.FLOAT, 2)):
        s = signals(frames_from_observation(observe(TractorCommand(hitch_mode=mode), 0.1)))
        assert s["HITCH"]["hitch_mode"] == code


def test_a_1000_rpm_pto_and_the_distance_wrap():
    o = observe(
        TractorCommand(brake=1.0, hand_throttle=1.0, pto_on=True),
        2.0,
        model=TractorModel(implement=DISK_MOWER),
    )
    s = signals(frames_from_observation(replace(o, distance_m=4_211_081.216 + 12.5)))
    assert (s["RPTO"]["mode_1000"], s["RPTO"]["pto_set_point_rpm"]) == (1, 1000.0)
    assert s["POWER"]["pto_power_kw"] == pytest.approx(o.pto_kw, abs=0.005)
    assert s["POWER"]["implement_code"] == 2
    assert s["GBSD"]["ground_distance_m"] == pytest.approx(12.5)


# ---- the codec: round trips ------------------------------------------------------------------------


def signal_values(spec: FrameSpec) -> st.SearchStrategy[dict[str, float | None]]:
    return st.fixed_dictionaries(
        {
            s.name: st.none() | (st.integers(0, s.valid_max) if s.discrete else st.floats(s.low, s.high))
            for s in spec.signals
        }
    )


@pytest.mark.parametrize("spec", ALL_FRAMES, ids=lambda spec: spec.name)
@PROPERTY
@given(data=st.data())
def test_values_round_trip_within_the_resolution(spec, data):
    values = data.draw(signal_values(spec))
    frame = encode_frame(spec, values, step=7, stamp_ns=58_333_333)
    decoded = decode(frame)
    assert decoded is not None
    assert decoded.name == spec.name
    for signal in spec.signals:
        sent, got = values[signal.name], decoded.signals[signal.name]
        if sent is None:
            assert got is None
        else:
            assert got is not None
            assert abs(got - sent) <= signal.scale / 2 + 1e-9 * max(1.0, abs(sent))
    # Encoding the decoded values gives the same bytes again.
    assert encode_frame(spec, decoded.signals, step=7, stamp_ns=58_333_333) == frame


@pytest.mark.parametrize("spec", ALL_FRAMES, ids=lambda spec: spec.name)
@PROPERTY
@given(data=st.data())
def test_valid_raw_values_round_trip_bit_exactly(spec, data):
    word = (1 << 64) - 1
    for signal in spec.signals:
        raw = data.draw(st.integers(0, signal.valid_max) | st.just(signal.mask))
        word = (word & ~(signal.mask << signal.start)) | (raw << signal.start)
    frame = CanFrame(can_id=spec.can_id, data=word.to_bytes(8, "little"), dlc=8)
    decoded = decode(frame)
    assert decoded is not None
    assert encode_frame(spec, decoded.signals).data == frame.data


def test_signals_of_a_group_do_not_overlap_and_fit_8_bytes():
    for spec in ALL_FRAMES:
        used = 0
        for signal in spec.signals:
            bits = signal.mask << signal.start
            assert bits < 1 << 64, (spec.name, signal.name)
            assert not used & bits, (spec.name, signal.name)
            used |= bits


def test_not_available_and_unused_bits_are_all_ones():
    frame = encode_frame(frame_spec("EEC1"), {})
    assert frame.data == b"\xff" * 8
    assert set(decode(frame).signals.values()) == {None}


@pytest.mark.parametrize(
    ("raw", "value"), [(0xFA, 100.0), (0xFB, None), (0xFE, None), (0xFF, None), (0, 0.0)]
)
def test_indicator_values_decode_as_none(raw, value):
    frame = CanFrame(can_id=frame_spec("EBC1").can_id, data=bytes([0xFF, raw]) + b"\xff" * 6, dlc=8)
    assert decode(frame).signals["brake_pedal_pct"] == value


def test_values_beyond_the_range_are_sent_as_the_limit():
    spec = frame_spec("GBSD")
    low = decode(encode_frame(spec, {"ground_speed_mps": -3.0})).signals
    high = decode(encode_frame(spec, {"ground_speed_mps": 1e9})).signals
    assert (low["ground_speed_mps"], high["ground_speed_mps"]) == (0.0, 64.255)


def test_signal_ranges_follow_j1939():
    assert Signal("a", 1).valid_max == 0xFA
    assert Signal("a", 1, length=16).valid_max == 0xFAFF
    assert Signal("a", 1, length=32).valid_max == 0xFAFFFFFF
    assert Signal("a", 1, length=4).valid_max == 14
    rpm = frame_spec("EEC1").signal("engine_speed_rpm")
    assert (rpm.low, rpm.high) == (0.0, 8031.875)
    draft = frame_spec("RHS").signal("draft_n")
    assert (draft.low, draft.high) == (-320_000.0, 322_550.0)


# ---- identifiers -----------------------------------------------------------------------------------


@PROPERTY
@given(
    priority=st.integers(0, 7),
    pdu_format=st.integers(0, 255),
    low=st.integers(0, 255),
    page=st.integers(0, 3),
    source=st.integers(0, 255),
)
def test_identifiers_round_trip(priority, pdu_format, low, page, source):
    pdu1 = pdu_format < 240
    pgn = (page << 16) | (pdu_format << 8) | (0 if pdu1 else low)
    can_id = j1939_id(priority=priority, pgn=pgn, source=source, destination=low)
    assert can_id < 1 << 29
    assert parse_id(can_id) == J1939Id(priority, pgn, source, low if pdu1 else None)


def test_a_pdu1_group_carries_its_destination():
    gms = frame_spec("GMS")
    assert gms.can_id == 0x0CACFF80
    assert parse_id(gms.can_id) == J1939Id(3, 0xAC00, TRACTOR_ADDRESS, GLOBAL_ADDRESS)
    gsc = frame_spec("GSC")
    assert gsc.can_id == 0x0CAD80FF


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"priority": 8, "pgn": 0xF004, "source": 0},
            r"J1939 id: priority 8, PGN 0xf004, source 0x0 out of range",
        ),
        ({"priority": 3, "pgn": 1 << 18, "source": 0}, r"out of range"),
        ({"priority": 3, "pgn": 0xF004, "source": 256}, r"out of range"),
        ({"priority": 3, "pgn": 0xAC12, "source": 0}, r"the PDU1 PGN 0xac12 must end in 00"),
    ],
)
def test_j1939_id_refuses_bad_parts(kwargs, message):
    with pytest.raises(ParamsError, match=message):
        j1939_id(**kwargs)


# ---- decode: what is not ours ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "frame",
    [
        CanFrame(can_id=0x18FEF100, data=bytes(8), dlc=8),  # CCVS1: not in the tables
        CanFrame(can_id=0x123, data=bytes(8), dlc=8, is_extended=False),
        CanFrame(can_id=0x0CF00400, dlc=8, is_rtr=True),
        CanFrame(can_id=0x0CF00400, data=bytes(8), dlc=8, is_error=True),
        j1939.barrier_frame(step=5, stamp_ns=0, frames_sent=13),
    ],
    ids=["unknown_pgn", "standard_id", "remote", "error", "barrier"],
)
def test_decode_ignores_frames_outside_the_tables(frame):
    assert decode(frame) is None
    assert command_from_frame(frame) is None


def test_decode_refuses_a_known_group_with_a_short_payload():
    with pytest.raises(ParamsError, match=r"EEC1 \(0x0cf00400\): expected 8 data bytes, found 4"):
        decode(CanFrame(can_id=0x0CF00400, data=bytes(4), dlc=4))


def test_encode_refuses_an_unknown_signal_or_a_non_finite_value():
    with pytest.raises(ParamsError, match=r"EEC1: unknown signal\(s\) \['rpm'\]; known: "):
        encode_frame(frame_spec("EEC1"), {"rpm": 800.0})
    with pytest.raises(
        ParamsError, match=r"J1939 signal engine_speed_rpm: expected a finite value or None, got nan"
    ):
        encode_frame(frame_spec("EEC1"), {"engine_speed_rpm": math.nan})


def test_lookups_name_what_is_known():
    with pytest.raises(KeyError, match=r"no CAN group 'ETC1'; known: "):
        frame_spec("ETC1")
    with pytest.raises(KeyError, match=r"EEC1 has no signal 'rpm'; known: "):
        frame_spec("EEC1").signal("rpm")


def test_the_barrier_is_re_exported():
    barrier = j1939.barrier_frame(step=12, stamp_ns=100_000_000, frames_sent=13)
    assert barrier.can_id == BARRIER_ID
    assert j1939.is_barrier(barrier)
    assert j1939.decode_barrier(barrier) == j1939.Barrier(12, 13)


# ---- commands from the bus -------------------------------------------------------------------------


def command_frame(name: str, values: dict[str, float | None], *, source: int = 0x1C) -> CanFrame:
    return encode_frame(frame_spec(name), values, source=source)


def test_guidance_curvature_command_flips_to_left_positive():
    frame = command_frame("GSC", {"curvature_1pm": 0.1, "curvature_status": 1})
    assert parse_id(frame.can_id) == J1939Id(3, 0xAD00, 0x1C, TRACTOR_ADDRESS)
    assert command_from_frame(frame) == TractorCommand(curvature_1pm=-0.1)
    left = command_frame("GSC", {"curvature_1pm": -0.25, "curvature_status": 1})
    assert command_from_frame(left) == TractorCommand(curvature_1pm=0.25)


@pytest.mark.parametrize(
    ("values", "destination"),
    [
        ({"curvature_1pm": 0.1, "curvature_status": 0}, TRACTOR_ADDRESS),  # not intended to steer
        ({"curvature_1pm": 0.1}, TRACTOR_ADDRESS),  # status not available
        ({"curvature_status": 1}, TRACTOR_ADDRESS),  # curvature not available
        ({"curvature_1pm": 0.1, "curvature_status": 1}, 0x13),  # for another steering controller
    ],
)
def test_guidance_commands_that_steer_nothing(values, destination):
    spec = replace(frame_spec("GSC"), destination=destination)
    assert command_from_frame(encode_frame(spec, values, source=0x1C)) is None


def test_a_global_guidance_command_steers():
    spec = replace(frame_spec("GSC"), destination=GLOBAL_ADDRESS)
    frame = encode_frame(spec, {"curvature_1pm": 0.0, "curvature_status": 1})
    assert command_from_frame(frame) == TractorCommand(curvature_1pm=0.0)


def test_hitch_and_pto_command():
    frame = command_frame("HPC", {"rear_hitch_pct": 40.0, "rear_pto_engagement": 1, "front_hitch_pct": 90.0})
    assert command_from_frame(frame) == TractorCommand(hitch_lever=0.4, pto_on=True)
    assert command_from_frame(command_frame("HPC", {"rear_pto_engagement": 0})) == TractorCommand(
        pto_on=False
    )
    assert (
        command_from_frame(command_frame("HPC", {"front_pto_engagement": 1, "rear_pto_mode_1000": 1})) is None
    )


def test_drive_command():
    frame = command_frame("DRIVE_CMD", {"pedal_pct": 36.0, "brake_pct": 0.0, "difflock": 2})
    command = command_from_frame(frame)
    assert command == TractorCommand(pedal=0.36, brake=0.0, difflock=Difflock.REAR_AND_FRONT)
    assert command.longitudinal
    assert command_from_frame(command_frame("DRIVE_CMD", {"hand_throttle_pct": 100.0})) == TractorCommand(
        hand_throttle=1.0
    )
    assert command_from_frame(command_frame("DRIVE_CMD", {})) is None


def test_implement_command():
    frame = command_frame("IMPLEMENT_CMD", {"raise": 0, "hitch_mode": 1, "depth_stop_m": 0.22})
    assert command_from_frame(frame) == TractorCommand(
        hitch_raise=False, hitch_mode=HitchMode.DRAFT, depth_stop_m=0.22
    )
    deep = command_from_frame(command_frame("IMPLEMENT_CMD", {"depth_stop_m": 5.0}))
    assert deep == TractorCommand(depth_stop_m=1.0)  # the most a depth stop is set to
    assert command_from_frame(command_frame("IMPLEMENT_CMD", {"raise": 1})) == TractorCommand(
        hitch_raise=True
    )


def test_status_frames_command_nothing(working):
    assert all(command_from_frame(frame) is None for frame in frames_from_observation(working))


def test_bus_commands_drive_the_tractor():
    model = TractorModel()
    state = kinematics.place(MAXXUM, 0.0, 0.0, 0.0)
    drive = command_frame("DRIVE_CMD", {"pedal_pct": 40.0, "brake_pct": 0.0})
    steer = command_frame("GSC", {"curvature_1pm": -0.05, "curvature_status": 1})  # ISO: left
    for k in range(120 * 10):
        if k % 12 == 0:  # 10 Hz, as ISO 11783 sends them
            for frame in (drive, steer):
                command = command_from_frame(frame)
                assert command is not None
                model.command(command)
        accel, wheel = model.step(state.speed)
        state, _ = kinematics.step(state, MAXXUM, accel, wheel, PHYSICS_DT_S)
    assert not model.stale
    assert state.speed > 3.0
    assert state.yaw > 0.5  # turned left
    # Guidance alone keeps nothing alive: 0.25 s after the last drive command the safety brake holds.
    for _ in range(31):
        model.command(command_from_frame(steer))
        model.step(state.speed)
    assert model.stale


# ---- docs/can.md lists every frame ------------------------------------------------------------------


def test_docs_list_every_frame_and_signal():
    text = DOCS.read_text(encoding="utf-8")
    for spec in ALL_FRAMES:
        assert re.search(rf"`?0x{spec.can_id:08X}`?", text), spec.name
        for signal in spec.signals:
            assert f"`{signal.name}`" in text, (spec.name, signal.name)
    assert f"0x{BARRIER_ID:08X}" in text
