"""One episode: its own session (simulator, bridge, stack in a DDS domain of their own), stepped to
its end, judged, and written to its folder.

    result = run_episode(episode, Path("runs/today"), scenario_dir=Path("examples/scenarios"))

The folder (``<run>/<scenario>/<variant>``) gets:

    episode_log.mcap    the simulator's episode log
    recording.mcap      a rosbag2 MCAP of the topics the criteria read (or all, or none)
    simulator.log, bridge.log, stack.log
    metrics.json        each criterion's value, the simulated time, the messages read per topic
    verdict.json        PASS / FAIL with each failed criterion / ERROR with the cause

In lockstep the runner steps the session through SteppingClient, ``steps_per_request`` at a time or,
with ``stack_rates``, to each tick of the stack's timers (acres_bridge.lockstep.stack_pace), so
every message of every step is read and a recording's log times are simulation times. Without a
stack the same episode gives the same files; with one, the same steps and counts (a stack's tick
may now and then compute from the step before: docs/scenarios.md). In real time the simulator runs
freely and the runner reads as a subscriber does. Every process of the episode is ended at its end,
whatever happened.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy
from rclpy.serialization import serialize_message
from rosbags.interfaces.typing import Typesdict

from acres_bridge.errors import AcresBridgeError, ProcessFailedError
from acres_bridge.lockstep.batch import message_stamp_ns
from acres_bridge.lockstep.stack_graph import wait_for_paced_stack
from acres_bridge.lockstep.stack_pace import StackPace
from acres_bridge.lockstep.stack_reply import BridgeTally, PacedReplies, StackReplies
from acres_bridge.msg_profiles import Direction, MsgProfiles, RateKind, TopicSpec, load_profiles
from acres_bridge.names import resolve_name
from acres_bridge.scenario.criteria import Criterion, CriterionResult, make_judges
from acres_bridge.scenario.errors import ScenarioFileError
from acres_bridge.scenario.results import EpisodeResult, Verdict
from acres_bridge.scenario.run_folder import RunFolderError, fresh_episode_folder
from acres_bridge.scenario.schema import Scenario
from acres_bridge.scenario.stack import stack_command
from acres_bridge.scenario.sweep import Episode
from acres_bridge.session import AgentConfig, IsolatedSession, SessionConfig, StartPose
from acres_bridge.tools.bag import BagWriter
from acres_bridge.tools.cdr import zero_padding
from acres_bridge.tools.msgdef import definition_text, parse_definition
from acres_bridge.tools.qos import qos_from_rclpy

__all__ = [
    "PHYSICS_HZ",
    "episode_topics",
    "run_episode",
    "session_config",
    "stack_rates",
    "wall_clock_limit_s",
]

PHYSICS_HZ: Final = 120
START_ALLOWANCE_S: Final = 120.0  # the processes' start, on a busy machine
WALL_PER_SIM_S: Final = 10.0  # an episode may run 10 times slower than real time before it counts as hung
STACK_READY_S: Final = 30.0  # how long the runner waits for the stack's first command publisher
READY_S: Final = 10.0  # a free-running episode's start waits at most this long for its topics' publishers
PERCEPTION: Final = frozenset({"lidar/points", "camera/image_raw", "camera/camera_info"})
_NS_PER_S: Final = 1_000_000_000
_SUBSCRIBER_DEPTH: Final = 1000
_log = logging.getLogger("acres_scenario")


def wall_clock_limit_s(scenario: Scenario) -> float:
    """The wall-clock time an episode may take before it is ended as hung: ``timeout_s`` when the
    scenario gives one, else START_ALLOWANCE_S + WALL_PER_SIM_S x its simulated duration."""
    if scenario.timeout_s is not None:
        return scenario.timeout_s
    return START_ALLOWANCE_S + WALL_PER_SIM_S * scenario.duration_s


def session_config(scenario: Scenario) -> SessionConfig:
    """The isolated session an episode of `scenario` runs in."""
    spec = scenario.session

    def start(pose: Any) -> StartPose | None:
        return None if pose is None else StartPose(x=pose.x, y=pose.y, yaw_deg=pose.yaw_deg, frame=pose.frame)

    if spec.agents is not None:
        agents = tuple(AgentConfig(name=a.name, vehicle=a.vehicle, start=start(a.start)) for a in spec.agents)
        if spec.start is not None:
            agents = (
                AgentConfig(name=agents[0].name, vehicle=agents[0].vehicle, start=start(spec.start)),
                *agents[1:],
            )
    else:
        vehicle = spec.first_vehicle
        agents = (AgentConfig(name=vehicle, vehicle=vehicle, start=start(spec.start)),)
    return SessionConfig(
        agents=agents,
        scene=spec.scene,
        map=spec.map,
        seed=spec.seed,
        start_utc=spec.start_utc,
        core=spec.core,
        perception=spec.perception,
        lockstep=scenario.stepping.mode == "lockstep",
        autopilot=scenario.stack.builtin == "autopilot",
        # a stack stepped at its own pace gets each request's data before its last clock
        bridge_parameters={"acked_clock": True} if scenario.stepping.stack_rates else {},
    )


def _table_topic(profiles: MsgProfiles, vehicle: str, name: str) -> TopicSpec:
    """The row of `vehicle`'s table named `name` (with or without the leading '/')."""
    for spec in profiles.table(vehicle):
        if spec.name.lstrip("/") == name.lstrip("/"):
            return spec
    raise ScenarioFileError(
        f"topic {name!r} is not a topic of the {vehicle} (acres_topics --vehicle {vehicle} lists them)"
    )


