"""The pytest plugin of the test kit: the ``acres_sim`` fixture, a session of its own per test.

    @pytest.mark.acres_sim(vehicle="polaris", seed=3, start=(0.0, -50.0, 90.0))
    def test_my_follower(acres_sim):
        acres_sim.start_stack(["ros2", "run", "my_stack", "follower",
                               "--ros-args", "-p", "use_sim_time:=true"])
        acres_sim.wait_for_stack()
        acres_sim.step(seconds=10)
        assert_within_route(acres_sim, max_xte=0.3)

Registered with pytest (entry point ``pytest11``) when acres_bridge is installed; nothing starts
unless a test asks for the fixture. The fixture starts the reference simulator and the bridge in
an isolated session (acres_bridge.session: a DDS domain leased for it alone, so pytest-xdist
workers never share one), yields a ``SessionSim`` (a Sim with ``start_stack`` and the session's
``domain_id`` and ``folder``), and ends every process afterwards, also when the test failed. Its
scope is the test (default) or, with ``--acres-sim-scope=module`` or the ini option
``acres_sim_scope = module``, the module: one session for the module's tests, in time one after
the other. The marker ``acres_sim(...)`` takes vehicle, seed, scene, start (x, y, yaw_deg),
start_utc (a datetime), perception, topics, chunk_steps and stack_rates (command topic -> Hz of the
stack's timers on simulated time: each step then waits for what they owe, see Sim).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

import pytest

__all__ = ["acres_sim", "pytest_addoption", "pytest_configure"]

_SCOPES: Final = ("function", "module")
_MARKER_KEYS: Final = frozenset(
    {"vehicle", "seed", "scene", "start", "start_utc", "perception", "topics", "chunk_steps", "stack_rates"}
)
_DEFAULT_START_UTC: Final = datetime(2026, 6, 21, 12, 0, tzinfo=UTC)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("acres_sim", "the ACRES simulator test kit")
    group.addoption(
        "--acres-sim-scope",
        choices=_SCOPES,
        default=None,
        help="a session per test (function, the default) or per module",
    )
    parser.addini("acres_sim_scope", "the acres_sim fixture's scope: function or module", default="function")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "acres_sim(vehicle, seed, scene, start, start_utc, perception, topics, chunk_steps, stack_rates): "
        "the session of the acres_sim fixture",
    )


def _scope(fixture_name: str, config: pytest.Config) -> str:
    scope = config.getoption("--acres-sim-scope") or config.getini("acres_sim_scope")
    if scope not in _SCOPES:
        raise pytest.UsageError(f"acres_sim_scope must be one of {_SCOPES}, found {scope!r}")
    return str(scope)


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("acres_sim")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    unknown = sorted(set(options) - _MARKER_KEYS)
    if unknown:
        raise pytest.UsageError(
            f"acres_sim marker: unknown options {unknown}; it takes {sorted(_MARKER_KEYS)}"
        )
    return options


@pytest.fixture(scope=_scope)  # type: ignore[arg-type]
def acres_sim(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A lockstep simulator and bridge in a session of their own; see the module."""
    # Imported here: the plugin is loaded into every pytest run of the environment, rclpy is not.
    from acres_bridge.session import AgentConfig, IsolatedSession, SessionConfig, StartPose  # noqa: PLC0415
    from acres_bridge.testing.session_sim import SessionSim  # noqa: PLC0415

    options = _marker_options(request)
    vehicle = str(options.get("vehicle", "polaris"))
    start = options.get("start")
    pose = None if start is None else StartPose(x=float(start[0]), y=float(start[1]), yaw_deg=float(start[2]))
    config = SessionConfig(
        agents=(AgentConfig(name=vehicle, vehicle=vehicle, start=pose),),
        scene=str(options.get("scene", "acre")),
        seed=int(options.get("seed", 42)),
        start_utc=options.get("start_utc", _DEFAULT_START_UTC),
        perception=bool(options.get("perception", False)),
        episode_log=None,
        # a stack stepped at its own pace gets each request's data before its last clock
        bridge_parameters={"acked_clock": True} if options.get("stack_rates") else {},
    )
    folder = tmp_path_factory.mktemp("acres_sim")
    session = IsolatedSession(config, folder)
    try:
        session.start()
        sim = SessionSim(
            session,
            topics=options.get("topics"),
            chunk_steps=int(options.get("chunk_steps", 6)),
            stack_rates=options.get("stack_rates"),
        )
        try:
            yield sim
        finally:
            sim.close()
    finally:
        session.close()
