"""Viewers' requests wait for the executor bounded and are never dropped where they change what
the bridge feeds: every subscription ends in the state its viewer last asked for."""

from __future__ import annotations

import threading

from acres_bridge.live_view.requests import Subscription, ViewerRequests


def test_a_burst_of_subscriptions_keeps_each_viewer_s_last_wish_per_channel():
    requests = ViewerRequests(max_waiting=8)
    for _ in range(100_000):
        requests.subscription("/vehicle/enable", 1, wanted=True)
        requests.subscription("/vehicle/enable", 1, wanted=False)
    requests.subscription("/vehicle/odom", 2, wanted=True)
    assert len(requests) == 2  # one entry a (channel, viewer), whatever the burst
    taken = requests.take()
    assert taken.subscriptions == (
        Subscription("/vehicle/enable", 1, wanted=False),
        Subscription("/vehicle/odom", 2, wanted=True),
    )
    assert taken.refusals == {}
    assert len(requests) == 0


def test_subscriptions_are_applied_in_the_order_of_their_last_change():
    requests = ViewerRequests(max_waiting=8)
    requests.subscription("/a", 1, wanted=True)
    requests.subscription("/b", 1, wanted=True)
    requests.subscription("/a", 1, wanted=False)
    assert [(s.topic, s.wanted) for s in requests.take().subscriptions] == [("/b", True), ("/a", False)]


def test_ordered_requests_keep_their_order_and_past_the_bound_are_refused_and_counted():
    requests = ViewerRequests(max_waiting=3)
    accepted = [requests.ordered(("data", 1, 1, bytes([n])), "viewer_backlog") for n in range(5)]
    assert accepted == [True, True, True, False, False]
    taken = requests.take()
    assert taken.ordered == tuple(("data", 1, 1, bytes([n])) for n in range(3))
    assert taken.refusals == {"viewer_backlog": (2, "more than 3 viewer requests waiting")}
    assert requests.ordered(("data", 1, 1, b"again"), "viewer_backlog")  # room once taken


def test_refusals_are_counted_whole_with_their_last_reason():
    requests = ViewerRequests(max_waiting=3)
    for size in (70_000, 80_000, 90_000):
        requests.refuse("viewer_message", f"{size} bytes")
    assert requests.take().refusals == {"viewer_message": (3, "90000 bytes")}


def test_requests_from_many_threads_lose_nothing():
    requests = ViewerRequests(max_waiting=10)
    taken: list[Subscription] = []

    def viewer(client: int) -> None:
        for n in range(2_000):
            requests.subscription(f"/t{n % 5}", client, wanted=n % 2 == 0)

    def executor(stop: threading.Event) -> None:
        while not stop.is_set():
            taken.extend(requests.take().subscriptions)

    stop = threading.Event()
    draining = threading.Thread(target=executor, args=(stop,))
    draining.start()
    viewers = [threading.Thread(target=viewer, args=(c,)) for c in range(4)]
    for thread in viewers:
        thread.start()
    for thread in viewers:
        thread.join()
    stop.set()
    draining.join()
    taken.extend(requests.take().subscriptions)
    last = {(s.topic, s.client): s.wanted for s in taken}
    # each viewer's last wish for /tK came at n = 1995 + K: subscribed for even n
    assert last == {(f"/t{k}", c): (1995 + k) % 2 == 0 for k in range(5) for c in range(4)}
