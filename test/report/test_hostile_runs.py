"""acres_report on run folders made to harm it: names that would link out of the run or run script,
symbolic links out of it, FIFOs and folders in a file's place, corrupt episode logs, files of the
wrong types, too deep or too large, and a table of many episodes. Each gives a page (or exit status
2 with a message), never a traceback, a hang, a link or a read outside the run folder.
Small synthetic runs: results appended as the runner does, files written by hand, no simulator."""

from __future__ import annotations

import json
import os
import re
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter
from mcap_ros2._dynamic import serialize_dynamic

from acres_bridge.report import page as page_module
from acres_bridge.report.cli import main
from acres_bridge.report.episode import AGENT_STATES, MAX_CHUNK_BYTES, TrackReadError, read_track
from acres_bridge.report.page import MAX_DRAWN_EPISODES, MAX_JSON_BYTES
from acres_bridge.scenario.results import RESULTS_FILE, EpisodeResult, Verdict, append_result
from acres_bridge.tools.msgdef import definition_text

STATES_TYPE = "acres_interfaces/msg/AgentStates"
HREF = re.compile(r'href="([^"]*)"')


# ---- making runs ----


def _write_log(
    path: Path,
    xs: Sequence[float] = tuple(np.linspace(-18.0, -10.0, 12)),
    *,
    agent: str = "polaris",
    compression: CompressionType = CompressionType.NONE,
    stray_at: int | None = None,
) -> Path:
    """An episode log of agent 0 only, one state every 0.1 s of log time, as acres_sim writes it
    (CDR AgentStates under its full definition, chunked, with CRCs); the message `stray_at` on a
    channel the file does not define."""
    text = definition_text(STATES_TYPE)
    encode = serialize_dynamic(STATES_TYPE, text)[STATES_TYPE]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as stream:
        writer = McapWriter(stream, compression=compression)
        writer.start(profile="ros2", library="test")
        schema = writer.register_schema(STATES_TYPE, "ros2msg", text.encode())
        channel = writer.register_channel(AGENT_STATES, "cdr", schema)
        for step, x in enumerate(xs):
            time_ns = step * 100_000_000
            state = {
                "name": agent,
                "pose": {"position": {"x": x, "y": -45.0, "z": 0.0}, "orientation": {"w": 1.0}},
                "speed_mps": 2.0,
                "steering_angle_rad": 0.05,
            }
            message = {"header": {"frame_id": "world"}, "step": step, "agents": [state]}
            on = channel + 1 if step == stray_at else channel
            writer.add_message(on, time_ns, encode(message), time_ns, sequence=step)
        writer.finish()
    return path


def _records(data: bytes) -> list[tuple[int, int]]:
    """(opcode, offset) of each record of an MCAP file, read from its framing alone."""
    found, at = [], 8
    while at + 9 <= len(data):
        opcode, length = struct.unpack_from("<BQ", data, at)
        found.append((opcode, at))
        at += 9 + length
    return found


def _run(tmp_path: Path, *episodes: str, verdict: Verdict = Verdict.PASS, **fields: object) -> Path:
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    for episode in episodes:
        result = EpisodeResult(episode=episode, scenario=episode.partition("/")[0], verdict=verdict)
        if fields:
            result = EpisodeResult.from_dict({**result.as_dict(), **fields})
        append_result(run, result)
    return run


def _page(source: Path, page: Path) -> str:
    assert main([str(source), "-o", str(page)]) == 0
    return page.read_text()


def _links(text: str) -> list[str]:
    return [unquote(h) for h in HREF.findall(text) if not h.startswith("#")]


def _assert_links_stay_inside(text: str, page: Path, run: Path) -> None:
    """Every link of the page is a relative path, without a scheme, to a file inside the run."""
    for href in HREF.findall(text):
        assert not urlsplit(href).scheme, href
        assert not href.startswith("/"), href
        if not href.startswith("#"):
            assert (page.parent / unquote(href)).resolve().is_relative_to(run.resolve()), href


# ---- links out of the run, and script ----


