"""The DDS loopback fence: is this process's DDS discovery confined to the machine?

The command topics carry the real Polaris's names. The bridge forwards commands only when the
fence is up (env/setup_env.sh), so that no command published on a network with a real vehicle
can reach the simulator's bridge, and no bridge can be confused with the vehicle's driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["FenceState", "fence_state"]

_CONFINED_RANGES = ("LOCALHOST", "OFF")


@dataclass(frozen=True)
class FenceState:
    """Whether discovery is confined to this machine, and why (or why not)."""

    fenced: bool
    reason: str


def fence_state(environment: Mapping[str, str]) -> FenceState:
    """The fence as the environment sets it up (the variables rmw reads when a context starts)."""
    static_peers = environment.get("ROS_STATIC_PEERS", "").strip()
    if static_peers:
        return FenceState(False, f"ROS_STATIC_PEERS names peers by address ({static_peers})")
    discovery = environment.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "").strip().upper()
    if discovery in _CONFINED_RANGES:
        return FenceState(True, f"ROS_AUTOMATIC_DISCOVERY_RANGE={discovery}")
    if environment.get("ROS_LOCALHOST_ONLY", "").strip() == "1":
        return FenceState(True, "ROS_LOCALHOST_ONLY=1")
    shown = discovery or "unset"
    return FenceState(
        False,
        f"ROS_AUTOMATIC_DISCOVERY_RANGE is {shown} and ROS_LOCALHOST_ONLY is not 1: "
        "discovery reaches the network",
    )
