"""The report page: one self-contained HTML file (the plots inline as SVG, no script, no network).

A sweep's page has the counts of each verdict, the matrix of verdicts over the sweep's axes (read
from the episode names, ``scenario/seed=3,start_utc=...``), the distribution of each criterion's
value, then a section per episode. An episode's section has its verdict and criteria, links to
its recordings, the plan of where it drove, speed, steering and cross-track error over simulated
time, and the rate of each recorded topic.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from acres_bridge.geo.route import Route, acre_loop
from acres_bridge.report.episode import EpisodeTrack, read_track
from acres_bridge.report.plots import histogram_svg, plan_svg, series_svg
from acres_bridge.scenario.results import RESULTS_FILE, EpisodeResult, read_results_table
from acres_bridge.scenario.sweep import folder_name

__all__ = ["EpisodeView", "episode_page", "sweep_page"]

EPISODE_LOG: Final = "episode_log.mcap"
RECORDING: Final = "recording.mcap"
_VERDICT_COLOURS: Final = {"PASS": "#2ca02c", "FAIL": "#d62728", "ERROR": "#7f7f7f"}
_STYLE: Final = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
.verdict { color: #fff; font-weight: bold; padding: 0.1em 0.5em; border-radius: 0.2em; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.plots svg { max-width: 100%; height: auto; }
section { border-top: 2px solid #ddd; margin-top: 1.5em; }
.warning { background: #fff3cd; border-left: 4px solid #c90; padding: 0.3em 0.6em; }
"""


@dataclass
class EpisodeView:
    """What an episode's section shows: its result (None for a bare episode log), its folder and
    its track (None when it has no episode log)."""

    name: str
    folder: Path
    result: EpisodeResult | None = None
    track: EpisodeTrack | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    log_name: str = EPISODE_LOG
    failed: tuple[str, ...] = ()  # "criterion=value" of verdict.json, when the criteria are not at hand


def _verdict(text: str) -> str:
    colour = _VERDICT_COLOURS.get(text, "#1f77b4")
    return f'<span class="verdict" style="background:{colour}">{html.escape(text)}</span>'


def _anchor(name: str) -> str:
    return "episode-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def _link(target: Path, page: Path, label: str) -> str:
    if not target.exists():
        return ""
    href = os.path.relpath(target.resolve(), page.resolve().parent)
    return f'<a href="{html.escape(href)}">{html.escape(label)}</a>'


_PLOTTED_LIMITS: Final = {"max_speed": "speed", "max_cross_track_error": "cross_track"}  # kind: series


def _limits(result: EpisodeResult | None) -> dict[str, float]:
    """The limits of the criteria whose quantity has a series: max_speed, max_cross_track_error."""
    limits: dict[str, float] = {}
    for criterion in result.criteria if result else ():
        series = _PLOTTED_LIMITS.get(str(criterion.get("kind")))
        limit = criterion.get("limit")
        if series is not None and isinstance(limit, int | float) and not isinstance(limit, bool):
            limits[series] = float(limit)
    return limits


def _criterion_row(criterion: Mapping[str, Any]) -> str:
    cells = [html.escape(str(criterion.get(key))) for key in ("name", "value", "rule")]
    mark = _verdict("PASS" if criterion.get("passed") else "FAIL")
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + f"<td>{mark}</td></tr>"


