"""acres_demo: the bridge against the reference simulator, with a live table of its topics.

    acres_demo                       run until Ctrl-C
    acres_demo --seconds 10          stop after 10 s (or DEMO_SECONDS=10 acres_demo)
    acres_demo --sim-seconds 6       stop once 6 simulated seconds have passed on /clock
    acres_demo --vehicle maxxum --seed 7 --port 47100

It starts the simulator (free run) and the bridge as child processes, subscribes to every topic
that msg_profiles says the bridge publishes for the vehicle, and each second shows, per topic,
the expected rate, the rate in simulated time (messages published per simulated second, from the
stamps and the publisher's sequence numbers) and the rate of arrival in wall time, the message
count and a status judged in simulated time (acres_bridge.topic_watch): OK when every message the
simulator made for the topic was published, with those this reader lost noted apart; LOW with the
count missing and who skipped them (the simulator or the bridge). Above the table,
the session's real-time factor as /clock shows it, and the simulator's own word on its pace.
A busy machine slows the simulation down (a real-time factor below 1) but leaves the topics OK.
A topic that nothing publishes in this session says so.

On a terminal the table is redrawn in place; otherwise it is printed every LOG_INTERVAL_S
seconds, so a log stays readable. The final table is always printed at exit. The demo stops the
bridge and the simulator on SIGINT, SIGTERM or when the time is up, and exits 0; it exits 1
with a message when either child dies early or /clock does not arrive within CLOCK_TIMEOUT_S.

DDS discovery is confined to this machine: the demo and its children run with
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST whatever the environment says.
"""

from acres_bridge.demo.app import CLOCK_TIMEOUT_S, DemoError, DemoOptions, main, parse_options, run
from acres_bridge.demo.table import (
    FINAL_TITLE,
    HEADER,
    NOT_PUBLISHED,
    NOT_SUBSCRIBED,
    GraphView,
    topic_row,
    watch_list,
)
from acres_bridge.topic_watch import RATE_WINDOW_S, Status, TopicWatch

__all__ = [
    "CLOCK_TIMEOUT_S",
    "FINAL_TITLE",
    "HEADER",
    "NOT_PUBLISHED",
    "NOT_SUBSCRIBED",
    "RATE_WINDOW_S",
    "DemoError",
    "DemoOptions",
    "GraphView",
    "Status",
    "TopicWatch",
    "main",
    "parse_options",
    "run",
    "topic_row",
    "watch_list",
]
