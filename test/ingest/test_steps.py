"""Step requests end when the simulator answered and every stream marked their last step."""

from __future__ import annotations

from acres_bridge.ingest.steps import PendingSteps
from acres_bridge.wire import StepDone, StepStatus


def test_a_done_request_waits_for_the_marks_of_its_last_step() -> None:
    steps = PendingSteps()
    pending = steps.open()
    assert steps.answered(StepDone(request_id=pending.request_id, last_step=24), marked=12)
    assert not pending.done.is_set()  # a stream has marked only step 12
    steps.marked(23)
    assert not pending.done.is_set()
    steps.marked(24)
    assert pending.done.is_set()
    assert pending.outcome is not None
    assert (pending.outcome.ok, pending.outcome.last_step) == (True, 24)


def test_without_streams_the_answer_completes_the_request() -> None:
    steps = PendingSteps()
    pending = steps.open()
    steps.answered(StepDone(request_id=pending.request_id, last_step=5), marked=None)
    assert pending.outcome is not None
    assert pending.outcome.ok


def test_a_refusal_ends_the_request_with_the_reason() -> None:
    steps = PendingSteps()
    pending = steps.open()
    refused = StepDone(request_id=pending.request_id, last_step=0, status=StepStatus.NOT_PAUSED)
    assert steps.answered(refused, marked=100)
    assert pending.outcome is not None
    assert not pending.outcome.ok
    assert "not paused" in pending.outcome.message


def test_a_refusal_of_too_many_steps_says_the_maximum() -> None:
    steps = PendingSteps()
    pending = steps.open()
    refused = StepDone(request_id=pending.request_id, last_step=0, status=StepStatus.TOO_MANY_STEPS)
    assert steps.answered(refused, marked=None)
    assert pending.outcome is not None
    assert pending.outcome.message == "the simulator refused the steps: more than 36000 steps in one request"


def test_an_answer_to_no_open_request_is_reported() -> None:
    steps = PendingSteps()
    forgotten = steps.open()
    steps.forget(forgotten)
    assert not steps.answered(StepDone(request_id=forgotten.request_id, last_step=1), marked=None)
    assert not steps.answered(StepDone(request_id=999, last_step=1), marked=None)


def test_fail_all_ends_every_open_request() -> None:
    steps = PendingSteps()
    first, second = steps.open(), steps.open()
    assert first.request_id != second.request_id
    steps.fail_all("the simulator went away: closed")
    for pending in (first, second):
        assert pending.outcome is not None
        assert pending.outcome.message == "the simulator went away: closed"


def test_request_ids_wrap_within_uint32_and_skip_zero() -> None:
    steps = PendingSteps()
    steps._next_id = 0xFFFFFFFF
    assert steps.open().request_id == 0xFFFFFFFF
    assert steps.open().request_id == 1
