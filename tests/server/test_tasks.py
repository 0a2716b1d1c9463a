"""The tasks extension on the server (``io.modelcontextprotocol/tasks``, 2026-07-28), in
memory: a tool call that goes on as a task, its questions through ``tasks/get`` and
``tasks/update``, its end, cancellation, gating, and the same handler on 2025-11-25.

Every message is checked against the core schema and the extension's shapes."""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from mcp_elicit import Context, Form, Principal, Server, String, ToolError
from mcp_elicit.client import Scripted
from mcp_elicit.core.rounds import MAX_INPUT_REQUESTS
from mcp_elicit.errors import ConfigError, InternalError, URLElicitationRequired
from mcp_elicit.forms import Boolean
from mcp_elicit.sealing import KeyRing
from mcp_elicit.server.tasks import Tasks
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.memory import connect_memory

from support.memory import MemoryClient, SessionClient, accept, instances
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"elicitation": {}, "extensions": {TASKS: {}}}


def build(**options: Any) -> Server:
    app = Server("tasks", state_keys=KeyRing([b"t" * 16 + b"k" * 16]), **options)
    gate = asyncio.Event()
    app.gate = gate  # type: ignore[attr-defined]

    @app.tool(task="optional")
    async def deploy(ctx: Context, service: str) -> str:
        """Deploys after the user confirms."""
        became = await ctx.start_task(f"deploying {service}")
        answer = await ctx.elicit(f"Deploy {service} now?", Form(go=Boolean()), key="go")
        if not (answer.accepted and answer.content and answer.content["go"]):
            return f"{service}: not deployed ({answer.action})"
        await ctx.report_progress(1, 2, "half way")
        await gate.wait()
        return f"{service}: deployed ({'task' if became else 'in place'})"

    @app.tool(task="required")
    async def named(ctx: Context) -> str:
        """Asks a name first, then works as a task."""
        answer = await ctx.elicit("Your name?", Form(name=String()), key="name")
        await ctx.start_task()
        await gate.wait()
        return f"done for {answer.content['name'] if answer.content else '?'}"

    @app.tool(task="optional")
    async def broken(ctx: Context, how: str) -> str:
        """Fails, one way or another."""
        await ctx.start_task("breaking")
        if how == "tool":
            raise ToolError("the disk is full")
        if how == "protocol":
            raise InternalError("Internal error: the worker went away")
        if how == "url":  # the handshake era's -32042, which a task (2026-07-28) cannot answer
            raise URLElicitationRequired(
                "Sign in first",
                data={
                    "elicitations": [{"mode": "url", "message": "Sign in", "url": "https://example.com/a"}]
                },
            )
        if how == "schema":  # a programming error: forms are flat
            await ctx.elicit("Nested?", {"type": "object", "properties": {"a": {"type": "object"}}})
        raise RuntimeError("a bug")

    @app.tool()
    async def plain(ctx: Context) -> str:
        """Not a task tool: start_task is refused."""
        return f"plain: {await ctx.start_task()}"

    return app


async def status(client: MemoryClient, task_id: str) -> dict[str, Any]:
    return await client.result("tasks/get", {"taskId": task_id})


async def settle(client: MemoryClient, task_id: str, wanted: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def reached() -> bool:
        seen.update(await status(client, task_id))
        return seen["status"] == wanted

    await eventually(reached, f"task {task_id} to be {wanted}")
    return seen


def ann_on(wire: WireChecker, *servers: Server) -> list[MemoryClient]:
    """A client of ann's, declaring the tasks extension, on each of ``servers``."""
    ann = Principal("ann")
    return [MemoryClient(server, capabilities=WITH_TASKS, principal=ann, checker=wire) for server in servers]


async def deploy(client: MemoryClient) -> str:
    """Start the ``deploy`` tool as a task through ``client``; its id."""
    return str(
        (await client.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}}))["taskId"]
    )


async def test_a_task_asks_through_tasks_get_and_is_answered_by_tasks_update(wire: WireChecker) -> None:
    app = build()
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    created = await client.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}})
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["statusMessage"] == "deploying api"
    assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1000
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
    assert list((await status(client, task_id))["inputRequests"]) == ["go"]
    await client.result("tasks/update", {"taskId": task_id, "inputResponses": {"go": {"action": "decline"}}})
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "big: not deployed (decline)"


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


