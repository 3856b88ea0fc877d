"""Frame names of one vehicle with the frame prefix, as the spec's Frames table says."""

from __future__ import annotations

import pytest
import samples

from acres_bridge.convert.frame_names import frame_names
from acres_bridge.convert.ins import odometry

FIELDS = ["utm", "base_footprint", "imu", "oxts", "navsat", "gnss", "lidar", "camera_optical", "world", "can"]

BARE = {
    "polaris": {
        "utm": "utm",
        "base_footprint": "base_footprint",
        "imu": "imu_link",
        "oxts": "oxts_link",
        "navsat": "navsat_link",
        "gnss": "gnss_link",
        "lidar": "lidar",
        "camera_optical": "reolink_camera_optical",
        "world": "world",
        "can": "can",
    },
    "maxxum": {
        "utm": "utm",
        "base_footprint": "base_footprint",
        "imu": "imu_link",
        "oxts": "oxts_link",
        "navsat": "navsat_link",
        "gnss": "gnss_link",
        "lidar": "lidar",
        "camera_optical": "camera_optical",
        "world": "world",
        "can": "can",
    },
}

# utm, can and world never get the prefix; on the Polaris neither do imu_link and oxts_link.
NEVER_PREFIXED = {"polaris": {"utm", "can", "world", "imu", "oxts"}, "maxxum": {"utm", "can", "world"}}


def names(frames) -> dict[str, str]:
    return {field: getattr(frames, field) for field in FIELDS}


@pytest.mark.parametrize("vehicle", ["polaris", "maxxum"])
def test_without_a_prefix_the_names_are_bare(vehicle):
    frames = frame_names(vehicle=vehicle)
    assert names(frames) == BARE[vehicle]
    assert frames.prefix == ""


@pytest.mark.parametrize("vehicle", ["polaris", "maxxum"])
@pytest.mark.parametrize("prefix", ["polaris2/", "polaris2"])
def test_prefix(vehicle, prefix):
    frames = frame_names(vehicle=vehicle, frame_prefix=prefix)
    expected = {
        field: name if field in NEVER_PREFIXED[vehicle] else f"polaris2/{name}"
        for field, name in BARE[vehicle].items()
    }
    assert names(frames) == expected
    assert frames.prefix == "polaris2/"


def test_polaris_prefixed_names_spelt_out():
    frames = frame_names(vehicle="polaris", frame_prefix="polaris2/")
    assert frames.base_footprint == "polaris2/base_footprint"
    assert frames.imu == "imu_link"
    assert frames.oxts == "oxts_link"
    assert frames.navsat == "polaris2/navsat_link"
    assert frames.lidar == "polaris2/lidar"
    assert frames.camera_optical == "polaris2/reolink_camera_optical"
    assert (frames.utm, frames.world, frames.can) == ("utm", "world", "can")


def test_maxxum_prefixed_names_spelt_out():
    frames = frame_names(vehicle="maxxum", frame_prefix="polaris2/")
    assert frames.base_footprint == "polaris2/base_footprint"
    assert frames.imu == "polaris2/imu_link"
    assert frames.gnss == "polaris2/gnss_link"
    assert frames.lidar == "polaris2/lidar"
    assert frames.camera_optical == "polaris2/camera_optical"
    assert (frames.utm, frames.world, frames.can) == ("utm", "world", "can")


@pytest.mark.parametrize("vehicle", ["polaris", "maxxum"])
def test_a_renamed_utm_frame_gets_no_prefix(vehicle):
    frames = frame_names(vehicle=vehicle, frame_prefix="polaris2/", utm_frame="utm_16n")
    assert frames.utm == "utm_16n"
    assert frames.base_footprint == "polaris2/base_footprint"


@pytest.mark.parametrize(
    ("vehicle", "frame", "expected"),
    [
        ("polaris", "reolink_camera", "polaris2/reolink_camera"),
        ("polaris", "lidar", "polaris2/lidar"),
        ("polaris", "imu_link", "imu_link"),
        ("polaris", "oxts_link", "oxts_link"),
        ("polaris", "utm", "utm"),
        ("polaris", "world", "world"),
        ("polaris", "can", "can"),
        ("maxxum", "camera", "polaris2/camera"),
        ("maxxum", "imu_link", "polaris2/imu_link"),
        ("maxxum", "gnss_link", "polaris2/gnss_link"),
        ("maxxum", "utm", "utm"),
        ("maxxum", "world", "world"),
        ("maxxum", "can", "can"),
    ],
)
def test_apply_to_another_frame_of_the_rig(vehicle, frame, expected):
    assert frame_names(vehicle=vehicle, frame_prefix="polaris2").apply(frame) == expected


@pytest.mark.parametrize("vehicle", ["polaris", "maxxum"])
@pytest.mark.parametrize("frame", ["reolink_camera", "camera", "imu_link", "base_footprint"])
def test_apply_without_a_prefix_changes_nothing(vehicle, frame):
    assert frame_names(vehicle=vehicle).apply(frame) == frame


@pytest.mark.parametrize("vehicle", ["tractor", "Polaris", ""])
def test_an_unknown_vehicle_is_refused(vehicle):
    with pytest.raises(ValueError, match=f"vehicle must be polaris or maxxum, found {vehicle!r}"):
        frame_names(vehicle=vehicle)


def test_the_spec_example_second_polaris_odometry_child_frame():
    sample = samples.ins_sample(1)
    message = odometry(sample, frame_names(vehicle="polaris", frame_prefix="polaris2"))
    assert (message.header.frame_id, message.child_frame_id) == ("utm", "polaris2/base_footprint")
