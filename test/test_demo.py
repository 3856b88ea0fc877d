"""acres_demo runs the bridge against the reference simulator and reports its topics honestly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from acres_bridge.demo import (
    FINAL_TITLE,
    HEADER,
    NOT_PUBLISHED,
    NOT_SUBSCRIBED,
    RATE_TOLERANCE,
    GraphView,
    Status,
    TopicWatch,
    parse_options,
    rate_status,
    topic_row,
)
from acres_bridge.msg_profiles import load_profiles

NS_PER_S = 1_000_000_000
PROFILES = load_profiles(check_types=False)

DEMO = Path(sys.executable).with_name("acres_demo")
SECONDS = 8
TIMEOUT_S = 40.0


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str

    def final_table(self) -> dict[str, dict[str, str]]:
        """The rows of the last table printed after FINAL_TITLE, by topic, cells by column name."""
        assert FINAL_TITLE in self.output, f"no final table in the output:\n{self.output}"
        lines = self.output.rsplit(FINAL_TITLE, 1)[1].splitlines()
        top = next(i for i, line in enumerate(lines) if line.split()[:1] == [HEADER[0]])
        rule = lines[top + 1]
        starts = [i for i, char in enumerate(rule) if char == "-" and (i == 0 or rule[i - 1] == " ")]
        bounds = [*starts[1:], None]
        rows: dict[str, dict[str, str]] = {}
        for line in lines[top + 2 :]:
            if not line.strip() or line.startswith("acres_demo:"):
                break
            cells = [line[start:end].strip() for start, end in zip(starts, bounds, strict=True)]
            rows[cells[0]] = dict(zip(HEADER, cells, strict=True))
        return rows


@pytest.fixture(scope="module")
def demo_run() -> Run:
    """One run of acres_demo --seconds 6 (DEMO_SECONDS left out), its status and output."""
    env = {name: value for name, value in os.environ.items() if name != "DEMO_SECONDS"}
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    popen = subprocess.Popen(
        [str(DEMO), "--seconds", str(SECONDS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        output, _ = popen.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        popen.send_signal(signal.SIGINT)  # the demo stops its children on SIGINT
        output, _ = popen.communicate(timeout=20.0)
        pytest.fail(f"acres_demo --seconds {SECONDS} still ran after {TIMEOUT_S:g} s:\n{output}")
    return Run(popen.returncode, output)


@pytest.mark.integration
def test_demo_exits_0(demo_run: Run) -> None:
    assert demo_run.returncode == 0, demo_run.output
    assert f"{SECONDS} s are up; stopping the bridge and the simulator" in demo_run.output


@pytest.mark.integration
@pytest.mark.parametrize(
    ("topic", "expected_hz"),
    [
        ("/clock", 120.0),
        ("/vehicle/odom", 100.0),
        ("/vehicle/ulc/report", 50.0),
        ("/Demo/status", 50.0),
    ],
)
def test_periodic_topic_runs_at_its_rate(demo_run: Run, topic: str, expected_hz: float) -> None:
    row = demo_run.final_table()[topic]
    assert row["expected"] == f"{expected_hz:g} Hz"
    assert row["status"] == "OK", demo_run.output
    measured = float(row["measured"].removesuffix(" Hz"))
    assert abs(measured - expected_hz) <= RATE_TOLERANCE * expected_hz
    assert int(row["count"]) > 0


@pytest.mark.integration
@pytest.mark.parametrize("topic", ["/lidar/points", "/camera/image_raw", "/camera/camera_info"])
def test_perception_topics_are_published(demo_run: Run, topic: str) -> None:
    # Published and counted; their rate is not held to the tolerance here: in free run, on a machine
    # busy with other tests, the simulator's rendering or a starved reader may cost a frame or two.
    row = demo_run.final_table()[topic]
    assert row["expected"] == "10 Hz"
    assert row["status"] in ("OK", "LOW"), demo_run.output
    assert int(row["count"]) > 0


@pytest.mark.integration
def test_header_shows_the_session(demo_run: Run) -> None:
    header = demo_run.output.rsplit(FINAL_TITLE, 1)[1]
    assert "source unreal  map V03ACRE  state playing" in header
    assert "sim time (no /clock yet)" not in header


@pytest.mark.integration
def test_the_demo_driver_drives_the_route(demo_run: Run) -> None:
    header = demo_run.output.rsplit(FINAL_TITLE, 1)[1]
    progress = next(line for line in header.splitlines() if line.startswith("driver:"))
    point = int(progress.split("route point ", 1)[1].split("/", 1)[0])
    assert point > 0, progress  # it has left the route's first point
    assert int(demo_run.final_table()["/tf_static"]["count"]) >= 1  # the description's sensor frames


# ---- the parts without processes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("measured", "status"),
    [
        (None, Status.WAIT),
        (120.0, Status.OK),
        (108.0, Status.OK),
        (132.0, Status.OK),
        (107.9, Status.LOW),
        (0.0, Status.LOW),
        (132.1, Status.HIGH),
    ],
)
def test_rate_status_allows_the_tolerance(measured: float | None, status: Status) -> None:
    assert rate_status(measured, 120.0) is status


def arrivals(watch: TopicWatch, rate_hz: float, seconds: float, start_ns: int = 0) -> int:
    """Record rate_hz arrivals for seconds from start_ns; the time of the last one."""
    now_ns = start_ns
    for index in range(round(rate_hz * seconds)):
        now_ns = start_ns + round(index * NS_PER_S / rate_hz)
        watch.record(now_ns)
    return now_ns


def test_rate_over_a_full_window() -> None:
    watch = TopicWatch(PROFILES.topic("polaris", "/clock"))
    last_ns = arrivals(watch, 120.0, 5.0)
    assert watch.rate_hz(last_ns) == pytest.approx(120.0, abs=0.5)
    assert watch.count == 600


def test_rate_before_a_full_window_uses_the_span_seen() -> None:
    watch = TopicWatch(PROFILES.topic("polaris", "/vehicle/odom"))
    assert watch.rate_hz(0) is None
    last_ns = arrivals(watch, 100.0, 0.5)
    assert watch.rate_hz(last_ns) == pytest.approx(100.0)


def test_rate_of_a_topic_that_stopped_falls_to_zero() -> None:
    watch = TopicWatch(PROFILES.topic("polaris", "/vehicle/odom"))
    last_ns = arrivals(watch, 100.0, 3.0)
    assert watch.rate_hz(last_ns + 3 * NS_PER_S) == 0.0


@pytest.mark.parametrize(
    ("topic", "graph", "status"),
    [
        ("/lidar/points", GraphView(publishers=0, subscribers=0, settled=True), NOT_PUBLISHED),
        ("/lidar/points", GraphView(publishers=0, subscribers=0, settled=False), "WAIT"),
        ("/lidar/points", GraphView(publishers=1, subscribers=0, settled=True), "WAIT"),
        ("/tf_static", GraphView(publishers=0, subscribers=0, settled=True), NOT_PUBLISHED),
        ("/sim/reset", GraphView(publishers=0, subscribers=0, settled=True), NOT_SUBSCRIBED),
        ("/sim/reset", GraphView(publishers=0, subscribers=1, settled=True), "subscribed by the bridge"),
    ],
)
def test_row_of_a_silent_topic(topic: str, graph: GraphView, status: str) -> None:
    row = topic_row(TopicWatch(PROFILES.topic("polaris", topic)), graph, 0)
    assert dict(zip(HEADER, row, strict=True))["status"] == status


@pytest.mark.parametrize(
    ("argv", "environ", "seconds"),
    [
        ([], {}, None),
        ([], {"DEMO_SECONDS": "7"}, 7.0),
        (["--seconds", "3"], {"DEMO_SECONDS": "7"}, 3.0),
        ([], {"DEMO_SECONDS": " "}, None),
    ],
)
def test_seconds_from_the_option_or_the_environment(
    argv: list[str], environ: dict[str, str], seconds: float | None
) -> None:
    options = parse_options(argv, environ)
    assert options.seconds == seconds
    assert options.vehicle == "polaris"
    assert options.seed == 42
    assert 0 < options.port < 65536


@pytest.mark.parametrize(
    ("argv", "environ", "message"),
    [
        (["--seconds", "0"], {}, "expected a positive number of seconds, found '0'"),
        ([], {"DEMO_SECONDS": "soon"}, "DEMO_SECONDS: expected a number of seconds, found 'soon'"),
        (["--port", "70000"], {}, "expected a TCP port (1..65535), found 70000"),
        (["--vehicle", "tractor"], {}, "invalid choice: 'tractor'"),
    ],
)
def test_bad_options_are_refused(
    argv: list[str], environ: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_options(argv, environ)
    error = capsys.readouterr().err
    assert message in error, error