def test_an_episode_named_like_a_javascript_url_gets_a_link_that_runs_nothing(tmp_path: Path):
    """Its folder's name is a path to the page, not a URL: href="javascript:..." would run script."""
    name = "javascript:alert(document.domain)"
    run = _run(tmp_path, name)
    (run / name).mkdir()
    (run / name / "recording.mcap").write_bytes(b"recorded")
    page = run / "report.html"
    text = _page(run, page)
    assert 'href="javascript%3Aalert%28document.domain%29/recording.mcap"' in text
    assert "javascript:" not in " ".join(HREF.findall(text))
    _assert_links_stay_inside(text, page, run)


def test_an_episode_named_to_climb_out_of_the_run_is_neither_read_nor_linked(tmp_path: Path):
    outside = tmp_path / "outside"
    _write_log(outside / "episode_log.mcap")
    (outside / "recording.mcap").write_bytes(b"private")
    (outside / "metrics.json").write_text('{"messages": {"/private": 7}, "sim_time_s": 1.0}')
    run = _run(tmp_path, "../outside", "s/seed=1")
    page = tmp_path / "out" / "run.html"
    text = _page(run, page)
    assert "The episode&#x27;s folder: &#x27;../outside&#x27;: not a path inside the run folder" in text
    assert "outside/" not in " ".join(_links(text))
    assert 'id="track"' not in text  # its log was not read
    assert "/private" not in text  # nor its metrics
    assert len(re.findall(r'<section id="episode-', text)) == 2
    _assert_links_stay_inside(text, page, run)


def test_symbolic_links_out_of_the_run_are_neither_read_nor_linked(tmp_path: Path):
    secret = tmp_path / "secret"
    _write_log(secret / "log.mcap")
    (secret / "metrics.json").write_text('{"messages": {"/secret": 7}, "sim_time_s": 1.0}')
    (secret / "passwords").write_text("hunter2")
    run = _run(tmp_path, "s/seed=1", "s/seed=2")
    one = run / "s" / "seed=1"
    one.mkdir(parents=True)
    (one / "episode_log.mcap").symlink_to(secret / "log.mcap")
    (one / "recording.mcap").symlink_to(secret / "passwords")
    (one / "metrics.json").symlink_to(secret / "metrics.json")
    (run / "shared").mkdir()  # a link that stays inside the run is followed
    _write_log(run / "shared" / "episode_log.mcap")
    (run / "s" / "seed=2").mkdir()
    (run / "s" / "seed=2" / "episode_log.mcap").symlink_to("../../shared/episode_log.mcap")
    (run / "s").joinpath("seed=3").symlink_to(secret, target_is_directory=True)
    append_result(run, EpisodeResult(episode="s/seed=3", scenario="s", verdict=Verdict.FAIL))
    page = tmp_path / "run.html"
    text = _page(run, page)
    section_one = text[text.index('id="episode-s-seed-1"') : text.index('id="episode-s-seed-2"')]
    assert "s/seed=1/episode_log.mcap: leads out of" in section_one
    assert "s/seed=1/recording.mcap: leads out of" in section_one
    assert "s/seed=1/metrics.json: leads out of" in section_one
    assert "The episode&#x27;s folder: s/seed=3: leads out of" in text
    assert "/secret" not in text
    assert not any("secret" in link or "passwords" in link for link in _links(text))
    assert text.count('id="track"') == 1  # seed=2's log, through its link inside the run
    assert _links(text) == ["run/shared/episode_log.mcap"]
    _assert_links_stay_inside(text, page, run)


def test_every_text_of_a_run_is_escaped_on_the_page(tmp_path: Path):
    evil = '"><img src=x onerror=alert(1)><script>alert(2)</script>'
    criterion = {"name": f"c{evil}", "kind": "max_speed", "passed": False, "value": evil, "rule": evil}
    run = _run(
        tmp_path,
        f"s{evil}/seed={evil},k{evil}=1,third={evil}",
        verdict=Verdict.FAIL,
        criteria=[criterion],
        error=evil,
        metrics={"messages": {f"/t{evil}": 3}, "sim_time_s": 1.0},
    )
    text = _page(run, tmp_path / "run.html")
    assert "<img" not in text
    assert "<script" not in text
    assert "onerror=alert(1)>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert not re.search(r'(src|href)="(https?:)?//', text)


# ---- files that are no regular files ----