async def test_past_the_task_limit_a_call_goes_on_in_place(wire: WireChecker) -> None:
    app = build()
    app.tasks.max_tasks = 1
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    first = await client.result("tools/call", {"name": "deploy", "arguments": {"service": "a"}})
    assert first["resultType"] == "task"
    app.gate.set()  # type: ignore[attr-defined]
    final, rounds = await client.rounds(
        "tools/call", {"name": "deploy", "arguments": {"service": "b"}}, accept(go=True)
    )
    assert [r["resultType"] for r in rounds] == ["input_required", "complete"]
    assert final["result"]["content"][0]["text"] == "b: deployed (in place)"
    assert len(app.tasks) == 1


async def test_a_task_that_expired_since_the_last_sweep_frees_its_slot_at_once(wire: WireChecker) -> None:
    """Expired tasks are swept at most once a second, but a call that finds the limit
    reached sweeps first: an expired task never keeps a later call from being a task."""
    now = [1_000_000.0]
    app = build(clock=lambda: now[0], task_ttl=0.1)
    app.tasks.max_tasks = 1
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    fails = {"name": "broken", "arguments": {"how": "tool"}}
    ended = (await client.result("tools/call", fails))["taskId"]
    await settle(client, ended, "completed")
    now[0] += 0.2  # expired, well within a second of the last sweep
    assert (await client.result("tools/call", fails))["resultType"] == "task"
    assert len(app.tasks) == 1


async def test_a_caller_held_at_the_limit_cannot_make_every_call_sweep(wire: WireChecker) -> None:
    """A sweep walks every task, so a call at a limit sweeps at most every 0.1 s: a caller
    hammering at its limit costs one walk per tenth of a second, not one per call."""
    now = [1_000_000.0]
    app = build(clock=lambda: now[0], task_ttl=0.01)
    app.tasks.max_tasks = 1
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    fails = {"name": "broken", "arguments": {"how": "tool"}}
    await settle(client, (await client.result("tools/call", fails))["taskId"], "completed")
    now[0] += 0.05  # expired, but the last sweep (the call's own) was 0.05 s ago
    assert (await client.result("tools/call", fails))["resultType"] == "complete"  # in place
    now[0] += 0.06
    assert (await client.result("tools/call", fails))["resultType"] == "task"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        *(("task_ttl", v) for v in (0, 0.0, -60, 0.0001, math.nan, math.inf, -math.inf, True, "60", 1e20)),
        *(("task_poll", v) for v in (0, -1, math.nan, math.inf, False, None)),
    ],
)
async def test_a_task_duration_that_is_not_one_is_refused(option: str, value: Any) -> None:
    """task_ttl and task_poll are numbers of seconds above zero that make whole
    milliseconds the wire can carry (task_ttl=None keeps tasks for good): anything else
    is refused, naming the option and the value, not accepted to misbehave later."""
    with pytest.raises(ConfigError, match=f"^{option} {re.escape(repr(value))}: expected "):
        Server("tasks", **{option: value})


async def test_a_task_duration_in_range_is_kept() -> None:
    assert Server("tasks", task_ttl=None).tasks.ttl_ms is None
    assert Server("tasks", task_ttl=0.001, task_poll=0.25).tasks.ttl_ms == 1
    assert Server("tasks", task_ttl=90, task_poll=0.25).tasks.poll_ms == 250


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        *(("ttl_ms", v) for v in (0, -1, 1.5, 60.0, True, "60", 2**53)),
        *(("poll_ms", v) for v in (0, -1, 0.5, None)),
        *((name, v) for name in ("max_tasks", "max_tasks_per_owner") for v in (0, -1, 2.0, True, None)),
    ],
)
async def test_a_task_limit_that_is_not_a_whole_number_above_zero_is_refused(
    attribute: str, value: Any
) -> None:
    """The registry's ttl, poll interval and limits are whole numbers above zero (the ttl
    may be None), whether given to it or set later on ``server.tasks`` (given as None, the
    limit for one principal is not given: a tenth of ``max_tasks``)."""
    tasks = Server("tasks").tasks
    with pytest.raises(ConfigError, match=f"^Tasks.{attribute} {re.escape(repr(value))}: expected "):
        setattr(tasks, attribute, value)
    if (attribute, value) != ("max_tasks_per_owner", None):
        with pytest.raises(ConfigError, match=f"^Tasks.{attribute} {re.escape(repr(value))}: expected "):
            Tasks(clock=time.time, **{attribute: value})
    setattr(tasks, attribute, 7)
    assert getattr(tasks, attribute) == 7


