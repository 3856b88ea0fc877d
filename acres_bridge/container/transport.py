"""The bridge's DDS transport: a shared-memory segment sized for lockstep bursts (Fast DDS only).

A step request publishes hundreds of messages at once. Fast DDS's default shared-memory segment
(512 KiB per process) fills with one camera image, and a sample that finds it full is lost on the
way; with the spec's history of 10 the writer cannot send it again, so subscribers in other
processes lose odometry, /clock and DBW reports whenever perception runs. fastdds_bridge.xml gives
the bridge's process a 64 MiB segment (pages of /dev/shm are used only as they fill) and UDPv4 on
the loopback alone. No QoS changes. It is used only behind the fence (discovery confined to the
machine, acres_bridge.fence) and with Fast DDS; a profile file the user names always wins.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Final

from acres_bridge.fence import fence_state

__all__ = ["BRIDGE_PROFILES", "PROFILES_VARIABLES", "use_bridge_transport"]

BRIDGE_PROFILES: Final = Path(__file__).with_name("fastdds_bridge.xml")
# Fast DDS 2 reads the first, Fast DDS 3 the second; either set by the user wins.
PROFILES_VARIABLES: Final = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")


def use_bridge_transport(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Point Fast DDS at the bridge's profiles before rclpy starts; False (and nothing changed)
    outside the fence, with another RMW, or when the user names a profile file of their own."""
    if not fence_state(environ).fenced:
        return False
    if environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") != "rmw_fastrtps_cpp":
        return False
    if any(environ.get(name) for name in PROFILES_VARIABLES):
        return False
    environ[PROFILES_VARIABLES[0]] = str(BRIDGE_PROFILES)
    return True
