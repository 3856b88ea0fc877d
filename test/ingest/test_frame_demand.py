"""FrameDemand: which sensors' frames the ingest asks the simulator for, and when it says so."""

from __future__ import annotations

from dataclasses import replace

import samples

from acres_bridge.ingest.frame_demand import FrameDemand, wanted_sensors
from acres_bridge.wire import SensorDemand, SensorKind, SensorMount


def _mount(name: str, kind: SensorKind) -> SensorMount:
    rate = 0.0 if kind == SensorKind.FRAME else 10.0
    return SensorMount(
        name=name, kind=kind, frame=name, xyz_m=(0.0, 0.0, 0.0), rpy_rad=(0.0, 0.0, 0.0), rate_hz=rate
    )


META = replace(  # a rig as SENSOR_META lists it: an INS, a LiDAR, a camera body and its camera
    samples.sensor_meta(),
    sensors=(
        _mount("imu_link", SensorKind.INS),
        _mount("lidar", SensorKind.LIDAR),
        _mount("reolink_camera", SensorKind.FRAME),
        _mount("reolink_camera_optical", SensorKind.CAMERA),
    ),
)
LIDAR, CAMERA = 1, 3


def test_the_wanted_kinds_name_their_sensors_and_nothing_else_is_wanted() -> None:
    both = {SensorKind.LIDAR: True, SensorKind.CAMERA: True}
    assert wanted_sensors(META, both) == tuple(sorted((LIDAR, CAMERA)))
    assert wanted_sensors(META, {SensorKind.LIDAR: True, SensorKind.CAMERA: False}) == (LIDAR,)
    assert wanted_sensors(META, {}) == ()
    frames_only = replace(META, sensors=tuple(m for m in META.sensors if m.kind == SensorKind.FRAME))
    assert wanted_sensors(frames_only, both) == ()


def test_a_set_is_sent_when_it_changes_and_again_to_a_new_session() -> None:
    sent: list[SensorDemand] = []
    demand = FrameDemand(lambda agent, message: sent.append(message) or True)
    kinds = {SensorKind.LIDAR: False, SensorKind.CAMERA: False}
    demand.update([META, None], lambda agent: kinds)  # an agent without its SENSOR_META yet: nothing
    demand.update([META, None], lambda agent: kinds)
    kinds[SensorKind.LIDAR] = True
    demand.update([META, None], lambda agent: kinds)
    demand.forget()
    demand.update([META, None], lambda agent: kinds)
    assert sent == [
        SensorDemand(agent=0, sensors=()),
        SensorDemand(agent=0, sensors=(LIDAR,)),
        SensorDemand(agent=0, sensors=(LIDAR,)),
    ]


def test_a_set_that_did_not_go_is_sent_again_and_off_sends_nothing() -> None:
    tries: list[SensorDemand] = []
    refused = FrameDemand(lambda agent, message: tries.append(message) and False)  # an older simulator
    refused.update([META], lambda agent: {})
    refused.update([META], lambda agent: {})
    assert len(tries) == 2
    off: list[SensorDemand] = []
    FrameDemand(lambda agent, message: off.append(message) or True, enabled=False).update(
        [META], lambda agent: {}
    )
    assert off == []
