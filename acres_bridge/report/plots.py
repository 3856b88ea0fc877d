"""The report's plots, drawn by matplotlib as SVG text to put in the page as it is.

matplotlib's SVG keeps a page small and self-contained (no script, no network): a page of four
plots of 6000 points each came to 54 KiB, where plotly's page with its script inline was 5.2 MB.
Each plot is a matplotlib Figure of its own (no pyplot state), so reports can be made in threads.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from typing import Final

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from acres_bridge.geo.route import Route
from acres_bridge.report.episode import EpisodeTrack

__all__ = ["histogram_svg", "plan_svg", "series_svg"]

ROUTE_COLOUR = "#9e9e9e"
TRACK_COLOUR = "#1f77b4"
FAIL_COLOUR = "#d62728"
MAX_LABEL: Final = 80  # characters of a name drawn as a title or in a legend
MAX_DRAWN_VALUE: Final = 1e12  # a histogram leaves out values beyond ± this (no metric comes near it)


def _label(text: str) -> str:
    """A name from a run (an agent's, a criterion's) as drawn: cut at MAX_LABEL characters."""
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL] + "..."


def _gid(text: str) -> str:
    """A name as part of an SVG id: letters, digits, '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text)[:MAX_LABEL]


def _bins(values: Sequence[float]) -> tuple[int, tuple[float, float]]:
    """A histogram's bins and range: up to 20 bins over the values' range, or one bin around
    values too close to tell apart (numpy refuses bins narrower than the floats can hold)."""
    if not values:
        return 1, (0.0, 1.0)
    low, high = min(values), max(values)
    if high - low <= 1e-9 * max(1.0, abs(low), abs(high)):
        return 1, (low - 0.5, high + 0.5)
    return min(20, len(values)), (low, high)


def _svg(figure: Figure) -> str:
    """The figure as an <svg> element; the same figure gives the same text (no date, fixed ids)."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "acres_report"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # the element alone, without the XML prologue


def plan_svg(track: EpisodeTrack, route: Route, *, mark_worst: bool = False) -> str:
    """The tile's plan: the route, where agent 0 drove, its start and end, and (with
    `mark_worst`, when the cross-track criterion failed) the point farthest from the route."""
    figure = Figure(figsize=(5.5, 5.5))
    axes = figure.add_subplot()
    loop = np.vstack([route.xy, route.xy[:1]])
    axes.plot(loop[:, 0], loop[:, 1], color=ROUTE_COLOUR, linewidth=1.0, label="route", gid="route")
    agent = _label(track.agent) or "agent 0"
    axes.plot(track.x, track.y, color=TRACK_COLOUR, linewidth=1.5, label=agent, gid="track")
    axes.plot(track.x[:1], track.y[:1], "o", color="#2ca02c", label="start", gid="start")
    axes.plot(track.x[-1:], track.y[-1:], "s", color="#000000", label="end", gid="end")
    if mark_worst and track.cross_track.size:
        worst = int(np.argmax(track.cross_track))
        label = f"largest error {track.cross_track[worst]:.2f} m at {track.t[worst]:.1f} s"
        axes.plot(
            track.x[worst], track.y[worst], "x", color=FAIL_COLOUR, markersize=10, label=label, gid="worst"
        )
    axes.set_aspect("equal", adjustable="datalim")
    axes.set_xlabel("x (m, east)")
    axes.set_ylabel("y (m, north)")
    for text in axes.legend(loc="best", fontsize="small").get_texts():
        text.set_parse_math(False)  # a name's '$' is a dollar sign, not TeX
    axes.grid(True, linewidth=0.3)
    return _svg(figure)


def series_svg(track: EpisodeTrack, *, limits: Mapping[str, float] | None = None) -> str:
    """Speed, road-wheel angle and cross-track error over simulated time, one above the other;
    `limits` draws a criterion's threshold on its plot ("speed", "cross_track")."""
    limits = limits or {}
    figure = Figure(figsize=(8.0, 6.5))
    rows = (
        ("speed", track.speed, "speed (m/s)"),
        ("steering", np.degrees(track.steering), "road-wheel angle (deg)"),
        ("cross_track", track.cross_track, "cross-track error (m)"),
    )
    axes_list = figure.subplots(len(rows), 1, sharex=True)
    for axes, (name, values, label) in zip(axes_list, rows, strict=True):
        axes.plot(track.t, values, color=TRACK_COLOUR, linewidth=1.2, gid=f"series-{name}")
        if name in limits:
            axes.axhline(limits[name], color=FAIL_COLOUR, linestyle="--", linewidth=1.0, gid=f"limit-{name}")
        axes.set_ylabel(label)
        axes.grid(True, linewidth=0.3)
    axes_list[-1].set_xlabel("simulated time (s)")
    return _svg(figure)


def histogram_svg(name: str, values: Sequence[float], *, threshold: float | None = None) -> str:
    """The distribution of one metric over a sweep's episodes."""
    figure = Figure(figsize=(4.0, 2.8))
    axes = figure.add_subplot()
    drawn = [
        v for v in values if isinstance(v, int | float) and math.isfinite(v) and abs(v) <= MAX_DRAWN_VALUE
    ]
    bins, span = _bins(drawn)
    axes.hist(drawn, bins=bins, range=span, color=TRACK_COLOUR, gid=f"hist-{_gid(name)}")
    if threshold is not None:
        axes.axvline(threshold, color=FAIL_COLOUR, linestyle="--", linewidth=1.0)
    axes.set_title(_label(name), fontsize="medium", parse_math=False)
    axes.set_ylabel("episodes")
    axes.grid(True, linewidth=0.3)
    return _svg(figure)