async def test_a_task_share_for_one_principal_above_the_whole_is_refused() -> None:
    """``max_tasks_per_owner`` above ``max_tasks`` would let one principal take every task:
    refused, naming both, whether given to the registry or set on it (either one); not
    set, the share is a tenth of ``max_tasks`` (at least one)."""
    both = (
        r"^Tasks.max_tasks_per_owner 11 is above Tasks.max_tasks 10: one principal could hold all of them; "
    )
    with pytest.raises(ConfigError, match=both):
        Tasks(clock=time.time, max_tasks=10, max_tasks_per_owner=11)
    tasks = Server("tasks").tasks
    assert (tasks.max_tasks, tasks.max_tasks_per_owner) == (10_000, 1_000)
    tasks.max_tasks = 10
    assert tasks.max_tasks_per_owner == 1
    with pytest.raises(ConfigError, match=both):
        tasks.max_tasks_per_owner = 11
    tasks.max_tasks_per_owner = 10
    with pytest.raises(ConfigError, match=r"^Tasks.max_tasks_per_owner 10 is above Tasks.max_tasks 9: "):
        tasks.max_tasks = 9
    assert (tasks.max_tasks, tasks.max_tasks_per_owner) == (10, 10)


@pytest.mark.parametrize("ttl", [60.0, None])
async def test_past_its_own_task_limit_a_principals_call_goes_on_in_place(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, ttl: float | None
) -> None:
    """One principal cannot take every task the server holds: past ``max_tasks_per_owner``
    (running, or ended and not yet forgotten) its calls go on in place, as past
    ``max_tasks``, while others' calls still become tasks. Without a ttl its ended tasks
    are never forgotten, and the limit holds all the same."""
    now = [1_000_000.0]
    app = build(clock=lambda: now[0], task_ttl=ttl)
    app.tasks.max_tasks_per_owner = 2
    ann = MemoryClient(app, capabilities=WITH_TASKS, principal=Principal("ann"), checker=wire)
    bob = MemoryClient(app, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
    nobody = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    fails = {"name": "broken", "arguments": {"how": "tool"}}
    ended = (await ann.result("tools/call", fails))["taskId"]
    await settle(ann, ended, "completed")
    running = await ann.result("tools/call", {"name": "deploy", "arguments": {"service": "a"}})
    assert running["resultType"] == "task"
    app.gate.set()  # type: ignore[attr-defined]
    with caplog.at_level("WARNING", logger="mcp_elicit.server"):
        final, rounds = await ann.rounds(
            "tools/call", {"name": "deploy", "arguments": {"service": "b"}}, accept(go=True)
        )
    assert [r["resultType"] for r in rounds] == ["input_required", "complete"]
    assert final["result"]["content"][0]["text"] == "b: deployed (in place)"
    assert "principal 'ann' holds 2 tasks" in caplog.text
    for other in (bob, nobody):  # the others' calls are tasks still
        assert (await other.result("tools/call", fails))["resultType"] == "task"
    assert len(app.tasks) == 4

    now[0] += 86_400.0  # ann's ended task is forgotten, if it has a ttl: a slot is free again
    again = await ann.result("tools/call", fails)
    assert again["resultType"] == ("task" if ttl is not None else "complete")


async def test_a_cancel_that_comes_before_the_request_is_answered_still_stops_the_handler(
    wire: WireChecker,
) -> None:
    """The task owns its handler from start_task on, not from when the request returns:
    a cancellation in between (here from the handler's own step) reaches it."""
    app = Server("race")
    stopped = asyncio.Event()

    @app.tool(task="optional")
    async def quick(ctx: Context) -> str:
        await ctx.start_task()
        assert ctx.task is not None
        app.tasks.cancel(ctx.task.record.task_id, None)  # before the request has answered
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "unreachable"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "quick", "arguments": {}}))["taskId"]
    await asyncio.wait_for(stopped.wait(), 5)
    assert (await status(client, task_id))["status"] == "cancelled"


