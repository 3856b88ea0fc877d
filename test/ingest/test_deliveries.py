"""The delivery ledger: what a request published, per topic and step, and nothing outside one."""

from __future__ import annotations

import threading

from acres_bridge.ingest.deliveries import DeliveryLedger, delivery_message


def test_only_what_a_request_published_is_reported_with_silent_topics_listed() -> None:
    ledger = DeliveryLedger()
    for topic in ("/clock", "/vehicle/odom", "/lidar/points"):
        ledger.register(topic)
    ledger.record("/clock", 1)  # free run: nothing is kept
    ledger.open()
    for step in (5, 6, 7):
        ledger.record("/clock", step)
    ledger.record("/vehicle/odom", 6)
    delivery = ledger.close(5, 7)
    assert (delivery.first_step, delivery.last_step) == (5, 7)
    assert {t: list(s) for t, s in delivery.steps.items()} == {
        "/clock": [5, 6, 7],
        "/vehicle/odom": [6],
        "/lidar/points": [],
    }
    ledger.record("/clock", 8)  # after the request: kept nowhere
    ledger.open()
    assert list(ledger.close(9, 9).steps["/clock"]) == []


def test_a_failed_request_leaves_nothing_for_the_next() -> None:
    ledger = DeliveryLedger()
    ledger.register("/clock")
    ledger.open()
    ledger.record("/clock", 3)
    ledger.abandon()
    ledger.open()
    ledger.record("/clock", 4)
    assert {t: list(s) for t, s in ledger.close(4, 4).steps.items()} == {"/clock": [4]}


def test_a_topic_leaves_the_report_with_its_last_publisher() -> None:
    ledger = DeliveryLedger()
    ledger.register("/tf")
    ledger.register("/tf")
    ledger.unregister("/tf")
    ledger.open()
    assert "/tf" in ledger.close(1, 1).steps
    ledger.unregister("/tf")
    ledger.open()
    assert ledger.close(2, 2).steps == {}


def test_records_from_several_threads_are_all_kept() -> None:
    ledger = DeliveryLedger()
    ledger.open()
    threads = [
        threading.Thread(target=lambda t=t: [ledger.record(f"/t{t}", s) for s in range(1000)])
        for t in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    steps = ledger.close(0, 999).steps
    assert all(list(steps[f"/t{t}"]) == list(range(1000)) for t in range(4))


def test_the_message_lists_topics_in_name_order_with_their_steps() -> None:
    ledger = DeliveryLedger()
    ledger.register("/b")
    ledger.open()
    ledger.record("/a", 2)
    ledger.record("/a", 3)
    message = delivery_message(ledger.close(2, 3))
    assert (message.first_step, message.last_step) == (2, 3)
    assert [(t.topic, list(t.steps)) for t in message.topics] == [("/a", [2, 3]), ("/b", [])]
