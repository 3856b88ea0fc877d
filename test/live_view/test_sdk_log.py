"""The Foxglove SDK's log never takes the GIL while the server holds a viewer's lock.

The finding: a viewer that never reads froze the bridge (no step acknowledged, SIGINT unheard).
The reproduction below is deterministic: two threads log to a channel a stalled viewer subscribes
to, and a Python handler on the SDK's outbox logger gives up the GIL for a while. With the SDK's log
forwarded into Python (the control), one sender waits for the viewer's lock holding the GIL while
the server, holding that lock, waits for the GIL in the handler: the process hangs. With the log
kept out of Python (what the live view does), the handler is never entered and the senders end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.integration

REPRODUCTION = textwrap.dedent(
    """
    import logging, os, sys, threading, time
    import foxglove
    from foxglove import Channel
    from acres_bridge.live_view.sdk_log import keep_sdk_log_out_of_python
    from acres_bridge.live_view.viewer import Viewer

    entered = []

    class GivesUpTheGil(logging.Handler):
        def emit(self, record):
            entered.append(record.getMessage())
            time.sleep(0.5)

    outbox = logging.getLogger("foxglove.websocket.connected_client.send_lossy")
    outbox.addHandler(GivesUpTheGil())
    outbox.setLevel(logging.INFO)
    outbox.propagate = False
    subscribed = threading.Event()

    class Listener(foxglove.websocket.ServerListener):
        def on_subscribe(self, client, channel):
            subscribed.set()

    context = foxglove.Context()
    server = foxglove.start_server(
        name="repro", host="127.0.0.1", port=0, context=context, message_backlog_size=4,
        server_listener=Listener(),
    )
    if sys.argv[1] == "kept":
        keep_sdk_log_out_of_python()
    channel = Channel("/t", message_encoding="json", context=context)
    viewer = Viewer(server.port, read=False)
    viewer.handshake(settle_s=0.3)
    viewer.subscribe(["/t"])
    if not subscribed.wait(60):  # the senders log to the stalled viewer, not to nobody
        sys.exit("the viewer's subscription never reached the server")

    def send():
        for _ in range(1000):  # 20 MB: far more than the outbox and the socket hold
            channel.log(b"x" * 20_000)

    senders = [threading.Thread(target=send) for _ in range(2)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    print(f"sent; handler entered {len(entered)} times", flush=True)
    os._exit(0)
    """
)


def reproduce(mode: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", REPRODUCTION, mode],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )


def test_with_the_sdk_log_kept_out_of_python_a_stalled_viewer_freezes_no_sender():
    done = reproduce("kept", timeout_s=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "sent; handler entered 0 times" in done.stdout


def test_the_reproduction_hangs_with_the_sdk_log_forwarded():
    """The control: the reproduction does reproduce the deadlock, so the test above can fail."""
    with pytest.raises(subprocess.TimeoutExpired):
        reproduce("forwarded", timeout_s=20)