def stack_rates(scenario: Scenario, profiles: MsgProfiles | None = None) -> dict[str, float]:
    """The stack's declared command rates (``stepping.stack_rates``) by the table's topic names;
    ScenarioFileError for a topic that is not a command topic of agent 0's vehicle."""
    table = profiles or load_profiles()
    vehicle = scenario.session.first_vehicle
    rates: dict[str, float] = {}
    for name, rate_hz in scenario.stepping.stack_rates.items():
        spec = _table_topic(table, vehicle, name)
        if spec.direction is not Direction.SUBSCRIBE:
            commands = [s.name for s in table.table(vehicle) if s.direction is Direction.SUBSCRIBE]
            raise ScenarioFileError(
                f"stepping.stack_rates: {name} is not a command topic of the {vehicle} "
                f"(the bridge publishes it); its command topics are {commands}"
            )
        rates[spec.name] = rate_hz
    return rates


def episode_topics(
    scenario: Scenario, profiles: MsgProfiles | None = None
) -> tuple[list[TopicSpec], list[TopicSpec]]:
    """(published, commands): the rows of agent 0's table the episode reads. Published rows are the
    criteria's plus, with ``record: all``, every periodic topic the bridge publishes (the sensors'
    only with perception on); commands are the stack's topics a criterion counts or
    ``stepping.stack_rates`` declares (the stepper counts them: the recording shows what it saw)."""
    table = profiles or load_profiles()
    vehicle = scenario.session.first_vehicle
    names: list[str] = list(stack_rates(scenario, table))
    for judge in make_judges(scenario.criteria, vehicle):
        names += [n for n in judge.topics if n not in names]
    rows = [_table_topic(table, vehicle, name) for name in names]
    if scenario.record.topics == "all":
        for spec in table.table(vehicle):
            wanted = spec.direction is Direction.PUBLISH and spec.rate_kind is RateKind.PERIODIC
            if wanted and (scenario.session.perception or spec.name.lstrip("/") not in PERCEPTION):
                rows += [spec] if spec not in rows else []
    published = [s for s in rows if s.direction is Direction.PUBLISH]
    commands = [s for s in rows if s.direction is Direction.SUBSCRIBE]
    return published, commands


@dataclass
class _Reader:
    """Hands each message to the judges that read its topic and to the recording. A recorded
    message's padding is zeroed (Fast CDR leaves it as it finds it), so its bytes are its values'."""

    judges: Sequence[Criterion]
    names: dict[str, str]  # resolved topic -> the table's name, as the judges know it
    bag: BagWriter | None
    counts: dict[str, int] = field(default_factory=dict)
    _layouts: dict[str, tuple[str, Typesdict]] = field(default_factory=dict)

    def read(self, topic: str, message: Any, time_ns: int) -> None:
        name = self.names[topic]
        self.counts[name] = self.counts.get(name, 0) + 1
        time_s = time_ns / _NS_PER_S
        for judge in self.judges:
            if name in judge.topics:
                judge.observe(name, message, time_s)
        if self.bag is not None and topic in self.bag.topics:
            layout = self._layouts.get(topic)
            if layout is None:
                type_name = self.bag.topics[topic].type_name
                layout = self._layouts[topic] = (
                    type_name,
                    parse_definition(definition_text(type_name), type_name),
                )
            data = zero_padding(serialize_message(message), *layout)
            self.bag.write(topic, data, log_time_ns=time_ns, publish_time_ns=message_stamp_ns(message))


