"""An episode's track from its episode log: where agent 0 drove, how fast, how it steered, and how
far from the route, at 10 Hz of simulated time. Pure reading and numpy; no plotting.

The episode log (docs/episode_log.md) is what ``acres_sim --episode-log`` writes and what each
scenario episode keeps as ``episode_log.mcap``: /sim/agent_states has every agent's exact state
after each physics step. Only every twelfth step (10 Hz) is decoded, so a long episode is read in
proportion to its length at a tenth of the cost.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from acres_bridge.geo.route import Route, acre_loop

__all__ = ["AGENT_STATES", "EpisodeTrack", "cross_track_m", "read_track"]

AGENT_STATES: Final = "/sim/agent_states"
SAMPLE_NS: Final = 100_000_000  # 10 Hz of simulated time
_CHUNK: Final = 2048  # points per block of the route projection (bounds its memory)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class EpisodeTrack:
    """Agent 0's track: ``t`` simulated s from the log's first state; ``x``, ``y`` world (tile) m;
    ``speed`` m/s (signed); ``steering`` road-wheel angle rad; ``cross_track`` m from the route."""

    agent: str
    t: FloatArray
    x: FloatArray
    y: FloatArray
    speed: FloatArray
    steering: FloatArray
    cross_track: FloatArray

    @property
    def distance_m(self) -> float:
        """The path length driven."""
        return float(np.hypot(np.diff(self.x), np.diff(self.y)).sum()) if self.x.size > 1 else 0.0


def read_track(path: Path, route: Route | None = None) -> EpisodeTrack:
    """Agent 0's track of an episode log; ValueError when the file is no MCAP or has no agent states."""
    try:
        rows, agent = _read_rows(path)
    except (McapError, struct.error) as error:
        raise ValueError(f"{path}: not a readable MCAP file ({type(error).__name__}: {error})") from None
    if not rows:
        raise ValueError(f"{path}: no {AGENT_STATES} in it (an episode log of acres_sim?)")
    data = np.array(rows, dtype=np.float64)
    x, y = data[:, 1], data[:, 2]
    return EpisodeTrack(
        agent=agent,
        t=data[:, 0],
        x=x,
        y=y,
        speed=data[:, 3],
        steering=data[:, 4],
        cross_track=cross_track_m(route or acre_loop(), x, y),
    )


def _read_rows(path: Path) -> tuple[list[tuple[float, float, float, float, float]], str]:
    """(t, x, y, speed, steering) of agent 0 at 10 Hz, and its name."""
    factory = DecoderFactory()
    rows: list[tuple[float, float, float, float, float]] = []
    agent = ""
    first_ns: int | None = None
    next_ns = 0
    with path.open("rb") as stream:
        reader = make_reader(stream)
        for schema, channel, message in reader.iter_messages(topics=[AGENT_STATES]):
            if message.log_time < next_ns:
                continue
            if first_ns is None:
                first_ns = message.log_time
            next_ns = message.log_time + SAMPLE_NS
            decoder = factory.decoder_for(channel.message_encoding, schema)
            if decoder is None:
                raise ValueError(f"{path}: cannot decode {AGENT_STATES} ({channel.message_encoding})")
            states = decoder(message.data).agents
            if not states:
                continue
            state = states[0]
            agent = state.name
            p = state.pose.position
            rows.append(
                ((message.log_time - first_ns) / 1e9, p.x, p.y, state.speed_mps, state.steering_angle_rad)
            )
    return rows, agent


def cross_track_m(route: Route, x: FloatArray, y: FloatArray) -> FloatArray:
    """The distance of each point to the route (its closed polyline), in m."""
    start = route.xy
    seg = np.roll(route.xy, -1, axis=0) - start
    length2 = np.maximum((seg**2).sum(axis=1), 1e-12)
    out = np.empty(x.size, dtype=np.float64)
    for i in range(0, x.size, _CHUNK):
        px = x[i : i + _CHUNK, None] - start[None, :, 0]
        py = y[i : i + _CHUNK, None] - start[None, :, 1]
        u = np.clip((px * seg[None, :, 0] + py * seg[None, :, 1]) / length2[None, :], 0.0, 1.0)
        dx = px - u * seg[None, :, 0]
        dy = py - u * seg[None, :, 1]
        out[i : i + _CHUNK] = np.sqrt((dx * dx + dy * dy).min(axis=1))
    return out
