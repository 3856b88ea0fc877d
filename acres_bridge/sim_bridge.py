"""sim_bridge: the bridge in one process, its nodes planned from ROS parameters.

    sim_bridge --ros-args -p vehicle:=polaris -p control_port:=47100
    sim_bridge --ros-args --params-file params/sim_bridge.yaml -p perception:=false

The process is a component container named sim_bridge: it loads the nodes that plan_bridge()
chooses, and it serves ~/_container/load_node etc., so more nodes (your own) can join it.
With vehicle:=auto it loads the ingest first and the vehicle's nodes once the simulator has
said which vehicle agent 0 is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.utilities import try_shutdown

from acres_bridge.container.main import run_container
from acres_bridge.container.manager import ComponentManager
from acres_bridge.errors import AcresBridgeError
from acres_bridge.ingest.bus import BUS
from acres_bridge.ingest.channels import SESSION, Session
from acres_bridge.plan import BridgeConfig, PlannedNode, plan_bridge

__all__ = ["SimBridge", "main"]


class SimBridge(ComponentManager):
    """The container of the bridge's nodes; its parameters are the plan's."""

    def __init__(self, executor: SingleThreadedExecutor, **options: Any) -> None:
        super().__init__(executor, node_name="sim_bridge", **options)
        values = {
            name: self.declare_parameter(name, default).value
            for name, default in BridgeConfig.parameter_defaults().items()
        }
        self.config = BridgeConfig.from_parameters(values)
        self._vehicle_planned = False
        for planned in plan_bridge(self.config, namespace=self.get_namespace()):
            self._load(planned)
        self._vehicle_planned = self.config.vehicle != "auto"
        if not self._vehicle_planned:
            self._pending_vehicle: str | None = None
            self._session = BUS.subscribe(SESSION.key(self.get_namespace()), self._on_session)
            self._auto_timer = self.create_timer(0.1, self._plan_vehicle)

    def _load(self, planned: PlannedNode) -> None:
        parameters = [Parameter(name, value=value) for name, value in planned.parameters.items()]
        self.load(
            planned.package,
            planned.plugin,
            node_name=planned.node_name,
            namespace=planned.namespace or None,
            parameters=parameters,
        )

    def _on_session(self, session: Session) -> None:
        if session.hello is not None:
            self._pending_vehicle = session.hello.agents[0].vehicle

    def _plan_vehicle(self) -> None:
        """vehicle:=auto: load the vehicle's nodes, in the executor thread, once the session names it."""
        if self._vehicle_planned or self._pending_vehicle is None:
            return
        vehicle = self._pending_vehicle
        self._vehicle_planned = True
        self._auto_timer.cancel()
        self._session.close()
        self.get_logger().info(f"vehicle:=auto: agent 0 is a {vehicle}")
        for planned in plan_bridge(self.config, vehicle=vehicle, namespace=self.get_namespace()):
            if planned.subsystem != "ingest":
                self._load(planned)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bridge until SIGINT or SIGTERM."""
    args = list(sys.argv if argv is None else ["sim_bridge", *argv])
    rclpy.init(args=args)
    try:
        return run_container(SimBridge)
    except (ValueError, AcresBridgeError) as error:
        print(f"sim_bridge: {error}", file=sys.stderr)
        return 2
    finally:
        try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
