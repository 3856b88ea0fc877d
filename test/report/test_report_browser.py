"""The report as a person looks at it: a sweep's page opened in headless Chromium (Debian's, which
set-up installs). The browser reports no console message (no failed load, no error), the page it
rendered has every plot with its traces, and its screenshot shows them; the screenshot is kept in
build/test-artifacts/."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from acres_bridge.report.cli import main

pytestmark = pytest.mark.integration

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
