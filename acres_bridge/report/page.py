"""The report page: one self-contained HTML file (the plots inline as SVG, no script, no network).

A sweep's page has the counts of each verdict, the matrix of verdicts over the sweep's axes (read
from the episode names, ``scenario/seed=3,start_utc=...``), the distribution of each criterion's
value, then a section per episode. An episode's section has its verdict and criteria, links to
its recordings, the plan of where it drove, speed, steering and cross-track error over simulated
time, and the rate of each recorded topic.

A run folder is data from elsewhere, read as such: every text is escaped, attributes too; a link
is a percent-encoded relative path to a regular file inside the run folder; only regular files
inside it are read (acres_bridge.report.files), each up to a bound; metrics.json and verdict.json
must be JSON objects of the right types, nested at most MAX_JSON_DEPTH levels. What of an
episode cannot be read is marked in its section (``<p class="warning">``); the page is made all
the same. The work is linear in the number of episodes: the matrix groups them into their cells
in one pass, and at most MAX_DRAWN_EPISODES are drawn.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from acres_bridge.geo.route import Route, acre_loop
from acres_bridge.report.episode import EpisodeTrack, TrackReadError, read_track
from acres_bridge.report.files import RunFileError, inside, read_regular, regular_or_none, relative_href
from acres_bridge.report.plots import histogram_svg, plan_svg, series_svg
from acres_bridge.scenario.results import RESULTS_FILE, EpisodeResult, Verdict, read_results_table
from acres_bridge.scenario.sweep import folder_name

__all__ = [
    "MAX_DRAWN_EPISODES",
    "MAX_HISTOGRAMS",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_RESULTS_BYTES",
    "EpisodeView",
    "episode_folder_page",
    "episode_page",
    "sweep_page",
]

EPISODE_LOG: Final = "episode_log.mcap"
RECORDING: Final = "recording.mcap"
METRICS: Final = "metrics.json"
VERDICT: Final = "verdict.json"
MAX_RESULTS_BYTES: Final = 1024**3  # a run's results.jsonl (about 200,000 results of 5 kB)
MAX_JSON_BYTES: Final = 1024**2  # an episode's metrics.json or verdict.json (a few hundred bytes each)
MAX_JSON_DEPTH: Final = 16  # levels of nesting in those files and in a value shown on the page
MAX_DRAWN_EPISODES: Final = (
    200  # episodes with plots on a run's page (80 KiB each), those that did not pass first
)
MAX_HISTOGRAMS: Final = 40  # criteria with a distribution on a run's page
MAX_SHOWN_CHARS: Final = 300  # of a criterion's value or rule as text
MAX_LISTED: Final = 20  # skipped lines, scenarios named in a run's summary line
_MAX_ANCHOR: Final = 80  # characters of an episode's anchor taken from its name
_MATRIX_MIN_CELLS: Final = 10_000  # a matrix up to this size is drawn however sparse ...
_MATRIX_CELLS_PER_EPISODE: Final = 4  # ... and beyond it only when it has an episode per 4 cells
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


@dataclass(frozen=True)
class EpisodeView:
    """What an episode's section shows, all read already: its result (None for a bare episode
    log), its track, its topics' message counts, links to its files (label, href), and what of it
    cannot be read (each shown marked) or why it has no plots."""

    name: str
    anchor: str
    result: EpisodeResult | None = None
    track: EpisodeTrack | None = None
    messages: Mapping[str, int] | None = None
    sim_time_s: float = 0.0
    links: tuple[tuple[str, str], ...] = ()
    failed: tuple[str, ...] = ()  # "criterion=value" of verdict.json, when the criteria are not at hand
    problems: tuple[str, ...] = ()
    no_plots: str = ""


# ---- text of the page: pure ----


def _verdict(text: str) -> str:
    colour = _VERDICT_COLOURS.get(text, "#1f77b4")
    return f'<span class="verdict" style="background:{colour}">{html.escape(text)}</span>'


def _anchor(name: str) -> str:
    return "episode-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:_MAX_ANCHOR]


def _anchors(names: Iterable[str]) -> dict[str, str]:
    """Each episode's anchor, unique on the page (names alike but for their unsafe characters get
    -2, -3, ...)."""
    anchors: dict[str, str] = {}
    used: set[str] = set()
    last: dict[str, int] = {}
    for name in names:
        base = anchor = _anchor(name)
        while anchor in used:
            last[base] = last.get(base, 1) + 1
            anchor = f"{base}-{last[base]}"
        used.add(anchor)
        anchors[name] = anchor
    return anchors


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether a JSON value nests lists and objects more than `limit` levels (walked without
    recursion, so any depth is measured)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _shown(value: Any) -> str:
    """A JSON value as text for the page, cut at MAX_SHOWN_CHARS."""
    if _deeper_than(value, MAX_JSON_DEPTH):
        return f"(nested deeper than {MAX_JSON_DEPTH} levels)"
    text = str(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + "..."


def _finite(value: Any) -> float | None:
    """A JSON number as a finite float; None for anything else (text, true, NaN, 1e400, 10**400)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