def _episode_section(view: EpisodeView, page: Path, route: Route) -> str:
    parts = [f'<section id="{_anchor(view.name)}"><h2>{html.escape(view.name)}</h2>']
    result = view.result
    if result is not None:
        took = f" in {result.wall_s:.1f} s of wall-clock time" if result.wall_s > 0 else ""
        parts.append(f"<p>{_verdict(str(result.verdict))}{took}</p>")
        if result.error:
            parts.append(f"<p><b>Error:</b> <code>{html.escape(result.error)}</code></p>")
        if view.failed and not result.criteria:
            parts.append(
                "<p>Failed: " + ", ".join(f"<code>{html.escape(f)}</code>" for f in view.failed) + "</p>"
            )
        if result.criteria:
            rows = "".join(_criterion_row(c) for c in result.criteria)
            parts.append(
                f"<table><tr><th>criterion</th><th>value</th><th>rule</th><th></th></tr>{rows}</table>"
            )
    links = [
        _link(view.folder / RECORDING, page, RECORDING),
        _link(view.folder / view.log_name, page, view.log_name),
    ]
    if any(links):
        parts.append("<p>Recordings: " + " · ".join(x for x in links if x) + "</p>")
    if view.track is not None:
        track = view.track
        failed = result is not None and any(
            c.get("kind") == "max_cross_track_error" and not c.get("passed") for c in result.criteria
        )
        parts.append(
            f"<p>{track.distance_m:.1f} m in {track.t[-1]:.1f} s of simulated time; largest cross-track "
            f"error {track.cross_track.max():.3f} m</p>"
        )
        parts.append('<div class="plots">')
        parts.append(plan_svg(track, route, mark_worst=failed))
        parts.append(series_svg(track, limits=_limits(result)))
        parts.append("</div>")
    else:
        parts.append(f"<p>No episode log in {html.escape(str(view.folder))}: no plots.</p>")
    counts = view.metrics.get("messages") or {}
    seconds = float(view.metrics.get("sim_time_s") or 0.0)
    if counts and seconds > 0:
        rows = "".join(
            f"<tr><td>{html.escape(topic)}</td><td>{count}</td><td>{count / seconds:.1f}</td></tr>"
            for topic, count in sorted(counts.items())
        )
        parts.append(f"<table><tr><th>topic</th><th>messages</th><th>Hz (simulated)</th></tr>{rows}</table>")
    parts.append("</section>")
    return "\n".join(parts)


