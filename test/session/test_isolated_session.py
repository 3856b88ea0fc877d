"""An isolated session: a simulator and a bridge in a DDS domain of their own, and every process
ended at its close."""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.processes import localhost_environment
from acres_bridge.session import AgentConfig, IsolatedSession, SessionConfig, SessionError, StartPose
from acres_bridge.session.domains import DomainPoolError, lease_domain
from session.programs import killed_at_the_end

pytestmark = pytest.mark.integration


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def wait_gone(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.05)
    return gone(pid)


def test_two_sessions_step_apart_in_domains_of_their_own(tmp_path):
    start = StartPose(x=5.0, y=-20.0, yaw_deg=90.0)
    first = SessionConfig(agents=(AgentConfig(name="polaris", start=start),), seed=3)
    with IsolatedSession(first, tmp_path / "a") as a, IsolatedSession(SessionConfig(), tmp_path / "b") as b:
        assert a.domain_id != b.domain_id
        assert a.environment()["ROS_DOMAIN_ID"] == str(a.domain_id)
        client_a = a.stepping_client(["/clock", "/sim/ground_truth/odom"])
        client_b = b.stepping_client(["/clock"])
        batch_a = client_a.step(60)
        batch_b = client_b.step(12)
        assert (batch_a.first_step, batch_a.last_step) == (1, 60)
        assert (batch_b.first_step, batch_b.last_step) == (1, 12)  # b's steps are its own
        odom = batch_a.messages("/sim/ground_truth/odom")[0]
        x, y, _ = ACRE_GEOREFERENCE.utm_to_world(odom.pose.pose.position.x, odom.pose.pose.position.y, 0.0)
        assert math.hypot(x - 5.0, y + 20.0) < 0.05  # the start pose applied before the first step
        processes = [*a.processes, *b.processes]
    assert [p.popen.returncode for p in processes] == [0, 0, 0, 0]  # SIGINT: a clean end, not a kill
    assert (tmp_path / "a" / "episode_log.mcap").stat().st_size > 0
    assert "listening on" in (tmp_path / "a" / "simulator.log").read_text()
    assert not a.lease.held
    assert not b.lease.held


def test_close_ends_the_stack_and_whatever_it_started(tmp_path):
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(600)'])\n"
        "print('child', p.pid, flush=True); time.sleep(600)"
    )
    with IsolatedSession(SessionConfig(), tmp_path) as session:
        stack = session.start_process("stack", [sys.executable, "-c", code])
        stack.wait_for_line("child", 30.0)
        grandchild = int(next(line for line in stack.lines if line.startswith("child")).split()[1])
        with pytest.raises(SessionError, match="taken"):
            session.start_process("stack", [sys.executable, "-c", "pass"])
    assert wait_gone(stack.pid)
    assert wait_gone(grandchild)  # it ignored SIGINT: the group's SIGKILL ended it
    watch = session.watch
    assert watch is not None
    assert watch.popen.returncode == -signal.SIGKILL  # the close ends the stack itself
    assert "stopping" not in watch.output


def test_a_simulator_that_cannot_start_is_a_session_error_with_its_output(tmp_path):
    config = SessionConfig(scene="no_such_scene")
    with (
        pytest.raises(SessionError, match="simulator") as caught,
        IsolatedSession(config, tmp_path, ready_timeout_s=30.0),
    ):
        pass
    assert "no_such_scene" in str(caught.value)  # the simulator's own words, from its log


def test_a_session_left_open_ends_its_processes_when_its_program_exits(tmp_path):
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from acres_bridge.session import IsolatedSession, SessionConfig\n"
        f"session = IsolatedSession(SessionConfig(), Path({str(tmp_path)!r}))\n"
        "session.start()\n"
        "print(session.simulator.pid, session.bridge.pid, flush=True)\n"
        "raise RuntimeError('the program fails without closing its session')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=localhost_environment(),
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "the program fails without closing its session" in done.stderr
    simulator, bridge = (int(pid) for pid in done.stdout.split())
    assert wait_gone(simulator)
    assert wait_gone(bridge)


def test_a_killed_program_s_session_ends_and_holds_its_domain_until_it_has(tmp_path):
    """SIGKILL gives a program no chance to close its session: the kernel sends its simulator and
    bridge SIGINT, and they hold the session's domain (each inherited the lease) until they end,
    so no new session meets them in it."""
    code = (
        "import time\n"
        "from pathlib import Path\n"
        "from acres_bridge.session import IsolatedSession, SessionConfig\n"
        f"session = IsolatedSession(SessionConfig(), Path({str(tmp_path)!r}))\n"
        "session.start()\n"
        "print(session.simulator.pid, session.bridge.pid, session.domain_id, flush=True)\n"
        "time.sleep(600)\n"
    )
    with killed_at_the_end(code) as (simulator, bridge, domain):
        for pid in (simulator, bridge):
            assert f"domain_{domain}.lock" in holds(pid)
    assert wait_gone(simulator)
    assert wait_gone(bridge)
    # Its log has the simulator's last words: it ended on its own path, and wrote to its file, not
    # to a pipe of the dead program.
    assert re.search(r"episode log .*: \d+ messages", (tmp_path / "simulator.log").read_text())


