"""The simulator and the bridge as launch actions, for a launch_testing test of a user's stack.

    @pytest.mark.launch_test
    def generate_test_description():
        return LaunchDescription([
            simulation_launch_description(vehicle="polaris", seed=3),
            Node(package="my_stack", executable="follower", parameters=[{"use_sim_time": True}]),
            ReadyToTest(),
        ])

The simulator listens on a free loopback port; the bridge is the installed sim_bridge.launch.py
(found through the ament index, as ``ros2 launch`` finds it) with the given launch arguments. The
description leases a DDS domain of its own (acres_bridge.session.domains: never shared with another
live test or session on this machine) and puts it in this process's ROS_DOMAIN_ID, so everything
launched after it, and a ``Sim.connect()`` in the test, use it; the lease ends with the process.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from ament_index_python.packages import get_package_share_directory
from launch.actions import ExecuteProcess, IncludeLaunchDescription
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

from acres_bridge.processes import free_port, simulator_command
from acres_bridge.session.domains import DomainLease, lease_domain

__all__ = ["DEFAULT_START_UTC", "simulation_launch_description"]

DEFAULT_START_UTC: Final = datetime(2026, 6, 21, 12, 0, tzinfo=UTC)
_LEASES: list[DomainLease] = []  # held for the life of the process


def simulation_launch_description(
    *,
    vehicle: str = "polaris",
    lockstep: bool = True,
    scene: str = "acre",
    seed: int = 42,
    start_pose: tuple[float, float, float] | None = None,
    start_utc: datetime | None = DEFAULT_START_UTC,
    perception: bool = False,
    domain_id: int | None = None,
    **bridge_args: Any,
) -> LaunchDescription:
    """The simulator (lockstep by default) and the bridge for `vehicle`, in a domain of their own
    (`domain_id`, default: one leased here); `start_pose` is (x, y, yaw_deg) on the tile and
    `bridge_args` are sim_bridge.launch.py's launch arguments (``ins=False``, ``namespace=...``)."""
    if domain_id is None:
        lease = lease_domain()
        _LEASES.append(lease)
        domain_id = lease.domain_id
    os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # the fence: no DDS off this machine
    port = free_port()
    extra = ["--vehicle", vehicle, "--scene", scene, "--perception" if perception else "--no-perception"]
    if start_pose is not None:
        x, y, yaw_deg = start_pose
        extra += ["--start", f"{vehicle}={float(x)!r},{float(y)!r},{float(yaw_deg)!r}"]
    utc = None if start_utc is None else start_utc.astimezone(UTC).strftime("%Y%m%dT%H%M%S")
    simulator = ExecuteProcess(
        cmd=simulator_command(port, seed=seed, lockstep=lockstep, start_utc=utc, extra=extra),
        name="acres_sim",
        output="screen",
    )
    arguments = {"control_port": str(port), "vehicle": vehicle, "perception": _text(perception)}
    arguments.update({name: _text(value) for name, value in bridge_args.items()})
    launch_file = Path(get_package_share_directory("acres_bridge")) / "launch" / "sim_bridge.launch.py"
    bridge = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(launch_file)), launch_arguments=arguments.items()
    )
    return LaunchDescription([simulator, bridge])


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
