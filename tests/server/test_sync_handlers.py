"""Handlers written as plain functions (``def``) run in worker threads: one that blocks holds
up only its own request, sees the request's contextvars, fails as an ``isError`` result,
and, cancelled, ends its request at once with nothing sent for it later. Driven in memory
(every message checked against the schema), and once over stdio with a real process."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_elicit import Server, ToolError
from mcp_elicit.server import threads
from mcp_elicit.server.threads import MAX_WORKERS, run_sync

from support.memory import MemoryClient, SessionClient
from support.sync_handlers import BOUND, text
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
request_tag: contextvars.ContextVar[str] = contextvars.ContextVar("request_tag", default="unset")


class Gate:
    """A handler holds at the gate (``hold``) until the test opens it; the test waits
    until the handler got there (``arrived``), and until it went through (``left``)."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()
        self.done = threading.Event()
        self.thread: int | None = None

    def hold(self) -> bool:
        self.thread = threading.get_ident()
        self.reached.set()
        try:
            return self.opened.wait(BOUND)
        finally:
            self.done.set()

    async def arrived(self) -> None:
        assert await asyncio.to_thread(self.reached.wait, BOUND), "the handler never started"

    async def left(self) -> None:
        assert await asyncio.to_thread(self.done.wait, BOUND), "the handler never finished"


def build(gate: Gate) -> Server:
    app = Server("sync")

    @app.tool()
    def hold() -> str:
        return "opened" if gate.hold() else "timed out"

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def tag() -> str:
        seen = request_tag.get()
        request_tag.set("changed in the thread")
        return seen

    @app.tool()
    def where() -> int:
        return threading.get_ident()

    @app.tool()
    def fails() -> str:
        raise RuntimeError("the database is down")

    @app.tool()
    def refuses() -> str:
        raise ToolError("no such booking")

    @app.prompt()
    def greet(who: str) -> str:
        gate.hold()
        return f"Hello {who}"

    @app.resource("test://slow/{item}")
    def slow(item: str) -> str:
        gate.hold()
        return f"item {item}"

    @app.completion()
    def suggest(ref: Any, argument: Any, context: Any) -> list[str]:
        gate.hold()
        return ["Ada", "Alan"]

    return app


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.opened.set()  # a handler still holding goes on and ends


@pytest.fixture
def client(gate: Gate, wire: WireChecker) -> MemoryClient:
    return MemoryClient(build(gate), checker=wire)


async def test_a_blocking_sync_tool_does_not_hold_up_other_requests(client: MemoryClient, gate: Gate) -> None:
    held = asyncio.ensure_future(client.result("tools/call", {"name": "hold"}))
    await gate.arrived()
    echoed = await asyncio.wait_for(
        client.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}}), BOUND
    )
    assert text(echoed) == "hi"
    assert not held.done()  # still holding, and the server answered meanwhile
    gate.opened.set()
    assert text(await asyncio.wait_for(held, BOUND)) == "opened"
    assert gate.thread != threading.get_ident()


@pytest.mark.parametrize("kind", ["prompt", "resource", "completion"])
async def test_blocking_sync_prompts_resources_and_completions_do_not_hold_up_the_server(
    client: MemoryClient, gate: Gate, kind: str
) -> None:
    method, params = {
        "prompt": ("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}}),
        "resource": ("resources/read", {"uri": "test://slow/7"}),
        "completion": (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
        ),
    }[kind]
    held = asyncio.ensure_future(client.result(method, params))
    await gate.arrived()
    echoed = await asyncio.wait_for(
        client.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}}), BOUND
    )
    assert text(echoed) == "hi" and not held.done()
    gate.opened.set()
    result = await asyncio.wait_for(held, BOUND)
    if kind == "prompt":
        assert result["messages"][0]["content"]["text"] == "Hello Ada"
    elif kind == "resource":
        assert result["contents"][0]["text"] == "item 7"
    else:
        assert result["completion"]["values"] == ["Ada", "Alan"]
    assert gate.thread != threading.get_ident()


async def test_a_sync_tool_sees_the_requests_contextvars_in_its_thread(client: MemoryClient) -> None:
    token = request_tag.set("request 1")
    try:
        assert text(await client.result("tools/call", {"name": "tag"})) == "request 1"
        assert request_tag.get() == "request 1"  # what the thread set stayed there
    finally:
        request_tag.reset(token)
    assert int(text(await client.result("tools/call", {"name": "where"}))) != threading.get_ident()