@pytest.mark.timeout(120)  # a FIFO opened for reading waits for a writer: the page never came
def test_a_fifo_a_folder_or_a_device_in_a_file_s_place_is_marked_not_waited_on(tmp_path: Path):
    run = _run(tmp_path, "s/seed=1", "s/seed=2", "s/seed=3", "s/seed=4")
    fifo, folder, linked, fine = (run / "s" / f"seed={i}" for i in (1, 2, 3, 4))
    for episode in (fifo, folder, linked, fine):
        episode.mkdir(parents=True)
    os.mkfifo(fifo / "episode_log.mcap")
    os.mkfifo(fifo / "metrics.json")
    (folder / "episode_log.mcap").mkdir()
    (linked / "metrics.json").mkdir()
    os.mkfifo(run / "pipe")
    (linked / "episode_log.mcap").symlink_to("../../pipe")  # a link inside the run, to a FIFO
    _write_log(fine / "episode_log.mcap")
    text = _page(run, tmp_path / "run.html")
    assert text.count("episode_log.mcap: is a FIFO, not a regular file") == 2
    assert "metrics.json: is a FIFO, not a regular file" in text
    assert "episode_log.mcap: is a folder, not a regular file" in text
    assert "metrics.json: is a folder, not a regular file" in text
    assert text.count('id="track"') == 1
    assert _links(text) == ["run/s/seed=4/episode_log.mcap"]  # only regular files are linked


@pytest.mark.timeout(120)
def test_a_fifo_beside_an_episode_log_or_for_the_results_table_is_refused(tmp_path: Path, capsys):
    episode = tmp_path / "episode"
    _write_log(episode / "episode_log.mcap")
    os.mkfifo(episode / "verdict.json")
    text = _page(episode, tmp_path / "episode.html")
    assert "verdict.json: is a FIFO, not a regular file" in text
    assert text.count('id="track"') == 1
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / RESULTS_FILE)
    assert main([str(run), "-o", str(tmp_path / "run.html")]) == 2
    assert "results.jsonl: is a FIFO, not a regular file" in capsys.readouterr().err
    os.mkfifo(tmp_path / "fifo.mcap")
    with pytest.raises(TrackReadError, match=r"fifo.mcap: is a FIFO, not a regular file"):
        read_track(tmp_path / "fifo.mcap")


def test_a_results_table_beyond_its_bound_or_a_page_that_cannot_be_written_is_exit_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    run = _run(tmp_path, "s/seed=1")
    (tmp_path / "file").write_text("")
    assert main([str(run), "-o", str(tmp_path / "file" / "run.html")]) == 2
    assert f"acres_report: cannot write {tmp_path / 'file' / 'run.html'}: " in capsys.readouterr().err
    size = (run / RESULTS_FILE).stat().st_size
    monkeypatch.setattr(page_module, "MAX_RESULTS_BYTES", size - 1)
    assert main([str(run), "-o", str(tmp_path / "run.html")]) == 2
    assert f"results.jsonl: {size} bytes; a page is made of at most {size - 1}" in capsys.readouterr().err
    assert not (tmp_path / "run.html").exists()


def test_an_episode_log_larger_than_the_bound_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    log = _write_log(tmp_path / "episode_log.mcap")
    monkeypatch.setattr("acres_bridge.report.episode.MAX_EPISODE_LOG_BYTES", log.stat().st_size - 1)
    with pytest.raises(TrackReadError, match=rf"episode_log.mcap: {log.stat().st_size} bytes; at most"):
        read_track(log)


# ---- corrupt episode logs ----


def _flip(data: bytes, at: int, mask: int = 0xFF) -> bytes:
    flipped = bytearray(data)
    flipped[at] ^= mask
    return bytes(flipped)


def test_a_log_whose_numbers_were_changed_is_refused_by_its_crc_not_plotted(tmp_path: Path):
    """A changed number in a chunk is found by the chunk's CRC: no plot of a track the log does not hold."""
    log = _write_log(tmp_path / "run" / "s" / "seed=1" / "episode_log.mcap")
    data = log.read_bytes()
    at = data.index(struct.pack("<d", -10.0))  # agent 0's last x
    log.write_bytes(data[:at] + struct.pack("<d", 1000.0) + data[at + 8 :])
    run = _run(tmp_path, "s/seed=1")
    text = _page(run, tmp_path / "run.html")
    assert "episode_log.mcap: cannot be read: CRCValidationError: crc validation failed in Chunk" in text
    assert 'id="track"' not in text