def run_episode(
    episode: Episode,
    run_dir: Path,
    *,
    scenario_dir: Path,
) -> EpisodeResult:
    """Run one episode to its verdict; never raises for what happens inside the episode (that is an
    ERROR result)."""
    scenario = episode.scenario
    try:
        folder = fresh_episode_folder(run_dir, episode.folder)
    except (RunFolderError, OSError) as refused:
        return EpisodeResult(
            episode=episode.name,
            scenario=scenario.name,
            verdict=Verdict.ERROR,
            error=f"its folder: {refused}",
            folder=str(run_dir / episode.folder),
        )
    started = time.monotonic()
    deadline = started + wall_clock_limit_s(scenario)
    judges: list[Criterion] = []
    metrics: dict[str, Any] = {}
    error: str | None = None
    session = IsolatedSession(session_config(scenario), folder)
    try:
        session.start()
        judges, metrics = _drive(episode, session, folder, scenario_dir, deadline)
    except (AcresBridgeError, TimeoutError) as failure:
        overdue = time.monotonic() >= deadline  # a wait cut short by the limit: the limit is the cause
        error = _cause(_overdue(scenario) if overdue else failure, session)
    finally:
        session.close()
    wall_s = round(time.monotonic() - started, 3)
    results: list[CriterionResult] = (
        [] if error is not None else [j.finish(metrics["sim_time_s"]) for j in judges]
    )
    unjudged = [f"{r.name}: {r.unjudged}" for r in results if r.unjudged]
    if unjudged:  # no verdict without evidence: an episode that lost its data says so
        error = "criteria without evidence, not judged: " + "; ".join(unjudged)
    intruders = session.refused_clients()
    if intruders:  # something else than the session's bridge tried to reach the simulator
        intrusion = (
            f"the simulator refused {intruders} connection(s) without the session's token: a process "
            "other than the session's bridge tried to reach it (simulator.log names each)"
        )
        error = intrusion if error is None else f"{intrusion}; {error}"
    if error is not None:
        verdict = Verdict.ERROR
    else:
        verdict = Verdict.PASS if all(r.passed for r in results) else Verdict.FAIL
    result = EpisodeResult(
        episode=episode.name,
        scenario=scenario.name,
        verdict=verdict,
        criteria=tuple(r.as_dict() for r in results),
        metrics={**metrics, "criteria": {r.name: r.value for r in results}},
        error=error,
        folder=str(folder),
        wall_s=wall_s,
    )
    _write_json(folder / "metrics.json", result.metrics)
    _write_json(folder / "verdict.json", {"verdict": str(verdict), "failed": result.failed, "error": error})
    return result


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _cause(failure: BaseException, session: IsolatedSession) -> str:
    """The cause of an ERROR: the process that ended (its exit and last output) where one did,
    else the failure itself with the tails of the processes that still ran."""
    for process in reversed(session.processes):  # the stack first: it is the likeliest culprit
        try:
            process.check_alive()
        except ProcessFailedError as ended:
            return str(ended)
    if isinstance(failure, ProcessFailedError):
        return str(failure)
    tails = "".join(
        f"\n--- last lines of {p.name}.log ---\n" + "\n".join(p.tail(10)) for p in session.processes
    )
    return f"{failure}{tails}"


def _drive(
    episode: Episode, session: IsolatedSession, folder: Path, scenario_dir: Path, deadline: float
) -> tuple[list[Criterion], dict[str, Any]]:
    """Start the stack, run the episode's simulated time, read everything; (judges, metrics)."""
    scenario = episode.scenario
    vehicle = scenario.session.first_vehicle
    judges = make_judges(scenario.criteria, vehicle)
    published, commands = episode_topics(scenario)
    names = {resolve_name(s.ros_name, ""): s.name for s in (*published, *commands)}
    command = stack_command(scenario.stack, scenario_dir)
    lockstep = scenario.stepping.mode == "lockstep"
    # The runner's command readers exist before the stack does, so that none of its commands is
    # sent before they match (the bridge would take it, the runner would not count it).
    stack_commands = _StackCommands(scenario, session) if lockstep else None
    if command is not None:
        session.start_process("stack", command, cwd=scenario_dir)
    bag = None
    if scenario.record.topics != "none" and (published or commands):
        bag = BagWriter(folder / "recording.mcap")
        for spec in (*published, *commands):
            assert spec.qos is not None
            bag.add_topic(
                resolve_name(spec.ros_name, ""),
                spec.type_name,
                offered_qos=[qos_from_rclpy(spec.qos.to_rclpy())],
            )
    reader = _Reader(judges, names, bag)
    if stack_commands is not None:
        stack_commands.reader = reader
    try:
        if command is not None:
            _wait_for_stack(session, scenario, deadline)
        if stack_commands is not None:
            sim_s = _lockstep(
                scenario,
                session,
                published,
                reader,
                stack_commands,
                deadline=deadline,
                has_stack=command is not None,
            )
        else:
            sim_s = _realtime(scenario, session, published, commands, reader, deadline=deadline)
        session.check_alive()
    finally:
        if bag is not None:
            bag.close()
    metrics = {
        "sim_time_s": sim_s,
        "steps": round(sim_s * PHYSICS_HZ),
        "messages": dict(sorted(reader.counts.items())),
    }
    return judges, metrics


