"""SensorQueue: room per sensor, drop-and-count in free run, wait in lockstep, join for acknowledgement."""

from __future__ import annotations

import threading
import time

import pytest

from acres_bridge.nodes.sensor_queue import SensorQueue


def test_a_full_sensor_drops_and_counts_the_new_frame_only():
    queue: SensorQueue[int] = SensorQueue(4)
    results = [queue.put("lidar", n) for n in range(7)]
    assert results == [True] * 4 + [False] * 3
    assert queue.dropped["lidar"] == 3
    assert queue.put("camera", 100)  # another sensor has its own room
    taken = [queue.get(0.1) for _ in range(5)]
    assert taken == [("lidar", 0), ("lidar", 1), ("lidar", 2), ("lidar", 3), ("camera", 100)]


def test_room_comes_back_when_a_frame_is_taken():
    queue: SensorQueue[int] = SensorQueue(1)
    assert queue.put("lidar", 1)
    assert not queue.put("lidar", 2)
    assert queue.get(0.1) == ("lidar", 1)
    assert queue.put("lidar", 3)
    assert queue.waiting("lidar") == 1


def test_put_with_a_wait_blocks_until_room_instead_of_dropping():
    queue: SensorQueue[int] = SensorQueue(1)
    queue.put("lidar", 1)
    taker = threading.Timer(0.1, lambda: queue.get(1.0))
    taker.start()
    started = time.monotonic()
    assert queue.put("lidar", 2, wait_s=5.0)
    assert time.monotonic() - started >= 0.05
    assert queue.dropped["lidar"] == 0
    taker.join()


def test_put_with_a_wait_drops_after_the_wait():
    queue: SensorQueue[int] = SensorQueue(1)
    queue.put("lidar", 1)
    assert not queue.put("lidar", 2, wait_s=0.05)
    assert queue.dropped["lidar"] == 1


def test_join_waits_until_every_frame_is_handled():
    queue: SensorQueue[int] = SensorQueue(4)
    queue.put("lidar", 1)
    queue.put("camera", 2)
    assert not queue.join(0.01)
    for _ in range(2):
        key, _ = queue.get(0.1)
        assert not queue.join(0.01)  # taken is not handled
        queue.done(key)
    assert queue.join(0.01)
    assert queue.handled == {"lidar": 1, "camera": 1}


def test_get_times_out_and_close_wakes_everyone():
    queue: SensorQueue[int] = SensorQueue(1)
    assert queue.get(0.01) is None
    queue.put("lidar", 1)
    blocked = []
    putter = threading.Thread(target=lambda: blocked.append(queue.put("lidar", 2, wait_s=10.0)))
    putter.start()
    time.sleep(0.05)
    queue.close()
    putter.join(2.0)
    assert blocked == [False]
    assert queue.get(0.01) == ("lidar", 1)  # what was queued can still be taken
    assert queue.get(0.01) is None
    assert not queue.put("lidar", 3)


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="capacity must be at least 1, found 0"):
        SensorQueue(0)