async def test_a_handler_that_fails_while_being_cancelled_leaves_the_task_cancelled(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    app = Server("stubborn")
    started = asyncio.Event()

    @app.tool(task="optional")
    async def stubborn(ctx: Context) -> str:
        await ctx.start_task()
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise InternalError("Internal error: could not clean up") from None
        return "unreachable"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "stubborn", "arguments": {}}))["taskId"]
    await asyncio.wait_for(started.wait(), 5)
    with caplog.at_level("INFO", logger="mcp_elicit.server"):
        await client.result("tasks/cancel", {"taskId": task_id})
        await eventually(lambda: "after it was cancelled" in caplog.text, "the handler's error to be logged")
    assert "could not clean up" in caplog.text
    assert (await status(client, task_id))["status"] == "cancelled"


async def test_a_handler_that_asks_after_swallowing_its_cancellation_is_not_left_waiting(
    wire: WireChecker,
) -> None:
    """A cancelled task asks nobody: a handler that catches its cancellation and then asks
    is cancelled again at once, rather than waiting ``ask_timeout`` for an answer no client
    can give (the task is ``cancelled``, its questions are never shown)."""
    app = Server("stubborn")
    app.tasks.ask_timeout = 600.0
    started, asked = asyncio.Event(), asyncio.Event()
    outcome: list[str] = []

    @app.tool(task="optional")
    async def stubborn(ctx: Context) -> str:
        await ctx.start_task()
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            asked.set()
            try:
                await ctx.elicit("Clean up anyway?", Form(go=Boolean()))
            except asyncio.CancelledError:
                outcome.append("cancelled")
                raise
        return "unreachable"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "stubborn", "arguments": {}}))["taskId"]
    await asyncio.wait_for(started.wait(), 5)
    await client.result("tasks/cancel", {"taskId": task_id})
    await asyncio.wait_for(asked.wait(), 5)
    await eventually(lambda: outcome == ["cancelled"], "the question to be refused")
    task = await status(client, task_id)
    assert task["status"] == "cancelled"
    assert "inputRequests" not in task


# ---- several instances sharing a store ----------------------------------------------------