def _document(title: str, body: Sequence[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _track_or_none(folder: Path, route: Route) -> EpisodeTrack | None:
    path = folder / EPISODE_LOG
    if not path.exists():
        return None
    try:
        return read_track(path, route)
    except ValueError:
        return None


def episode_page(log: Path, page: Path, route: Route | None = None) -> str:
    """The page of one episode log (with the verdict and metrics beside it, when it is a scenario
    episode's)."""
    route = route or acre_loop()
    folder = log.parent
    verdict = _read_json(folder / "verdict.json")
    metrics = _read_json(folder / "metrics.json")
    result = None
    if verdict.get("verdict") in _VERDICT_COLOURS:
        result = EpisodeResult.from_dict(
            {
                "episode": folder.name,
                "scenario": "",
                "verdict": verdict["verdict"],
                "criteria": verdict.get("criteria", ()),
                "error": verdict.get("error"),
            }
        )
    name = folder.name if log.name == EPISODE_LOG else log.stem
    listed = verdict.get("failed")
    view = EpisodeView(
        name=name,
        folder=folder,
        result=result,
        track=read_track(log, route),
        metrics=metrics,
        log_name=log.name,
        failed=tuple(str(f) for f in listed) if isinstance(listed, list) else (),
    )
    heading = f"<h1>Episode {html.escape(name)}</h1>"
    return _document(f"ACRES episode {name}", [heading, _episode_section(view, page, route)])


def _axes(names: Sequence[str]) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The sweep's axes in the order they appear and each episode's value on each."""
    axes: list[str] = []
    points: dict[str, dict[str, str]] = {}
    for name in names:
        _, _, point = name.partition("/")
        values: dict[str, str] = {}
        for pair in point.split(","):
            key, sep, value = pair.partition("=")
            if sep:
                values[key] = value
                if key not in axes:
                    axes.append(key)
        points[name] = values
    return axes, points


def _cell(name: str, result: EpisodeResult, rest: Sequence[str], point: Mapping[str, str]) -> str:
    """A verdict that links to its episode's section; the values of the axes beyond two beside it."""
    extra = ",".join(f"{axis}={point[axis]}" for axis in rest if axis in point)
    label = _verdict(str(result.verdict)) + (f" {html.escape(extra)}" if extra else "")
    return f'<a href="#{_anchor(name)}" title="{html.escape(name)}">{label}</a>'


def _matrix(results: Mapping[str, EpisodeResult]) -> str:
    """The verdicts over the sweep's first axis (rows) and second (columns)."""
    axes, points = _axes(list(results))
    if not axes:
        rows = "".join(
            f"<tr><td>{_cell(n, r, (), {})}</td><td>{html.escape(n)}</td></tr>" for n, r in results.items()
        )
        return f"<table><tr><th>verdict</th><th>episode</th></tr>{rows}</table>"
    row_axis, column_axis, rest = axes[0], (axes[1] if len(axes) > 1 else ""), axes[2:]
    row_values = list(dict.fromkeys(points[n].get(row_axis, "") for n in results))
    column_values = list(dict.fromkeys(points[n].get(column_axis, "") for n in results))
    head = "".join(f"<th>{html.escape(v)}</th>" for v in column_values)
    body = []
    for row in row_values:
        cells = []
        for column in column_values:
            here = [
                n
                for n in results
                if points[n].get(row_axis, "") == row and points[n].get(column_axis, "") == column
            ]
            cells.append("<td>" + " ".join(_cell(n, results[n], rest, points[n]) for n in here) + "</td>")
        body.append(f"<tr><th>{html.escape(row)}</th>{''.join(cells)}</tr>")
    corner = html.escape(f"{row_axis} \\ {column_axis}" if column_axis else row_axis)
    return f"<table><tr><th>{corner}</th>{head}</tr>{''.join(body)}</table>"


def sweep_page(run_dir: Path, page: Path, route: Route | None = None) -> str:
    """The page of a scenario run: its verdicts, their matrix, the metrics' distributions and a
    section per episode. ValueError when the folder has no results.jsonl."""
    route = route or acre_loop()
    table = read_results_table(run_dir)
    results = table.results
    if not results:
        raise ValueError(f"{run_dir}: no results.jsonl with results in it (a run folder of acres_scenario?)")
    counts = {v: sum(str(r.verdict) == v for r in results.values()) for v in _VERDICT_COLOURS}
    scenarios = sorted({r.scenario for r in results.values()})
    body = [
        f"<h1>Scenario run {html.escape(run_dir.name)}</h1>",
        f"<p>{html.escape(', '.join(scenarios))}: {len(results)} episodes, "
        + ", ".join(f"{_verdict(v)} {n}" for v, n in counts.items() if n)
        + "</p>",
    ]
    if table.skipped:
        body.append(
            f'<p class="warning">{RESULTS_FILE}: {len(table.skipped)} line(s) that are not whole results, '
            "skipped: "
            + "; ".join(html.escape(line) for line in table.skipped[:20])
            + ("; ..." if len(table.skipped) > 20 else "")
            + "</p>"
        )
    body += ["<h2>Verdicts</h2>", _matrix(results)]
    values: dict[str, list[float]] = {}
    for result in results.values():
        for criterion in result.criteria:
            value = criterion.get("value")
            if isinstance(value, int | float) and not isinstance(value, bool):
                values.setdefault(str(criterion.get("name")), []).append(float(value))
    if values:
        body.append('<h2>Metrics over the episodes</h2><div class="plots">')
        body.extend(histogram_svg(name, numbers) for name, numbers in sorted(values.items()))
        body.append("</div>")
    for name, result in results.items():
        folder = run_dir / folder_name(name)
        view = EpisodeView(
            name=name,
            folder=folder,
            result=result,
            track=_track_or_none(folder, route),
            metrics=result.metrics or _read_json(folder / "metrics.json"),
        )
        body.append(_episode_section(view, page, route))
    return _document(f"ACRES run {run_dir.name}", body)
