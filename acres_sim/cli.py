"""acres_sim: run the reference simulator.

    acres_sim --lockstep --port 47100 --seed 42
    acres_sim --autopilot
    acres_sim --vehicle maxxum
    acres_sim --agent polaris:polaris --agent "polaris 2:polaris" --agent maxxum:maxxum
    acres_sim --lockstep --start-utc 20261002T072309 --episode-log session.mcap

A Polaris stands parked in P, as a real parked vehicle does, until its drive-by-wire drives it
(the commands of the bridge: enable, gear, steering, throttle, brake, ULC). With --autopilot the
built-in route follower drives every Polaris around the route whenever its drive-by-wire is not
enabled. A Maxxum stands still until commanded.

With --episode-log PATH it writes the episode log of the session (the /sim/* channels,
acres_sim.episode.log, docs/episode_log.md) into a new MCAP file, complete once the simulator stops.

It prints one line when it listens, then serves until SIGINT or SIGTERM (exit status 0; a signal
that comes while it is still starting ends it at once, also with 0, and leaves no episode log).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import signal
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.session_token import read_token
from acres_bridge.wire.vocabulary import Source, Vehicle
from acres_sim.errors import AcresSimError
from acres_sim.sensors.compiled_cast import Backend, warm_up
from acres_sim.sensors.scene import Scene
from acres_sim.sensors.tile import acre_scene, flat_scene
from acres_sim.server import SimServer, StepObserver
from acres_sim.server.pacing import REPORT_INTERVAL_S
from acres_sim.world.agents import Pose2D
from acres_sim.world.model import DEFAULT_MAP, AgentSpec, World

SCENES: dict[str, Callable[[], Scene]] = {"acre": acre_scene, "flat": flat_scene}
_log = logging.getLogger("acres_sim")
MAX_AGENT_PORTS = 32  # room that --agent-ports leaves above its base: 16 agents

__all__ = ["StartPose", "main", "parse_agent", "parse_start"]


@dataclasses.dataclass(frozen=True)
class StartPose:
    """A start pose from the command line: the agent it is for (None: the first) and its pose."""

    agent: str | None
    pose: Pose2D


def parse_start(text: str, *, utm: bool = False) -> StartPose:
    """'[NAME=]X,Y,YAW_DEG' -> a StartPose: tile x, y in m (or, with `utm`, easting and northing in
    the tile's UTM zone) and the yaw in degrees counter-clockwise from grid east."""
    name, sep, values = text.rpartition("=")
    parts = values.split(",")
    what = "E,N,YAW_DEG" if utm else "X,Y,YAW_DEG"
    try:
        x, y, yaw_deg = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected [NAME=]{what}, found {text!r}") from None
    if not all(math.isfinite(v) for v in (x, y, yaw_deg)) or (sep and not name):
        raise argparse.ArgumentTypeError(f"expected [NAME=]{what} with finite numbers, found {text!r}")
    if utm:
        x, y, _ = ACRE_GEOREFERENCE.utm_to_world(x, y, 0.0)
    return StartPose(name if sep else None, Pose2D(x=x, y=y, yaw=math.radians(yaw_deg)))


def _with_starts(agents: Sequence[AgentSpec], starts: Sequence[StartPose]) -> list[AgentSpec]:
    """The agents with the start poses of the command line; ArgumentTypeError for an agent that the
    session does not have."""
    placed = list(agents)
    names = [a.name for a in agents]
    for start in starts:
        name = names[0] if start.agent is None else start.agent
        if name not in names:
            raise argparse.ArgumentTypeError(
                f"--start for {name!r}: the session's agents are {', '.join(names)}"
            )
        index = names.index(name)
        placed[index] = dataclasses.replace(placed[index], start=start.pose)
    return placed


def parse_agent(text: str) -> AgentSpec:
    """'name:vehicle' -> an AgentSpec; the vehicle is polaris or maxxum."""
    name, sep, vehicle = text.rpartition(":")
    if not sep or not name or vehicle not in tuple(Vehicle):
        raise argparse.ArgumentTypeError(f"expected NAME:polaris or NAME:maxxum, found {text!r}")
    return AgentSpec(name=name, vehicle=Vehicle(vehicle))


def _utc(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYYMMDDTHHMMSS, found {text!r}") from None


def make_world(args: argparse.Namespace, agents: Sequence[AgentSpec], start: datetime) -> World:
    """The session the command line describes; AcresSimError when it cannot be (e.g. a Maxxum in Core)."""
    return World(
        seed=args.seed,
        start_utc=start,
        agents=agents,
        lockstep=args.lockstep,
        map_name=args.map,
        source=Source.CORE if args.core else Source.UNREAL,
        scene=SCENES[args.scene](),
        perception=args.perception,
        ray_cast=Backend(args.ray_cast),
    )


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (exit status 2) what argparse's types do not: ranges, an existing episode log."""
    if args.seed < 0 or args.seed >= 1 << 32:
        parser.error("--seed must be in 0 .. 2^32-1")
    if not 0 <= args.agent_ports <= 65535 - 2 * MAX_AGENT_PORTS:
        parser.error(f"--agent-ports must be 0 or a port that leaves room for {MAX_AGENT_PORTS} ports")
    if not 0 <= args.can_udp_port <= 65535:
        parser.error("--can-udp-port must be 0 or a UDP port (1 .. 65535)")
    if not 0.1 <= args.pace_report_s <= 3600.0:
        parser.error("--pace-report-s must be in 0.1 .. 3600 s")
    if args.episode_log is not None and args.episode_log.exists():
        parser.error(f"--episode-log {args.episode_log}: the file exists; the log never overwrites a file")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="acres_sim",
        description="The ACRES reference simulator. A Polaris stands parked in P until its "
        "drive-by-wire drives it, or, with --autopilot, the built-in route follower.",
    )
    parser.add_argument(
        "--vehicle",
        choices=tuple(str(vehicle) for vehicle in Vehicle),
        default=str(Vehicle.POLARIS),
        help="the vehicle of a one-agent session (default polaris)",
    )
    parser.add_argument(
        "--agent",
        type=parse_agent,
        action="append",
        default=[],
        metavar="NAME:VEHICLE",
        help="an agent of the session, agent 0 first (repeat; overrides --vehicle)",
    )
    parser.add_argument(
        "--start",
        type=parse_start,
        action="append",
        default=[],
        metavar="[NAME=]X,Y,YAW_DEG",
        help="an agent's start pose on the tile (world x, y in m, yaw in degrees from east), "
        "before the first step (repeat per agent; without NAME the first agent)",
    )
    parser.add_argument(
        "--start-utm",
        type=lambda text: parse_start(text, utm=True),
        action="append",
        default=[],
        metavar="[NAME=]E,N,YAW_DEG",
        help="as --start, in UTM easting and northing of the tile's zone",
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of the sensor noise (default 42)")
    parser.add_argument("--lockstep", action="store_true", help="advance only on step requests")
    parser.add_argument(
        "--autopilot",
        action="store_true",
        help="the built-in route follower drives every Polaris while its drive-by-wire is not enabled "
        "(default: a Polaris stands parked in P until the drive-by-wire drives it)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    parser.add_argument("--port", type=int, default=47100, help="control port (default 47100; 0 = any)")
    parser.add_argument(
        "--agent-ports",
        type=int,
        default=0,
        metavar="BASE",
        help="agent i's sensor and vehicle channels on BASE + 2i and BASE + 2i + 1 "
        "(default: ports of the system's choice)",
    )
    parser.add_argument(
        "--can-udp-port",
        type=int,
        default=0,
        metavar="PORT",
        help="the first Maxxum's CAN bus on this UDP port, left out of HELLO as the game's -RlCanUdp= "
        "(the bridge then needs can_udp_port:=PORT); default: a port of the system's choice, announced",
    )
    parser.add_argument("--map", default=DEFAULT_MAP, help=f"map name (default {DEFAULT_MAP})")
    parser.add_argument("--core", action="store_true", help="an ACRES Core session (source core)")
    parser.add_argument(
        "--scene",
        choices=tuple(SCENES),
        default="acre",
        help="what the LiDARs and cameras see and the vehicles drive on: acre (the tile: rolling "
        "ground, farm buildings, crop) or flat (flat ground and nothing else); default acre",
    )
    parser.add_argument(
        "--perception",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="make LiDAR clouds and camera images (default on; --no-perception saves their cost)",
    )
    parser.add_argument(
        "--ray-cast",
        choices=tuple(str(backend) for backend in Backend),
        default=str(Backend.COMPILED),
        help="the sensors' ray caster: compiled (machine code on every core, made or loaded from its "
        "cache at start) or numpy (the reference); the same frames either way (default compiled)",
    )
    parser.add_argument(
        "--start-utc",
        type=_utc,
        default=None,
        help="session start for the episode ids, YYYYMMDDTHHMMSS (default now)",
    )
    parser.add_argument(
        "--episode-log",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the episode log of the session (an MCAP file of the /sim/* channels) to PATH, "
        "which must not exist; with --start-utc and --lockstep the same requests give the same file",
    )
    parser.add_argument(
        "--pace-report-s",
        type=float,
        default=REPORT_INTERVAL_S,
        metavar="SECONDS",
        help="free run: say the real-time factor and the perception steps skipped at most this "
        f"often, while slower than real time or skipping (default {REPORT_INTERVAL_S:g})",
    )
    parser.add_argument(
        "--session-token-file",
        type=Path,
        metavar="PATH",
        help="serve only the bridge that says the token in this file (a session's: read once at start)",
    )
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    # From here on a stop is exit status 0 without a traceback, also while the world is being built.
    signal.signal(signal.SIGINT, _stop_at_once)
    signal.signal(signal.SIGTERM, _stop_at_once)
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="acres_sim %(levelname)s: %(message)s")
    _check_args(parser, args)
    agents = args.agent or [AgentSpec(name=args.vehicle, vehicle=Vehicle(args.vehicle))]
    try:
        agents = _with_starts(agents, [*args.start, *args.start_utm])
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    if args.autopilot:
        agents = [
            dataclasses.replace(a, autopilot=True) if a.vehicle == Vehicle.POLARIS else a for a in agents
        ]
    start = args.start_utc or datetime.now(UTC).replace(microsecond=0)
    observers: list[StepObserver] = []
    try:
        server = _start_server(args, agents, start, observers)
    except _StopRequested:
        _discard(observers, args.episode_log)
        return 0
    except AcresSimError as error:
        print(f"acres_sim: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        _discard(observers, args.episode_log)
        print(f"acres_sim: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    print(
        f"acres_sim: listening on {args.host}:{server.control_port} "
        f"({'lockstep' if args.lockstep else 'free run'}, seed {args.seed}, "
        f"{'autopilot' if args.autopilot else 'no autopilot'}, scene {args.scene}, "
        f"{'perception' if args.perception else 'no perception'}, "
        f"agents {', '.join(f'{a.name} ({a.vehicle})' for a in agents)}"
        f"{f', episode log {args.episode_log}' if args.episode_log is not None else ''})",
        flush=True,
    )
    server.serve_forever()
    return 0


def _session_token(path: Path | None) -> str:
    """The session's token from its file ("" without one); AcresSimError naming the file."""
    if path is None:
        return ""
    try:
        return read_token(path)
    except ProtocolError as error:
        raise AcresSimError(str(error)) from None


class _StopRequested(BaseException):
    """SIGINT or SIGTERM before the simulator serves: nothing ran, so it ends at once (a
    BaseException, as KeyboardInterrupt is, so that no `except Exception` on the way holds it)."""


def _stop_at_once(_signum: int, _frame: FrameType | None) -> None:
    raise _StopRequested


def _start_server(
    args: argparse.Namespace,
    agents: Sequence[AgentSpec],
    start: datetime,
    observers: list[StepObserver],
) -> SimServer:
    """The world, its episode log when asked for (appended to `observers`) and a listening server,
    whose stop SIGINT and SIGTERM request from then on."""
    token = _session_token(args.session_token_file)
    _log.debug("building the world: scene %s, %d agents", args.scene, len(agents))
    if args.perception and args.ray_cast == Backend.COMPILED:
        warm_up()  # compiled or loaded from the cache now, not in the first frame
    world = make_world(args, agents, start)
    if args.episode_log is not None:
        # Imported only when asked for: it loads the message definitions and the rosbag2 writer.
        from acres_sim.episode.log import EpisodeLog  # noqa: PLC0415

        observers.append(EpisodeLog(world, args.episode_log))
    server = SimServer(
        world,
        host=args.host,
        port=args.port,
        agent_ports=args.agent_ports,
        can_udp_port=args.can_udp_port,
        observers=observers,
        pace_report_s=args.pace_report_s,
        token=token,
    )

    def stop(_signum: int, _frame: FrameType | None) -> None:
        server.stop()

    try:
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
    except _StopRequested:
        server.close()
        raise
    return server


def _discard(observers: Sequence[StepObserver], episode_log: Path | None) -> None:
    """Close what was opened for a session that never ran, and leave no episode log behind."""
    for observer in observers:
        observer.close()
    if episode_log is not None:
        episode_log.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