def _overdue(scenario: Scenario) -> TimeoutError:
    limit = wall_clock_limit_s(scenario)
    return TimeoutError(f"the episode did not end within its wall-clock limit of {limit:g} s")


def _check_deadline(scenario: Scenario, deadline: float) -> float:
    """The wall-clock time left; TimeoutError when none is."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _overdue(scenario)
    return remaining


def _wait_for_stack(session: IsolatedSession, scenario: Scenario, deadline: float) -> None:
    """Until the stack publishes one of the vehicle's command topics (the bridge only subscribes
    to them), so that simulated time does not run ahead of a stack still starting; at most
    STACK_READY_S, after which a stack that commands nothing yet is let be. With stack rates, until
    each declared topic's publishers subscribe /clock too (lockstep.stack_graph): a publisher on
    the wall clock is an ERROR."""
    node = session.node
    vehicle = scenario.session.first_vehicle
    timeout_s = max(0.0, min(deadline - time.monotonic(), STACK_READY_S))
    rates = stack_rates(scenario)
    commands = [s for s in load_profiles().table(vehicle) if s.direction is Direction.SUBSCRIBE]
    if rates and scenario.stepping.mode == "lockstep":
        declared = [resolve_name(s.ros_name, "") for s in commands if s.name in rates]
        wait_for_paced_stack(node, declared, timeout_s, session.check_alive)
        return
    topics = [resolve_name(s.ros_name, "") for s in commands]
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        session.check_alive()
        if any(node.count_publishers(topic) > 0 for topic in topics):
            return
        time.sleep(0.1)
    _log.info("the stack published none of the %s's command topics within %g s", vehicle, STACK_READY_S)


def _subscribe(
    session: IsolatedSession, specs: Sequence[TopicSpec], on: Callable[[str, Any, Mapping[str, Any]], None]
) -> None:
    """Subscriptions of the session's node to `specs` with their table's QoS and a history deep
    enough for a burst; `on(topic, message, info)` gets each message with rclpy's message info."""
    for spec in specs:
        assert spec.qos is not None
        qos = spec.qos.to_rclpy()
        qos.history, qos.depth = HistoryPolicy.KEEP_LAST, _SUBSCRIBER_DEPTH
        topic = resolve_name(spec.ros_name, "")
        session.node.create_subscription(spec.message_class(), topic, _with_info(on, topic), qos)


def _with_info(on: Callable[[str, Any, Mapping[str, Any]], None], topic: str) -> Callable[..., None]:
    """A callback of `topic` that rclpy calls with the message and its info."""

    def receive(message: Any, info: Mapping[str, Any]) -> None:
        on(topic, message, info)

    return receive


class _StackCommands:
    """The runner's readers of the vehicle's command topics in lockstep: each command of the stack
    counted (per declared topic, at the last step of the request under way: StackPace) and, for a
    topic the episode reads, kept until the request's messages are read."""

    def __init__(self, scenario: Scenario, session: IsolatedSession) -> None:
        self.pace = StackPace(stack_rates(scenario), PHYSICS_HZ)
        self.sent = 0  # commands seen so far, on any command topic of the vehicle
        self.counted_at = 0  # the step a command is counted at
        # (source timestamp, topic, message): read in the order the stack sent them, whichever
        # reader of the runner's took them first
        self.arrived: list[tuple[int, str, Any]] = []
        self.reader: _Reader | None = None
        self.tally = BridgeTally(session.node)  # what the bridge has taken of what is seen here
        table = load_profiles().table(scenario.session.first_vehicle)
        specs = [s for s in table if s.direction is Direction.SUBSCRIBE]
        self._names = {resolve_name(s.ros_name, ""): s.name for s in specs}
        _subscribe(session, specs, self._on_command)

    def _on_command(self, topic: str, message: Any, info: Mapping[str, Any]) -> None:
        self.sent += 1
        self.tally.saw(topic, info)
        self.pace.sent(self._names[topic], self.counted_at)
        if self.reader is not None and topic in self.reader.names:
            self.arrived.append((int(info.get("source_timestamp", 0)), topic, message))


