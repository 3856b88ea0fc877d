"""The DDS loopback fence as a node that forwards commands sees it (acres_bridge.fence).

A node that sends commands to the simulator (dbw, maxxum, can) forwards them only when the process's
DDS discovery is confined to the machine (env/setup_env.sh), unless its parameter
``allow_unfenced_commands`` is true; then it says so at start and every minute.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping

from rclpy.node import Node

from acres_bridge.fence import fence_state

__all__ = ["WARNING_INTERVAL_S", "CommandFence"]

WARNING_INTERVAL_S = 60.0
_REFUSAL_LOG_S = 5.0


class CommandFence:
    """Declares ``allow_unfenced_commands`` on the node and decides once whether commands may go out."""

    def __init__(self, node: Node, *, what: str, environment: Mapping[str, str] | None = None) -> None:
        """``what`` names the commands in the warnings, e.g. "Maxxum command" or "can/tx frame"."""
        self._node = node
        allow_unfenced = bool(node.declare_parameter("allow_unfenced_commands", False).value)
        fence = fence_state(os.environ if environment is None else environment)
        self.allowed = fence.fenced or allow_unfenced
        self.warning = f"this bridge is not behind the DDS loopback fence ({fence.reason}): " + (
            f"allow_unfenced_commands is true, so every {what} IS forwarded; a real vehicle on this "
            "network may see the same topics"
            if allow_unfenced
            else f"every {what} is refused; source env/setup_env.sh, or set "
            "allow_unfenced_commands:=true to override"
        )
        if not fence.fenced:
            node.get_logger().warning(self.warning)
            if allow_unfenced:
                self._timer = node.create_timer(
                    WARNING_INTERVAL_S, lambda: node.get_logger().warning(self.warning)
                )

    def admit(self, refused: Counter[str]) -> bool:
        """Whether a command may go out; when not, it is counted under "unfenced" and the warning
        logged at a limited rate."""
        if self.allowed:
            return True
        refused["unfenced"] += 1
        self._node.get_logger().warning(self.warning, throttle_duration_sec=_REFUSAL_LOG_S)
        return False
