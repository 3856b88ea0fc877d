"""Clock and episode samples -> /clock and /sim/episode messages. Pure functions, no node."""

from __future__ import annotations

from acres_interfaces.msg import Episode
from rosgraph_msgs.msg import Clock as ClockMessage

from acres_bridge.convert.stamps import stamp
from acres_bridge.wire.messages import Clock, EpisodeInfo

__all__ = ["clock", "episode"]


def clock(sample: Clock) -> ClockMessage:
    """/clock of one physics step."""
    return ClockMessage(clock=stamp(sample.stamp_ns))


def episode(info: EpisodeInfo) -> Episode:
    """/sim/episode: the spec's Episode Clock fields; stamped with the simulation time of info.step."""
    message = Episode(
        episode_id=info.episode_id,
        episode=info.episode,
        reset_epoch=info.reset_epoch,
        step=info.step,
        episode_time_s=info.episode_time_s,
        state=info.state,
        lockstep=info.lockstep,
        seed=info.seed,
        source=info.source,
        map=info.map,
        agents=list(info.agents),
    )
    message.header.stamp = stamp(info.stamp_ns)
    return message
