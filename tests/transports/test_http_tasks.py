"""The tasks extension over real Streamable HTTP (uvicorn on 127.0.0.1): the client
follows a task with ``Mcp-Name`` mirroring its id, a header that disagrees is -32020 with
HTTP 400, and stopping the server cancels the tasks still running (their handlers'
cleanup runs)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from client.recorder import Recorder

from mcp_elicit import Context, Form, Server
from mcp_elicit.client import ElicitAnswer, RoundLimits
from mcp_elicit.core.client import request_headers
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import MCPElicitError
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


class Yes:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer("accept", {"go": True})


def build() -> tuple[Server, asyncio.Event]:
    app = Server("http-tasks", task_poll=0.05)
    cleaned = asyncio.Event()

    @app.tool(task="optional")
    async def deploy(ctx: Context) -> str:
        """Asks, then answers."""
        await ctx.start_task()
        answer = await ctx.elicit("Go?", Form(go=Boolean()), key="go")
        return f"went: {answer.content}"

    @app.tool(task="optional")
    async def forever(ctx: Context) -> str:
        """Never ends on its own."""
        await ctx.start_task()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.set()
        return "unreachable"

    return app, cleaned


async def test_a_task_over_http_with_its_routing_header(wire: WireChecker) -> None:
    app, _ = build()
    recorder = Recorder()
    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        connect_http(running.url, answerer=Yes(), trace=recorder, tasks=True) as client,
    ):
        out = await asyncio.wait_for(client.call_tool("deploy"), 10)
        assert out["content"][0]["text"] == "went: {'go': True}"
        (task_id,) = app.tasks._tasks
        # the routing header must mirror the task id
        message = {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tasks/get",
            "params": {
                "taskId": task_id,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": TASKS,
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                },
            },
        }
        headers = request_headers(message, "2026-07-28")
        assert headers["Mcp-Name"] == task_id
        async with httpx.AsyncClient(timeout=10) as http:
            ok = await http.post(running.url, json=message, headers=headers)
            assert ok.status_code == 200 and ok.json()["result"]["status"] == "completed"
            wrong = await http.post(
                running.url, json=message, headers={**headers, "Mcp-Name": "someone-else"}
            )
            assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020
            wire.response("tasks/get", wrong.json())
    assert recorder.check(wire) == len(recorder.sent)
    assert [m for m in recorder.methods() if m.startswith("tasks/")][-1] == "tasks/get"


async def test_stopping_the_server_cancels_running_tasks(wire: WireChecker) -> None:
    app, cleaned = build()
    http_app = StreamableHTTP(app)
    async with (
        uvicorn_server(http_app) as running,
        # the polls go on through a passing outage (a 503): 1 s of it here, not a minute
        connect_http(running.url, answerer=Yes(), tasks=True, limits=RoundLimits(outage_wait=1.0)) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("forever"))
        await eventually(lambda: len(app.tasks), "the task")
        (running_task,) = app.tasks._tasks.values()
        http_app.begin_shutdown()
        await asyncio.wait_for(cleaned.wait(), 5)  # the handler's cleanup ran
        assert running_task.record.status == "cancelled"
        assert running_task.record.status_message == "The server is shutting down"
        # polls now get 503: polled again for outage_wait, then the call fails, naming the outage
        with pytest.raises(MCPElicitError, match=r"shutting down.*unavailable for"):
            await asyncio.wait_for(call, 10)
    result: Any = running_task.record.wire()
    assert result["status"] == "cancelled"


class Slow:
    """Answers every form with ``go``, but answers the question ``a`` only once ``ready``
    says so (the server has stopped waiting for it, and the client has seen that)."""

    modes = frozenset({"form"})

    def __init__(self, ready: Any) -> None:
        self.ready = ready

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        if request.key == "a":
            await eventually(self.ready, "the task to stop waiting for a, and a poll to show it")
        return ElicitAnswer("accept", {"go": True})


async def test_answers_go_only_to_questions_the_task_still_waits_for(wire: WireChecker) -> None:
    """Two questions asked at once; the tool stops waiting for one (``a``) while the person
    is still answering: the client, having seen ``a`` gone from ``inputRequests``, sends
    ``tasks/update`` with the answer to ``b`` only (each key must be one still outstanding)."""
    app = Server("http-tasks-partial", task_poll=0.02)
    recorder = Recorder()

    @app.tool(task="optional")
    async def two(ctx: Context) -> str:
        """Asks a and b; gives a up after a moment."""
        await ctx.start_task()

        async def first() -> str:
            try:
                return (await asyncio.wait_for(ctx.elicit("A?", Form(go=Boolean()), key="a"), 0.3)).action
            except TimeoutError:
                return "given up"

        a, b = await asyncio.gather(first(), ctx.elicit("B?", Form(go=Boolean()), key="b"))
        return f"a: {a}, b: {b.action}"

    def seen_without_a() -> bool:
        """A tasks/get answered after ``a`` left the task shows only ``b``."""
        (running_task,) = app.tasks._tasks.values()
        if "a" in running_task.record.input_requests:
            return False
        polls = [m for m in recorder.received if "inputRequests" in m.get("result", {})]
        return bool(polls) and set(polls[-1]["result"]["inputRequests"]) == {"b"}

    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        connect_http(running.url, answerer=Slow(seen_without_a), trace=recorder, tasks=True) as client,
    ):
        out = await asyncio.wait_for(client.call_tool("two"), 10)
    assert out["content"][0]["text"] == "a: given up, b: accept"
    (update,) = [m for m in recorder.sent if m.get("method") == "tasks/update"]
    assert update["params"]["inputResponses"] == {"b": {"action": "accept", "content": {"go": True}}}
    assert recorder.check(wire) == len(recorder.sent)


async def test_a_task_that_runs_longer_than_its_ttl_is_followed_to_its_end() -> None:
    """``ttlMs`` counts from the task's creation and says when the server may discard it;
    this server never discards a running task, so while it runs it says none (null), and
    once it ended, the time it ran plus ``task_ttl``. A client reading the ttl as a
    deadline (as the extension allows) then never gives up a task that is still running."""
    app = Server("long-tasks", task_poll=0.05, task_ttl=0.3)
    release = asyncio.Event()
    seen: list[Any] = []

    @app.tool(task="optional")
    async def slow(ctx: Context) -> str:
        await ctx.start_task()
        await release.wait()
        return "done"

    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        connect_http(running.url, tasks=True) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("slow"))
        await eventually(lambda: app.tasks._tasks, "the task")
        (task_id,) = app.tasks._tasks
        record = app.tasks._tasks[task_id].record
        seen.append(record.wire()["ttlMs"])
        await asyncio.sleep(0.6)  # twice the ttl, still running
        assert not call.done(), call
        release.set()
        out = await asyncio.wait_for(call, 30)
        seen.append(record.wire()["ttlMs"])
    assert out["content"][0]["text"] == "done"
    assert seen[0] is None, seen
    ran = record.ended - record.created
    assert abs(seen[1] - (ran * 1000 + 300)) <= 1, seen  # the time it ran, plus task_ttl
