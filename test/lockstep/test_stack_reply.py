"""wait_for_reply's rule, on a scripted executor: each spin brings the next of a list of counts."""

from __future__ import annotations

from collections.abc import Iterator

from acres_bridge.lockstep.stack_reply import wait_for_reply


class Scripted:
    """An executor whose spins bring commands as scripted: spin k sets the count to counts[k]."""

    def __init__(self, counts: list[int]) -> None:
        self.count = 0
        self._next: Iterator[int] = iter(counts)
        self.spins = 0

    def spin_once(self, timeout_sec: float | None = None) -> None:
        self.spins += 1
        self.count = next(self._next, self.count)


def test_an_answer_of_several_messages_is_taken_whole():
    executor = Scripted([0, 0, 1, 2, 3, 3])
    assert wait_for_reply(executor, lambda: executor.count, 0, timeout_s=5.0)  # type: ignore[arg-type]
    assert executor.count == 3  # the two stragglers too
    assert executor.spins == 6  # it stopped at the first spin that brought nothing


def test_no_answer_within_the_bound_is_false():
    executor = Scripted([])
    assert not wait_for_reply(executor, lambda: executor.count, 0, timeout_s=0.05)  # type: ignore[arg-type]
    assert executor.spins >= 1
