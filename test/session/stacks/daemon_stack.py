"""A stack that leaves a daemon behind: it double-forks, the daemon calls setsid and runs a new
program with an empty environment, so it carries no mark of its session but the descriptors it
inherited (the domain lease among them).

    python daemon_stack.py PID_FILE [--ignore-stop] [--print-bytes N]

The daemon writes its id to PID_FILE and sleeps, its output to /dev/null; with --ignore-stop it
ignores SIGINT and SIGTERM.
The stack prints N bytes of numbered lines first (0 by default), then "daemon <pid>", then sleeps.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

DAEMON = """\
import os, signal, sys, time
if sys.argv[2] == "ignore":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1] + ".part", "w") as file:
    file.write(str(os.getpid()))
os.rename(sys.argv[1] + ".part", sys.argv[1])
while True:
    time.sleep(60)
"""


def start_daemon(pid_file: str, ignore_stop: bool) -> None:
    """Fork, fork again and let the first child end, so the daemon is nobody's child here."""
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            quiet = os.open(os.devnull, os.O_WRONLY)  # a daemon's output goes nowhere
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            mode = "ignore" if ignore_stop else "answer"
            os.execve(sys.executable, [sys.executable, "-c", DAEMON, pid_file, mode], {})
        os._exit(0)
    os.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pid_file")
    parser.add_argument("--ignore-stop", action="store_true")
    parser.add_argument("--print-bytes", type=int, default=0)
    options = parser.parse_args()
    line_bytes = 32
    for number in range(options.print_bytes // line_bytes):
        sys.stdout.write(f"line {number:026d}\n")
    sys.stdout.flush()
    start_daemon(options.pid_file, options.ignore_stop)
    while not os.path.exists(options.pid_file):
        time.sleep(0.01)
    with open(options.pid_file) as file:
        print("daemon", file.read(), flush=True)
    try:
        time.sleep(600)
    except KeyboardInterrupt:
        sys.exit(0)  # a stop: quietly


if __name__ == "__main__":
    main()
