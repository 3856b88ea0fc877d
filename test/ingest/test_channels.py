"""Each internal channel carries its sample across processes unchanged: sample -> message -> sample."""

from __future__ import annotations

import math
from array import array

import pytest
from convert.test_dbw import REPORT
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import String

from acres_bridge.ingest.channels import (
    AGENT_RESET,
    CAMERA,
    CLOCK,
    DBW_COMMAND,
    DBW_REPORT,
    EPISODE,
    INS,
    LIDAR,
    MAXXUM_COMMAND,
    IngestChannel,
)
from acres_bridge.wire import AgentReset, Clock, DbwCommand, EpisodeInfo, InsSample, ProtocolError
from acres_bridge.wire.perception import CameraImage, ImageEncoding, LidarScan

INS_SAMPLE = InsSample(
    step=30,
    stamp_ns=250_000_000,
    has_position=True,
    position=(500438.1, 4479963.9, 181.7),
    latitude_deg=40.47,
    longitude_deg=-86.99,
    orientation=(0.01, -0.02, 0.707, 0.707),
    velocity=(1.5, 0.01, -0.02),
    angular_rate=(0.001, 0.002, 0.03),
    specific_force=(0.1, 0.2, 9.81),
    position_variance=(0.0004, 0.0004, 0.0009),
    velocity_variance=(1e-4, 1e-4, 2e-4),
    attitude_variance=(1e-6, 1e-6, 4e-6),
    true_position=(500438.0, 4479964.0, 181.75),
    true_orientation=(0.0, 0.0, 0.7071, 0.7071),
    true_speed=1.49,
    angular_rate_variance=(1e-7, 1e-7, 1e-7),
    specific_force_variance=(1e-3, 1e-3, 1e-3),
)
EPISODE_INFO = EpisodeInfo(
    episode_id="20261002T072309-0003",
    episode=3,
    reset_epoch=1,
    step=1405,
    stamp_ns=11_708_333_333,
    episode_time_s=2.5,
    state=1,
    lockstep=False,
    seed=42,
    source="unreal",
    map="V03ACRE",
    agents=("polaris", "polaris 2"),
)


@pytest.mark.parametrize(
    ("channel", "sample"),
    [
        (CLOCK, Clock(step=1405, stamp_ns=11_708_333_333)),
        (EPISODE, EPISODE_INFO),
        (INS, INS_SAMPLE),
        (DBW_REPORT, REPORT),
        (
            DBW_COMMAND,
            DbwCommand(seq=0, target=3, cmd_type=1, flags=1, cmd=40.0, limit_1=math.inf, limit_2=0.0),
        ),
        (AGENT_RESET, AgentReset(agent=0, x_m=38.1, y_m=70.0, yaw_rad=1.5707)),
        (LIDAR, LidarScan(24, 200_000_000, 0, 3, 2, array("B", bytes(range(96))))),
        (CAMERA, CameraImage(24, 200_000_000, 1, ImageEncoding.BGR8, 2, 3, array("B", bytes(range(18))))),
    ],
    ids=lambda value: value.suffix if isinstance(value, IngestChannel) else "",
)
def test_a_sample_crosses_the_internal_topic_unchanged(
    channel: IngestChannel[object], sample: object
) -> None:
    message = deserialize_message(serialize_message(channel.to_message(sample)), channel.message_type)
    back = channel.from_message(message)
    if channel is DBW_REPORT:  # float32 on the wire, as in the simulator's report line
        assert back.step == REPORT.step
        assert back.vel_meas_mps == pytest.approx(REPORT.vel_meas_mps)
        assert back.flags == REPORT.flags
    else:
        assert back == sample


@pytest.mark.parametrize(
    "text",
    ["9" * 5000, "[" * 100_000, "[" * 60_000, '{"seq": 3, "speed_mps": 1.0}', "null"],
    ids=["huge-integer", "long-text", "deep-nesting", "with-seq", "not-an-object"],
)
def test_a_bad_maxxum_command_from_a_peer_is_a_protocol_error(text: str) -> None:
    # Any peer may publish on the internal topic: its text is refused as the wire refuses it, never
    # an exception that would end the ingest's executor.
    with pytest.raises(ProtocolError, match="MAXXUM_COMMAND on the internal topic"):
        MAXXUM_COMMAND.from_message(String(data=text))
