"""The client over Streamable HTTP with real sockets on 127.0.0.1: the project's own server
served by uvicorn at both revisions (forms, URL steps, headers, progress on the response
stream), the demo server as a subprocess, and connection failures."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from pydantic import Field as PydanticField

from client.app import CONNECTED, TOMORROW, User, app, roots, sample
from client.recorder import Recorder
from mcp_elicit import Context, Form, Server, String
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import TransportError
from mcp_elicit.transports.http_client import HttpTransport, connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import ROOT, free_port, http_process, uvicorn_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with uvicorn_server(StreamableHTTP(app)) as server:
        yield server.url


@pytest.mark.parametrize("revision", REVISIONS)
async def test_every_question_kind_over_http(url: str, revision: str) -> None:
    recorder = Recorder()
    user = User()
    CONNECTED.clear()
    async with connect_http(
        url, answerer=user, sampling=sample, roots=roots, versions=[revision], trace=recorder
    ) as client:
        assert client.revision == revision
        booked = await client.call_tool("book", {"restaurant": "noma"})
        assert booked["content"][0]["text"] == f"booked noma for 2 on {TOMORROW}, inside"
        planned = await client.call_tool("plan")
        assert planned["content"][0]["text"] == "loud / the harbour / ['file:///home/me/plans']"
        prompt = await client.get_prompt("evening", {"city": "Oslo"})
        assert prompt["messages"][0]["content"]["text"] == "A loud evening in Oslo"
        read = await client.read_resource("menu://noma")
        assert read["contents"][0]["text"] == "noma: mains"
        connected = await client.call_tool("connect", {"service": "mail"})
        expected = "mail: connected" if revision == "2025-11-25" else "mail: accept"
        assert connected["content"][0]["text"] == expected
        regional = await client.call_tool("regional", {"region": " Zürich ", "query": "q"})
        assert regional["content"][0]["text"] == " Zürich :q"
    assert recorder.check(WireChecker.load(revision)) > 10


async def test_header_mirroring_is_checked_by_a_real_server(url: str) -> None:
    """The server rejects a tool call whose Mcp-Param-Region is missing (-32020); the
    client lists the tools first, so it never is."""
    recorder = Recorder()
    async with connect_http(url, trace=recorder) as client:
        out = await client.call_tool("regional", {"region": "=?base64?x?=", "query": "q"})
    assert out["content"][0]["text"] == "=?base64?x?=:q"
    assert recorder.methods() == ["server/discover", "tools/list", "tools/call"]


async def test_progress_arrives_on_the_response_stream(url: str) -> None:
    seen: list[tuple[str, Mapping[str, Any]]] = []
    async with connect_http(url, on_notification=lambda m, p: seen.append((m, p))) as client:
        out = await client.request("tools/call", {"name": "slow", "_meta": {"progressToken": "tok"}})
    assert out["content"][0]["text"] == "done"
    assert [p["progress"] for m, p in seen if m == "notifications/progress"] == [0, 1, 2]
    assert all(p["progressToken"] == "tok" for _, p in seen)


async def test_a_session_of_the_server_is_ended_on_close(url: str) -> None:
    async with connect_http(url, versions=["2025-11-25"]) as client:
        session = client.session.session_id  # type: ignore[union-attr]
        assert session is not None
        assert len(app.sessions) >= 1
    async with httpx.AsyncClient() as raw:
        reply = await raw.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Mcp-Session-Id": session,
                "MCP-Protocol-Version": "2025-11-25",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert reply.status_code == 404


async def test_nothing_listening_is_a_transport_error_that_says_so() -> None:
    with pytest.raises(TransportError, match=r"cannot connect to .* is the server running"):
        async with connect_http(f"http://127.0.0.1:{free_port()}/mcp"):
            pass


async def test_a_wrong_path_is_reported_with_its_status(url: str) -> None:
    with pytest.raises(TransportError, match="HTTP 404"):
        async with connect_http(url.replace("/mcp", "/nope")):
            pass


async def test_fixed_headers_and_a_given_http_client_are_used(url: str) -> None:
    seen: list[httpx.Request] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request)

    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        transport = HttpTransport(url, headers={"Authorization": "Bearer t0ken"}, client=http)
        async with Client(transport) as client:
            await client.list_tools()
        assert not http.is_closed
    assert seen
    for request in seen:
        assert request.headers["authorization"] == "Bearer t0ken"
        assert request.headers["accept"] == "application/json, text/event-stream"
        assert request.headers["mcp-protocol-version"] == "2026-07-28"


async def test_the_demo_server_process_over_http(tmp_path: Path) -> None:
    answers = Scripted.from_script(
        [
            {"fields": ["party_size"], "content": {"party_size": 4, "date": TOMORROW}},
            {"fields": ["confirm"], "action": "accept"},
        ]
    )
    with http_process(ROOT / "examples" / "demo_server.py", log_dir=tmp_path) as server:
        for revision in REVISIONS:
            async with connect_http(server.url, answerer=answers, versions=[revision]) as client:
                out = await client.call_tool("book_table", {"restaurant": "septime"})
                assert "4 people" in out["content"][0]["text"], out
        assert answers.reports == []
        assert "Traceback" not in server.stderr()


class Refuser:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.decline()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


@pytest.mark.parametrize("revision", REVISIONS)
async def test_declining_over_http(url: str, revision: str) -> None:
    async with connect_http(url, answerer=Refuser(), versions=[revision]) as client:
        out = await client.call_tool("book", {"restaurant": "x"})
    assert out["content"][0]["text"] == "not booked (decline)"


async def test_a_question_the_server_stops_waiting_for_is_withdrawn_from_the_person() -> None:
    """2025-11-25 over HTTP, both sides ours: the server's ``ask_timeout`` passes while the
    person is still on the question; the server carries on (the answer counts as cancel)
    and says so with ``notifications/cancelled``, which takes the question away."""
    impatient = Server("impatient", ask_timeout=0.3)

    @impatient.tool()
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"answer: {answer.action}"

    withdrawn = []

    class Slow:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                withdrawn.append(request.message)
                raise
            return ElicitAnswer("accept", {"name": "too late"})

    recorder = Recorder()
    async with uvicorn_server(StreamableHTTP(impatient)) as server:
        async with connect_http(
            server.url, answerer=Slow(), versions=["2025-11-25"], trace=recorder
        ) as client:
            out = await asyncio.wait_for(client.call_tool("ask_name"), 10)
    assert out["content"][0]["text"] == "answer: cancel"
    assert withdrawn == ["Name?"]
    (question,) = [m for m in recorder.received if m.get("method") == "elicitation/create"]
    assert not [m for m in recorder.sent if m.get("id") == question["id"]]  # nothing answered
    recorder.check(WireChecker.load("2025-11-25"))


async def test_a_close_cut_short_while_the_session_is_ended_still_closes_the_connection() -> None:
    """Closing a 2025-11-25 client sends DELETE; a close cancelled while the server holds
    that DELETE (a second Ctrl-C, a cancel scope's deadline) still closes the transport:
    its HTTP client, and with it the event stream and the pooled connections."""
    inner = StreamableHTTP(Server("slow-to-delete"))
    deleting = asyncio.Event()

    async def slow_delete(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "DELETE":
            deleting.set()
            await asyncio.sleep(60)
        await inner(scope, receive, send)

    async with uvicorn_server(slow_delete) as server:
        transport = HttpTransport(server.url)
        client = Client(transport, versions=["2025-11-25"])
        await client.connect()
        http = transport.client
        closing = asyncio.ensure_future(client.aclose())
        await asyncio.wait_for(deleting.wait(), 10)
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        assert http.is_closed


async def test_a_stream_ended_twice_without_news_is_resumed_from_where_it_was() -> None:
    """2025-11-25 polling: the server ends a request's stream, the client resumes it, and the
    server ends that connection too before anything new happened. The stream's last event
    id is still the one to resume from (as for an EventSource): the call goes on to its
    result, where the second end failed it with "got HTTP 200 and no JSON-RPC response"."""
    server = Server("quiet-polling")

    @server.tool()
    async def quiet(ctx: Context) -> str:
        for _ in range(2):
            assert await ctx.close_stream()
            await asyncio.sleep(1.5)  # the client comes back after the stream's retry (1 s)
        return "done after 3 connections"

    async with uvicorn_server(StreamableHTTP(server, resume_within=10.0)) as running:
        async with connect_http(running.url, versions=["2025-11-25"], timeout=30) as client:
            result = await client.call_tool("quiet")
    assert result["content"][0]["text"] == "done after 3 connections"


async def test_a_server_that_keeps_ending_the_stream_is_followed_while_it_makes_progress() -> None:
    """2025-11-25 polling: a long call whose server ends the stream more than five times,
    each connection bringing something new (progress here), is followed to its result. The
    five resumes a request had in all ended it with "got no response", though the server
    kept answering; five in a row that bring nothing still end it."""
    server = Server("polling")

    @server.tool()
    async def patient(ctx: Context) -> str:
        for step in range(7):
            await ctx.report_progress(step, 7)
            assert await ctx.close_stream()
            await asyncio.sleep(1.5)  # the client comes back after the stream's retry (1 s)
        return "done after 7 streams"

    async with uvicorn_server(StreamableHTTP(server, resume_within=10.0)) as running:
        async with connect_http(running.url, versions=["2025-11-25"], timeout=30, progress=True) as client:
            result = await client.call_tool("patient")
    assert result["content"][0]["text"] == "done after 7 streams"


async def end_after_its_first_event(
    inner: Any, scope: Any, receive: Any, send: Any, *, then: Callable[[], object] = lambda: None
) -> None:
    """Serve a GET event stream through ``inner`` until its first event, then (``then()``
    called first) end it."""
    primed = asyncio.Event()

    async def first_event_only(message: Any) -> None:
        if primed.is_set():
            return
        await send(message)
        if message["type"] == "http.response.body":
            primed.set()

    serving = asyncio.ensure_future(inner(scope, receive, first_event_only))
    await asyncio.wait_for(primed.wait(), 10)
    then()
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    serving.cancel()
    await asyncio.gather(serving, return_exceptions=True)


async def test_an_event_stream_the_server_keeps_ending_is_listened_to_again() -> None:
    """2025-11-25: the server may end its event stream (GET) at any time, and the client
    comes back with Last-Event-ID after the stream's retry. After the server ended it four
    times, a list change it sends there still reaches the client: the client gave up after
    three reconnects in the session's life, and from then on heard nothing the server sent
    outside a request (its questions there included)."""
    server = Server("ending-its-stream")
    server.tool(name="first")(lambda: "first")  # tools declared: their changes are told
    inner = StreamableHTTP(server)
    gets: list[int] = []
    attached = asyncio.Event()

    async def ending(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await inner(scope, receive, send)
            return
        gets.append(1)
        if len(gets) > 4:
            attached.set()
            await inner(scope, receive, send)
            return
        await end_after_its_first_event(inner, scope, receive, send)

    heard = asyncio.Event()

    async def on_notification(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            heard.set()

    async with uvicorn_server(ending) as running:
        async with connect_http(
            running.url, versions=["2025-11-25"], timeout=30, on_notification=on_notification
        ) as client:
            await asyncio.wait_for(attached.wait(), 30)
            await asyncio.sleep(0.5)  # the fifth connection is the stream's now
            server.tool(name="late", description="Added once the stream was ended four times")(lambda: "late")
            await asyncio.wait_for(heard.wait(), 10)
            assert [t["name"] for t in await client.list_tools()] == ["first", "late"]


async def test_an_idle_client_whose_session_expired_renews_it_from_its_event_stream() -> None:
    """2025-11-25: the server ends the event stream and forgets the session; the client
    comes back to the stream (Last-Event-ID) and meets a 404. It opens a new session and
    listens in it, so a list change the server sends there reaches it: it stopped listening,
    deaf to the server until its next request."""
    server = Server("forgetful")
    server.tool(name="first")(lambda: "first")  # tools declared: their changes are told
    inner = StreamableHTTP(server)
    forgotten: set[str] = set()
    renewed = asyncio.Event()

    def session_of(scope: Any) -> str | None:
        return dict(scope["headers"]).get(b"mcp-session-id", b"").decode() or None

    async def forgetful(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        session = session_of(scope)
        if session in forgotten:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"session not found"})
            return
        if scope["method"] != "GET" or session is None:
            await inner(scope, receive, send)
            return
        if forgotten:
            renewed.set()
            await inner(scope, receive, send)
            return
        # ended, and the session with it
        await end_after_its_first_event(inner, scope, receive, send, then=lambda: forgotten.add(session))

    heard = asyncio.Event()

    async def on_notification(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            heard.set()

    async with uvicorn_server(forgetful) as running:
        async with connect_http(
            running.url, versions=["2025-11-25"], timeout=30, on_notification=on_notification
        ) as client:
            await asyncio.wait_for(renewed.wait(), 10)
            await asyncio.sleep(0.5)  # the new session's stream is open
            server.tool(name="late", description="Added once the session was renewed")(lambda: "late")
            await asyncio.wait_for(heard.wait(), 10)
            assert [t["name"] for t in await client.list_tools()] == ["first", "late"]


big_answers = Server("big-answers")  # the default ask timeout: ten minutes


@big_answers.tool()
async def story(ctx: Context) -> str:
    """Ask for a long text."""
    answer = await ctx.elicit("Your story?", Form(story=String()))
    return answer.action  # an error from the client reads as cancel (server.rev_2025_11_25)


class Storyteller:
    """Answers with a story far longer than the server takes in one POST."""

    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept({"story": "once upon a time " * 1000})

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_an_answer_too_large_for_the_server_fails_its_question_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """2025-11-25: the server refuses the client's answer with 413 (over its max_body): the
    client tells it so with a JSON-RPC error under the question's id, so the server's
    question ends at once (not after its ask timeout), and logs a warning saying so."""
    recorder = Recorder()
    caplog.set_level(logging.INFO, "mcp_elicit")
    async with (
        uvicorn_server(StreamableHTTP(big_answers, max_body=4096)) as server,
        connect_http(
            server.url, answerer=Storyteller(), versions=["2025-11-25"], timeout=120, trace=recorder
        ) as client,
    ):
        async with asyncio.timeout(30):  # far below the question's ten minutes
            out = await client.call_tool("story")
    assert out["content"][0]["text"] == "cancel"
    answers = [m for m in recorder.sent if "result" in m and "method" not in m and "id" in m]
    errors = [m for m in recorder.sent if "error" in m]
    assert len(errors) == 1 and errors[0]["id"] == answers[-1]["id"]
    assert errors[0]["error"]["code"] == -32603
    assert "too large for the server (HTTP 413" in errors[0]["error"]["message"]
    warned = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.http_client"]
    assert any("HTTP 413" in w and "JSON-RPC error" in w for w in warned), warned
    assert recorder.check(WireChecker.load("2025-11-25")) > 0


async def test_a_tool_added_after_the_listing_is_listed_again_when_its_headers_are_missing() -> None:
    """A tool the server added after the client listed its tools (its ``x-mcp-header``
    paths unknown): the server refuses the call without its header (-32020), and the
    client lists the tools again and retries, as it does for a tool whose schema changed."""
    server = Server("growing", "1.0")

    @server.tool()
    def first() -> str:
        return "first"

    recorder = Recorder()
    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(running.url, trace=recorder) as client:
            assert (await client.call_tool("first"))["content"][0]["text"] == "first"

            @server.tool()
            def later(
                region: Annotated[str, PydanticField(json_schema_extra={"x-mcp-header": "Region"})],
            ) -> str:
                return f"later in {region}"

            out = await client.call_tool("later", {"region": "eu"})
    assert out["content"][0]["text"] == "later in eu"
    assert recorder.methods() == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/list",
        "tools/call",
    ]


class Breaking:
    """A 2026-07-28 server (ASGI) whose first answer to each of ``breaks`` is an event
    stream that ends before the response: the request is lost with it. A method named
    twice breaks its first two answers."""

    def __init__(self, *breaks: str) -> None:
        self.breaks = Counter(breaks)
        self.ids: list[tuple[str, object]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body, more = b"", True
        while more:
            event = await receive()
            body, more = body + event.get("body", b""), event.get("more_body", False)
        message = json.loads(body)
        method = message["method"]
        self.ids.append((method, message["id"]))
        if self.breaks[method] > 0:
            self.breaks[method] -= 1
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send({"type": "http.response.body", "body": b": working\n\n"})
            return
        if method == "server/discover":
            result: dict[str, Any] = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        elif method == "tools/list":
            result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
        else:
            result = {"content": [{"type": "text", "text": method}]}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete", **result}}
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": json.dumps(answer).encode()})


async def test_a_list_whose_response_stream_broke_is_sent_again_as_a_new_request() -> None:
    """2026-07-28 has no resuming: a broken response stream loses the request, and the
    client sends it again with a new id. A tool call is not sent again (the tool may have
    acted): the caller hears the stream broke."""
    server = Breaking("tools/list", "tools/call")
    async with uvicorn_server(server) as running, connect_http(running.url) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["t"]
        with pytest.raises(TransportError, match="event stream ended before the response"):
            await client.call_tool("t")
    lists = [rid for method, rid in server.ids if method == "tools/list"]
    assert len(lists) == 2 and lists[0] != lists[1]
    assert [method for method, _ in server.ids].count("tools/call") == 1


async def test_a_list_whose_stream_broke_again_says_it_was_already_sent_again() -> None:
    """The second stream breaks too: the request is not sent a third time, and the error
    says it was already sent again once (else a person reading it would think the client
    gave up at the first break)."""
    server = Breaking("tools/list", "tools/list")
    async with uvicorn_server(server) as running, connect_http(running.url) as client:
        with pytest.raises(TransportError) as raised:
            await client.list_tools()
    message = str(raised.value)
    assert "event stream ended before the response" in message
    assert "already sent again once" in message, message
    assert [method for method, _ in server.ids].count("tools/list") == 2
