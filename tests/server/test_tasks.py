"""Tasks on the server (the ``io.modelcontextprotocol/tasks`` extension), over a client in memory: a task asks through ``tasks/get`` and is answered by
``tasks/update``, how it ends, cancelling it, the extension's gate, who may see a task, its
TTL, and the same handler in place on 2025-11-25."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mcp_elicit import Context, Form, Principal, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.core.input_requests import MAX_INPUT_REQUESTS
from mcp_elicit.sealing import KeyRing
from mcp_elicit.transports.memory import connect_memory

from support.memory import MemoryClient, SessionClient, accept
from support.tasks import TASKS, WITH_TASKS, build, settle, status
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_a_task_asks_through_tasks_get_and_is_answered_by_tasks_update(wire: WireChecker) -> None:
    app = build()
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    created = await client.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}})
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["statusMessage"] == "deploying api"
    assert created["ttlMs"] is None and created["pollIntervalMs"] == 1000  # none while it runs
    assert "requestState" not in created and "inputRequests" not in created
    task_id = created["taskId"]

    parked = await settle(client, task_id, "input_required")
    assert parked["resultType"] == "complete"
    (key,) = parked["inputRequests"]
    assert key == "go"
    question = parked["inputRequests"]["go"]
    assert question["method"] == "elicitation/create"
    assert question["params"]["message"] == "Deploy api now?"
    assert question["params"]["requestedSchema"]["properties"]["go"]["type"] == "boolean"
    # polling again shows the same question under the same key
    assert (await status(client, task_id))["inputRequests"] == parked["inputRequests"]

    ack = await client.result(
        "tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go=True)("go", {})}}
    )
    assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}
    working = await settle(client, task_id, "working")
    assert working["statusMessage"] == "half way"  # progress in a task becomes its status message
    app.gate.set()  # type: ignore[attr-defined]
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "api: deployed (task)"}]
    assert not done["result"].get("isError")
    assert "error" not in done and "inputRequests" not in done
    # the last progress shown ("half way") is not the outcome: an ended task drops it
    assert "statusMessage" not in await status(client, task_id)
    assert client.notifications == []  # a task has no stream: no progress notification went out


async def test_declining_inside_a_task_reaches_the_handler(wire: WireChecker) -> None:
    client = MemoryClient(build(), capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "db"}}))[
        "taskId"
    ]
    await settle(client, task_id, "input_required")
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": {"go": {"action": "decline"}}})
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "db: not deployed (decline)"


async def test_answers_under_other_keys_are_ignored_and_a_bad_answer_is_asked_again(
    wire: WireChecker,
) -> None:
    client = MemoryClient(build(), capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "web"}}))[
        "taskId"
    ]
    await settle(client, task_id, "input_required")
    # a key never issued: acknowledged, ignored
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": {"nope": {"action": "accept"}}})
    assert list((await status(client, task_id))["inputRequests"]) == ["go"]
    # an answer that does not fit the form: asked again under a new key, with the reason
    bad = {"go": {"action": "accept", "content": {"go": "yes"}}}
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": bad})

    async def asked_again() -> bool:
        return list((await status(client, task_id)).get("inputRequests", {})) == ["go.2"]

    await eventually(asked_again, "the question to be asked again")
    again = (await status(client, task_id))["inputRequests"]["go.2"]["params"]["message"]
    assert again.startswith("Your previous answer was not accepted:") and again.endswith("Deploy web now?")
    # the old key is spent: an answer under it is ignored
    await client.result(
        "tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go=True)("go", {})}}
    )
    assert list((await status(client, task_id))["inputRequests"]) == ["go.2"]
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": {"go.2": bad["go"]}})
    done = await settle(client, task_id, "completed")  # a second bad answer counts as cancel
    assert done["result"]["content"][0]["text"] == "web: not deployed (cancel)"


async def test_tasks_update_answers_past_a_tool_calls_limits_are_invalid_params(wire: WireChecker) -> None:
    """A tasks/update carrying more answers than a tools/call may is refused as that one
    is, and the question still waits for a fitting answer."""
    client = MemoryClient(build(), capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "big"}}))[
        "taskId"
    ]
    await settle(client, task_id, "input_required")
    many = {f"k{i}": {"action": "decline"} for i in range(65)}
    long = {"go": {"action": "accept", "content": {"go": True}, "note": "x" * 300_000}}
    for responses in (many, long):
        error = (await client.request("tasks/update", {"taskId": task_id, "inputResponses": responses}))[
            "error"
        ]
        assert error["code"] == -32602 and "inputResponses is too large" in error["message"]
    await _refused_whole_then_declined(client, task_id, "big")


async def test_tasks_update_answers_that_are_not_objects_are_invalid_params(wire: WireChecker) -> None:
    """Each value of ``inputResponses`` is a result (an object): any other is -32602
    naming its key, and the question still waits, not asked again."""
    client = MemoryClient(build(), capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "odd"}}))[
        "taskId"
    ]
    await settle(client, task_id, "input_required")
    for responses, kind in (
        ({"go": 5}, "a number"),
        ({"go": [{"action": "decline"}]}, "an array"),
        ({"nope": {"action": "decline"}, "go": None}, "null"),
        ({"never-asked": "yes"}, "a string"),
    ):
        sent = {"taskId": task_id, "inputResponses": responses}
        error = (await client.request("tasks/update", sent, malformed=True))["error"]
        (key,) = (k for k, v in responses.items() if not isinstance(v, dict))
        assert error["code"] == -32602
        assert f'inputResponses["{key}"]' in error["message"] and "object" in error["message"]
        assert kind in error["message"]
    await _refused_whole_then_declined(client, task_id, "odd")


async def _refused_whole_then_declined(client: MemoryClient, task_id: str, service: str) -> None:
    """A good answer beside a bad one is not taken either: the whole update is refused,
    the question still waits under its key, and a decline then ends the task."""
    mixed = {
        "taskId": task_id,
        "inputResponses": {"go": {"action": "accept", "content": {"go": True}}, "x": 1},
    }
    assert (await client.request("tasks/update", mixed, malformed=True))["error"]["code"] == -32602
    assert list((await status(client, task_id))["inputRequests"]) == ["go"]
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": {"go": {"action": "decline"}}})
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"][0]["text"] == f"{service}: not deployed (decline)"


async def test_no_answer_in_time_counts_as_cancel(wire: WireChecker) -> None:
    client = MemoryClient(build(ask_timeout=0.05), capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "q"}}))["taskId"]
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "q: not deployed (cancel)"


async def test_multi_round_trip_questions_come_first_then_the_task(wire: WireChecker) -> None:
    app = build()
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    final, rounds = await client.rounds("tools/call", {"name": "named", "arguments": {}}, accept(name="Ada"))
    assert [r["resultType"] for r in rounds] == ["input_required", "task"]
    assert "taskId" not in rounds[0]
    created = final["result"]
    assert "requestState" not in created
    app.gate.set()  # type: ignore[attr-defined]
    done = await settle(client, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "done for Ada"


@pytest.mark.parametrize(
    ("how", "status_", "check"),
    [
        (
            "tool",
            "completed",
            lambda t: t["result"]["isError"] is True and "disk is full" in str(t["result"]),
        ),
        (
            "protocol",
            "failed",
            lambda t: (
                t["error"] == {"code": -32603, "message": "Internal error: the worker went away"}
                and t["statusMessage"] == "Internal error: the worker went away"
            ),
        ),
        (
            "bug",
            "completed",
            lambda t: t["result"]["isError"] is True and "broken: a bug" in str(t["result"]),
        ),
        (
            "url",
            "failed",
            lambda t: t["error"]["code"] == -32603 and "ctx.require_url" in t["error"]["message"],
        ),
        (
            "schema",
            "failed",
            lambda t: t["error"]["code"] == -32603 and t["error"]["message"].startswith("Internal error: "),
        ),
    ],
)
async def test_how_a_task_ends_when_its_handler_fails(
    wire: WireChecker, how: str, status_: str, check: Callable[[dict[str, Any]], bool]
) -> None:
    client = MemoryClient(build(), capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "broken", "arguments": {"how": how}}))["taskId"]
    ended = await settle(client, task_id, status_)
    assert check(ended), ended


async def test_a_task_whose_handler_raises_url_elicitation_required_fails_holding_no_state(
    wire: WireChecker,
) -> None:
    """A client that takes URL mode: the handler's own ``URLElicitationRequired``, raised once
    its request was answered with the task, cannot become a round (nothing of a
    ``requestState`` is ever in a task, and 2026-07-28 has no -32042): the task fails."""
    capabilities = {**WITH_TASKS, "elicitation": {"form": {}, "url": {}}}
    client = MemoryClient(build(), capabilities=capabilities, checker=wire)
    task_id = (await client.result("tools/call", {"name": "broken", "arguments": {"how": "url"}}))["taskId"]
    ended = await settle(client, task_id, "failed")
    assert ended["error"]["code"] == -32603 and "ctx.require_url" in ended["error"]["message"]
    assert "requestState" not in str(ended) and "result" not in ended


async def test_cancelling_a_task_stops_its_handler_and_is_acknowledged_again_later(wire: WireChecker) -> None:
    app = build()
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "x"}}))["taskId"]
    await settle(client, task_id, "input_required")
    ack = await client.result("tasks/cancel", {"taskId": task_id})
    assert set(ack) <= {"resultType", "_meta"} and ack["resultType"] == "complete"
    cancelled = await status(client, task_id)
    assert cancelled["status"] == "cancelled" and "inputRequests" not in cancelled
    assert (await client.result("tasks/cancel", {"taskId": task_id}))["resultType"] == "complete"
    await asyncio.sleep(0.02)
    assert (await status(client, task_id))["status"] == "cancelled"  # the handler's end changes nothing
    (running,) = app.tasks._tasks.values()
    assert running.job is not None and running.job.cancelled()


async def test_tasks_are_gated_on_the_extension_and_unknown_ids_are_invalid_params(wire: WireChecker) -> None:
    app = build()
    bare = MemoryClient(app, checker=wire)  # elicitation, no tasks extension
    for method, params in (
        ("tasks/get", {"taskId": "t"}),
        ("tasks/update", {"taskId": "t", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "t"}),
    ):
        error = (await bare.request(method, params))["error"]
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    # an optional task tool answers in place; a required one is refused before it runs
    final, rounds = await bare.rounds(
        "tools/call", {"name": "deploy", "arguments": {"service": "s"}}, accept(go=False)
    )
    assert [r["resultType"] for r in rounds] == ["input_required", "complete"]
    assert final["result"]["content"][0]["text"] == "s: not deployed (accept)"
    refused = (await bare.request("tools/call", {"name": "named", "arguments": {}}))["error"]
    assert refused["code"] == -32021 and refused["data"]["requiredCapabilities"] == {
        "extensions": {TASKS: {}}
    }
    # start_task in a tool not registered for tasks: False, in place
    tasking = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    plain = await tasking.result("tools/call", {"name": "plain", "arguments": {}})
    assert plain["content"][0]["text"] == "plain: False"
    for params in ({"taskId": "nope"}, {"taskId": ""}, {"taskId": 7}, {}):
        error = (await tasking.request("tasks/get", params, malformed=True))["error"]
        assert error["code"] == -32602
    missing = (await tasking.request("tasks/update", {"taskId": "x"}, malformed=True))["error"]
    assert missing["code"] == -32602 and "inputResponses" in missing["message"]
    for removed in ("tasks/result", "tasks/list"):
        assert (await tasking.request(removed, {"taskId": "x"}, malformed=True))["error"]["code"] == -32601


async def test_discover_names_the_extension_only_when_a_tool_can_be_a_task(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    caps = (await client.result("server/discover"))["capabilities"]
    assert caps["extensions"] == {TASKS: {}}
    plain = Server("plain")

    @plain.tool()
    def hello() -> str:
        return "hi"

    assert (
        "extensions"
        not in (await MemoryClient(plain, checker=wire).result("server/discover"))["capabilities"]
    )


async def test_a_task_is_visible_only_to_the_principal_that_created_it(wire: WireChecker) -> None:
    app = build()
    ann = MemoryClient(app, capabilities=WITH_TASKS, principal=Principal("ann"), checker=wire)
    bob = MemoryClient(app, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
    nobody = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await ann.result("tools/call", {"name": "deploy", "arguments": {"service": "mine"}}))["taskId"]
    for other in (bob, nobody):
        for method, params in (
            ("tasks/get", {"taskId": task_id}),
            ("tasks/update", {"taskId": task_id, "inputResponses": {"go": {"action": "accept"}}}),
            ("tasks/cancel", {"taskId": task_id}),
        ):
            error = (await other.request(method, params))["error"]
            assert error["code"] == -32602 and "not yours" in error["message"]
    assert (await settle(ann, task_id, "input_required"))["inputRequests"]


async def test_an_ended_task_is_kept_for_its_ttl_then_forgotten(wire: WireChecker) -> None:
    now = [1_000_000.0]
    app = build(clock=lambda: now[0])
    app.tasks.ttl_ms = 60_000
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "broken", "arguments": {"how": "tool"}}))["taskId"]
    await settle(client, task_id, "completed")
    now[0] += 59.9
    assert (await status(client, task_id))["status"] == "completed"
    now[0] += 0.2
    assert (await client.request("tasks/get", {"taskId": task_id}))["error"]["code"] == -32602
    assert len(app.tasks) == 0


async def test_the_same_handler_runs_in_place_on_2025_11_25(wire_2025: WireChecker) -> None:
    app = build()
    client = SessionClient(app, checker=wire_2025)
    client.answer = lambda _key, _request: {"action": "accept", "content": {"go": True}}
    init = await client.open()
    assert "extensions" not in init["result"]["capabilities"]
    app.gate.set()  # type: ignore[attr-defined]
    result = (await client.request("tools/call", {"name": "deploy", "arguments": {"service": "old"}}))[
        "result"
    ]
    assert result["content"][0]["text"] == "old: deployed (in place)"
    for method in ("tasks/get", "tasks/cancel"):
        error = await client.request(method, {"taskId": "t"}, malformed=True)
        assert error["error"]["code"] == -32601


async def test_a_task_asks_no_more_questions_at_once_than_a_client_takes(wire: WireChecker) -> None:
    """A handler gathering more questions in a task than one round carries
    (MAX_INPUT_REQUESTS) shows the first ones in inputRequests, and each of the rest once
    an earlier one is answered, in order; a question's wait starts when it is shown, and
    our client, which refuses more than that in one tasks/get, gets every answer through."""
    app = Server("survey", state_keys=KeyRing([bytes(range(9, 41))]), task_poll=0.05)
    many = 100

    @app.tool(task="required")
    async def survey(ctx: Context) -> str:
        await ctx.start_task()
        questions = [ctx.elicit(f"Question {i}?", Form(a=String()), key=f"q{i}") for i in range(many)]
        answers = await ctx.gather(*questions)
        return " ".join(str(a.content["a"]) if a.content else "-" for a in answers)

    raw = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await raw.result("tools/call", {"name": "survey"}))["taskId"]
    shown = (await settle(raw, task_id, "input_required"))["inputRequests"]
    assert list(shown) == [f"q{i}" for i in range(MAX_INPUT_REQUESTS)]
    await raw.result("tasks/update", {"taskId": task_id, "inputResponses": {"q0": accept(a="x")("q0", {})}})

    async def moved_on() -> bool:
        keys = list((await status(raw, task_id))["inputRequests"])
        return keys == [f"q{i}" for i in range(1, MAX_INPUT_REQUESTS + 1)]

    await eventually(moved_on, "the next question to be shown in place of the answered one")
    await raw.result("tasks/cancel", {"taskId": task_id})

    script = Scripted.from_script({f"q{i}": {"content": {"a": f"a{i}"}} for i in range(many)})
    async with connect_memory(app, answerer=script, versions=["2026-07-28"], tasks=True) as client:
        out = await asyncio.wait_for(client.call_tool("survey"), 30)  # bounded here, not by ask_timeout
    assert out["content"][0]["text"] == " ".join(f"a{i}" for i in range(many))


async def test_a_cancelled_task_says_who_cancelled_it(wire: WireChecker) -> None:
    """``statusMessage`` of a cancelled task says why: the client's ``tasks/cancel``, or its
    handler's own work cancelled (no client asked: saying so would mislead whoever reads it)."""
    app = build()

    @app.tool(task="required")
    async def stops(ctx: Context) -> str:
        """Its own work is cancelled under it."""
        await ctx.start_task("working")
        raise asyncio.CancelledError

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "x"}}))["taskId"]
    await settle(client, task_id, "input_required")
    await client.result("tasks/cancel", {"taskId": task_id})
    assert (await status(client, task_id))["statusMessage"] == "Cancelled at the client's request"

    task_id = (await client.result("tools/call", {"name": "stops"}))["taskId"]
    ended = await settle(client, task_id, "cancelled")
    assert ended["statusMessage"] == "Cancelled on the server: its handler was cancelled"
