"""lab_stubs: the lab's safety topics with constant values (spec: Topics of the Other Nodes).

On the real vehicle other nodes of the lab publish them; with the simulator this node does, so a
stack that waits for them runs unchanged:

  /safety_stop               std_msgs/Bool     the parameter ``safety_stop`` (default false)
  /obstacle_speed_limit_mps  std_msgs/Float32  the parameter ``speed_limit_mps`` (default 5.0)

Each at its rate of msg_profiles (20 Hz) of ROS time: the node's clock, which follows /clock with
use_sim_time:=true (then nothing is published while the simulation time stands still). Both
parameters can be changed while it runs (``ros2 param set /lab_stubs safety_stop true``); the
next message carries the new value. A speed limit must be a finite number of at least 0.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import Bool, Float32

from acres_bridge.errors import ParameterError
from acres_bridge.nodes.base import profiles
from acres_bridge.other import _wiring

__all__ = ["LabStubs", "main"]

SAFETY_STOP = "/safety_stop"
SPEED_LIMIT = "/obstacle_speed_limit_mps"


def _speed_limit_error(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return f"speed_limit_mps must be a finite number of at least 0 m/s, found {value!r}"
    return None


class LabStubs(Node):
    """Publishes /safety_stop and /obstacle_speed_limit_mps from its parameters."""

    DEFAULT_NODE_NAME = "lab_stubs"

    def __init__(self, **node_options: Any) -> None:
        node_options.setdefault("node_name", self.DEFAULT_NODE_NAME)
        super().__init__(**node_options)
        self.declare_parameter(
            "safety_stop", False, ParameterDescriptor(description=f"the value of {SAFETY_STOP}")
        )
        limit = self.declare_parameter(
            "speed_limit_mps",
            5.0,
            ParameterDescriptor(description=f"the value of {SPEED_LIMIT} in m/s", dynamic_typing=True),
        ).value
        if (error := _speed_limit_error(limit)) is not None:
            raise ParameterError(f"parameter {error}")
        self.add_on_set_parameters_callback(self._check_parameters)
        self._stop = _wiring.publisher(self, "other_nodes", SAFETY_STOP)
        self._limit = _wiring.publisher(self, "other_nodes", SPEED_LIMIT)
        self._timers = [
            self.create_timer(1.0 / _rate_hz(SAFETY_STOP), self._publish_stop),
            self.create_timer(1.0 / _rate_hz(SPEED_LIMIT), self._publish_limit),
        ]

    @staticmethod
    def _check_parameters(parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == "speed_limit_mps" and (error := _speed_limit_error(parameter.value)):
                return SetParametersResult(successful=False, reason=error)
        return SetParametersResult(successful=True)

    def _publish_stop(self) -> None:
        self._stop.publish(Bool(data=bool(self.get_parameter("safety_stop").value)))

    def _publish_limit(self) -> None:
        self._limit.publish(Float32(data=float(self.get_parameter("speed_limit_mps").value)))


def _rate_hz(name: str) -> float:
    rate = profiles().topic("other_nodes", name).rate_hz
    if rate is None:
        raise ValueError(f"msg_profiles gives {name} no rate in Hz")
    return rate


def main(argv: Sequence[str] | None = None) -> int:
    """Run lab_stubs until SIGINT or SIGTERM."""
    return _wiring.run(LabStubs, argv)


if __name__ == "__main__":
    sys.exit(main())
