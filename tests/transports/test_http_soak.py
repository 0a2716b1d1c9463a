"""A server that runs for weeks keeps nothing per request beyond what is bounded: thousands
of requests through the ASGI app in process (each in its own task, as under uvicorn), with
the values a memo could key on varied, and the memory the process holds afterwards
compared with what it held before (``tracemalloc``, after a collection)."""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import weakref
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

from mcp_elicit import Boolean, Choice, Context, Form, KeyRing, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.asgi_calls import asgi_post
from support.elicitation import Clock
from support.principals import Tokens
from support.soak import growth

pytestmark = pytest.mark.anyio

BENCH_SERVER = Path(__file__).resolve().parents[2] / "bench" / "servers" / "elicit_server.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
}


def headers(method: str, name: str | None = None, **more: str) -> dict[str, str]:
    sent = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name is not None:
        sent["mcp-name"] = name
    return sent | more


def call(rid: int, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> bytes:
    body = {"name": name, "_meta": META, **params}
    if arguments is not None:
        body["arguments"] = arguments
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": body})


@pytest.fixture
def bench_app() -> Any:
    """The benchmark's server (``bench/servers/elicit_server.py``), loaded from its file."""
    spec = importlib.util.spec_from_file_location("soak_elicit_server", BENCH_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


async def test_the_benchmark_workload_keeps_nothing_per_round(bench_app: Any) -> None:
    """5,000 rounds of the benchmark (one tool asking one form question, stateless
    2026-07-28, the second request answering with the sealed state): the process holds no
    more than 64 KiB more after them than before."""

    async def round_trip(i: int) -> None:
        first = await asgi_post(
            bench_app, call(2 * i, "provision", {"name": f"web-{i}"}), headers("tools/call", "provision")
        )
        result = orjson.loads(first.body)["result"]
        (key,) = result["inputRequests"]
        answer = {key: {"action": "accept", "content": {"region": f"eu-{i}"}}}
        retry = call(
            2 * i + 1,
            "provision",
            {"name": f"web-{i}"},
            inputResponses=answer,
            requestState=result["requestState"],
        )
        final = await asgi_post(bench_app, retry, headers("tools/call", "provision"))
        assert final.status == 200, final
        assert orjson.loads(final.body)["result"]["content"][0]["text"] == f"Provisioned web-{i} in eu-{i}"

    grew = await growth(round_trip, 200, 5000)
    assert grew < 64 * 1024, f"{grew} bytes more after 5,000 rounds"


def url_server(clock: Clock) -> Server:
    """``use_key`` asks for a secret on a page; the store and the flows share ``clock``."""
    app = Server(
        "soak",
        state_keys=KeyRing([bytes(range(32))]),
        auth=Tokens(),
        store=MemoryStore(clock=clock),
        clock=clock,
        flow_ttl=600.0,
    )

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        return "no key" if answer.secret is None else "key kept"

    return app


async def test_header_spellings_are_not_remembered() -> None:
    """3,000 requests, each with a Content-Type and an Accept spelled its own way (parameters,
    weights, case): whatever the app memoizes of them stays under 64 KiB."""
    server = Server("soak")

    @server.tool()
    def echo(text: str) -> str:
        return text

    app = StreamableHTTP(server)

    async def listed(i: int) -> None:
        spelled = {
            "content-type": f"Application/JSON; charset=utf-8; v={i}",
            "accept": f"text/event-stream;q=0.{i % 9 + 1}, application/json; level={i}",
        }
        body = call(i, "echo", {"text": "x"})
        reply = await asgi_post(app, body, headers("tools/call", "echo", **spelled))
        assert reply.status == 200 and orjson.loads(reply.body)["result"]["content"][0]["text"] == "x", reply

    grew = await growth(listed, 100, 3000)
    assert grew < 64 * 1024, f"{grew} bytes more after 3,000 requests"


async def test_abandoned_page_flows_of_many_callers_are_forgotten() -> None:
    """2,000 callers, each starting a URL-mode flow (a page to enter a secret) and never
    coming back, 200 of them within each ``flow_ttl``: once their flows expired, the
    server forgets them, so what it keeps is that of the flows open in one ``flow_ttl``,
    not of every caller it ever served: under 256 KiB more held after them."""
    clock = Clock()
    server = url_server(clock)
    app = StreamableHTTP(server)

    async def abandoned(i: int) -> None:
        if i % 200 == 0:
            clock.now += 601.0  # every flow started so far has expired
        sent = headers("tools/call", "use_key", authorization=f"Bearer tok-user-{i}")
        reply = await asgi_post(app, call(i, "use_key"), sent)
        assert reply.status == 200, reply
        assert orjson.loads(reply.body)["result"]["resultType"] == "input_required", reply

    grew = await growth(abandoned, 200, 2000)
    assert grew < 256 * 1024, f"{grew} bytes more after 2,000 abandoned flows"
    # the callers the quota holds: those of the flows open in one flow_ttl (200), with
    # room for as many again (and at least 256) between two sweeps
    assert len(server.url_mode.quota) <= 512


async def open_2025_session(app: StreamableHTTP) -> dict[str, str]:
    """Initialize a 2025-11-25 session of ``app``: the headers of its later requests."""
    plain = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"},
    }
    opened = await asgi_post(
        app, orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}), plain
    )
    assert opened.status == 200, opened
    sent = plain | {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    done = await asgi_post(app, orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), sent)
    assert done.status == 202, done
    return sent