_PLOTTED_LIMITS: Final = {"max_speed": "speed", "max_cross_track_error": "cross_track"}  # kind: series


def _limits(result: EpisodeResult | None) -> dict[str, float]:
    """The limits of the criteria whose quantity has a series: max_speed, max_cross_track_error."""
    limits: dict[str, float] = {}
    for criterion in result.criteria if result else ():
        series = _PLOTTED_LIMITS.get(str(criterion.get("kind")))
        limit = _finite(criterion.get("limit"))
        if series is not None and limit is not None:
            limits[series] = limit
    return limits


def _criterion_row(criterion: Mapping[str, Any]) -> str:
    cells = [html.escape(_shown(criterion.get(key))) for key in ("name", "value", "rule")]
    mark = _verdict("PASS" if criterion.get("passed") else "FAIL")
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + f"<td>{mark}</td></tr>"


def _result_lines(result: EpisodeResult, failed: Sequence[str]) -> list[str]:
    """An episode's verdict, its cause and its criteria."""
    took = f" in {result.wall_s:.1f} s of wall-clock time" if result.wall_s > 0 else ""
    lines = [f"<p>{_verdict(str(result.verdict))}{took}</p>"]
    if result.error:
        lines.append(f"<p><b>Error:</b> <code>{html.escape(result.error)}</code></p>")
    if failed and not result.criteria:
        lines.append("<p>Failed: " + ", ".join(f"<code>{html.escape(f)}</code>" for f in failed) + "</p>")
    if result.criteria:
        rows = "".join(_criterion_row(c) for c in result.criteria)
        lines.append(f"<table><tr><th>criterion</th><th>value</th><th>rule</th><th></th></tr>{rows}</table>")
    return lines


