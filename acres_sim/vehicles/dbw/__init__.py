"""The drive-by-wire system of the simulated Polaris, after the Dataspeed kit (ds_dbw_msgs 2.3.11).

``system`` holds the model and its rules; ``params`` its constants and the command check,
``actuators`` what its subsystems share, ``gear`` the gear selector and ``ulc`` the speed controller.
"""

from acres_bridge.wire.dbw import COMMAND_RANGES
from acres_sim.vehicles.dbw.params import (
    OVERRIDE_SUBSYSTEMS,
    REPORT_RATE_HZ,
    DbwParams,
    check_command,
    report_due,
)
from acres_sim.vehicles.dbw.system import DbwSystem
from acres_sim.vehicles.powertrain import Gear

__all__ = [
    "COMMAND_RANGES",
    "OVERRIDE_SUBSYSTEMS",
    "REPORT_RATE_HZ",
    "DbwParams",
    "DbwSystem",
    "Gear",
    "check_command",
    "report_due",
]
