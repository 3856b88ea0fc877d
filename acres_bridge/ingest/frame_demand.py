"""Which sensors' frames anyone wants, per agent: the SENSOR_DEMAND the ingest sends (docs/protocol.md).

A LiDAR's or a camera's frames are wanted while the ingest's channel of that kind for its agent has
a reader that wants them: a node of this process that says so (the perception node, while its topic
has a subscriber or a tap), or a subscriber of the internal topic in another process. Nobody else
gets the frames, so the simulator need not cast their rays. The ingest asks before each step
request (so a lockstep session makes the frames of a subscriber that came, from the next request)
and, at a limited rate, from a timer (a session running free); it sends an agent's set only when it
changes, and only to a simulator whose HELLO lists the feature: another one makes every frame.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from acres_bridge.wire import SensorDemand, SensorKind, SensorMeta

__all__ = ["DEMANDED_KINDS", "FrameDemand", "wanted_sensors"]

DEMANDED_KINDS = frozenset({SensorKind.LIDAR, SensorKind.CAMERA})  # the sensors that cast rays


def wanted_sensors(meta: SensorMeta, wanted: Mapping[SensorKind, bool]) -> tuple[int, ...]:
    """The positions in SENSOR_META of the sensors whose kind is wanted."""
    return tuple(
        index
        for index, mount in enumerate(meta.sensors)
        if mount.kind in DEMANDED_KINDS and wanted.get(mount.kind, False)
    )


class FrameDemand:
    """Keeps the simulator told, agent by agent, which sensors' frames are wanted."""

    def __init__(self, send: Callable[[int, SensorDemand], bool], *, enabled: bool = True) -> None:
        """`send` sends an agent's SENSOR_DEMAND; False when it did not go (no such simulator).
        Not `enabled` (the bridge's sensors_on_demand false): nothing is sent, every frame is made."""
        self._send = send
        self._enabled = enabled
        self._sent: dict[int, tuple[int, ...]] = {}
        self._lock = threading.Lock()  # the step requests' thread and the timer's

    def update(
        self, metas: Sequence[SensorMeta | None], wanted: Callable[[int], Mapping[SensorKind, bool]]
    ) -> None:
        """Send the set of each agent with a rig whose set changed; `wanted(agent)` says which kinds
        are wanted now."""
        if not self._enabled:
            return
        with self._lock:
            for agent, meta in enumerate(metas):
                if meta is None:
                    continue
                sensors = wanted_sensors(meta, wanted(agent))
                if self._sent.get(agent) != sensors and self._send(
                    agent, SensorDemand(agent=agent, sensors=sensors)
                ):
                    self._sent[agent] = sensors

    def forget(self) -> None:
        """A new session: its simulator makes every frame until it is told otherwise."""
        with self._lock:
            self._sent.clear()
