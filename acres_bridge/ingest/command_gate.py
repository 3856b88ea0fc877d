"""The fence's one gate: where a command leaves a process for the simulator, behind the DDS fence.

Every command to the simulator (drive-by-wire, Maxxum, CAN, pose resets, and any channel added
later) travels on an ingest channel that flows to the simulator, and leaves a process only
through that channel's ends: the `CommandOutlet` of the node that made it and the ingest's end
that sends it to the simulator. Both ask the process's gate, so a command goes out only when
every process it passes is behind the fence (acres_bridge.fence: DDS discovery confined to the
machine, env/setup_env.sh), whichever node sent it. The parameter ``allow_unfenced_commands``
(false by default) opens the gate without the fence; then the node says so at start and every
minute. Without the fence the command channels' internal topics are not even made, so no peer
of the network can reach the simulator through them.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping

from rclpy.node import Node

from acres_bridge.fence import fence_state

__all__ = ["PARAMETER", "WARNING_INTERVAL_S", "CommandGate"]

PARAMETER = "allow_unfenced_commands"
WARNING_INTERVAL_S = 60.0
_REFUSAL_LOG_S = 5.0


class CommandGate:
    """Decides once, for a node, whether commands may leave its process; counts those refused."""

    def __init__(self, node: Node, *, environment: Mapping[str, str] | None = None) -> None:
        self._node = node
        if not node.has_parameter(PARAMETER):
            node.declare_parameter(PARAMETER, False)
        allow_unfenced = bool(node.get_parameter(PARAMETER).value)
        fence = fence_state(os.environ if environment is None else environment)
        self.allowed = fence.fenced or allow_unfenced
        self.warning = f"this bridge is not behind the DDS loopback fence ({fence.reason}): " + (
            "allow_unfenced_commands is true, so every command IS forwarded; a real vehicle on this "
            "network may see the same topics"
            if allow_unfenced
            else "every command is refused; source env/setup_env.sh, or set "
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