async def test_a_failing_sync_tool_is_an_is_error_result(
    client: MemoryClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, "mcp_elicit.server"):
        failed = await client.result("tools/call", {"name": "fails"})
    assert failed["isError"] is True
    assert text(failed) == "Error executing tool fails: the database is down"
    assert "tool fails failed" in caplog.text
    refused = await client.result("tools/call", {"name": "refuses"})
    assert (refused["isError"], text(refused)) == (True, "no such booking")


async def test_a_sync_tool_letting_stop_iteration_out_is_an_is_error_result(wire: WireChecker) -> None:
    """asyncio cannot put a StopIteration into a future: passed on as it is, the request
    would never be answered."""
    app = Server("stop")

    @app.tool()
    def first() -> str:
        return str(next(iter([])))

    client = MemoryClient(app, checker=wire)
    result = await asyncio.wait_for(client.result("tools/call", {"name": "first"}), BOUND)
    assert result["isError"] is True
    assert text(result) == "Error executing tool first: the function raised StopIteration"


async def test_a_cancelled_sync_tool_ends_its_request_at_once_and_nothing_follows(
    client: MemoryClient, gate: Gate, caplog: pytest.LogCaptureFixture
) -> None:
    held = asyncio.ensure_future(client.request("tools/call", {"name": "hold"}))
    await gate.arrived()
    held.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(held, BOUND)
    assert not gate.done.is_set()  # the thread cannot be interrupted: it still holds
    echoed = await client.result("tools/call", {"name": "echo", "arguments": {"text": "after"}})
    assert text(echoed) == "after"
    with caplog.at_level(logging.DEBUG):
        gate.opened.set()
        await gate.left()
        for _ in range(10):  # let whatever the finished thread scheduled run
            await asyncio.sleep(0)
    assert client.statuses == [200]  # the echo's; nothing for the cancelled call
    assert client.notifications == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_at_most_max_workers_run_at_once_and_one_cancelled_before_its_turn_never_runs() -> None:
    release = threading.Event()
    started = threading.Semaphore(0)
    ran: list[object] = []

    def block(n: object) -> object:
        ran.append(n)
        started.release()
        release.wait(BOUND)
        return n

    holders = [asyncio.ensure_future(run_sync("holder", block, n)) for n in range(MAX_WORKERS)]
    try:
        for _ in range(MAX_WORKERS):
            assert await asyncio.to_thread(started.acquire, True, BOUND), "a worker never started"
        late = asyncio.ensure_future(run_sync("late", block, "late"))
        queued = asyncio.ensure_future(run_sync("queued", block, "queued"))
        await asyncio.sleep(0)  # both handed to the pool: no worker is free
        late.cancel()
        with pytest.raises(asyncio.CancelledError):
            await late
        assert sorted(map(str, ran)) == sorted(str(n) for n in range(MAX_WORKERS))
    finally:
        release.set()
    assert await asyncio.wait_for(asyncio.gather(*holders, queued), BOUND) == [*range(MAX_WORKERS), "queued"]
    assert "late" not in ran


