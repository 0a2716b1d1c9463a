"""Following a task, client side (the tasks extension): what each ``tasks/get`` result
means, and what breaks the extension's rules. No I/O."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.rounds import Complete
from mcp_elicit.core.task_watch import Poll, TaskWatch
from mcp_elicit.errors import (
    InternalError,
    InvalidRequest,
    ProtocolError,
    ProtocolViolation,
    RequestTimeout,
    StoreUnavailable,
    TaskCancelled,
    TransportError,
)

QUESTION = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": "Go?", "requestedSchema": {}},
}


def created(**extra: Any) -> dict[str, Any]:
    return {"resultType": "task", "taskId": "t-1", "status": "working", "ttlMs": 60_000, **extra}


def task(status: str, **extra: Any) -> dict[str, Any]:
    return {"resultType": "complete", "taskId": "t-1", "status": status, "ttlMs": 60_000, **extra}


def watch(**extra: Any) -> TaskWatch:
    return TaskWatch.start("tools/call", created(**extra), declared=True, now=0.0)


def test_a_task_is_polled_until_it_completes_with_its_result() -> None:
    w = watch(pollIntervalMs=250)
    assert w.task_id == "t-1" and w.delay == 0.25 and not w.ended
    assert w.step(task("working"), 1.0) == Poll((), 0.25)
    done = w.step(task("completed", result={"content": [], "isError": True}), 2.0)
    assert done == Complete({"content": [], "isError": True}) and w.ended


def test_each_question_is_asked_once_across_polls() -> None:
    w = watch()
    first = w.step(task("input_required", inputRequests={"a": QUESTION, "b": QUESTION}), 1.0)
    assert isinstance(first, Poll) and [r.key for r in first.requests] == ["a", "b"]
    w.sent(["a", "b"])
    again = w.step(task("input_required", inputRequests={"b": QUESTION, "c": QUESTION}), 2.0)
    assert isinstance(again, Poll) and [r.key for r in again.requests] == ["c"]
    assert again.outstanding == {"b", "c"}  # what the task still waits for, asked or not
    assert w.step(task("working"), 3.0) == Poll((), 1.0, frozenset())  # waits for nothing


def test_a_failed_task_raises_its_error_and_a_cancelled_one_task_cancelled() -> None:
    with pytest.raises(ProtocolError) as failed:
        watch().step(task("failed", error={"code": -32602, "message": "Invalid params: no"}), 1.0)
    assert failed.value.code == -32602 and failed.value.message == "Invalid params: no"
    w = watch()
    with pytest.raises(TaskCancelled, match="cancelled task t-1: shutting down") as cancelled:
        w.step(task("cancelled", statusMessage="shutting down"), 1.0)
    assert cancelled.value.task_id == "t-1" and w.ended


def test_a_task_still_running_past_its_ttl_is_given_up() -> None:
    w = watch(ttlMs=10_000)
    assert isinstance(w.step(task("working", ttlMs=10_000), 9.0), Poll)
    with pytest.raises(RequestTimeout, match="time to live"):
        w.step(task("working", ttlMs=10_000), 10.5)
    unlimited = watch(ttlMs=None)
    assert isinstance(unlimited.step(task("working", ttlMs=None), 1e9), Poll)


@pytest.mark.parametrize(
    ("given", "delay"),
    [
        *((None, 1.0), (0, 0.05), (45_000, 45.0), (300_000, 300.0), (10**9, 600.0), (True, 1.0), (40, 0.05)),
        # a hostile server's: below nothing, fractions, beyond every cap, or no number at all
        *((-5, 0.05), (-(10**18), 0.05), (0.5, 0.05), (1e308, 600.0), ("5000", 1.0), ([], 1.0), ({}, 1.0)),
    ],
)
def test_the_poll_interval_is_kept_within_bounds(given: object, delay: float) -> None:
    """The server's interval is honoured (the extension: clients SHOULD), from 50 ms up to
    a safety cap of 10 minutes against a server that says a year."""
    extra = {} if given is None else {"pollIntervalMs": given}
    w = TaskWatch.start("tools/call", created(ttlMs=None, **extra), declared=True, now=0.0)
    assert w.delay == delay
    assert w.step(task("working", ttlMs=None, **extra), 1.0) == Poll((), delay)


def test_a_long_poll_interval_is_cut_to_poll_once_more_before_the_ttl_passes() -> None:
    """Waiting the whole interval past the task's ttl would give it up unseen (its result
    perhaps discarded meanwhile): the wait ends when the ttl does."""
    w = watch(ttlMs=120_000, pollIntervalMs=100_000)
    assert w.step(task("working", ttlMs=120_000, pollIntervalMs=100_000), 10.0) == Poll((), 100.0)
    assert w.step(task("working", ttlMs=120_000, pollIntervalMs=100_000), 110.0) == Poll((), 10.0)
    assert w.step(task("working", ttlMs=120_000, pollIntervalMs=100_000), 120.0) == Poll((), 0.05)
    with pytest.raises(RequestTimeout, match="time to live"):
        w.step(task("working", ttlMs=120_000, pollIntervalMs=100_000), 120.05)


@pytest.mark.parametrize(
    ("method", "declared", "result", "problem"),
    [
        ("prompts/get", True, created(), "only tools/call may be one"),
        ("tools/call", False, created(), "did not declare the tasks extension"),
        ("tools/call", True, created(taskId=""), "no taskId"),
        ("tools/call", True, {"resultType": "task", "status": "working"}, "no taskId"),
        ("tools/call", True, created(status="paused"), "unknown status 'paused'"),
        ("tools/call", True, created(status=["working"]), r"unknown status \['working'\]"),
    ],
)
def test_a_creation_that_breaks_the_rules_is_a_violation(
    method: str, declared: bool, result: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ProtocolViolation, match=problem):
        TaskWatch.start(method, result, declared=declared, now=0.0)


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ({**task("working"), "taskId": "t-2"}, "answered about 't-2'"),
        (task("completed"), "completed without a result"),
        (task("failed"), "failed without an error"),
        (task("input_required"), "input_required without inputRequests"),
        (task("input_required", inputRequests={"a": {"method": "tools/call"}}), "asks for 'tools/call'"),
        (task("done"), "unknown status 'done'"),
        ({**task("working"), "status": {"is": "working"}}, "unknown status {'is': 'working'}"),
    ],
)
def test_a_poll_that_breaks_the_rules_is_a_violation(result: dict[str, Any], problem: str) -> None:
    with pytest.raises(ProtocolViolation, match=problem):
        watch().step(result, 1.0)


def test_a_status_or_task_id_nested_too_deeply_to_quote_is_still_a_protocol_violation() -> None:
    # 1000 levels (a JSON reader takes 1024): quoting it with repr raised RecursionError
    deep: object = "x"
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(ProtocolViolation, match="unknown status"):
        TaskWatch.start("tools/call", created(status=deep), declared=True, now=0.0)
    with pytest.raises(ProtocolViolation, match="answered about"):
        watch().step({"taskId": deep, "status": "working"}, 1.0)


PAGE = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://a.test/x"},
}


def test_an_accepted_page_is_said_once_at_the_first_poll_that_asks_nothing_new() -> None:
    w = watch()
    asked = w.step(task("input_required", inputRequests={"page": PAGE, "go": QUESTION}), 1.0)
    assert isinstance(asked, Poll)
    w.sent(["page", "go"])
    w.updated(asked.requests, {"page": {"action": "accept"}, "go": {"action": "accept", "content": {}}})
    first = w.step(task("working"), 2.0)
    assert isinstance(first, Poll) and [r.key for r in first.awaiting_pages] == ["page"]
    assert w.step(task("working"), 3.0) == Poll((), 1.0)  # said once


def test_a_declined_page_or_a_new_question_first_says_no_wait() -> None:
    declined = watch()
    asked = declined.step(task("input_required", inputRequests={"page": PAGE}), 1.0)
    assert isinstance(asked, Poll)
    declined.updated(asked.requests, {"page": {"action": "decline"}})
    assert declined.step(task("working"), 2.0) == Poll((), 1.0)
    moved_on = watch()
    asked = moved_on.step(task("input_required", inputRequests={"page": PAGE}), 1.0)
    assert isinstance(asked, Poll)
    moved_on.sent(["page"])
    moved_on.updated(asked.requests, {"page": {"action": "accept"}})
    new = moved_on.step(task("input_required", inputRequests={"go": QUESTION}), 2.0)
    assert isinstance(new, Poll) and new.awaiting_pages == () and [r.key for r in new.requests] == ["go"]
    assert moved_on.step(task("working"), 3.0) == Poll((), 1.0)


def down(status: int | None) -> TransportError:
    error = TransportError("no JSON-RPC response")
    error.http_status = status
    return error


def test_a_passing_outage_is_polled_again_with_a_growing_backoff_within_its_bound() -> None:
    w = watch()
    delays = [w.outage(StoreUnavailable(), now, 10.0) for now in (1.0, 2.0, 3.5, 6.0, 9.0)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 2.0]  # the last cut to what is left of the bound
    assert w.outage(StoreUnavailable(), 11.0, 10.0) is None  # past it: the call fails
    assert w.outage_said(11.0) == " (the server was unavailable for 10.0 s, 6 polls of task t-1; given up)"


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_proxy_answering_for_a_server_that_is_away_is_an_outage(status: int) -> None:
    assert watch().outage(down(status), 0.0, 60.0) == 0.5


def test_a_poll_answered_ends_the_outage() -> None:
    w = watch()
    assert w.outage(down(503), 0.0, 60.0) == 0.5
    assert w.outage(down(503), 1.0, 60.0) == 1.0
    w.step(task("working"), 2.0)
    assert w.outage(down(503), 50.0, 60.0) == 0.5  # a new outage, bounded from its own start
    assert w.outage(down(503), 110.0, 60.0) is None


@pytest.mark.parametrize(
    "error",
    [
        InternalError("Internal error"),  # -32603 with no outage status (200, or off HTTP)
        InternalError("Internal error", http_status=500),
        InvalidRequest("Service unavailable", http_status=503),  # not -32603
        down(None),  # a broken connection
        down(500),
        RequestTimeout("no answer"),
    ],
)
def test_any_other_error_fails_the_call_without_naming_an_outage(
    error: ProtocolError | TransportError,
) -> None:
    w = watch()
    assert w.outage(down(503), 0.0, 60.0) == 0.5
    assert w.outage(error, 1.0, 60.0) is None
    assert w.outage_said(1.0) == ""
