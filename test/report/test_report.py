"""acres_report on a real scenario run (three episodes of the demo driver, one failing a criterion)
and on an episode log: the page is one HTML file with the verdict matrix, the distributions, and
for each episode its plan, its series and links to its recordings. Last, the page as a person looks
at it: opened in headless Chromium, it logs no console message, renders every plot and trace, and
its screenshot (kept in build/test-artifacts/) shows them. One file: the run is made once."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from acres_bridge.geo.route import acre_loop
from acres_bridge.report.cli import main
from acres_bridge.report.episode import EpisodeTrack, cross_track_m
from acres_bridge.report.plots import plan_svg, series_svg
from acres_bridge.scenario.results import RESULTS_FILE, EpisodeResult, Verdict, append_result


def test_the_route_distance_is_the_distance_to_the_closest_segment():
    route = acre_loop()
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-60, 60, 300), rng.uniform(-70, 70, 300)
    reference = np.array([route.distance_to(px, py) for px, py in zip(x, y, strict=True)])
    assert np.allclose(cross_track_m(route, x, y), reference, atol=1e-9)


@pytest.mark.integration
def test_a_sweep_s_page_has_the_matrix_the_distributions_and_each_episode(run_dir: Path, tmp_path: Path):
    page = tmp_path / "out" / "run.html"
    assert main([str(run_dir), "-o", str(page)]) == 0
    text = page.read_text()
    assert "<script" not in text  # self-contained: nothing to run, nothing to fetch
    assert not re.search(r'(src|href)="(https?:)?//', text)  # no resource from elsewhere
    sections = re.findall(r'<section id="(episode-[^"]+)">', text)
    assert len(sections) == 3
    for anchor in sections:  # the matrix links to each episode
        assert f'href="#{anchor}"' in text
    assert text.count('<span class="verdict" style="background:#2ca02c">PASS</span>') >= 2
    assert "FAIL" in text  # seed 3 stands still: min_distance fails
    assert text.count('id="series-speed"') == 3  # every episode has its series
    assert text.count('id="track"') == 3
    assert 'id="worst"' not in text  # no cross-track criterion failed: no point marked
    assert text.count('<g id="limit-cross_track">') == 3  # max_m drawn on each episode's series
    assert "speed_mps=0.0" in text  # the list's own axis, beside its verdict
    assert 'id="hist-min_distance"' in text
    assert 'id="hist-max_cross_track_error"' in text
    links = re.findall(r'href="([^"#]+\.mcap)"', text)
    assert len(links) == 6  # recording and episode log of each
    assert all((page.parent / link).exists() for link in links)
    again = tmp_path / "out" / "again.html"
    assert main([str(run_dir), "-o", str(again)]) == 0
    assert again.read_bytes() == page.read_bytes()  # the same run gives the same page


@pytest.mark.integration
def test_an_episode_log_and_an_episode_folder_have_a_page_each(run_dir: Path, tmp_path: Path):
    folder = next(p for p in (run_dir / "report_demo").iterdir() if p.name.startswith("seed=3"))
    log_page, folder_page = tmp_path / "log.html", tmp_path / "folder.html"
    assert main([str(folder / "episode_log.mcap"), "-o", str(log_page)]) == 0
    assert main([str(folder), "-o", str(folder_page)]) == 0
    for page in (log_page, folder_page):
        text = page.read_text()
        assert text.count("<svg") == 2  # the plan and the series
        assert 'id="series-cross_track"' in text
    assert "Failed: <code>min_distance=0.0</code>" in folder_page.read_text()  # from its verdict.json


def test_an_input_that_is_no_run_or_episode_is_refused_with_status_2(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "acres_bridge.report.cli", str(tmp_path), "-o", str(tmp_path / "x.html")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "expected a scenario run folder (with results.jsonl)" in done.stderr
    assert not (tmp_path / "x.html").exists()
    (tmp_path / "empty.mcap").write_bytes(b"")
    assert main([str(tmp_path / "empty.mcap"), "-o", str(tmp_path / "y.html")]) == 2


def test_the_plan_marks_the_largest_error_when_asked_and_the_series_draw_the_limits():
    route = acre_loop()
    t = np.linspace(0.0, 5.0, 51)
    x, y = np.full_like(t, -18.0), np.linspace(-50.0, -40.0, 51)
    track = EpisodeTrack(
        "polaris", t, x, y, np.full_like(t, 2.0), np.zeros_like(t), cross_track_m(route, x, y)
    )
    worst = int(np.argmax(track.cross_track))
    marked = plan_svg(track, route, mark_worst=True)
    assert '<g id="worst">' in marked
    assert f"at {t[worst]:.1f} s" in marked
    assert '<g id="worst">' not in plan_svg(track, route)
    series = series_svg(track, limits={"speed": 3.0})
    assert '<g id="limit-speed">' in series
    assert '<g id="limit-cross_track">' not in series
    assert plan_svg(track, route) == plan_svg(track, route)  # no date, no random ids


# ---- the page as a person looks at it: headless Chromium (Debian's, which set-up installs) ----

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
CHROMIUM = shutil.which("chromium")
# Flags of a browser that must not reach the network: this machine's is closed, and a test has no need.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
)


def _chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.integration
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make setup installs Debian's)")
def test_chromium_renders_every_plot_of_a_sweep_s_page_without_a_console_message(
    run_dir: Path, tmp_path: Path
):
    page = tmp_path / "run.html"
    assert main([str(run_dir), "-o", str(page)]) == 0

    dom = _chromium(page, tmp_path / "profile-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert ":CONSOLE(" not in dom.stderr, [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    rendered = dom.stdout
    assert len(re.findall(r"<svg[ >]", rendered)) == 3 * 2 + 2  # plan + series per episode, 2 histograms
    for trace in ("route", "track", "series-speed", "series-steering", "series-cross_track"):
        assert len(re.findall(rf'<g id="{trace}"', rendered)) == 3, trace
    for path_data in re.findall(r'<g id="track">\s*<path d="([^"]+)"', rendered):
        assert path_data.count("L") > 20  # the trace has its points

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report_sweep.png"
    shot.unlink(missing_ok=True)
    taken = _chromium(page, tmp_path / "profile-shot", "--window-size=1280,3000", f"--screenshot={shot}")
    assert taken.returncode == 0, taken.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)
    assert pixels.shape[:2] == (3000, 1280)
    blue = np.abs(pixels - np.array([0x1F, 0x77, 0xB4])).sum(axis=2) < 40  # the tracks' colour
    assert blue.sum() > 2000  # the plots were drawn, not a blank page


def test_lines_of_the_table_that_are_not_results_are_named_on_the_page_not_a_failed_page(tmp_path: Path):
    """The finding: "error": 123 or "criteria": "abc" in results.jsonl gave a traceback and no page."""
    run = tmp_path / "run"
    run.mkdir()
    append_result(run, EpisodeResult(episode="s/seed=1", scenario="s", verdict=Verdict.PASS))
    with (run / RESULTS_FILE).open("a") as table:
        table.write('{"episode": "s/seed=2", "scenario": "s", "verdict": "PASS", "error": 123}\n')
        table.write('{"episode": "s/seed=3", "scenario": "s", "verdict": "PASS", "criteria": "abc"}\n')
        table.write('{"episode": "s/seed=4", "verd')
    page = tmp_path / "run.html"
    assert main([str(run), "-o", str(page)]) == 0
    text = page.read_text()
    assert "3 line(s) that are not whole results, skipped" in text
    assert "line 2: ValueError: error: expected text, found int" in text
    assert "line 4: torn" in text
    assert len(re.findall(r'<section id="episode-', text)) == 1