async def test_a_busy_session_keeps_a_bounded_number_of_finished_streams() -> None:
    """1,000 requests of one 2025-11-25 session, each answered on an SSE stream (the client
    takes SSE only) and read whole: a finished stream is kept a while for a resume, but a
    session keeps at most 100 of them (not every one of the last ``resume_within``
    seconds), and what one keeps is its last events, not its request (the task, its
    context, the connection): under 256 KiB more held after them."""
    server = Server("soak")

    @server.tool()
    def echo(text: str) -> str:
        return text

    app = StreamableHTTP(server)
    sent = await open_2025_session(app)
    (session,) = server.sessions.live()

    async def streamed(i: int) -> None:
        message = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call"}
        message["params"] = {"name": "echo", "arguments": {"text": f"x{i}"}}
        reply = await asgi_post(app, orjson.dumps(message), sent | {"accept": "text/event-stream"})
        assert reply.status == 200 and f'"text":"x{i}"'.encode() in reply.body, reply

    grew = await growth(streamed, 100, 1000)
    assert len(session.streams) <= 100
    assert grew < 256 * 1024, f"{grew} bytes more after 1,000 requests"


async def test_answers_nobody_came_back_for_are_bounded_too() -> None:
    """1,000 requests of one 2025-11-25 session whose stream the server ends before it
    answers (SEP-1699 polling), and whose client never comes back: the answers wait for a
    resume apart from those written to their connection, but no more than 100 of them."""
    server = Server("soak")

    @server.tool()
    async def parked(ctx: Context, n: int) -> str:
        assert await ctx.close_stream()
        return f"parked {n}"

    app = StreamableHTTP(server)
    sent = await open_2025_session(app)
    (session,) = server.sessions.live()

    async def unanswered(i: int) -> None:
        message = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call"}
        message["params"] = {"name": "parked", "arguments": {"n": i}}
        reply = await asgi_post(app, orjson.dumps(message), sent)
        assert reply.status == 200 and b"parked" not in reply.body, reply  # a priming event only
        for _ in range(10):  # the handler answers just after its stream ended
            await asyncio.sleep(0)

    grew = await growth(unanswered, 100, 1000)
    assert len(session.streams) <= 100
    assert grew < 256 * 1024, f"{grew} bytes more after 1,000 requests"


async def test_sessions_never_deleted_are_bounded() -> None:
    """2,000 2025-11-25 sessions opened and never deleted, past ``max_sessions`` (200): the
    least recently seen idle one makes room for each, so the server holds 200 of them, and
    under 64 KiB more after the 2,000 than once it held 200."""
    server = Server("soak", max_sessions=200)
    app = StreamableHTTP(server)
    plain = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }

    async def opened(i: int) -> None:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": f"soak-{i}", "version": "1"},
        }
        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        reply = await asgi_post(app, orjson.dumps(message), plain)
        assert reply.status == 200 and "mcp-session-id" in reply.headers, reply

    grew = await growth(opened, 200, 2000)
    assert len(server.sessions) == 200
    assert grew < 64 * 1024, f"{grew} bytes more after 2,000 sessions"