def test_one_corrupt_log_is_a_marked_section_and_the_others_are_drawn(tmp_path: Path):
    """A message of a channel the file does not define is named in that episode's section only."""
    run = _run(tmp_path, "s/seed=1", "s/seed=2")
    _write_log(run / "s" / "seed=1" / "episode_log.mcap")
    _write_log(run / "s" / "seed=2" / "episode_log.mcap", stray_at=3)
    text = _page(run, tmp_path / "run.html")
    assert text.count('id="track"') == 1
    second = text[text.index('id="episode-s-seed-2"') :]
    shown = "episode_log.mcap: cannot be read: a message of channel 2, which the file does not define"
    assert f'<p class="warning">{shown}</p>' in second


@pytest.mark.parametrize("compression", [CompressionType.ZSTD, CompressionType.LZ4])
def test_a_compressed_log_gives_the_same_track(tmp_path: Path, compression: CompressionType):
    plain = read_track(_write_log(tmp_path / "plain.mcap"))
    packed = read_track(_write_log(tmp_path / "packed.mcap", compression=compression))
    assert np.array_equal(packed.x, plain.x)
    assert np.array_equal(packed.t, plain.t)


def test_a_chunk_that_claims_more_than_the_bound_is_refused_before_it_is_inflated(tmp_path: Path):
    log = _write_log(tmp_path / "log.mcap", compression=CompressionType.ZSTD)
    data = log.read_bytes()
    chunk = next(at for opcode, at in _records(data) if opcode == 0x06)
    size_at = chunk + 9 + 8 + 8  # after the record's opcode and length, its start and end times
    claimed = struct.pack("<Q", MAX_CHUNK_BYTES + 1)
    log.write_bytes(data[:size_at] + claimed + data[size_at + 8 :])
    with pytest.raises(TrackReadError, match=rf"a chunk of {MAX_CHUNK_BYTES + 1} bytes uncompressed"):
        read_track(log)


def test_a_log_cut_short_or_of_other_bytes_is_refused(tmp_path: Path):
    data = _write_log(tmp_path / "log.mcap").read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(TrackReadError, match=r"cut.mcap: cannot be read: the file ends inside a record"):
        read_track(cut)
    other = tmp_path / "other.mcap"
    other.write_bytes(b"PK\x03\x04" + bytes(200))
    with pytest.raises(TrackReadError, match=r"other.mcap: cannot be read: InvalidMagic"):
        read_track(other)


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, np.ndarray, Path]:
    folder = tmp_path_factory.mktemp("fuzz")
    log = _write_log(folder / "valid.mcap", xs=(-18.0, -17.0, -16.0))
    return log.read_bytes(), read_track(log).x, folder


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_byte_flips_give_the_track_or_the_documented_error(small_log, data):
    """A flip the CRCs cover is refused; one they do not (the summary, after the data) changes nothing."""
    valid, track_x, folder = small_log
    flips = data.draw(
        st.lists(st.tuples(st.integers(0, len(valid) - 1), st.integers(1, 255)), min_size=1, max_size=3)
    )
    corrupt = bytearray(valid)
    for at, mask in flips:
        corrupt[at] ^= mask
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(valid))))
    path = folder / "corrupt.mcap"
    path.write_bytes(bytes(corrupt[:cut]))
    try:
        track_x_read = read_track(path).x
    except TrackReadError as error:
        refused = str(error)
    else:
        refused = ""
        assert np.array_equal(track_x_read, track_x)
    assert not refused or refused.startswith("corrupt.mcap: ")