def test_a_killed_program_s_stack_ends_with_the_nodes_its_launch_started(tmp_path):
    """The stack's `ros2 launch` gets the SIGINT too, and ends its processes as on a Ctrl-C (on
    SIGTERM launch would end alone and leave them running in the domain)."""
    pytest.importorskip("ros2cli", reason="the ros2 command line is not installed")
    launch_file = tmp_path / "sleeper.launch.py"
    launch_file.write_text(
        "import sys\n"
        "from launch import LaunchDescription\n"
        "from launch.actions import ExecuteProcess\n"
        "def generate_launch_description():\n"
        "    sleeper = [sys.executable, '-c', 'import time; time.sleep(600)']\n"
        "    return LaunchDescription([ExecuteProcess(cmd=sleeper, output='screen')])\n"
    )
    code = (
        "import re, time\n"
        "from pathlib import Path\n"
        "from acres_bridge.scenario.stack import ros2_executable\n"
        "from acres_bridge.session import IsolatedSession, SessionConfig\n"
        f"session = IsolatedSession(SessionConfig(), Path({str(tmp_path / 'session')!r}))\n"
        "session.start()\n"
        f"stack = session.start_process('stack', [ros2_executable(), 'launch', {str(launch_file)!r}])\n"
        "stack.wait_for_line('process started with pid', 60.0)\n"
        "node = re.search(r'process started with pid \\[(\\d+)\\]', stack.output).group(1)\n"
        "print(stack.pid, node, flush=True)\n"
        "time.sleep(600)\n"
    )
    with killed_at_the_end(code) as (launch, node):
        assert not gone(node)
    assert wait_gone(node, 30.0), "the launched process outlived the program's session"
    assert wait_gone(launch, 30.0)
    # One SIGINT, from the session's watch: a second one while launch shuts down can hang it.
    log = (tmp_path / "session" / "stack.log").read_text()
    assert log.count("user interrupted with ctrl-c (SIGINT)") == 1, log
    assert "stopping the processes of" in (tmp_path / "session" / "session.watch.log").read_text()


def holds(pid: int) -> str:
    """The files a process has open, as one text (a descriptor closed while they are read is left out:
    a process that is starting opens and closes many)."""
    folder = f"/proc/{pid}/fd"
    links = []
    for fd in os.listdir(folder):
        with contextlib.suppress(FileNotFoundError):
            links.append(os.readlink(f"{folder}/{fd}"))
    return " ".join(links)


def test_a_session_s_processes_hold_its_domain_while_they_run(tmp_path):
    with IsolatedSession(SessionConfig(), tmp_path) as session:
        domain = session.domain_id
        assert session.lease is not None
        session.lease.release()  # as if the program had died: its descriptor is closed
        with pytest.raises(DomainPoolError):
            lease_domain(pool=range(domain, domain + 1))


def test_a_command_sent_before_a_step_request_applies_from_that_request_every_time(tmp_path):
    """docs/drive_by_wire.md: in lockstep, a command the bridge has before a step request applies
    from its first step. The client here does what a learner does: command, step, read."""
    from ds_dbw_msgs.msg import SteeringCmd, UlcCmd  # noqa: PLC0415
    from std_msgs.msg import Empty  # noqa: PLC0415

    from acres_bridge.msg_profiles import load_profiles  # noqa: PLC0415

    with IsolatedSession(SessionConfig(), tmp_path) as session:
        table = load_profiles()
        enable = table.topic("polaris", "/vehicle/enable").create_publisher(session.node)
        ulc = table.topic("polaris", "/vehicle/ulc/cmd").create_publisher(session.node)
        steering = table.topic("polaris", "/vehicle/steering/cmd").create_publisher(session.node)
        deadline = time.monotonic() + 30.0
        publishers = (enable, ulc, steering)
        while any(p.get_subscription_count() == 0 for p in publishers) and time.monotonic() < deadline:
            time.sleep(0.02)
        client = session.stepping_client(["/vehicle/steering/report", "/vehicle/dbw_enabled"])
        enable.publish(Empty())
        client.step(12)
        applied = []
        for index in range(80):
            curvature = round(0.001 * (index + 1), 6)
            ulc.publish(UlcCmd(cmd=1.0, cmd_type=UlcCmd.CMD_VELOCITY, enable=True))
            steering.publish(SteeringCmd(cmd=curvature, cmd_type=SteeringCmd.CMD_CURVATURE, enable=True))
            reports = client.step(6).messages("/vehicle/steering/report")
            applied.append((curvature, round(float(reports[-1].cmd), 6)))
    assert [wanted for wanted, _ in applied] == [seen for _, seen in applied]