async def test_long_questions_are_not_remembered() -> None:
    """3,000 requests whose question carries 4 KB of text of its own (what the person is
    asked to confirm, say), never answered: how a question's fingerprint is memoized does
    not keep the texts (12 MB); under 1 MiB more held after them."""
    server = Server("soak", state_keys=KeyRing([bytes(range(32))]))

    @server.tool()
    async def confirm(ctx: Context, text: str) -> str:
        answer = await ctx.elicit(f"Send this?\n\n{text}", Form(ok=Boolean()))
        return answer.action

    app = StreamableHTTP(server)

    async def asked(i: int) -> None:
        text = f"{i:08d}" * 512
        reply = await asgi_post(app, call(i, "confirm", {"text": text}), headers("tools/call", "confirm"))
        assert reply.status == 200, reply
        assert orjson.loads(reply.body)["result"]["resultType"] == "input_required", reply

    grew = await growth(asked, 100, 3000)
    assert grew < 1024 * 1024, f"{grew} bytes more after 3,000 questions"


async def test_large_forms_built_per_request_are_not_kept() -> None:
    """200 requests, each asking a form of its own with a 500-option choice (options read
    from data that changes between requests, say), never answered: the forms kept for
    the next request to reuse are bounded in size as well as in number (512 of them held
    about 140 KB a form): under 4 MiB more held after them."""
    server = Server("soak", state_keys=KeyRing([bytes(range(32))]))

    @server.tool()
    async def pick(ctx: Context, n: int) -> str:
        options = [f"host-{n:04d}-{k:03d}" for k in range(500)]
        answer = await ctx.elicit("Which host?", Form(host=Choice(options)))
        return answer.action

    app = StreamableHTTP(server)

    async def asked(i: int) -> None:
        reply = await asgi_post(app, call(i, "pick", {"n": i}), headers("tools/call", "pick"))
        assert reply.status == 200, reply
        assert orjson.loads(reply.body)["result"]["resultType"] == "input_required", reply

    grew = await growth(asked, 20, 200)
    assert grew < 4 * 1024 * 1024, f"{grew} bytes more after 200 forms"


async def test_long_requests_watched_for_a_disconnect_leave_nothing() -> None:
    """1,000 requests (25 at a time) that each run long enough to be watched for a
    disconnect and kept alive (``watch_after`` 0.01 s, the handler 0.03 s): the watchers
    end with their requests, and under 64 KiB more is held after them."""
    server = Server("soak")

    @server.tool()
    async def slow(n: int) -> str:
        await asyncio.sleep(0.03)
        return f"slow {n}"

    app = StreamableHTTP(server, watch_after=0.01, keepalive=0.01)
    kept_alive = []

    async def one(n: int) -> None:
        reply = await asgi_post(app, call(n, "slow", {"n": n}), headers("tools/call", "slow"))
        assert reply.status == 200 and f"slow {n}".encode() in reply.body, reply
        if reply.headers["content-type"].startswith("text/event-stream"):
            kept_alive.append(n)  # a keep-alive comment came first: the watch had started

    async def batch(i: int) -> None:
        await asyncio.gather(*(one(25 * i + k) for k in range(25)))

    grew = await growth(batch, 4, 40)
    assert kept_alive, "no request was watched: the test ran nothing it means to"
    assert grew < 64 * 1024, f"{grew} bytes more after 1,000 requests"


class Scope(dict[str, Any]):
    """An ASGI scope the test can see go (by a weak reference)."""

    made: ClassVar[list[weakref.ref[Scope]]] = []

    def __init__(self, **items: Any) -> None:
        super().__init__(**items)
        Scope.made.append(weakref.ref(self))


async def test_the_watch_timer_holds_no_request() -> None:
    """The app's one timer that starts the watch of long requests is made by whichever
    request comes first and ticks on while others run: it holds no request of its own
    (the first one's scope and headers, kept for as long as the app stays busy)."""
    server = Server("soak")
    release = asyncio.Event()

    @server.tool()
    async def hold(n: int) -> str:
        if n:
            await release.wait()
        return f"held {n}"

    app = StreamableHTTP(server, watch_after=30.0)  # its first tick comes after the test
    first = await asgi_post(app, call(0, "hold", {"n": 0}), headers("tools/call", "hold"), scope_type=Scope)
    assert first.status == 200 and b"held 0" in first.body, first
    # the first request is over; the next one keeps the timer it started running
    second = asyncio.ensure_future(asgi_post(app, call(1, "hold", {"n": 1}), headers("tools/call", "hold")))
    try:
        for _ in range(20):  # until the second request waits in its handler
            await asyncio.sleep(0)
        gc.collect()
        assert Scope.made and all(kept() is None for kept in Scope.made), "the first request is still held"
    finally:
        release.set()
        assert b"held 1" in (await second).body
