"""The episode log of the reference simulator run as a process: acres_sim --episode-log PATH.

A bare wire-protocol client steps a lockstep session for 10 s of simulation time (1200 steps),
with a reset that puts the Polaris into a crop strip; no bridge is needed. The file is read with
the mcap library (mcap_ros2's decoder) and with rosbags, an independent implementation, and its
messages are compared with a World run in the test with the same seed and requests.
"""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.highlevel import AnyReader

from acres_bridge.geo.rotation import quaternion_from_rpy
from acres_bridge.wire import (
    PROTOCOL_VERSION,
    AgentReset,
    ClientHello,
    EpisodeInfo,
    FrameReader,
    Hello,
    StepDone,
    StepRequest,
    decode,
    encode,
)
from acres_sim.clock import NS_PER_S, step_stamp_ns
from acres_sim.world.model import AgentSpec, World
from acres_sim.world.weather import Weather

from .conftest import START_UTC, TIMEOUT_S, Processes, free_port

pytestmark = pytest.mark.integration

SEED = 42
STEPS_BEFORE_RESET = 120
STEPS = 1200
IN_THE_CROP = (-12.0, -40.0, 0.5 * math.pi)  # in a crop strip beside the route, heading north
START = datetime.strptime(START_UTC, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)


class ControlClient:
    """The control channel of the wire protocol, and nothing else: handshake, steps, resets."""

    def __init__(self, port: int) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        self._reader = FrameReader()
        self.hello = self._expect(Hello)
        self._sock.sendall(
            encode(ClientHello(protocol_version=PROTOCOL_VERSION, client="episode log test", role="control"))
        )
        self._expect(EpisodeInfo)
        self._request = 0

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._sock.close()

    def _expect(self, kind: type[Any]) -> Any:
        """The next message of ``kind``; Clock and the other control traffic in between is skipped."""
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            for frame in self._reader.frames():
                message = decode(frame)
                if isinstance(message, kind):
                    return message
            data = self._sock.recv(1 << 20)
            if not data:
                pytest.fail(
                    f"the simulator closed the control channel while the test waited for {kind.__name__}"
                )
            self._reader.feed(data)
        pytest.fail(f"no {kind.__name__} from the simulator within {TIMEOUT_S} s")

    def step(self, steps: int) -> int:
        self._request += 1
        self._sock.sendall(
            encode(
                StepRequest(request_id=self._request, steps=steps, command_seqs=(0,) * len(self.hello.agents))
            )
        )
        done: StepDone = self._expect(StepDone)
        assert done.request_id == self._request
        return done.last_step

    def reset_agent(self, agent: int, x: float, y: float, yaw: float) -> None:
        self._sock.sendall(encode(AgentReset(agent=agent, x_m=x, y_m=y, yaw_rad=yaw)))
        episode: EpisodeInfo = self._expect(EpisodeInfo)
        assert episode.reset_epoch == 1


def _session(processes: Processes, path: Path) -> None:
    """A lockstep session of the Polaris on autopilot, written to ``path``; the simulator is stopped
    (SIGINT) at the end, which closes the file."""
    port = free_port()
    simulator = processes.simulator(port, "--autopilot", "--episode-log", str(path), seed=SEED)
    with ControlClient(port) as client:
        assert client.step(STEPS_BEFORE_RESET) == STEPS_BEFORE_RESET
        client.reset_agent(0, *IN_THE_CROP)
        assert client.step(STEPS - STEPS_BEFORE_RESET) == STEPS
    assert simulator.stop() == 0


def _reference() -> list[Any]:
    """The states of the same session, made in this process."""
    world = World(
        seed=SEED, start_utc=START, agents=(AgentSpec(name="polaris", autopilot=True),), perception=False
    )
    states = [world.advance().states[0] for _ in range(STEPS_BEFORE_RESET)]
    world.reset_agent(0, x=IN_THE_CROP[0], y=IN_THE_CROP[1], yaw=IN_THE_CROP[2])
    states += [world.advance().states[0] for _ in range(STEPS - STEPS_BEFORE_RESET)]
    return states


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, module_processes: Processes) -> Path:
    path = tmp_path_factory.mktemp("run") / "session.mcap"
    _session(module_processes, path)
    return path


def _decoded(path: Path) -> dict[str, list[tuple[int, int, Any]]]:
    """(log_time, publish_time, message) of each channel, read with the mcap library and mcap_ros2."""
    found: dict[str, list[tuple[int, int, Any]]] = defaultdict(list)
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, message, decoded in reader.iter_decoded_messages():
            found[channel.topic].append((message.log_time, message.publish_time, decoded))
    return found


def _conditions_expected() -> int:
    """The Conditions of 10 s: at 0 s and each whole second, and when the rain changes in between."""
    weather = Weather(seed=SEED, start_utc=START, latitude_deg=40.4698, longitude_deg=-86.9953)
    changes = 0
    after = 0
    while (change := weather.next_change_ns(after)) is not None and change <= step_stamp_ns(STEPS):
        changes += change % NS_PER_S != 0
        after = change
    return 11 + changes


