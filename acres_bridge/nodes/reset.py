"""reset: /sim/reset (Polaris) or sim/reset (Maxxum), a pose in utm, moves the vehicle there.

The pose becomes simulator coordinates with the georeference of the session (the world frame
is the UTM grid shifted to the tile centre, so the yaw carries over). Until the first INS
sample with a position, the bridge cannot know that the vehicle's reported position and the
simulator agree, so the message is ignored with a warning. The vehicle stands still after the
reset, and a new episode of it starts (spec: Reset Pose).
"""

from __future__ import annotations

from typing import Any

from acres_bridge.convert.reset import reset_in_world
from acres_bridge.errors import CommandRefusedError
from acres_bridge.ingest.channels import AGENT_RESET, INS, SESSION, Session
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import InsSample
from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["PoseReset"]


class PoseReset(SubsystemNode):
    """Forwards /sim/reset to the simulator once the INS has a position."""

    DEFAULT_NODE_NAME = "reset"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self._origin: tuple[float, float, float] | None = None
        self._has_position = False
        self._resets = self.outlet(AGENT_RESET)
        self.samples(SESSION, self._on_session, agent=0)
        self.samples(INS, self._on_ins)
        self.subscription("/sim/reset" if self.vehicle == Vehicle.POLARIS else "sim/reset", self._on_reset)

    def _on_session(self, session: Session) -> None:
        meta = session.meta(self.agent)
        self._origin = meta.world_origin_utm if meta is not None else None
        if not session.connected:
            self._has_position = False

    def _on_ins(self, sample: InsSample) -> None:
        self._has_position = self._has_position or sample.has_position

    def _on_reset(self, message: Any) -> None:
        frame = message.header.frame_id
        if frame not in ("", self.frames.utm):
            self._refuse(f"the pose is in frame {frame!r}; /sim/reset takes poses in {self.frames.utm!r}")
            return
        if not self._has_position or self._origin is None:
            self._refuse("ignored: no INS sample with a position has arrived yet")
            return
        try:
            reset = reset_in_world(message, self._origin, agent=self.agent)
        except CommandRefusedError as error:
            self._refuse(str(error))
            return
        self._resets.publish(reset)  # counted under "unfenced" when the gate refuses it

    def _refuse(self, reason: str) -> None:
        self.refuse("pose", "a /sim/reset pose", reason)
