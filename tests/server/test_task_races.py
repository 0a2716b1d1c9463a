"""Races on a task (2026-07-28 tasks extension), in memory: a ``tasks/cancel`` and the
``tasks/update`` answering the task's question served in the same turn of the event loop
(``asyncio.gather`` of the two requests, neither of which waits on real I/O)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_elicit import Boolean, Context, Form, KeyRing, Server
from mcp_elicit.stores import MemoryStore

from support.memory import MemoryClient
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
WITH_TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}


def acting_server(done: list[str]) -> Server:
    app = Server("task-races", state_keys=KeyRing([b"r" * 16 + b"k" * 16]))

    @app.tool(task="optional")
    async def act(ctx: Context) -> str:
        await ctx.start_task()
        answer = await ctx.elicit("Go ahead?", Form(go=Boolean()), key="go")
        done.append(answer.action)  # the one-time action, after the person said yes
        return "acted"

    return app


@pytest.mark.parametrize("first", ["tasks/update", "tasks/cancel"])
async def test_a_cancel_served_with_the_answer_stops_the_handler_at_its_question(
    first: str, wire: WireChecker
) -> None:
    done: list[str] = []
    app = acting_server(done)
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    task_id = (await client.result("tools/call", {"name": "act", "arguments": {}}))["taskId"]
    state: dict[str, Any] = {}

    async def asking() -> bool:
        state.update(await client.result("tasks/get", {"taskId": task_id}))
        return state["status"] == "input_required"

    await eventually(asking, "the task to ask")
    (key,) = state["inputRequests"]
    answer = {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"go": True}}}}
    update = client.request("tasks/update", answer)
    cancel = client.request("tasks/cancel", {"taskId": task_id})
    await asyncio.gather(*((update, cancel) if first == "tasks/update" else (cancel, update)))
    (running,) = app.tasks._tasks.values()
    assert running.job is not None
    await asyncio.wait_for(asyncio.wait([running.job]), 5)
    assert (await client.result("tasks/get", {"taskId": task_id}))["status"] == "cancelled"
    assert done == []  # the handler of a cancelled task did not go on past its question
    assert running.job.cancelled()
    assert not running.waiting


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_the_relay_writer_cancelled_as_it_is_woken_is_cancelled(turns: int) -> None:
    """The relay's writer (task states for the other instances) is cancelled as the server
    stops; something to write arriving about then must not swallow that cancellation, or
    the stop, which waits for the writer, would wait for good."""
    store = MemoryStore()
    app = Server("relay-races", state_keys=KeyRing([b"r" * 16 + b"k" * 16]), store=store)
    await app.start()
    relay = app.relay
    writer, wake = relay._writer, relay._wake
    assert writer is not None and wake is not None
    try:
        await asyncio.sleep(0)  # the writer waits for something to write
        wake.set()
        for _ in range(turns):
            await asyncio.sleep(0)
        if writer.cancel():
            done, _ = await asyncio.wait([writer], timeout=2)
            assert done and writer.cancelled()
    finally:
        await app.stop()
        await store.close()


async def test_a_task_started_once_the_server_is_stopping_goes_on_in_place(wire: WireChecker) -> None:
    """``ctx.start_task()`` after the stop began (``Tasks.stop``, which ``begin_shutdown``
    calls) must not start a task the stop has already passed by: the call goes on in place
    and is answered as a plain call, and no task is left behind to be cut off later."""
    app = Server("task-races", state_keys=KeyRing([b"r" * 16 + b"k" * 16]))
    started = asyncio.Event()
    go_on = asyncio.Event()

    @app.tool(task="optional")
    async def late(ctx: Context) -> str:
        started.set()
        await go_on.wait()
        await ctx.start_task()
        return "done"

    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    call = asyncio.ensure_future(client.result("tools/call", {"name": "late", "arguments": {}}))
    await asyncio.wait_for(started.wait(), 5)
    app.tasks.stop()  # the server begins to stop while the handler runs
    go_on.set()
    result = await asyncio.wait_for(call, 5)
    assert result["content"] == [{"type": "text", "text": "done"}], result
    assert "taskId" not in result
    assert not app.tasks._tasks


async def test_a_server_started_again_after_a_stop_takes_tasks_again() -> None:
    app = Server("task-races", state_keys=KeyRing([b"r" * 16 + b"k" * 16]))
    app.tasks.stop()
    assert app.tasks.create(None) is None  # stopping: in place
    await app.start()
    try:
        assert app.tasks.create(None) is not None
    finally:
        await app.stop()
