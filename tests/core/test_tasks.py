"""The record of a task (the tasks extension): its moves, its keys, its lifetime, its wire
shapes. No I/O."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_elicit.core.tasks import TaskRecord, input_responses_of, require_tasks, task_id_of
from mcp_elicit.errors import InvalidParams, MissingClientCapability
from mcp_elicit.wire.meta import ClientCapabilities

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
QUESTION = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": "Go?", "requestedSchema": {}},
}


def record(ttl_ms: int | None = 60_000) -> TaskRecord:
    return TaskRecord("t-1", None, T0, ttl_ms, 500)


def test_a_new_task_is_working_and_says_when_in_utc_milliseconds() -> None:
    task = record()
    assert task.wire() == {
        "taskId": "t-1",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "lastUpdatedAt": "2026-01-01T00:00:00.000Z",
        "ttlMs": None,  # a running task is never forgotten
        "pollIntervalMs": 500,
    }
    assert task.created_result() == {**task.wire(), "resultType": "task"}


def test_an_ended_task_says_its_ttl_from_creation() -> None:
    """The extension counts ``ttlMs`` from creation: a task that ran 5 s and is kept 60 s
    after it ended may be discarded 65 s after it was created."""
    task = record()
    task.complete({"content": []}, T0 + 5)
    assert task.wire()["ttlMs"] == 65_000
    assert task.expires == T0 + 65


def test_questions_park_the_task_until_all_are_answered() -> None:
    task = record()
    task.ask({"a": QUESTION, "b": QUESTION}, T0 + 1)
    assert task.status == "input_required" and set(task.wire()["inputRequests"]) == {"a", "b"}
    assert task.wire()["lastUpdatedAt"] == "2026-01-01T00:00:01.000Z"
    assert "inputRequests" not in task.created_result()  # the creation answer is never detailed
    task.answered(["a"], T0 + 2)
    assert task.status == "input_required" and list(task.wire()["inputRequests"]) == ["b"]
    task.answered(["b", "never-asked"], T0 + 3)
    assert task.status == "working" and "inputRequests" not in task.wire()


def test_a_key_is_never_used_twice_in_a_task() -> None:
    task = record()
    task.ask({"a": QUESTION}, T0)
    task.answered(["a"], T0)
    with pytest.raises(ValueError, match="'a' was used before"):
        task.ask({"a": QUESTION}, T0)


@pytest.mark.parametrize(
    ("end", "status", "field"),
    [
        (lambda t: t.complete({"content": []}, T0 + 5), "completed", "result"),
        (lambda t: t.fail({"code": -32603, "message": "Internal error"}, T0 + 5), "failed", "error"),
        (lambda t: t.cancel(T0 + 5), "cancelled", None),
    ],
)
def test_an_ended_task_carries_what_its_status_says_and_never_moves_again(
    end: Callable[[TaskRecord], None], status: str, field: str | None
) -> None:
    task = record()
    task.ask({"a": QUESTION}, T0 + 1)
    end(task)
    wire = task.wire()
    assert wire["status"] == status and task.terminal
    assert {"inputRequests", "result", "error"} & wire.keys() == ({field} if field else set())
    with pytest.raises(ValueError, match="already ended"):
        task.complete({}, T0 + 6)
    task.ask({"b": QUESTION}, T0 + 7)  # ignored: nothing waits in an ended task
    task.set_message("late", T0 + 7)
    assert task.wire() == wire


@pytest.mark.parametrize(
    ("end", "says"),
    [
        (lambda t: t.complete({"content": []}, T0 + 5), None),
        (lambda t: t.fail({"code": -32603, "message": "Internal error"}, T0 + 5), "Internal error"),
        (lambda t: t.cancel(T0 + 5, "stopped"), "stopped"),
    ],
)
def test_an_ended_task_says_its_outcome_not_its_last_progress(
    end: Callable[[TaskRecord], None], says: str | None
) -> None:
    task = record()
    task.set_message("half way", T0 + 1)
    end(task)
    assert task.wire().get("statusMessage") == says


def test_a_task_is_forgotten_only_when_its_ttl_passed_since_creation_and_since_its_end() -> None:
    task = record(ttl_ms=10_000)
    assert not task.expired(T0 + 1_000)  # running: never forgotten
    task.complete({}, T0 + 30)
    assert not task.expired(T0 + 39.9)
    assert task.expired(T0 + 40)
    early = record(ttl_ms=10_000)
    early.complete({}, T0 + 1)
    assert not early.expired(T0 + 9.9) and early.expired(T0 + 11)
    forever = record(ttl_ms=None)
    forever.complete({}, T0)
    assert not forever.expired(T0 + 1e9) and forever.wire()["ttlMs"] is None


def test_the_request_checks() -> None:
    require_tasks(ClientCapabilities({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
    for caps in (
        {},
        {"extensions": {}},
        {"extensions": {"io.modelcontextprotocol/tasks": True}},
        {"extensions": []},
    ):
        with pytest.raises(MissingClientCapability) as info:
            require_tasks(ClientCapabilities(caps))
        assert info.value.required == {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    assert task_id_of({"taskId": "abc"}) == "abc"
    for bad in ({}, {"taskId": ""}, {"taskId": 3}, {"taskId": "x" * 257}):
        with pytest.raises(InvalidParams, match="taskId"):
            task_id_of(bad)
    assert input_responses_of({"inputResponses": {"a": {}}}) == {"a": {}}
    for bad in ({}, {"inputResponses": []}, {"inputResponses": None}):
        with pytest.raises(InvalidParams, match="inputResponses"):
            input_responses_of(bad)
    for value, kind in ((5, "a number"), ("yes", "a string"), ([], "an array"), (None, "null")):
        with pytest.raises(InvalidParams, match=rf'inputResponses\["a"\] must be an object .* not {kind}$'):
            input_responses_of({"inputResponses": {"ok": {}, "a": value}})


def test_input_responses_are_bounded_as_those_of_a_tool_call() -> None:
    """tasks/update carries answers as tools/call does: the same limits, the same -32602."""

    def nested(levels: int) -> dict[str, object]:
        value: dict[str, object] = {}
        for _ in range(levels - 1):
            value = {"a": value}
        return value

    assert input_responses_of({"inputResponses": {f"k{i}": {} for i in range(64)}})
    assert input_responses_of({"inputResponses": {"k": nested(63)}})  # 64 levels with its own
    for bad, says in (
        ({f"k{i}": {} for i in range(65)}, "65 entries, at most 64"),
        ({"k": {"action": "accept", "content": {"v": "x" * 256 * 1024}}}, "too large"),
        ({"k": nested(64)}, "nested too deeply"),
        ({"k": nested(300)}, "nested too deeply"),  # past what the JSON encoder takes
    ):
        with pytest.raises(InvalidParams, match=says):
            input_responses_of({"inputResponses": bad})
