"""acres_report: one self-contained HTML page of a scenario run or of one episode.

    acres_report acres_runs/polaris_route-20261206T120000 -o polaris_route.html
    acres_report session.mcap -o session.html          # an episode log (acres_sim --episode-log)
    acres_report acres_runs/run/polaris_route/seed=1 -o seed1.html   # a scenario episode's folder

Exit status 0 with the page written, 2 when the input is not a run folder, an episode folder or
an episode log (the message says what was expected), cannot be read, or the page cannot be written.
An episode of a run, or a file beside an episode's log, that cannot be read is marked on the page.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from acres_bridge.report.page import EPISODE_LOG, episode_folder_page, episode_page, sweep_page
from acres_bridge.scenario.results import RESULTS_FILE

__all__ = ["main"]


def render(source: Path, output: Path) -> str:
    """The page of `source`: a run folder (results.jsonl), an episode folder (episode_log.mcap) or an
    episode log (.mcap); ValueError naming what was expected otherwise."""
    if source.is_dir() and (source / RESULTS_FILE).exists():
        return sweep_page(source, output)
    if source.is_dir() and (source / EPISODE_LOG).exists():
        return episode_folder_page(source, output)
    if source.is_file() and source.suffix == ".mcap":
        return episode_page(source.resolve(), output)  # the file named, wherever a link to it leads
    raise ValueError(
        f"{source}: expected a scenario run folder (with {RESULTS_FILE}), an episode folder (with "
        f"{EPISODE_LOG}) or an episode log (.mcap)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acres_report", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a run folder, an episode folder or an episode log")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the HTML file to write")
    options = parser.parse_args(argv)
    try:
        text = render(options.source, options.output)
    except (ValueError, OSError) as error:
        print(f"acres_report: {error}", file=sys.stderr)
        return 2
    try:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"acres_report: cannot write {options.output}: {error.strerror}", file=sys.stderr)
        return 2
    print(f"acres_report: wrote {options.output} ({len(text) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