async def test_any_instance_sharing_the_store_answers_for_a_task(wire: WireChecker) -> None:
    """The task runs where it was created; tasks/get, tasks/update and tasks/cancel work
    through any instance sharing the store, for the task's owner only."""
    a, b = build(), build()  # one server: the same name and keys
    async with instances(a, b, store=MemoryStore()) as store:
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        assert len(b.tasks) == 0  # the handler runs on a only
        assert (await status(there, task_id))["taskId"] == task_id  # known there at once
        parked = await settle(there, task_id, "input_required")
        assert parked["inputRequests"]["go"]["params"]["message"] == "Deploy api now?"
        ack = await there.result(
            "tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go=True)("go", {})}}
        )
        assert set(ack) <= {"resultType", "_meta"}
        await settle(there, task_id, "working")
        a.gate.set()  # type: ignore[attr-defined]
        done = await settle(there, task_id, "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "api: deployed (task)"}]

        bob = MemoryClient(b, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
        for method, params in (
            ("tasks/get", {"taskId": task_id}),
            ("tasks/cancel", {"taskId": task_id}),
        ):
            error = (await bob.request(method, params))["error"]
            assert error["code"] == -32602 and "not yours" in error["message"]

        other = (await here.result("tools/call", {"name": "deploy", "arguments": {"service": "db"}}))[
            "taskId"
        ]
        await settle(there, other, "input_required")
        await there.result("tasks/cancel", {"taskId": other})
        assert (await settle(here, other, "cancelled"))["status"] == "cancelled"
        unknown = (await there.request("tasks/get", {"taskId": "no-such-task"}))["error"]
        assert unknown["code"] == -32602
        # nothing of the task lies in the store in the clear
        sealed = await store.get("tasks", task_id)
        assert sealed is not None and b"deployed" not in sealed and b"Deploy api" not in sealed


async def test_another_instance_delivers_an_answer_as_large_as_a_tool_call_takes(wire: WireChecker) -> None:
    """A tasks/update within the inputResponses limits reaches the task through any
    instance (it was "Internal error" past what a requestState carries)."""
    a, b = build(), build()
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        await settle(there, task_id, "input_required")
        large = {"go": {"action": "decline", "_meta": {"note": "x" * 250_000}}}
        ack = await there.result("tasks/update", {"taskId": task_id, "inputResponses": large})
        assert set(ack) <= {"resultType", "_meta"}
        done = await settle(there, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "api: not deployed (decline)"


async def test_a_listener_on_another_instance_hears_the_task(wire: WireChecker) -> None:
    """subscriptions/listen naming a task held by another instance agrees to it, starts
    with its state, and hears each change of it."""
    a, b = build(), build()
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        message = {
            "jsonrpc": "2.0",
            "id": 50,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:
            await eventually(
                lambda: len(there.notifications) >= 2, "the acknowledgement and the task's state"
            )
            ack, first = there.notifications[:2]
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            assert first["method"] == "notifications/tasks" and first["params"]["taskId"] == task_id

            def statuses() -> list[str]:
                return [
                    n["params"]["status"] for n in there.notifications if n["method"] == "notifications/tasks"
                ]

            await eventually(lambda: "input_required" in statuses(), "the question, heard on b")
            await here.result(
                "tasks/update", {"taskId": task_id, "inputResponses": {"go": accept(go=True)("go", {})}}
            )
            a.gate.set()  # type: ignore[attr-defined]
            await eventually(lambda: statuses()[-1:] == ["completed"], "the end, heard on b")
            done = [n for n in there.notifications if n["method"] == "notifications/tasks"][-1]["params"]
            assert done["result"]["content"] == [{"type": "text", "text": "api: deployed (task)"}]
            bob = MemoryClient(b, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
            bobs = {**message, "id": 51, "params": {**message["params"], "_meta": bob.meta()}}
            refused = asyncio.ensure_future(bob.raw(bobs))
            await eventually(lambda: len(bob.notifications) >= 1, "bob's acknowledgement")
            assert bob.notifications[0]["params"]["notifications"] == {}  # not his task: not agreed
            refused.cancel()
        finally:
            listening.cancel()


async def test_a_task_past_its_ttl_is_unknown_on_every_instance(wire: WireChecker) -> None:
    """With a store, an ended task is forgotten when its ttl has passed, on its own
    instance and on the others alike: the mirror is no longer answered from."""
    now = [1_000_000.0]
    a, b = build(clock=lambda: now[0]), build(clock=lambda: now[0])
    a.tasks.ttl_ms = 60_000
    async with instances(a, b, store=MemoryStore()):
        ann = Principal("ann")
        here = MemoryClient(a, capabilities=WITH_TASKS, principal=ann, checker=wire)
        there = MemoryClient(b, capabilities=WITH_TASKS, principal=ann, checker=wire)
        fails = {"name": "broken", "arguments": {"how": "tool"}}
        task_id = (await here.result("tools/call", fails))["taskId"]
        await settle(there, task_id, "completed")  # the end is in the mirror
        now[0] += 59.9
        for client in (here, there):
            assert (await status(client, task_id))["status"] == "completed"
        assert set(await b.relay.visible(frozenset({task_id}), "ann")) == {task_id}
        now[0] += 0.2
        for client in (here, there):
            error = (await client.request("tasks/get", {"taskId": task_id}))["error"]
            assert error["code"] == -32602 and "expired" in error["message"]
        assert await b.relay.visible(frozenset({task_id}), "ann") == {}  # nor agreed to by a listen


class CountingStore(MemoryStore):
    """A memory store that counts the writes of each task's mirror."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: Counter[str] = Counter()

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "tasks":
            self.writes[key] += 1
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_task_that_runs_long_unchanged_stays_known_on_every_instance(wire: WireChecker) -> None:
    """A task parked for minutes, longer than its ttl and than its mirror's lease, stays
    known on every instance: its own instance rewrites the mirror of its running tasks
    once a period, however often they are polled, and not of the ended ones; and nobody
    listening hears of it, since nothing changed."""
    now = [1_000_000.0]
    a, b = build(clock=lambda: now[0]), build(clock=lambda: now[0])
    a.tasks.ttl_ms = 60_000
    store = CountingStore()
    async with instances(a, b, store=store):
        here, there = ann_on(wire, a, b)
        parked = (await here.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}}))[
            "taskId"
        ]
        await settle(there, parked, "input_required")
        ended = (await here.result("tools/call", {"name": "broken", "arguments": {"how": "tool"}}))["taskId"]
        await settle(there, ended, "completed")
        message = {
            "jsonrpc": "2.0",
            "id": 55,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [parked]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:
            await eventually(lambda: len(there.notifications) >= 2, "the acknowledgement and the state")
            heard, ended_writes = len(there.notifications), store.writes[ended]
            for minute in range(1, 4):  # past the 3 minutes a state is kept unwritten
                written = store.writes[parked]
                now[0] += 61
                await eventually(
                    lambda written=written: store.writes[parked] > written, f"the mirror renewed ({minute})"
                )
                for _ in range(5):  # polls read the mirror, never write it
                    assert (await status(there, parked))["status"] == "input_required"
                assert store.writes[parked] == written + 1
            assert (await status(here, parked))["status"] == "input_required"
            assert store.writes[ended] == ended_writes
            await asyncio.sleep(0.05)  # what the renewals might have told has arrived
            assert len(there.notifications) == heard
        finally:
            listening.cancel()


async def test_the_running_tasks_of_an_instance_that_died_are_unknown_elsewhere(wire: WireChecker) -> None:
    """An instance stops renewing its running tasks' states (it died, and its handlers
    with it): 3 minutes later they are unknown on the other instances, even without a
    ttl, instead of shown working for days."""
    now = [1_000_000.0]
    a, b = build(clock=lambda: now[0], task_ttl=None), build(clock=lambda: now[0], task_ttl=None)
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        await settle(there, task_id, "input_required")
        await a.relay.stop()  # a no longer writes to the store, as if it had died
        now[0] += 179
        assert (await status(there, task_id))["status"] == "input_required"
        now[0] += 2
        error = (await there.request("tasks/get", {"taskId": task_id}))["error"]
        assert error["code"] == -32602


@pytest.mark.parametrize("size", [100_000, 400_000])
async def test_a_large_result_reaches_the_other_instances(wire: WireChecker, size: int) -> None:
    """A result over a requestState's 64 KiB is mirrored all the same: tasks/get on
    another instance gets it whole, and a listener there hears the end, whether its sealed
    state fits in a message (100 kB) or is announced and read from the mirror (400 kB)."""

    def reporter() -> Server:
        app = Server("tasks", state_keys=KeyRing([b"t" * 16 + b"k" * 16]))
        app.gate = asyncio.Event()  # type: ignore[attr-defined]

        @app.tool(task="optional")
        async def report(ctx: Context) -> str:
            """A long report, made as a task."""
            await ctx.start_task("writing")
            await app.gate.wait()  # type: ignore[attr-defined]
            return "".join(f"line {n}\n" for n in range(size // 6))[:size]

        return app

    a, b = reporter(), reporter()
    async with instances(a, b, store=MemoryStore()):
        here, there = ann_on(wire, a, b)
        task_id = (await here.result("tools/call", {"name": "report", "arguments": {}}))["taskId"]
        message = {
            "jsonrpc": "2.0",
            "id": 60,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        listening = asyncio.ensure_future(there.raw(message))
        try:
            await eventually(lambda: len(there.notifications) >= 2, "the acknowledgement and the state")
            a.gate.set()  # type: ignore[attr-defined]
            done = await settle(there, task_id, "completed")
            text = done["result"]["content"][0]["text"]
            assert len(text) == size and text.startswith("line 0\nline 1\n")

            def ended() -> list[dict[str, Any]]:
                return [
                    n["params"]
                    for n in there.notifications
                    if n["method"] == "notifications/tasks" and n["params"]["status"] == "completed"
                ]

            await eventually(lambda: bool(ended()), "the end, heard on b")
            assert ended()[-1]["result"]["content"][0]["text"] == text
        finally:
            listening.cancel()


async def test_a_request_cancelled_as_its_task_starts_cancels_the_task(wire: WireChecker) -> None:
    """The request that makes a task is cancelled (its client went away) just as the
    handler calls start_task, before the task's id was answered: nobody can follow the
    task, so it ends cancelled and is forgotten after its ttl, not left working forever."""
    now = [1_000_000.0]
    app = Server("gone", clock=lambda: now[0])
    app.tasks.ttl_ms = 60_000
    request: list[asyncio.Future[Any]] = []
    stopped = asyncio.Event()

    @app.tool(task="optional")
    async def orphan(ctx: Context) -> str:
        await ctx.start_task()
        request[0].cancel()  # the client goes away before the CreateTaskResult reaches it
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "unreachable"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    request.append(asyncio.ensure_future(client.result("tools/call", {"name": "orphan", "arguments": {}})))
    with pytest.raises(asyncio.CancelledError):
        await request[0]
    await asyncio.wait_for(stopped.wait(), 5)  # the handler was stopped
    (running,) = app.tasks._tasks.values()
    assert running.record.status == "cancelled" and running.record.ended is not None
    now[0] += 60.1
    assert (await client.request("tasks/get", {"taskId": running.record.task_id}))["error"]["code"] == -32602
    assert len(app.tasks) == 0


class LaggingStore(MemoryStore):
    """A memory store whose task mirror lags as a remote one can: with ``lag="read"`` a
    read returns what it read only once ``go`` is set, with ``lag="write"`` a write lands
    only then."""

    def __init__(self, lag: str) -> None:
        super().__init__()
        self.lag = lag
        self.go = asyncio.Event()
        self.held = asyncio.Event()  # a read or write of the mirror is being held

    async def get(self, namespace: str, key: str) -> bytes | None:
        found = await super().get(namespace, key)
        if namespace == "tasks" and self.lag == "read":
            self.held.set()
            await self.go.wait()
        return found

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "tasks" and self.lag == "write" and not self.go.is_set():
            self.held.set()
            await self.go.wait()
        await super().put(namespace, key, value, ttl=ttl)


@pytest.mark.parametrize("lag", ["read", "write"])
async def test_a_listener_on_another_instance_hears_the_end_that_came_while_it_started(
    wire: WireChecker, lag: str
) -> None:
    """A task ends on one instance while a listen naming it starts on another, with the
    mirror slow to read (the state read is older than the end) or to write (the end is
    not in the mirror yet): the listener still hears the end."""

    def worker() -> Server:
        app = Server("tasks", state_keys=KeyRing([b"t" * 16 + b"k" * 16]))
        app.gate = asyncio.Event()  # type: ignore[attr-defined]

        @app.tool(task="optional")
        async def job(ctx: Context) -> str:
            """Works until released."""
            await ctx.start_task("working")
            await app.gate.wait()  # type: ignore[attr-defined]
            return "done"

        return app

    a, b = worker(), worker()
    store = LaggingStore(lag)
    async with instances(a, b, store=store):
        here, there = ann_on(wire, a, b)
        store.go.set()  # the creation reaches the mirror at once
        task_id = (await here.result("tools/call", {"name": "job", "arguments": {}}))["taskId"]
        store.go.clear()
        message = {
            "jsonrpc": "2.0",
            "id": 70,
            "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task_id]}, "_meta": there.meta()},
        }
        if lag == "write":  # the task ends; its end is told, but not yet in the mirror
            a.gate.set()  # type: ignore[attr-defined]
            await asyncio.wait_for(store.held.wait(), 5)
            await asyncio.sleep(0.05)  # the other instance heard the end (no listener yet)
            listening = asyncio.ensure_future(there.raw(message))
            await eventually(lambda: len(there.notifications) >= 2, "the acknowledgement and a state")
        else:  # the listener read the mirror; the task ends before it is registered
            listening = asyncio.ensure_future(there.raw(message))
            await asyncio.wait_for(store.held.wait(), 5)
            a.gate.set()  # type: ignore[attr-defined]
            await eventually(lambda: a.tasks._tasks[task_id].record.terminal, "the end on a")
            await asyncio.sleep(0.05)  # the other instance heard the end
        store.go.set()
        try:

            def statuses() -> list[str]:
                return [
                    n["params"]["status"] for n in there.notifications if n["method"] == "notifications/tasks"
                ]

            await eventually(lambda: statuses()[-1:] == ["completed"], "the end, heard on b")
        finally:
            listening.cancel()


async def test_stopping_the_server_does_not_wait_for_good_on_a_handler_that_ignores_cancellation(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A task's handler that swallows its cancellation (a broad ``except`` in a retry loop)
    must not hold ``Server.stop`` for good: it waits ``tasks.stop_grace`` seconds, says
    which task is still running, and returns; and a caller's own timeout on ``stop`` works."""
    app = Server("stubborn-stop")
    release = asyncio.Event()
    started = asyncio.Event()

    @app.tool(task="optional")
    async def stubborn(ctx: Context) -> str:
        await ctx.start_task()
        started.set()
        while not release.is_set():
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                pass  # ignored on purpose
        return "finally"

    app.tasks.stop_grace = 0.2
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "stubborn", "arguments": {}}))["taskId"]
    await asyncio.wait_for(started.wait(), 5)
    stopping = asyncio.ensure_future(app.stop())
    try:
        with caplog.at_level("WARNING", logger="mcp_elicit.server"):
            done, _ = await asyncio.wait({stopping}, timeout=3)
        assert stopping in done, "Server.stop waited for a handler that never ends"
        assert f"task {task_id}" in caplog.text and "still running" in caplog.text
        assert (await status(client, task_id))["status"] == "cancelled"
        # a timeout the caller puts on close is honoured, not swallowed
        app.tasks.stop_grace = 60.0
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(app.tasks.close(), 0.2)
    finally:
        release.set()
        await asyncio.wait_for(stopping, 5)


async def test_a_cancel_that_comes_after_the_handler_returned_does_not_lose_its_result(
    wire: WireChecker,
) -> None:
    """The handler returned (its work is done) and a ``tasks/cancel`` is served before its
    end is recorded: the task ends ``completed`` with the handler's result, not
    ``cancelled`` with the result thrown away."""
    app = Server("late-cancel")
    go = asyncio.Event()

    @app.tool(task="optional")
    async def quick(ctx: Context) -> str:
        await ctx.start_task()
        await go.wait()
        return "the work is done"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "quick", "arguments": {}}))["taskId"]
    (running,) = app.tasks._tasks.values()
    assert running.job is not None
    go.set()
    # one loop step at a time, to stop right after the handler returned and before its end
    # is recorded (an Event or asyncio.wait would wake only after that)
    while not running.job.done():  # noqa: ASYNC110
        await asyncio.sleep(0)
    assert not running.record.terminal
    ack = await client.result("tasks/cancel", {"taskId": task_id})
    assert ack["resultType"] == "complete"
    done = await settle(client, task_id, "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "the work is done"}]


@pytest.mark.parametrize("first", ["tasks/cancel", "drain"])
async def test_a_cancelled_handler_cleans_up_undisturbed_when_the_server_stops(
    wire: WireChecker, first: str
) -> None:
    """A handler is cancelled once: after ``tasks/cancel`` (or the HTTP server's drain,
    ``tasks.stop()``), stopping the server waits for its cleanup instead of cancelling
    it a second time in the middle of it."""
    app = Server("cleanup")
    started, cleaned = asyncio.Event(), asyncio.Event()

    @app.tool(task="optional")
    async def tidy(ctx: Context) -> str:
        await ctx.start_task()
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.05)  # cleanup that awaits (closing a connection, say)
            cleaned.set()
        return "unreachable"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "tidy", "arguments": {}}))["taskId"]
    await asyncio.wait_for(started.wait(), 5)
    if first == "tasks/cancel":
        await client.result("tasks/cancel", {"taskId": task_id})
    else:
        app.tasks.stop()
    await asyncio.sleep(0)  # the handler is in its cleanup
    await asyncio.wait_for(app.stop(), 5)
    assert cleaned.is_set(), "the handler's cleanup was cancelled a second time"


