"""episode: /sim/episode, latched, from the simulator's episode messages (spec: Episode Clock)."""

from __future__ import annotations

from typing import Any

from acres_bridge.convert.session import episode as episode_message
from acres_bridge.ingest.channels import EPISODE
from acres_bridge.nodes.base import SubsystemNode
from acres_bridge.wire import EpisodeInfo

__all__ = ["EpisodeClock"]


class EpisodeClock(SubsystemNode):
    """Publishes the episode clock of the session."""

    DEFAULT_NODE_NAME = "episode"

    def __init__(self, **node_options: Any) -> None:
        super().__init__(**node_options)
        self._publisher = self.publisher("/sim/episode", table="session")
        self.samples(EPISODE, self._on_episode, agent=0)

    def _on_episode(self, info: EpisodeInfo) -> None:
        self._publisher.publish(episode_message(info), info.step)
