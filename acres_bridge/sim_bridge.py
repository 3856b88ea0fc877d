"""sim_bridge: the bridge in one process, its nodes planned from ROS parameters.

    sim_bridge --ros-args -p vehicle:=polaris -p control_port:=47100
    sim_bridge --ros-args --params-file params/sim_bridge.yaml -p perception:=false

    sim_bridge --ros-args -p vehicle:=auto -p agents:=auto

The process is a component container named sim_bridge: it loads the nodes that plan_bridge()
chooses, and it serves ~/_container/load_node etc., so more nodes (your own) can join it.
With vehicle:=auto it loads the ingest first and the vehicle's nodes once the simulator has
said which vehicle agent 0 is. With agents:=auto it serves every agent of the session: agent 0
in the bridge's namespace, each other agent under /<name> with the frame prefix <name>/.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.utilities import try_shutdown

from acres_bridge.container.main import init_ros, run_container
from acres_bridge.container.manager import ComponentManager
from acres_bridge.errors import AcresBridgeError
from acres_bridge.ingest.bus import BUS
from acres_bridge.ingest.channels import SESSION, Session
from acres_bridge.plan import BridgeConfig, PlannedNode, SessionAgent, plan_agent, plan_bridge, serve_agents
from acres_bridge.shutdown import finished
from acres_bridge.wire import Hello

__all__ = ["SimBridge", "main"]


class SimBridge(ComponentManager):
    """The container of the bridge's nodes; its parameters are the plan's.

    With a fixed vehicle and agents:=0 the plan is known at start. Otherwise (vehicle:=auto, or
    other agents than agent 0) the ingest comes first and each served agent's nodes follow once
    the simulator's session lists it; a later session (a new simulator, another set of agents)
    loads the nodes of new agents and unloads those of agents that are gone, without a restart.
    """

    def __init__(self, executor: SingleThreadedExecutor, **options: Any) -> None:
        super().__init__(executor, node_name="sim_bridge", **options)
        dynamic = ParameterDescriptor(dynamic_typing=True)  # agents: auto, or 0 / 1 / "0,2"
        values = {
            name: self.declare_parameter(name, default, dynamic if name == "agents" else None).value
            for name, default in BridgeConfig.parameter_defaults().items()
        }
        self.config = BridgeConfig.from_parameters(values)
        namespace = self.get_namespace()
        self._served: dict[tuple[int, str, str], list[int]] = {}
        if self.config.vehicle != "auto" and self.config.agents == "0":
            for planned in plan_bridge(self.config, namespace=namespace):
                self._load(planned)
            return
        for planned in plan_bridge(self.config, vehicle="auto", namespace=namespace):
            self._load(planned)  # the ingest: the rest waits for the session
        self._pending: Hello | None = None
        self._session = BUS.subscribe(SESSION.key(namespace), self._on_session)
        self._session_timer = self.create_timer(0.1, self._serve_session)

    def _load(self, planned: PlannedNode) -> int:
        parameters = [Parameter(name, value=value) for name, value in planned.parameters.items()]
        unique_id, _ = self.load(
            planned.package,
            planned.plugin,
            node_name=planned.node_name,
            namespace=planned.namespace or None,
            parameters=parameters,
        )
        return unique_id

    def _on_session(self, session: Session) -> None:
        """The ingest's I/O thread: note the session; the executor's thread acts on it."""
        if session.hello is not None:
            self._pending = session.hello

    def _serve_session(self) -> None:
        """Load the nodes of each agent to serve that has none yet, unload those of agents gone."""
        hello, self._pending = self._pending, None
        if hello is None:
            return
        namespace = self.get_namespace()
        agents = [SessionAgent(a.index, a.name, a.vehicle) for a in hello.agents]
        slots = serve_agents(self.config, agents, namespace=namespace)
        fixed = self.config.vehicle
        if fixed != "auto" and slots and slots[0].vehicle != fixed:
            self.get_logger().error(
                f"agent {slots[0].index} ({slots[0].name}) is a {slots[0].vehicle}, but vehicle:={fixed}; "
                "its nodes are not loaded (vehicle:=auto takes the session's vehicle)"
            )
            slots = slots[1:]
        wanted = {(slot.index, slot.name, slot.vehicle): slot for slot in slots}
        for key in [key for key in self._served if key not in wanted]:
            for unique_id in self._served.pop(key):
                self.unload(unique_id)
            self.get_logger().info(f"agent {key[0]} ({key[1]}) is not in the session any more: unloaded")
        for key, slot in wanted.items():
            if key in self._served:
                continue
            self._served[key] = [
                self._load(p) for p in plan_agent(self.config, slot, ingest_namespace=namespace)
            ]
            where = slot.namespace or "/"
            self.get_logger().info(
                f"serving agent {slot.index} ({slot.name}, a {slot.vehicle}) in {where}"
                + (f" with frame prefix {slot.frame_prefix}" if slot.frame_prefix else "")
            )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bridge until SIGINT or SIGTERM."""
    args = list(sys.argv if argv is None else ["sim_bridge", *argv])
    stop = init_ros(args)
    try:
        return run_container(SimBridge, stop)
    except (ValueError, AcresBridgeError) as error:
        print(f"sim_bridge: {error}", file=sys.stderr)
        return 2
    finally:
        try_shutdown()
        finished()


if __name__ == "__main__":
    sys.exit(main())