class SlowStore(MemoryStore):
    """A memory store whose writes of the task mirror take a while, as a remote one's do."""

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "tasks":
            await asyncio.sleep(0.05)
        await super().put(namespace, key, value, ttl=ttl)


@pytest.mark.parametrize("how", ["running", "just ended"])
async def test_an_instance_that_stops_leaves_its_tasks_last_state_to_the_others(
    wire: WireChecker, how: str
) -> None:
    """The last state of a task (cancelled by the graceful stop, or ended just before it)
    reaches the store before the instance stops writing to it: the other instances read
    that, not an older state until its lease runs out."""
    a, b = build(), build()
    store = SlowStore()
    async with instances(b, store=store):
        a.configure_url_mode(store=store)
        await a.start()
        assert a.relay.listening is not None
        await asyncio.wait_for(a.relay.listening.wait(), 5)
        here, there = ann_on(wire, a, b)
        task_id = await deploy(here)
        await settle(there, task_id, "input_required")
        if how == "just ended":
            await here.result("tasks/cancel", {"taskId": task_id})  # its own instance: at once
        await a.stop()
        ended = await status(there, task_id)
        assert ended["status"] == "cancelled", ended
        shown = "The server is shutting down" if how == "running" else "Cancelled at the client's request"
        assert ended["statusMessage"] == shown


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