# ---- metrics.json, verdict.json and the table's values of the wrong types ----


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        (
            '{"messages": {"/a": "many"}, "sim_time_s": 5}',
            "metrics.json: messages: expected an object of topic",
        ),
        ('{"messages": [1, 2], "sim_time_s": 5}', "metrics.json: messages: expected an object of topic"),
        (
            '{"messages": {"/a": 3}, "sim_time_s": "long"}',
            "metrics.json: sim_time_s: expected a finite number",
        ),
        ('{"messages": {"/a": 3}, "sim_time_s": NaN}', "metrics.json: sim_time_s: expected a finite number"),
        ("[" * 100_000 + "]" * 100_000, "metrics.json: not JSON (RecursionError"),
        ('{"a":' * 40 + "1" + "}" * 40, "metrics.json: nested deeper than 16 levels"),
        ('["messages"]', "metrics.json: expected a JSON object, found list"),
        ("\xff\xfe{", "metrics.json: not JSON (UnicodeDecodeError"),
        (" " * MAX_JSON_BYTES + "{}", f"metrics.json: {MAX_JSON_BYTES + 2} bytes; at most {MAX_JSON_BYTES}"),
    ],
)
def test_a_metrics_file_of_the_wrong_types_is_marked_in_its_section(tmp_path: Path, content: str, shown: str):
    run = _run(tmp_path, "s/seed=1", "s/seed=2")
    (run / "s" / "seed=1").mkdir(parents=True)
    (run / "s" / "seed=1" / "metrics.json").write_bytes(content.encode("latin-1"))
    text = _page(run, tmp_path / "run.html")
    assert f'<p class="warning">{shown}' in text
    assert len(re.findall(r'<section id="episode-', text)) == 2


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        ('{"verdict": "PASS", "error": 123}', "verdict.json: error: expected text, found int"),
        ('{"verdict": "MAYBE"}', "verdict.json: &#x27;MAYBE&#x27; is not a valid Verdict"),
        ('{"verdict": "FAIL", "failed": "abc"}', "verdict.json: failed: expected a list of text"),
        (
            '{"verdict": "FAIL", "criteria": [{"name": 1}]}',
            "verdict.json: criteria: expected a list of objects",
        ),
        ('{"verdict": ' * 30 + "1" + "}" * 30, "verdict.json: nested deeper than 16 levels"),
    ],
)
def test_a_verdict_file_of_the_wrong_types_is_marked_on_the_episode_s_page(
    tmp_path: Path, content: str, shown: str
):
    episode = tmp_path / "seed=1"
    _write_log(episode / "episode_log.mcap")
    (episode / "verdict.json").write_text(content)
    text = _page(episode, tmp_path / "episode.html")
    assert f'<p class="warning">{shown}' in text
    assert text.count('id="track"') == 1


def test_an_unreadable_log_of_an_episode_folder_is_marked_and_a_bare_one_is_refused(tmp_path: Path, capsys):
    episode = tmp_path / "seed=1"
    episode.mkdir()
    (episode / "episode_log.mcap").write_bytes(b"\x89MCAP0\r\n" + bytes(40))
    (episode / "verdict.json").write_text(
        '{"verdict": "FAIL", "failed": ["min_distance=0.0"], "error": null}'
    )
    text = _page(episode, tmp_path / "episode.html")
    assert '<p class="warning">episode_log.mcap: cannot be read: ' in text
    assert "Failed: <code>min_distance=0.0</code>" in text
    assert main([str(episode / "episode_log.mcap"), "-o", str(tmp_path / "log.html")]) == 2
    assert "acres_report: episode_log.mcap: cannot be read: " in capsys.readouterr().err


def test_values_of_the_table_that_cannot_be_numbers_or_text_are_shown_bounded(tmp_path: Path):
    """10**400 or 1.7e308 as a value (no float, or no histogram range), '$$' as a name (TeX to
    matplotlib) and metrics of the wrong types: the page is made, each shown bounded or marked."""
    deep = "[" * 500 + "]" * 500
    run = tmp_path / "run"
    run.mkdir()
    criteria = [
        f'{{"name": "huge", "kind": "max_speed", "passed": true, "value": {10**400}, "limit": Infinity}}',
        f'{{"name": "deep", "kind": "x", "passed": false, "value": {deep}, "rule": "{"r" * 1000}"}}',
        '{"name": "$$", "kind": "x", "passed": true, "value": 1}',
    ]
    lines = [
        f'{{"episode": "s/seed=1", "scenario": "s", "verdict": "FAIL", "criteria": [{", ".join(criteria)}]}}',
        '{"episode": "s/seed=2", "scenario": "s", "verdict": "PASS", "metrics": {"messages": 5}}',
        '{"episode": "s/seed=3", "scenario": "s", "verdict": "PASS", '
        '"criteria": [{"name": "huge", "passed": true, "value": 1.7e308}]}',
    ]
    (run / RESULTS_FILE).write_text("".join(line + "\n" for line in lines))
    text = _page(run, tmp_path / "run.html")
    assert "(nested deeper than 16 levels)" in text
    assert "r" * 300 + "..." in text
    assert "r" * 301 not in text
    assert 'id="hist-huge"' in text  # drawn without the values beyond what a histogram can hold
    assert 'id="hist--"' in text  # '$$', drawn as text
    assert "results.jsonl metrics: messages: expected an object of topic" in text


