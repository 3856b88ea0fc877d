"""wait_for_reply's rule, on a scripted executor: each spin brings the next of a list of counts."""

from __future__ import annotations

from collections.abc import Iterator

from acres_bridge.lockstep import stack_reply
from acres_bridge.lockstep.stack_reply import PATIENT_S, STEADY, StackReplies, wait_for_reply


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


def test_a_steady_stack_is_waited_for_patiently_any_other_for_the_bound(monkeypatch):
    """StackReplies' rule: after STEADY answers in a row a late answer is waited for up to
    PATIENT_S (a busy machine); a stack that skips a request goes back to the short bound."""
    answers = iter([True] * STEADY + [False, True, False])
    bounds: list[float] = []

    def scripted_wait(executor, count, seen, timeout_s):
        bounds.append(timeout_s)
        return next(answers)

    monkeypatch.setattr(stack_reply, "wait_for_reply", scripted_wait)
    replies = StackReplies(Scripted([]), lambda: 0, timeout_s=2.0)  # type: ignore[arg-type]
    results = [replies.wait(0) for _ in range(STEADY + 3)]
    assert results == [True] * STEADY + [False, True, False]
    assert bounds == [2.0] * STEADY + [PATIENT_S, 2.0, 2.0]
    replies.streak = STEADY  # the limit caps either bound: a run's deadline comes first
    answers = iter([True])
    replies.wait(0, limit_s=1.5)
    assert bounds[-1] == 1.5
