"""The Drives, pure: the commands an action becomes, the engagement, the faults, the observation."""

from __future__ import annotations

import numpy as np
import pytest
from ds_dbw_msgs.msg import GearReport, SteeringReport
from std_msgs.msg import Bool, String

from acres_bridge.convert.maxxum import guidance_from_twist
from acres_bridge.gym.drive import GEAR_L, MaxxumDrive, PolarisDrive, drive_for


def gear_report(value: int) -> GearReport:
    report = GearReport()
    report.gear.value = value
    return report


def test_the_polaris_is_enabled_then_shifted_then_driven():
    drive = PolarisDrive()
    first = drive.engage({})
    assert first is not None
    assert [topic for topic, _ in first] == ["/vehicle/enable", "/vehicle/ulc/cmd", "/vehicle/steering/cmd"]
    enabled = {"/vehicle/dbw_enabled": Bool(data=True), "/vehicle/gear/report": gear_report(0)}
    second = drive.engage(enabled)
    assert second is not None
    assert second[0][0] == "/vehicle/gear/cmd"
    assert second[0][1].cmd.value == GEAR_L
    assert drive.engage({**enabled, "/vehicle/gear/report": gear_report(GEAR_L)}) is None
    (_, ulc), (_, steering) = drive.commands(drive.check_action([2.5, -0.1]))
    assert (ulc.cmd, ulc.enable, steering.cmd, steering.enable) == (2.5, True, pytest.approx(-0.1), True)


def test_a_maxxum_action_is_cmd_vel_the_bridge_reads_back_and_the_hitch_lever():
    drive = MaxxumDrive()
    for speed, curvature in ((2.0, 0.1), (0.0, -0.15), (0.05, 0.2)):
        (_, twist), (_, lever) = drive.commands(drive.check_action([speed, curvature, 0.4]))
        guidance = guidance_from_twist(twist, max_speed_mps=11.0)
        assert (guidance.speed_mps, guidance.curvature_1pm) == pytest.approx((speed, curvature))
        assert lever.data == pytest.approx(0.4)


def test_the_maxxum_is_engaged_when_its_implement_state_shows_it_down_with_the_pto_on():
    drive = MaxxumDrive()
    raised = {"implement/state": String(data='{"raised": true, "pto_on": false}')}
    commands = drive.engage(raised)
    assert commands is not None
    assert [topic for topic, _ in commands] == ["hitch/raise_cmd", "pto/cmd", "cmd_vel", "hitch/lever_cmd"]
    assert (commands[0][1].data, commands[1][1].data) == (False, True)
    assert drive.engage({"implement/state": String(data='{"raised": false, "pto_on": true}')}) is None
    assert drive.engage({"implement/state": String(data="not json")}) is not None


def test_faults_count_timeouts_overrides_and_the_maxxum_s_safety_brake():
    timeout, fine = SteeringReport(), SteeringReport()
    timeout.timeout = True
    assert PolarisDrive().faults({"/vehicle/steering/report": [fine, timeout, timeout]}) == 2
    stale = [String(data='{"stale": true}'), String(data='{"stale": false}'), String(data="[1]")]
    assert MaxxumDrive().faults({"implement/state": stale}) == 1


def test_the_implement_observation_reads_implement_state_and_zeros_what_is_missing():
    drive = MaxxumDrive(("implement",))
    text = '{"implement_depth_m": 0.12, "hitch_lift_deg": -3.5, "draft_n": 15000.0, "pto_rpm": 540.0}'
    observation = drive.observe({"implement/state": String(data=text)})
    assert observation["implement"].tolist() == pytest.approx([0.12, -3.5, 15.0, 540.0])
    assert drive.observe({})["implement"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert drive.observe({"implement/state": String(data='{"pto_rpm": "fast"}')})["implement"][3] == 0.0


def test_unknown_vehicles_and_observations_are_refused():
    with pytest.raises(ValueError, match="vehicle must be one of"):
        drive_for("combine")
    with pytest.raises(ValueError, match="observations of a polaris must be some of"):
        drive_for("polaris", ("implement",))
    assert drive_for("maxxum").observations == ("state", "implement")
    assert isinstance(drive_for("polaris", ("state", "lidar")).observation_space["lidar"].low, np.ndarray)