# ---- many episodes: the work grows with their number, not its square ----


def _table(run: Path, names: Sequence[str]) -> None:
    with (run / RESULTS_FILE).open("w") as table:
        for index, name in enumerate(names):
            verdict = ("PASS", "FAIL", "ERROR")[index % 3]
            table.write(json.dumps({"episode": name, "scenario": "s", "verdict": verdict}) + "\n")


def test_a_run_of_20000_episodes_has_each_in_its_cell_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    names = [f"s/seed={i % 200},start={i // 200},speed={i % 7}" for i in range(20_000)]
    run = tmp_path / "run"
    run.mkdir()
    _table(run, names)
    calls = []
    cell = page_module._cell
    monkeypatch.setattr(page_module, "_cell", lambda *args: calls.append(args[1]) or cell(*args))
    text = _page(run, tmp_path / "run.html")
    assert sorted(calls) == sorted(names)  # each episode's verdict drawn once in the matrix
    assert len(re.findall(r'<section id="episode-', text)) == 20_000
    assert text.count("<tr><th>") == 1 + 200  # the head and a row per seed
    assert "<th>99</th>" in text  # a column per start


class _CountedSteps:
    """Counts the steps of the work: each line run and each function called, Python's or C's (a
    trace and a profile hook), and stops the work beyond a bound."""

    def __init__(self, bound: int | None = None) -> None:
        self.steps = 0
        self.bound = bound

    def __call__(self, frame: object, event: str, arg: object) -> _CountedSteps:
        self.steps += 1
        if self.bound is not None and self.steps > self.bound:
            raise RuntimeError(f"more than {self.bound} steps: the work grows faster than the episodes")
        return self


def _steps_to_render(tmp_path: Path, names: Sequence[str], bound: int | None = None) -> int:
    run = tmp_path / f"run{len(names)}"
    run.mkdir()
    _table(run, names)
    counter = _CountedSteps(bound)
    sys.settrace(counter)
    sys.setprofile(counter)
    try:
        page_module.sweep_page(run, tmp_path / "run.html")
    finally:
        sys.setprofile(None)
        sys.settrace(None)
    return counter.steps


@pytest.mark.parametrize(
    "name_of",
    [
        lambda i: f"s/seed={i % 50},start={i // 50}",  # a full matrix: cells = episodes
        lambda i: f"s/seed={i},start={i}",  # a diagonal: as many rows and columns as episodes
        lambda i: f"s/axis{i}=1",  # an axis of its own per episode
    ],
    ids=["matrix", "diagonal", "axis-each"],
)
def test_the_work_of_a_page_grows_linearly_with_its_episodes(tmp_path: Path, name_of):
    """Ten times the episodes, at most eleven times the steps (a scan of every episode for each
    cell, or of every axis for each episode, makes a hundred times)."""
    small = _steps_to_render(tmp_path, [name_of(i) for i in range(500)])
    large = _steps_to_render(tmp_path, [name_of(i) for i in range(5000)], bound=11 * small)
    assert large <= 11 * small


def test_a_run_s_page_draws_at_most_its_bound_of_episodes_those_that_did_not_pass_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(page_module, "MAX_DRAWN_EPISODES", 2)
    run = _run(tmp_path, "s/seed=1", "s/seed=2")
    _run(tmp_path, "s/seed=3", verdict=Verdict.FAIL)
    for seed in (1, 2, 3):
        _write_log(run / "s" / f"seed={seed}" / "episode_log.mcap")
    text = _page(run, tmp_path / "run.html")
    assert text.count('id="track"') == 2
    assert 'id="track"' not in text[text.index('id="episode-s-seed-2"') : text.index('id="episode-s-seed-3"')]
    assert "Not drawn: a run&#x27;s page draws 2 episodes" in text
    assert MAX_DRAWN_EPISODES >= 100
