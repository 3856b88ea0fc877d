"""dbw: the Polaris's drive-by-wire topics (spec: Drive-by-Wire Reports and Commands).

Reports: the seven report topics at 50 Hz from the simulator's report line. Commands: the five
command topics and /vehicle/enable, /vehicle/disable go to the simulator as soon as they
arrive; a command with NaN or infinity, an unknown cmd_type or an out-of-range value is refused
with a warning and counted, and never reaches the simulator; a gear command with value 0 is
never sent.
"""

from __future__ import annotations

from typing import Any

from ds_dbw_msgs.msg import BrakeCmd, GearCmd, SteeringCmd, ThrottleCmd, UlcCmd

from acres_bridge.convert.dbw import command_from_message, report_messages
from acres_bridge.errors import CommandRefusedError
from acres_bridge.ingest.channels import DBW_COMMAND, DBW_REPORT
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import DbwCommand, DbwReport, DbwTarget
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["Dbw"]

REPORT_TOPICS = (
    "/vehicle/steering/report",
    "/vehicle/throttle/report",
    "/vehicle/brake/report",
    "/vehicle/gear/report",
    "/vehicle/ulc/report",
    "/vehicle/vehicle_velocity",
    "/vehicle/dbw_enabled",
)
COMMAND_TOPICS: dict[str, type] = {
    "/vehicle/steering/cmd": SteeringCmd,
    "/vehicle/throttle/cmd": ThrottleCmd,
    "/vehicle/brake/cmd": BrakeCmd,
    "/vehicle/gear/cmd": GearCmd,
    "/vehicle/ulc/cmd": UlcCmd,
}


class Dbw(SubsystemNode):
    """Publishes the drive-by-wire reports and forwards checked commands to the simulator."""

    DEFAULT_NODE_NAME = "dbw"
    SERVES = (Vehicle.POLARIS, "the drive-by-wire node serves a Polaris, not a {vehicle}")

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self._reports = [self.publisher(name) for name in REPORT_TOPICS]
        self._commands = self.outlet(DBW_COMMAND)
        self.forwarded = 0
        # Readers ready together are taken in the order they were made (rclpy's executor, and
        # take_pending_commands before a step): an enable before the commands that follow it, a
        # disable after an enable (it wins), and the commands last, so that a stack's enable and
        # first gear command of one tick apply in that order whether they came apart or together.
        self.subscription(
            "/vehicle/enable",
            lambda _message: self._send(
                DbwCommand(seq=0, target=DbwTarget.ENABLE, cmd_type=0, flags=0, cmd=0.0)
            ),
        )
        self.subscription(
            "/vehicle/disable",
            lambda _message: self._send(
                DbwCommand(seq=0, target=DbwTarget.DISABLE, cmd_type=0, flags=0, cmd=0.0)
            ),
        )
        for name in COMMAND_TOPICS:
            self.subscription(name, self._on_command)
        self.samples(DBW_REPORT, self._on_report)

    def _on_report(self, report: DbwReport) -> None:
        messages = report_messages(report)
        for publisher, message in zip(
            self._reports,
            (
                messages.steering,
                messages.throttle,
                messages.brake,
                messages.gear,
                messages.ulc,
                messages.velocity,
                messages.enabled,
            ),
            strict=True,
        ):
            publisher.publish(message, report.step)

    def _on_command(self, message: Any) -> None:
        try:
            command = command_from_message(message)
        except CommandRefusedError as error:
            kind = type(message).__name__
            self.refuse(kind, f"a {kind}", str(error))
            return
        if command is not None:
            self._send(command)

    def _send(self, command: DbwCommand) -> None:
        if self._commands.publish(command):
            self.forwarded += 1
