"""Tasks on the server (the ``io.modelcontextprotocol/tasks`` extension), over a client in memory: cancelling a task while its handler runs, fails,
asks, or has just returned, and stopping the server with handlers that ignore cancellation."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, Form, Server
from mcp_elicit.errors import InternalError
from mcp_elicit.forms import Boolean

from support.memory import MemoryClient
from support.tasks import WITH_TASKS, settle, status
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