def _episode_section(view: EpisodeView, route: Route) -> str:
    parts = [f'<section id="{view.anchor}"><h2>{html.escape(view.name)}</h2>']
    result = view.result
    if result is not None:
        parts += _result_lines(result, view.failed)
    parts += [f'<p class="warning">{html.escape(problem)}</p>' for problem in view.problems]
    if view.links:
        links = (f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in view.links)
        parts.append("<p>Recordings: " + " · ".join(links) + "</p>")
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
    elif view.no_plots:
        parts.append(f"<p>{html.escape(view.no_plots)}</p>")
    if view.messages and view.sim_time_s > 0:
        seconds = view.sim_time_s
        rows = "".join(
            f"<tr><td>{html.escape(topic)}</td><td>{count}</td><td>{count / seconds:.1f}</td></tr>"
            for topic, count in sorted(view.messages.items())
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


def _axes(names: Iterable[str]) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The sweep's axes in the order they appear and each episode's value on each."""
    axes: dict[str, None] = {}
    points: dict[str, dict[str, str]] = {}
    for name in names:
        _, _, point = name.partition("/")
        values: dict[str, str] = {}
        for pair in point.split(","):
            key, sep, value = pair.partition("=")
            if sep:
                values[key] = value
                axes.setdefault(key)
        points[name] = values
    return list(axes), points


def _cell(anchor: str, name: str, result: EpisodeResult, extra: str) -> str:
    """A verdict that links to its episode's section; the values of the axes beyond two beside it."""
    label = _verdict(str(result.verdict)) + (f" {html.escape(extra)}" if extra else "")
    return f'<a href="#{anchor}" title="{html.escape(name)}">{label}</a>'


def _listed(results: Mapping[str, EpisodeResult], anchors: Mapping[str, str]) -> str:
    rows = "".join(
        f"<tr><td>{_cell(anchors[n], n, r, '')}</td><td>{html.escape(n)}</td></tr>"
        for n, r in results.items()
    )
    return f"<table><tr><th>verdict</th><th>episode</th></tr>{rows}</table>"


def _matrix(results: Mapping[str, EpisodeResult], anchors: Mapping[str, str]) -> str:
    """The verdicts over the sweep's first axis (rows) and second (columns), the episodes grouped
    into their cells in one pass; a list instead when that matrix would be mostly empty cells."""
    axes, points = _axes(results)
    if not axes:
        return _listed(results, anchors)
    row_axis, column_axis = axes[0], (axes[1] if len(axes) > 1 else "")
    order = {axis: index for index, axis in enumerate(axes)}
    cells: dict[tuple[str, str], list[str]] = {}
    for name in results:
        point = points[name]
        cells.setdefault((point.get(row_axis, ""), point.get(column_axis, "")), []).append(name)
    row_values = list(dict.fromkeys(row for row, _ in cells))
    column_values = list(dict.fromkeys(column for _, column in cells))
    size = len(row_values) * len(column_values)
    if size > max(_MATRIX_MIN_CELLS, _MATRIX_CELLS_PER_EPISODE * len(results)):
        note = (
            f"<p>{len(row_values)} values of {html.escape(row_axis)} by {len(column_values)} of "
            f"{html.escape(column_axis)} would make a matrix of mostly empty cells: the episodes are "
            "listed.</p>"
        )
        return note + _listed(results, anchors)

    def cell(name: str) -> str:
        point = points[name]
        rest = sorted((axis for axis in point if axis not in (row_axis, column_axis)), key=order.__getitem__)
        extra = ",".join(f"{axis}={point[axis]}" for axis in rest)
        return _cell(anchors[name], name, results[name], extra)

    head = "".join(f"<th>{html.escape(v)}</th>" for v in column_values)
    body = [
        f"<tr><th>{html.escape(row)}</th>"
        + "".join(
            "<td>" + " ".join(cell(n) for n in cells.get((row, column), ())) + "</td>"
            for column in column_values
        )
        + "</tr>"
        for row in row_values
    ]
    corner = html.escape(f"{row_axis} \\ {column_axis}" if column_axis else row_axis)
    return f"<table><tr><th>{corner}</th>{head}</tr>{''.join(body)}</table>"


def _named(items: Sequence[str]) -> str:
    """At most MAX_LISTED items, and how many more."""
    more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return ", ".join(items[:MAX_LISTED]) + more


def _drawn(results: Mapping[str, EpisodeResult]) -> set[str]:
    """The episodes a run's page draws: at most MAX_DRAWN_EPISODES, those that did not pass
    first, each in the table's order."""
    first = [n for n, r in results.items() if r.verdict != Verdict.PASS]
    then = [n for n, r in results.items() if r.verdict == Verdict.PASS]
    return set((first + then)[:MAX_DRAWN_EPISODES])


def _histograms(results: Iterable[EpisodeResult]) -> list[str]:
    """The distribution of each criterion's value over the episodes (at most MAX_HISTOGRAMS)."""
    values: dict[str, list[float]] = {}
    for result in results:
        for criterion in result.criteria:
            value = _finite(criterion.get("value"))
            if value is not None:
                values.setdefault(str(criterion.get("name")), []).append(value)
    if not values:
        return []
    names = sorted(values)
    parts = ['<h2>Metrics over the episodes</h2><div class="plots">']
    parts += [histogram_svg(name, values[name]) for name in names[:MAX_HISTOGRAMS]]
    parts.append("</div>")
    if len(names) > MAX_HISTOGRAMS:
        parts.append(f"<p>{len(names) - MAX_HISTOGRAMS} further criteria are not drawn.</p>")
    return parts


# ---- what an episode's files hold: strict readers ----


def _json_object(data: bytes, name: str) -> dict[str, Any]:
    """A file's bytes as a JSON object nested at most MAX_JSON_DEPTH levels; RunFileError naming why."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise RunFileError(f"{name}: not JSON ({type(error).__name__}: {str(error)[:120]})") from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise RunFileError(f"{name}: nested deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(value, dict):
        raise RunFileError(f"{name}: expected a JSON object, found {type(value).__name__}")
    return value


def _topic_counts(metrics: Mapping[str, Any]) -> tuple[dict[str, int], float]:
    """The messages per topic and the simulated seconds of an episode's metrics; ValueError naming
    the field of the wrong type."""
    messages = metrics.get("messages", {})
    if not isinstance(messages, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in messages.values()
    ):
        raise ValueError("messages: expected an object of topic: message count (a whole number >= 0)")
    seconds = _finite(metrics.get("sim_time_s", 0.0))
    if seconds is None or seconds < 0:
        raise ValueError("sim_time_s: expected a finite number >= 0")
    return messages, seconds


def _verdict_file(data: Mapping[str, Any], episode: str) -> tuple[EpisodeResult, tuple[str, ...]]:
    """An episode's result and failed criteria from its verdict.json; ValueError naming the field
    of the wrong type."""
    result = EpisodeResult.from_dict(
        {
            "episode": episode,
            "scenario": "",
            "verdict": data.get("verdict"),
            "criteria": data.get("criteria", []),
            "error": data.get("error"),
        }
    )
    failed = data.get("failed", [])
    if not isinstance(failed, list) or not all(isinstance(f, str) for f in failed):
        raise ValueError("failed: expected a list of text")
    return result, tuple(failed)


@dataclass(frozen=True)
class _Folder:
    """An episode's folder: the run folder (resolved) and the folder's path in it ("" for the run
    folder itself)."""

    root: Path
    relative: str

    def file(self, name: str) -> Path:
        """A file of the folder, resolved; RunFileError when it leads outside the run folder."""
        return inside(self.root, f"{self.relative}/{name}" if self.relative else name)


def _probe(folder: _Folder, name: str, problems: list[str]) -> Path | None:
    """A regular file of the folder (resolved), None when there is none; what is wrong with it
    otherwise goes into `problems`."""
    try:
        path = folder.file(name)
        return path if regular_or_none(path, name) is not None else None
    except RunFileError as error:
        problems.append(str(error))
        return None


def _read_object(folder: _Folder, name: str, problems: list[str]) -> dict[str, Any] | None:
    """A JSON file of the folder as an object; None when there is none or it cannot be read
    (why goes into `problems`)."""
    path = _probe(folder, name, problems)
    if path is None:
        return None
    try:
        return _json_object(read_regular(path, name, MAX_JSON_BYTES), name)
    except RunFileError as error:
        problems.append(str(error))
        return None


def _counts(metrics: tuple[str, Mapping[str, Any]], problems: list[str]) -> tuple[dict[str, int], float]:
    """The topics' message counts and simulated seconds of (source, metrics); none when they are of
    the wrong types (why goes into `problems`)."""
    source, values = metrics
    try:
        return _topic_counts(values)
    except ValueError as error:
        problems.append(f"{source}: {error}")
        return {}, 0.0


@dataclass(frozen=True)
class _Read:
    """What an episode's folder gives its section."""

    track: EpisodeTrack | None = None
    links: tuple[tuple[str, str], ...] = ()
    messages: dict[str, int] = field(default_factory=dict)
    sim_time_s: float = 0.0
    problems: tuple[str, ...] = ()
    no_plots: str = ""


def _read_folder(
    folder: _Folder,
    page_folder: Path,
    route: Route,
    *,
    metrics: tuple[str, Mapping[str, Any]] | None,
    draw: bool,
    log_name: str = EPISODE_LOG,
    strict: bool = False,
) -> _Read:
    """Read what an episode's folder holds for its section: links to its recording and log, the
    log's track (when `draw`), and its topics' counts from `metrics` (source, data) or else from
    its metrics.json. Each problem is kept to be shown; only with `strict` does a log that gives
    no track raise (TrackReadError)."""
    problems: list[str] = []
    paths = {name: _probe(folder, name, problems) for name in (RECORDING, log_name)}
    links = tuple(
        (name, relative_href(path, page_folder)) for name, path in paths.items() if path is not None
    )
    log = paths[log_name]
    track, no_plots = None, ""
    if strict and log is None:
        raise TrackReadError(problems[-1] if problems else f"{log_name}: no such file")
    if log is None:
        no_plots = "" if problems else f"No episode log in {folder.root / folder.relative}: no plots."
    elif not draw:
        no_plots = (
            f"Not drawn: a run's page draws {MAX_DRAWN_EPISODES} episodes (those that did not pass "
            "first); acres_report on the episode's folder draws it."
        )
    else:
        try:
            track = read_track(log, route)
        except TrackReadError as error:
            if strict:
                raise
            problems.append(str(error))
    if metrics is None:
        metrics = (METRICS, _read_object(folder, METRICS, problems) or {})
    messages, seconds = _counts(metrics, problems)
    return _Read(track, links, messages, seconds, tuple(problems), no_plots)


# ---- the pages ----


def _episode_view(log: Path, page: Path, route: Route, *, strict: bool) -> EpisodeView:
    """An episode alone: its log, and the verdict.json and metrics.json beside it."""
    folder = _Folder(log.parent.resolve(), "")
    problems: list[str] = []
    verdict = _read_object(folder, VERDICT, problems)
    result: EpisodeResult | None = None
    failed: tuple[str, ...] = ()
    if verdict is not None:
        try:
            result, failed = _verdict_file(verdict, log.parent.name)
        except ValueError as error:
            problems.append(f"{VERDICT}: {error}")
    read = _read_folder(
        folder, page.resolve().parent, route, metrics=None, draw=True, log_name=log.name, strict=strict
    )
    name = log.parent.name if log.name == EPISODE_LOG else log.stem
    return _view(name, _anchor(name), result, read, failed=failed, problems=tuple(problems))


def _view(
    name: str,
    anchor: str,
    result: EpisodeResult | None,
    read: _Read,
    *,
    failed: tuple[str, ...] = (),
    problems: tuple[str, ...] = (),
) -> EpisodeView:
    return EpisodeView(
        name=name,
        anchor=anchor,
        result=result,
        track=read.track,
        messages=read.messages,
        sim_time_s=read.sim_time_s,
        links=read.links,
        failed=failed,
        problems=problems + read.problems,
        no_plots=read.no_plots,
    )


def _episode_document(view: EpisodeView, route: Route) -> str:
    heading = f"<h1>Episode {html.escape(view.name)}</h1>"
    return _document(f"ACRES episode {view.name}", [heading, _episode_section(view, route)])


def episode_page(log: Path, page: Path, route: Route | None = None) -> str:
    """The page of one episode log (with the verdict and metrics beside it, when it is a scenario
    episode's); TrackReadError (a ValueError) when the log gives no track."""
    route = route or acre_loop()
    return _episode_document(_episode_view(log, page, route, strict=True), route)


def episode_folder_page(folder: Path, page: Path, route: Route | None = None) -> str:
    """The page of a scenario episode's folder: its verdict, metrics and the track of its episode
    log, each that cannot be read marked on the page."""
    route = route or acre_loop()
    return _episode_document(_episode_view(folder / EPISODE_LOG, page, route, strict=False), route)


def _run_episode(
    root: Path, name: str, result: EpisodeResult, *, page_folder: Path, route: Route, draw: bool
) -> _Read:
    """What an episode of a run has besides its result: read from its folder, which must lie
    inside the run folder; its metrics are the table's when it has them."""
    metrics = (f"{RESULTS_FILE} metrics", result.metrics) if result.metrics else None
    problems: list[str] = []
    relative = folder_name(name)
    try:
        folder: Path | None = inside(root, relative)
    except RunFileError as error:
        problems.append(f"The episode's folder: {error}")
        folder = None
    if folder is not None and folder.is_dir():
        return _read_folder(_Folder(root, relative), page_folder, route, metrics=metrics, draw=draw)
    messages, seconds = _counts(metrics, problems) if metrics else ({}, 0.0)
    no_plots = f"No episode log in {folder}: no plots." if folder is not None else ""
    return _Read(messages=messages, sim_time_s=seconds, problems=tuple(problems), no_plots=no_plots)


def sweep_page(run_dir: Path, page: Path, route: Route | None = None) -> str:
    """The page of a scenario run: its verdicts, their matrix, the metrics' distributions and a
    section per episode. ValueError when the folder has no results.jsonl (a regular file in it)
    with results; an episode whose files cannot be read has them marked in its section."""
    route = route or acre_loop()
    root = run_dir.resolve()
    table_file = regular_or_none(inside(root, RESULTS_FILE), RESULTS_FILE)
    if table_file is None:
        raise ValueError(f"{run_dir}: no {RESULTS_FILE} in it (a run folder of acres_scenario?)")
    if table_file.st_size > MAX_RESULTS_BYTES:
        raise RunFileError(
            f"{RESULTS_FILE}: {table_file.st_size} bytes; a page is made of at most {MAX_RESULTS_BYTES}"
        )
    table = read_results_table(root)
    results = table.results
    if not results:
        raise ValueError(f"{run_dir}: no results.jsonl with results in it (a run folder of acres_scenario?)")
    counts = {v: sum(str(r.verdict) == v for r in results.values()) for v in _VERDICT_COLOURS}
    scenarios = sorted({r.scenario for r in results.values()})
    body = [
        f"<h1>Scenario run {html.escape(run_dir.name)}</h1>",
        f"<p>{html.escape(_named(scenarios))}: {len(results)} episodes, "
        + ", ".join(f"{_verdict(v)} {n}" for v, n in counts.items() if n)
        + "</p>",
    ]
    if table.skipped:
        body.append(
            f'<p class="warning">{RESULTS_FILE}: {len(table.skipped)} line(s) that are not whole results, '
            "skipped: "
            + "; ".join(html.escape(line) for line in table.skipped[:MAX_LISTED])
            + ("; ..." if len(table.skipped) > MAX_LISTED else "")
            + "</p>"
        )
    anchors = _anchors(results)
    body += ["<h2>Verdicts</h2>", _matrix(results, anchors)]
    body += _histograms(results.values())
    drawn = _drawn(results)
    page_folder = page.resolve().parent
    for name, result in results.items():
        read = _run_episode(root, name, result, page_folder=page_folder, route=route, draw=name in drawn)
        body.append(_episode_section(_view(name, anchors[name], result, read), route))
    return _document(f"ACRES run {run_dir.name}", body)
