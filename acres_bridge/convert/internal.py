"""The internal ingest topics' messages <-> wire samples, pure: no node, no I/O.

Each channel of `acres_bridge.ingest.channels` carries its samples on a ROS topic for subsystem
nodes in another process; these are the conversions both ways. A message that comes from another
process is checked as the wire would check it: ProtocolError (or CommandRefusedError) names what
is wrong.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import fields
from typing import Any

from acres_interfaces.msg import AgentReset as AgentResetMessage
from acres_interfaces.msg import CameraFrame as CameraFrameMessage
from acres_interfaces.msg import DbwCommandLine, DbwReportLine
from acres_interfaces.msg import Episode as EpisodeMessage
from acres_interfaces.msg import InsSample as InsSampleMessage
from acres_interfaces.msg import LidarScan as LidarScanMessage
from acres_interfaces.msg import SimStep as SimStepMessage
from std_msgs.msg import String

from acres_bridge.convert.stamps import stamp, time_ns
from acres_bridge.wire import (
    AgentReset,
    Clock,
    DbwCommand,
    DbwReport,
    EpisodeInfo,
    InsSample,
    ProtocolError,
    SimState,
    Source,
    encode,
)
from acres_bridge.wire.frames import HEADER
from acres_bridge.wire.json_fields import json_object
from acres_bridge.wire.maxxum import (
    MaxxumCommand,
    MaxxumObservation,
    decode_maxxum_observation,
    maxxum_command_from_fields,
)
from acres_bridge.wire.perception import CameraImage, ImageEncoding, LidarScan

__all__ = [
    "camera_from_message",
    "camera_to_message",
    "clock_from_message",
    "clock_to_message",
    "dbw_command_from_message",
    "dbw_command_to_message",
    "dbw_report_from_message",
    "dbw_report_to_message",
    "episode_from_message",
    "ins_from_message",
    "ins_to_message",
    "lidar_from_message",
    "lidar_to_message",
    "maxxum_command_from_message",
    "maxxum_command_to_message",
    "maxxum_observation_from_message",
    "maxxum_observation_to_message",
    "reset_from_message",
    "reset_to_message",
]


def clock_to_message(sample: Clock) -> SimStepMessage:
    return SimStepMessage(stamp=stamp(sample.stamp_ns), step=sample.step)


def clock_from_message(message: SimStepMessage) -> Clock:
    return Clock(step=message.step, stamp_ns=time_ns(message.stamp))


def episode_from_message(message: EpisodeMessage) -> EpisodeInfo:
    return EpisodeInfo(
        episode_id=message.episode_id,
        episode=message.episode,
        reset_epoch=message.reset_epoch,
        step=message.step,
        stamp_ns=time_ns(message.header.stamp),
        episode_time_s=message.episode_time_s,
        state=SimState(message.state),
        lockstep=message.lockstep,
        seed=message.seed,
        source=Source(message.source),
        map=message.map,
        agents=tuple(message.agents),
    )


def _xyz(vector: Any, values: tuple[float, float, float]) -> None:
    vector.x, vector.y, vector.z = values


def _xyzw(quaternion: Any, values: tuple[float, float, float, float]) -> None:
    quaternion.x, quaternion.y, quaternion.z, quaternion.w = values


def ins_to_message(sample: InsSample) -> InsSampleMessage:
    message = InsSampleMessage(
        step=sample.step,
        has_position=sample.has_position,
        latitude_deg=sample.latitude_deg,
        longitude_deg=sample.longitude_deg,
        true_speed_mps=sample.true_speed,
    )
    message.header.stamp = stamp(sample.stamp_ns)
    message.header.frame_id = "utm"
    _xyz(message.position, sample.position)
    _xyzw(message.orientation, sample.orientation)
    _xyz(message.velocity, sample.velocity)
    _xyz(message.angular_rate, sample.angular_rate)
    _xyz(message.specific_force, sample.specific_force)
    _xyz(message.position_variance, sample.position_variance)
    _xyz(message.velocity_variance, sample.velocity_variance)
    _xyz(message.attitude_variance, sample.attitude_variance)
    _xyz(message.true_position, sample.true_position)
    _xyzw(message.true_orientation, sample.true_orientation)
    _xyz(message.angular_rate_variance, sample.angular_rate_variance)
    _xyz(message.specific_force_variance, sample.specific_force_variance)
    return message


def _v(vector: Any) -> tuple[float, float, float]:
    return (vector.x, vector.y, vector.z)


def _q(quaternion: Any) -> tuple[float, float, float, float]:
    return (quaternion.x, quaternion.y, quaternion.z, quaternion.w)


def ins_from_message(message: InsSampleMessage) -> InsSample:
    return InsSample(
        step=message.step,
        stamp_ns=time_ns(message.header.stamp),
        has_position=message.has_position,
        position=_v(message.position),
        latitude_deg=message.latitude_deg,
        longitude_deg=message.longitude_deg,
        orientation=_q(message.orientation),
        velocity=_v(message.velocity),
        angular_rate=_v(message.angular_rate),
        specific_force=_v(message.specific_force),
        position_variance=_v(message.position_variance),
        velocity_variance=_v(message.velocity_variance),
        attitude_variance=_v(message.attitude_variance),
        true_position=_v(message.true_position),
        true_orientation=_q(message.true_orientation),
        true_speed=message.true_speed_mps,
        angular_rate_variance=_v(message.angular_rate_variance),
        specific_force_variance=_v(message.specific_force_variance),
    )


def lidar_to_message(scan: LidarScan) -> LidarScanMessage:
    message = LidarScanMessage(
        check_fields=True, step=scan.step, sensor=scan.sensor, columns=scan.columns, rings=scan.rings
    )
    message.header.stamp = stamp(scan.stamp_ns)
    message.points = scan.points
    return message


def lidar_from_message(message: LidarScanMessage) -> LidarScan:
    return LidarScan(
        step=message.step,
        stamp_ns=time_ns(message.header.stamp),
        sensor=message.sensor,
        columns=message.columns,
        rings=message.rings,
        points=message.points,
    )


def camera_to_message(image: CameraImage) -> CameraFrameMessage:
    message = CameraFrameMessage(
        check_fields=True,
        step=image.step,
        sensor=image.sensor,
        encoding=int(image.encoding),
        width=image.width,
        height=image.height,
    )
    message.header.stamp = stamp(image.stamp_ns)
    message.pixels = image.pixels
    return message


def camera_from_message(message: CameraFrameMessage) -> CameraImage:
    return CameraImage(
        step=message.step,
        stamp_ns=time_ns(message.header.stamp),
        sensor=message.sensor,
        encoding=ImageEncoding(message.encoding),
        width=message.width,
        height=message.height,
        pixels=message.pixels,
    )


# The report line's fields that DbwReportLine carries by the same name (step and the stamp go apart).
_REPORT_FIELDS = tuple(f.name for f in fields(DbwReport) if f.name not in ("step", "stamp_ns"))


def dbw_report_to_message(report: DbwReport) -> DbwReportLine:
    message = DbwReportLine(step=report.step, **{name: getattr(report, name) for name in _REPORT_FIELDS})
    message.header.stamp = stamp(report.stamp_ns)
    return message


def dbw_report_from_message(message: DbwReportLine) -> DbwReport:
    return DbwReport(
        step=message.step,
        stamp_ns=time_ns(message.header.stamp),
        **{name: getattr(message, name) for name in _REPORT_FIELDS},
    )


def dbw_command_to_message(command: DbwCommand) -> DbwCommandLine:
    return DbwCommandLine(
        target=command.target,
        cmd_type=command.cmd_type,
        flags=command.flags,
        cmd=command.cmd,
        limit_1=command.limit_1,
        limit_2=command.limit_2,
    )


def dbw_command_from_message(message: DbwCommandLine) -> DbwCommand:
    return DbwCommand(
        seq=0,
        target=message.target,
        cmd_type=message.cmd_type,
        flags=message.flags,
        cmd=message.cmd,
        limit_1=message.limit_1,
        limit_2=message.limit_2,
    )


def reset_to_message(reset: AgentReset) -> AgentResetMessage:
    return AgentResetMessage(x_m=reset.x_m, y_m=reset.y_m, yaw_rad=reset.yaw_rad)


def reset_from_message(message: AgentResetMessage) -> AgentReset:
    return AgentReset(agent=0, x_m=message.x_m, y_m=message.y_m, yaw_rad=message.yaw_rad)


def _payload(message: object) -> str:
    """The JSON payload of a wire message, as its frame carries it."""
    return encode(message)[HEADER.size :].decode()


def maxxum_observation_to_message(observation: MaxxumObservation) -> String:
    return String(data=_payload(observation))


def maxxum_observation_from_message(message: String) -> MaxxumObservation:
    return decode_maxxum_observation(message.data.encode())


def maxxum_command_to_message(command: MaxxumCommand) -> String:
    """The MAXXUM_COMMAND object without its seq: the ingest numbers commands when it sends them."""
    data = json.loads(_payload(dataclasses.replace(command, seq=1)))
    del data["seq"]
    return String(data=json.dumps(data, separators=(",", ":")))


def maxxum_command_from_message(message: String) -> MaxxumCommand:
    data = json_object("MAXXUM_COMMAND on the internal topic", message.data)
    if "seq" in data:
        raise ProtocolError("MAXXUM_COMMAND on the internal topic: expected a JSON object without seq")
    return maxxum_command_from_fields("MAXXUM_COMMAND on the internal topic", data, seq=0)