def _lockstep(
    scenario: Scenario,
    session: IsolatedSession,
    published: Sequence[TopicSpec],
    reader: _Reader,
    commands: _StackCommands,
    *,
    deadline: float,
    has_stack: bool,
) -> float:
    """Step the whole duration, reading every message of every step; the simulated time run, s."""
    stepping = scenario.stepping
    total = round(scenario.duration_s * PHYSICS_HZ)
    now_ns = 0
    watched = [s.name for s in published] or ["/clock"]
    reader.names.setdefault("/clock", "/clock")
    executor = SingleThreadedExecutor(context=session.node.context)
    client = session.stepping_client(
        watched, chunk_steps=min(stepping.requested_steps(), 30), executor=executor
    )
    wait_for_stack = has_stack and stepping.wait_for_stack
    replies = StackReplies(executor, lambda: commands.sent, stepping.stack_reply_s, commands.tally)
    paced = PacedReplies(executor, commands.pace, lambda: commands.sent, commands.tally)
    most = stepping.requested_steps()
    done = 0
    while done < total:
        remaining = _check_deadline(scenario, deadline)
        session.check_alive()
        client.timeout_s = min(60.0, remaining)
        before = commands.sent
        request = commands.pace.request_steps(done, min(most, total - done))
        commands.counted_at = done + request
        batch = client.step(request)
        if wait_for_stack and commands.pace.rates:
            paced.wait(done + len(batch.steps), deadline - time.monotonic())
        elif wait_for_stack:
            replies.wait(before, deadline - time.monotonic())
        for step in batch.steps:
            now_ns = step.step * _NS_PER_S // PHYSICS_HZ
            for topic, messages in step.messages.items():
                for message in messages:
                    reader.read(topic, message, now_ns)
        for _sent, topic, message in sorted(commands.arrived, key=lambda command: command[0]):
            reader.read(topic, message, now_ns)
        commands.arrived.clear()
        done += len(batch.steps)
    return done / PHYSICS_HZ


def _realtime(
    scenario: Scenario,
    session: IsolatedSession,
    published: Sequence[TopicSpec],
    commands: Sequence[TopicSpec],
    reader: _Reader,
    *,
    deadline: float,
) -> float:
    """Read as a subscriber while the simulator runs freely, for the duration of simulated time.

    The simulator runs from its start, and a subscriber sees it only once discovery has matched
    it, later on a busy machine. So the episode's time starts at the first /clock after every
    topic read has a publisher (or READY_S after the first /clock, whichever comes first), and
    each message is judged at its time since then."""
    node = session.node
    clock_ns = 0
    start_ns: int | None = None
    first_clock = math.inf
    duration_ns = round(scenario.duration_s * _NS_PER_S)
    profiles = load_profiles()
    clock = _table_topic(profiles, scenario.session.first_vehicle, "/clock")
    read = [*published] if any(s.name == "/clock" for s in published) else [*published, clock]
    names = [resolve_name(spec.ros_name, "") for spec in read]

    def ready() -> bool:
        waited = time.monotonic() - first_clock
        return waited >= READY_S or all(node.count_publishers(name) > 0 for name in names)

    def on_message(topic: str, message: Any, _info: Mapping[str, Any]) -> None:
        nonlocal clock_ns, start_ns, first_clock
        if topic == "/clock":
            clock_ns = message_stamp_ns(message) or clock_ns
            first_clock = min(first_clock, time.monotonic())
            if start_ns is None and ready():
                start_ns = clock_ns
        if start_ns is not None and topic in reader.names and start_ns <= clock_ns <= start_ns + duration_ns:
            stamp_ns = message_stamp_ns(message) or clock_ns  # when it was made, not when it came
            reader.read(topic, message, min(max(stamp_ns, start_ns), clock_ns) - start_ns)

    _subscribe(session, [*read, *commands], on_message)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        while start_ns is None or clock_ns - start_ns < duration_ns:
            _check_deadline(scenario, deadline)
            session.check_alive()
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.remove_node(node)
        executor.shutdown()
    assert start_ns is not None
    return math.floor((clock_ns - start_ns) * PHYSICS_HZ / _NS_PER_S) / PHYSICS_HZ