def test_every_channel_has_the_count_of_its_rate(session: Path) -> None:
    messages = _decoded(session)
    counts = {name: len(items) for name, items in messages.items()}
    assert counts["/sim/agent_states"] == STEPS
    assert counts["/sim/conditions"] == _conditions_expected()
    assert counts["/sim/episode"] == 2  # the start and the reset
    assert counts["/sim/agents"] == 2  # the reset of agent 0 starts an episode
    assert counts["/sim/shifts"] == 1
    assert counts["/sim/farm_stamps"] > 0  # the reset put the Polaris into the crop
    assert counts["/sim/farm_events"] > 0
    assert "/sim/task" not in counts  # the reference simulator writes no task


def test_the_messages_are_the_simulators_state(session: Path) -> None:
    messages = _decoded(session)
    reference = _reference()
    states = messages["/sim/agent_states"]
    for step, ((log_time, publish_time, message), state) in enumerate(zip(states, reference, strict=True), 1):
        assert message.step == step
        assert log_time == publish_time == step_stamp_ns(step)
        (agent,) = message.agents
        p, q = agent.pose.position, agent.pose.orientation
        assert (p.x, p.y, p.z) == (state.x, state.y, state.z)
        assert (q.x, q.y, q.z, q.w) == quaternion_from_rpy(state.roll, state.pitch, state.yaw)
        assert agent.speed_mps == state.speed
    episodes = [m for _, _, m in messages["/sim/episode"]]
    assert [(e.episode, e.reset_epoch, e.step, e.lockstep, e.state) for e in episodes] == [
        (0, 0, 0, True, 2),
        (1, 1, STEPS_BEFORE_RESET, True, 2),
    ]
    assert episodes[1].episode_id == f"{START_UTC}-0001"
    assert [log for log, _, _ in messages["/sim/agents"]] == [0, step_stamp_ns(STEPS_BEFORE_RESET)]
    (info,) = messages["/sim/agents"][1][2].agents
    assert (info.name, info.vehicle, info.wheelbase_m) == ("polaris", "polaris", 2.06)
    assert [log for log, _, _ in messages["/sim/conditions"]][:11] == [k * NS_PER_S for k in range(11)]
    for log_time, _, stamps in messages["/sim/farm_stamps"]:
        assert log_time == step_stamp_ns(stamps.step)
        assert stamps.step > STEPS_BEFORE_RESET
        assert {s.agent for s in stamps.stamps} == {"polaris"}
    events = [e for _, _, m in messages["/sim/farm_events"] for e in m.events]
    assert {e.kind for e in events} >= {0, 2}  # crop flattened, soil compacted
    # The energy ledger restarted with the reset and grew since.
    ledgers = [m.agents[0].energy for _, _, m in states]
    assert ledgers[STEPS_BEFORE_RESET].engine_work_j < ledgers[STEPS_BEFORE_RESET - 1].engine_work_j
    assert ledgers[-1].traction_work_j > 0.0


def test_rosbags_reads_the_same_messages(session: Path) -> None:
    decoded = _decoded(session)
    with AnyReader([session]) as reader:
        counts: dict[str, int] = defaultdict(int)
        for connection, timestamp, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            index = counts[connection.topic]
            counts[connection.topic] += 1
            assert timestamp == decoded[connection.topic][index][0]
            if connection.topic == "/sim/agent_states":
                mine = decoded[connection.topic][index][2].agents[0]
                assert message.agents[0].pose.position.x == mine.pose.position.x
                assert message.agents[0].energy.fuel_used_l == mine.energy.fuel_used_l
        topics = {c.topic: c for c in reader.connections}
    assert counts == {name: len(items) for name, items in decoded.items()}
    assert topics["/sim/episode"].msgtype == "acres_interfaces/msg/Episode"
    qos = topics["/sim/episode"].ext.offered_qos_profiles[0]  # type: ignore[union-attr]
    assert (qos.reliability.name, qos.durability.name, qos.depth) == ("RELIABLE", "TRANSIENT_LOCAL", 1)
    qos = topics["/sim/agent_states"].ext.offered_qos_profiles[0]  # type: ignore[union-attr]
    assert (qos.reliability.name, qos.durability.name, qos.depth) == ("RELIABLE", "VOLATILE", 10)


def test_the_same_session_gives_the_same_bytes(session: Path, tmp_path: Path, processes: Processes) -> None:
    again = tmp_path / session.name  # the file name is in the rosbag2 metadata
    _session(processes, again)
    assert again.read_bytes() == session.read_bytes()


def _refused(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acres_sim.cli", "--no-perception", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_an_existing_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "taken.mcap"
    path.write_bytes(b"keep me")
    result = _refused("--port", "0", "--episode-log", str(path))
    assert result.returncode == 2
    assert f"--episode-log {path}: the file exists" in result.stderr
    assert path.read_bytes() == b"keep me"


def test_a_path_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "session.mcap"
    result = _refused("--port", "0", "--episode-log", str(path))
    assert result.returncode == 2
    assert f"acres_sim: episode log: cannot create {path}" in result.stderr


def test_a_simulator_that_cannot_listen_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "session.mcap"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = _refused("--port", str(port), "--episode-log", str(path))
    assert result.returncode == 1
    assert "cannot listen" in result.stderr
    assert not path.exists()
