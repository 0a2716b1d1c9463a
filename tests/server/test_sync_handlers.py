"""Handlers written as plain functions (``def``) run in worker threads: one that blocks holds
up only its own request, sees the request's contextvars, fails as an ``isError`` result,
and, cancelled, ends its request at once with nothing sent for it later. Driven in memory
(every message checked against the schema), and once over stdio with a real process."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno
import gc
import inspect
import logging
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, Server, String, ToolError
from mcp_elicit.server import threads
from mcp_elicit.server.threads import AWAITED, MAX_WORKERS, run_sync

from support.http import McpHttp, meta
from support.memory import MemoryClient, SessionClient
from support.procs import StdioProcess, http_process, stdio_process
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

#: How long anything here may wait; a test that needs it has failed.
BOUND = 5.0
SYNC_APP = Path(__file__).with_name("sync_app.py")
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


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


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


# ---- a real process over stdio --------------------------------------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "hold.fifo"
    os.mkfifo(path)
    return path


async def opened_by_reader(path: Path) -> int:
    """A write end of the FIFO, once a reader has it open (the tool waits in it)."""
    for _ in range(int(BOUND / 0.02)):
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        await asyncio.sleep(0.02)
    raise AssertionError("the tool never opened the FIFO")


@contextlib.asynccontextmanager
async def sync_server(tmp_path: Path) -> AsyncIterator[StdioProcess]:
    async with stdio_process(SYNC_APP, log_dir=tmp_path) as proc:
        yield proc


async def call(proc: StdioProcess, rid: int, name: str, arguments: dict[str, Any]) -> None:
    await proc.send(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta()},
        }
    )


async def test_over_stdio_a_blocked_sync_tool_holds_up_nothing_and_cancelled_ends_quietly(
    tmp_path: Path, fifo: Path
) -> None:
    async with sync_server(tmp_path) as proc:
        await call(proc, 1, "read_fifo", {"path": str(fifo)})
        writer = await opened_by_reader(fifo)  # the tool is in its thread, reading
        try:
            await call(proc, 2, "echo", {"text": "hi"})
            answer, before = await proc.until(2, within=BOUND)
            assert answer["result"]["content"][0]["text"] == "hi" and before == []
            await proc.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            )
            await call(proc, 3, "echo", {"text": "after the cancel"})
            answer, before = await proc.until(3, within=BOUND)
            assert before == []
            os.write(writer, b"too late")
        finally:
            os.close(writer)  # the tool reads to the end and returns: nobody wants it
        await call(proc, 4, "read_fifo_done", {})
        answer, before = await proc.until(4, within=BOUND)
        assert answer["result"]["content"][0]["text"] == "too late"  # it did finish
        assert before == []  # and nothing was sent for request 1
        await proc.close_stdin()
        assert await proc.rest(within=BOUND) == []
        assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 0


async def test_over_stdio_a_sync_tool_stuck_for_good_does_not_keep_the_process_alive(
    tmp_path: Path, fifo: Path
) -> None:
    """The function waits on a FIFO nobody will ever write to; stdin closes; the process
    exits (the request is cancelled after the grace period, the thread left behind)."""
    async with sync_server(tmp_path) as proc:
        await call(proc, 1, "read_fifo", {"path": str(fifo)})
        writer = await opened_by_reader(fifo)
        try:
            await proc.close_stdin()
            assert await proc.rest(within=BOUND) == []
            assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 0
        finally:
            os.close(writer)


# ---- the Context of a plain function ------------------------------------------------------


def build_with_context() -> Server:
    app = Server("ctx")

    @app.tool()
    def reads(ctx: Context) -> str:
        first = ctx.remember("first", lambda: "kept")
        return f"{ctx.revision} form={ctx.can_elicit()} url={ctx.can_elicit('url')} {first}"

    @app.tool()
    def logs(ctx: Context) -> str:
        ctx.info("starting")  # a coroutine function: nothing is sent unless awaited
        return "logged?"

    @app.tool()
    def asks(ctx: Context) -> str:
        answer = ctx.elicit("Your name?", Form(name=String()))
        return f"asked: {answer}"

    @app.prompt()
    def asks_too(ctx: Context) -> str:
        answer = ctx.elicit("Your name?", Form(name=String()))
        return f"asked: {answer}"

    async def hidden(ctx: Context) -> str:
        await ctx.info("hidden")
        return "hidden"

    @app.tool(name="wrapped")
    def wrapped(ctx: Context) -> Any:  # a decorator that hid an async function
        return hidden(ctx)

    return app


async def test_a_plain_function_reads_its_context_in_its_thread(wire: WireChecker) -> None:
    client = MemoryClient(build_with_context(), checker=wire)
    result = await client.result("tools/call", {"name": "reads"})
    assert text(result) == "2026-07-28 form=True url=False kept"


@pytest.mark.parametrize(("tool", "method"), [("logs", "info"), ("asks", "elicit")])
async def test_a_plain_function_that_calls_what_must_be_awaited_fails_saying_so(
    wire: WireChecker, tool: str, method: str
) -> None:
    client = MemoryClient(build_with_context(), checker=wire)
    result = await client.result("tools/call", {"name": tool})
    assert result["isError"] is True
    assert text(result) == (
        f"Error executing tool {tool}: tool {tool!r} is a plain function (def), so it runs in a worker "
        f"thread and cannot use ctx.{method}(), which must be awaited; declare it 'async def' and "
        f"'await ctx.{method}(...)'"
    )
    assert client.notifications == []


async def test_a_plain_prompt_that_asks_is_an_internal_error_whose_log_says_why(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    client = MemoryClient(build_with_context(), checker=wire)
    with caplog.at_level(logging.ERROR, "mcp_elicit.server"):
        response = await client.request("prompts/get", {"name": "asks_too"})
    assert response["error"]["code"] == -32603
    assert "prompt 'asks_too' is a plain function (def)" in caplog.text
    assert "cannot use ctx.elicit()" in caplog.text


async def test_a_plain_function_returning_a_coroutine_fails_saying_so(wire: WireChecker) -> None:
    """The coroutine is closed, not left to warn 'never awaited' (warnings are errors here)."""
    client = MemoryClient(build_with_context(), checker=wire)
    result = await client.result("tools/call", {"name": "wrapped"})
    assert result["isError"] is True
    assert text(result) == (
        "Error executing tool wrapped: tool 'wrapped' is a plain function (def) that returned a "
        "coroutine; declare it 'async def' (a decorator must keep it one: "
        "inspect.markcoroutinefunction, or an async wrapper)"
    )


def test_every_context_method_that_must_be_awaited_is_refused_in_a_thread() -> None:
    """Found by inspecting ``Context``, so a method added later is refused too."""
    assert set(AWAITED) >= {
        "elicit", "elicit_url", "require_url", "sample", "list_roots", "gather", "secret", "connect",
        "start_task", "pause", "close_stream", "report_progress", "log", "debug", "info", "warning", "error",
    }  # fmt: skip
    for name, member in vars(Context).items():
        if inspect.iscoroutinefunction(member) and not name.startswith("_"):
            assert name in AWAITED
    assert not {"remember", "slot", "can_elicit", "can_sample", "can_list_roots"} & set(AWAITED)


async def test_over_http_a_blocked_sync_tool_does_not_keep_other_clients_waiting(
    tmp_path: Path, fifo: Path, wire: WireChecker
) -> None:
    """Two clients of one ``mcp-elicit serve --http`` process: the first one's tool waits
    on a FIFO in its thread while the second one's calls are answered."""
    with http_process(SYNC_APP, log_dir=tmp_path) as server:
        async with httpx.AsyncClient(timeout=BOUND) as first, httpx.AsyncClient(timeout=BOUND) as second:
            held = asyncio.ensure_future(
                McpHttp(first, server.url, wire).call("read_fifo", {"path": str(fifo)})
            )
            writer = await opened_by_reader(fifo)
            try:
                other = McpHttp(second, server.url, wire)
                for n in range(3):
                    reply = await other.call("echo", {"text": f"hi {n}"})
                    assert reply.result["content"][0]["text"] == f"hi {n}"
                assert not held.done()
                os.write(writer, b"written")
            finally:
                os.close(writer)
            reply = await asyncio.wait_for(held, BOUND)
            assert reply.result["content"][0]["text"] == "written"


def test_a_forked_child_starts_its_own_workers(tmp_path: Path) -> None:
    """A process forked after the pool started has none of its threads: it starts new ones
    rather than queueing jobs that nothing takes."""
    script = tmp_path / "fork.py"
    script.write_text(
        "import asyncio, os, sys\n"
        "from mcp_elicit.server.threads import run_sync\n"
        "async def twice() -> int:\n"
        "    return await asyncio.wait_for(run_sync('test', lambda: 2), 5)\n"
        "assert asyncio.run(twice()) == 2\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        os._exit(0 if asyncio.run(twice()) == 2 else 1)\n"
        "    except BaseException:\n"
        "        os._exit(2)\n"
        "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], timeout=30, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