async def test_a_stall_of_every_worker_is_logged_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every worker held (by functions that never return, say): a function waiting its turn
    for ``STALL_WARNING`` seconds logs one warning per stall, naming the pool's size, how
    long it has been full and what waits; the operator is told, not each request."""
    monkeypatch.setattr(threads, "STALL_WARNING", 0.1)
    release = threading.Event()
    started = threading.Semaphore(0)

    def block(n: object) -> object:
        started.release()
        release.wait(BOUND)
        return n

    for stall in (1, 2):
        holders = [asyncio.ensure_future(run_sync("holder", block, n)) for n in range(MAX_WORKERS)]
        try:
            for _ in range(MAX_WORKERS):
                assert await asyncio.to_thread(started.acquire, True, BOUND), "a worker never started"
            with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
                waiting = [asyncio.ensure_future(run_sync(f"tool 'w{n}'", block, n)) for n in range(3)]
                await asyncio.sleep(0.4)
        finally:
            release.set()
        assert await asyncio.wait_for(asyncio.gather(*holders, *waiting), BOUND) == [
            *range(MAX_WORKERS),
            0,
            1,
            2,
        ]
        for _ in range(3):
            assert await asyncio.to_thread(started.acquire, True, BOUND)
        release.clear()
        stalls = [r.getMessage() for r in caplog.records if "worker threads" in r.getMessage()]
        assert len(stalls) == stall, stalls
        assert f"all {MAX_WORKERS} worker threads" in stalls[-1] and "tool 'w" in stalls[-1]
        assert "busy for" in stalls[-1] and "async def" in stalls[-1]


class _Arguments:
    """What a request hands its function (its arguments, its context): tracked by a weak
    reference."""

    def __init__(self) -> None:
        self.data = bytearray(1024 * 1024)


async def test_a_request_cancelled_while_it_waits_for_a_worker_keeps_nothing_alive() -> None:
    """Every worker is held by a function that does not return (for good, say): a request
    cancelled while waiting its turn (the client went away) lets go of its arguments and
    its context at once, rather than keeping them until a worker frees up, which may be never."""
    release = threading.Event()
    started = threading.Semaphore(0)

    def block(value: object) -> object:
        started.release()
        release.wait(BOUND)
        return value

    holders = [asyncio.ensure_future(run_sync("holder", block, n)) for n in range(MAX_WORKERS)]
    try:
        for _ in range(MAX_WORKERS):
            assert await asyncio.to_thread(started.acquire, True, BOUND), "a worker never started"
        arguments = _Arguments()
        tag = request_tag.set("abandoned")
        kept = weakref.ref(arguments)
        waiting = asyncio.ensure_future(run_sync("waiting", block, arguments))
        request_tag.reset(tag)
        await asyncio.sleep(0)  # handed to the pool: no worker is free
        waiting.cancel()
        await asyncio.wait([waiting], timeout=BOUND)
        assert waiting.cancelled()
        del arguments, waiting
        gc.collect()
        assert kept() is None, "a cancelled request's arguments are held until a worker is free"
    finally:
        release.set()
    assert await asyncio.wait_for(asyncio.gather(*holders), BOUND) == list(range(MAX_WORKERS))


async def test_a_cancelled_sync_tool_in_a_session_gets_no_answer(gate: Gate, wire_2025: WireChecker) -> None:
    """2025-11-25: ``notifications/cancelled`` while the function runs; the request ends
    with no response, and the function's later return changes nothing."""
    client = SessionClient(build(gate), checker=wire_2025)
    await client.open()
    held = asyncio.ensure_future(client.request("tools/call", {"name": "hold"}))
    await gate.arrived()
    assert client.session.cancel(2)  # the id of the tools/call (initialize was 1)
    with pytest.raises(AssertionError):  # no payload: SessionClient asserts one
        await asyncio.wait_for(held, BOUND)
    gate.opened.set()
    await gate.left()
    echoed = await client.result("tools/call", {"name": "echo", "arguments": {"text": "still"}})
    assert text(echoed) == "still"


async def test_what_a_sync_tool_tells_clients_is_told_from_the_event_loop(wire: WireChecker) -> None:
    """A plain function registers a tool, says a resource changed and that a URL step is
    done: what wakes the listeners runs on the event loop (asyncio's queues are not
    thread-safe: woken from another thread, a listener may hear nothing, or in debug mode
    hang), and the listener hears every change."""
    app = Server("telling")
    publishing: list[int] = []

    @app.resource("test://board")
    def board() -> str:
        return "board"

    @app.tool()
    def post() -> str:
        app.tool(name="grown", description="Registered by a plain function")(lambda: "grown")
        told = app.notify_resource_updated("test://board")
        app.complete_elicitation("nothing-waits-on-this")
        app.remove_tool("grown")
        return f"told {told}"

    publish = app.subscriptions.publish

    def publish_where(method: str, params: Any = None, **kw: Any) -> int:
        publishing.append(threading.get_ident())
        return publish(method, params, **kw)

    app.subscriptions.publish = publish_where  # type: ignore[method-assign]
    listening = MemoryClient(app, checker=wire)
    message = {
        "jsonrpc": "2.0",
        "id": 100,
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://board"]},
            "_meta": listening.meta(),
        },
    }
    listen = asyncio.ensure_future(listening.raw(message))
    try:
        await eventually(lambda: listening.notifications, "the acknowledgement")
        posted = await MemoryClient(app, checker=wire).result("tools/call", {"name": "post"})
        assert text(posted) == "told 1"
        await eventually(lambda: len(listening.notifications) >= 4, "the three changes")
        assert [m["method"] for m in listening.notifications[1:]] == [
            "notifications/tools/list_changed",
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        ]
        assert publishing == [threading.get_ident()] * 3
    finally:
        app.subscriptions.close_all()
        await asyncio.wait_for(listen, BOUND)
