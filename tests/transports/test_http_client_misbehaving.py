"""The HTTP client against a server that answers a request wrongly, on a real 127.0.0.1
socket: each call fails at once (never at its timeout) with an error naming the server and
what was wrong. The server answers ``initialize`` properly (2025-11-25, with a session) and
the ``tools/list`` that follows as the test scripts it."""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import time
from collections.abc import Awaitable, Callable

import orjson
import pytest

from mcp_elicit.client.session import Client
from mcp_elicit.errors import MCPElicitError, ProtocolViolation, RequestTimeout, TransportError
from mcp_elicit.transports.http_client import HttpTransport, connect_http

from support.raw_http import Script, Seen, raw_server, response

pytestmark = pytest.mark.anyio

#: How ``tools/list`` is answered: given its id, the bytes of the whole HTTP response.
Answer = Callable[[int, asyncio.StreamWriter], Awaitable[None]]

_INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "wrong", "version": "1"},
}


def _serving(answer: Answer) -> Script:
    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        message = orjson.loads(seen.body) if seen.body else {}
        if seen.method == "GET":
            writer.write(response("405 Method Not Allowed", {}))
        elif seen.method != "POST" or "id" not in message:
            writer.write(response("202 Accepted", {}))
        elif message["method"] == "initialize":
            body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": _INITIALIZED})
            headers = {"Content-Type": "application/json", "Mcp-Session-Id": "s-1"}
            writer.write(response("200 OK", headers, body))
        else:
            await answer(message["id"], writer)
        await writer.drain()

    return script


def _events(*events: bytes, kept_open: bool = True) -> Answer:
    """An SSE answer: ``events`` (``{id}`` replaced by the request's id), then (``kept_open``)
    a comment every 50 ms for as long as the client listens, else the end of the stream."""

    async def answer(rid: int, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        for event in events:
            writer.write(event.replace(b"{id}", str(rid).encode()))
        while kept_open:  # until the client hangs up (the write then fails)
            writer.write(b": more\n\n")
            await writer.drain()
            await asyncio.sleep(0.05)

    return answer


def _body(status: str, headers: dict[str, str], body: bytes) -> Answer:
    async def answer(rid: int, writer: asyncio.StreamWriter) -> None:
        writer.write(response(status, headers, body.replace(b"{id}", str(rid).encode())))

    return answer


#: The request timeout of these calls, and the bound that ends a test whose call waits for
#: it: a call that fails at once fails well within the bound, one that waits out its
#: timeout meets the bound's TimeoutError, which is no MCPElicitError.
_LONG, _BOUND = 120.0, 20.0


async def _list_tools_fails(answer: Answer) -> tuple[MCPElicitError, str]:
    """The error ``tools/list`` meets (not its timeout), and the server's URL."""
    async with raw_server(_serving(answer)) as server:
        async with connect_http(server.url, versions=["2025-11-25"], timeout=_LONG) as client:
            with pytest.raises(MCPElicitError) as failed:
                async with asyncio.timeout(_BOUND):
                    await client.list_tools()
    return failed.value, server.url


_NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'{"jsonrpc":"2.0","id":{id},"result":{"tools":[', "not valid JSON (unexpected end of data)"),
        (b'{"jsonrpc":"2.0","id":{id},"result":{"x":"\\ud800"}}', "not valid JSON"),
        (b"[1, 2]", "batches are not supported"),
        (b'"done"', "must be a JSON object"),
    ],
    ids=["cut", "lone-surrogate", "array", "string"],
)
@pytest.mark.parametrize("sse", [True, False], ids=["sse", "json"])
async def test_an_answer_that_is_not_json_fails_the_request_at_once(data: bytes, why: str, sse: bool) -> None:
    """An answer to the request that is not a JSON object fails it as a protocol violation
    saying why: an SSE event (then more events, the stream left open), or the JSON body."""
    if sse:
        answer = _events(b"data: " + _NOTE + b"\n\n", b"data: " + data + b"\n\n", b"data: " + _NOTE + b"\n\n")
    else:
        answer = _body("200 OK", {"Content-Type": "application/json"}, data)
    error, url = await _list_tools_fails(answer)
    assert isinstance(error, ProtocolViolation)
    assert url in str(error) and "malformed response" in str(error) and why in str(error)


@pytest.mark.parametrize("sse", [True, False], ids=["sse", "json"])
async def test_an_answer_to_another_request_fails_the_request_at_once(sse: bool) -> None:
    """A response on the request's own stream (or as its body) whose id is not the
    request's is a protocol violation naming both ids, not a wait for the right one."""
    other = b'{"jsonrpc":"2.0","id":999,"result":{"tools":[]}}'
    if sse:
        answer = _events(b"data: " + other + b"\n\n")
    else:
        answer = _body("200 OK", {"Content-Type": "application/json"}, other)
    error, url = await _list_tools_fails(answer)
    assert isinstance(error, ProtocolViolation)
    assert url in str(error) and "a response to id 999" in str(error) and "request 2" in str(error)


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        ("403 Forbidden", {}, b"no"),
        ("500 Internal Server Error", {"Content-Type": "application/json"}, b"Internal Server Error"),
        ("200 OK", {}, b"<html>hello</html>"),
    ],
    ids=["403-bare", "500-declared-json", "200-untyped"],
)
async def test_a_body_not_offered_as_json_rpc_is_reported_with_its_status(
    status: str, headers: dict[str, str], body: bytes
) -> None:
    """An error page, even one that says it is JSON, or a 2xx body that names no type, is
    no malformed answer: the error gives the status and what the body says."""
    error, url = await _list_tools_fails(_body(status, headers, body))
    assert not isinstance(error, ProtocolViolation), error
    assert url in str(error) and f"HTTP {status.split()[0]}" in str(error) and body.decode() in str(error)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_body("200 OK", {"Content-Type": "text/html"}, b"<p>hi</p>"), "Content-Type text/html"),
        (_body("200 OK", {"Content-Type": "text/plain"}, b'{"jsonrpc":"2.0"}'), "Content-Type text/plain"),
        (_body("200 OK", {"Content-Type": "application/json"}, b""), "an empty body"),
        (_body("202 Accepted", {}, b""), "202 Accepted answers a notification"),
        (_body("401 Unauthorized", {}, b""), "no WWW-Authenticate challenge"),
        (_body("403 Forbidden", {}, b""), "no WWW-Authenticate challenge"),
        (
            _body("401 Unauthorized", {"WWW-Authenticate": 'Bearer realm="mcp"'}, b""),
            'WWW-Authenticate: Bearer realm="mcp"',
        ),
        (_body("429 Too Many Requests", {"Retry-After": "30"}, b""), "Retry-After: 30"),
        (_events(b"data: " + _NOTE + b"\n\n", kept_open=False), "its event stream ended before the response"),
    ],
    ids=["html", "text-plain", "empty", "202", "401", "403", "401-challenge", "429", "sse-ended"],
)
async def test_an_http_answer_without_a_response_says_what_was_wrong(answer: Answer, said: str) -> None:
    """No JSON-RPC response came: the error names the server, the status and what about
    the answer was wrong (its Content-Type, its emptiness, the challenge or its absence, how
    long the server asks the client to wait)."""
    error, url = await _list_tools_fails(answer)
    assert url in str(error) and said in str(error), str(error)


async def test_a_challenge_is_quoted_with_its_urls_redacted_before_the_cut() -> None:
    """A challenge may name a URL with a key (a server echoing the request's query into its
    resource_metadata): quoted cut to 200 characters, it is redacted first, so a cut inside
    the key keeps none of it."""
    metadata = "https://h/.well-known/oauth-protected-resource/" + "m" * 100 + "?key=SECRETKEY"
    challenge = f'Bearer realm="mcp", resource_metadata="{metadata}"'
    error, _ = await _list_tools_fails(_body("401 Unauthorized", {"WWW-Authenticate": challenge}, b""))
    assert "WWW-Authenticate: Bearer" in str(error) and "?REDACTED" in str(error), str(error)
    assert "SECR" not in str(error), str(error)


async def test_a_server_that_never_accepts_the_connection_fails_at_the_connect_timeout() -> None:
    """A listening socket whose queue is full takes no connection (its SYNs are dropped, as
    a firewall's are): the call fails at the connect timeout, saying it never connected."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(0)
        port = listening.getsockname()[1]
        queued = []
        for _ in range(3):  # fill the queue; nothing ever accepts
            waiting = socket.socket()
            waiting.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                waiting.connect(("127.0.0.1", port))
            queued.append(waiting)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            transport = HttpTransport(url, connect_timeout=1.0)
            with pytest.raises(TransportError) as failed:  # not the bound's TimeoutError
                async with (
                    asyncio.timeout(_BOUND),
                    Client(transport, versions=["2025-11-25"], timeout=_LONG) as client,
                ):
                    await client.list_tools()
        finally:
            for waiting in queued:
                waiting.close()
    assert not isinstance(failed.value, RequestTimeout)
    assert f"cannot connect to {url}" in str(failed.value) and "connect timeout (1 s)" in str(failed.value)


async def test_a_flood_of_events_waits_for_the_client_rather_than_piling_up() -> None:
    """A server writing notifications as fast as it can, to a client whose handler takes
    its time: the client reads no further ahead than a bounded backlog (the server's
    writes wait), rather than holding every event in memory until the call times out."""
    note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}'
    event = b"data: " + note % (b"x" * 200) + b"\n\n"
    written = 0

    async def flood(rid: int, writer: asyncio.StreamWriter) -> None:
        nonlocal written
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        block = event * 256
        while True:
            writer.write(block)
            await writer.drain()
            written += len(block)

    handled = 0

    async def slowly(method: str, params: object) -> None:
        nonlocal handled
        handled += 1
        await asyncio.sleep(0.001)

    async with raw_server(_serving(flood)) as server:
        async with connect_http(
            server.url, versions=["2025-11-25"], timeout=2.0, on_notification=slowly
        ) as client:
            with pytest.raises(RequestTimeout):
                await client.list_tools()
    assert handled > 0
    assert written < 32 * 1024 * 1024, (
        f"the client read {written >> 20} MiB ahead of {handled} events handled"
    )


async def test_a_redirect_loop_is_named_as_such() -> None:
    """A server that redirects the request to itself, over and over: the error says it
    redirected too often, not that a connection broke."""
    error, url = await _list_tools_fails(_body("307 Temporary Redirect", {"Location": "/mcp"}, b""))
    assert url in str(error) and "redirected more than" in str(error) and "broke" not in str(error)


async def _cut(rid: int, writer: asyncio.StreamWriter) -> None:
    """Half of a JSON body, then the connection closes."""
    whole = b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[]}}' % rid
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(whole)
    )
    writer.write(whole[: len(whole) // 2])


async def _silent(rid: int, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(60)  # the connection is taken, and nothing ever comes


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_cut, "broke (RemoteProtocolError: peer closed connection without sending complete message body"),
        (_events(b'data: {"jsonrpc":"2.0","id":{id},"res', kept_open=False), "event stream ended before"),
    ],
    ids=["json", "sse"],
)
async def test_a_connection_closed_mid_answer_fails_the_request_at_once(answer: Answer, said: str) -> None:
    error, url = await _list_tools_fails(answer)
    assert url in str(error) and said in str(error), str(error)


@pytest.mark.parametrize("answer", [_silent, _events()], ids=["silent", "keep-alives"])
async def test_a_server_that_never_answers_fails_at_the_request_timeout_saying_so(answer: Answer) -> None:
    """Nothing at all after the connection is taken, or SSE comments forever: the request
    timeout (network time) bounds the call, and the error names it."""
    async with raw_server(_serving(answer)) as server:
        async with connect_http(server.url, versions=["2025-11-25"], timeout=1.0) as client:
            with pytest.raises(RequestTimeout, match=r"no answer from .* within 1 s") as failed:
                async with asyncio.timeout(_BOUND):
                    await client.list_tools()
    assert server.url in str(failed.value)


async def test_a_server_that_never_answers_a_notification_fails_the_connect_at_the_timeout() -> None:
    """A server that takes ``notifications/initialized``'s POST and never answers it: the
    connect fails at the client's timeout naming the notification, not after a fixed 30 s."""

    async def mute_to_notifications(seen: Seen, writer: asyncio.StreamWriter) -> None:
        if seen.method == "POST" and b'"id"' not in seen.body:
            await asyncio.sleep(60)
        else:
            await _serving(_body("200 OK", {"Content-Type": "application/json"}, b""))(seen, writer)

    async with raw_server(mute_to_notifications) as server:
        with pytest.raises(RequestTimeout) as failed:  # not the bound's TimeoutError: it waited 30 s
            async with (
                asyncio.timeout(_BOUND / 2),
                connect_http(server.url, versions=["2025-11-25"], timeout=1.0),
            ):
                pass
    assert server.url in str(failed.value) and "notifications/initialized" in str(failed.value)


def _resumable(on_resume: Answer) -> Script:
    """A server whose answer to ``tools/list`` is an event id, a ``retry`` of 10 ms and the
    end of the stream; its GET resuming from that id is answered by ``on_resume``."""

    async def resumed(rid: int, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        writer.write(b"id: e-1\nretry: 10\ndata: \n\n")

    serving = _serving(resumed)

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        if seen.method == "GET" and "last-event-id" in seen.headers:
            await on_resume(0, writer)
        else:
            await serving(seen, writer)

    return script


async def test_a_resume_the_server_never_answers_fails_at_the_request_timeout() -> None:
    """The stream ended asking to be resumed, and the GET resuming it gets no answer at
    all: the call fails at its timeout, saying what it was waiting for, not at the
    transport's own bound on a GET (the connect timeout and 5 s)."""
    async with raw_server(_resumable(_silent)) as server:
        async with connect_http(server.url, versions=["2025-11-25"], timeout=1.0) as client:
            with pytest.raises(RequestTimeout) as failed:  # not the bound's TimeoutError: it waited 15 s
                async with asyncio.timeout(_BOUND / 2):
                    await client.list_tools()
    assert server.url in str(failed.value) and "Last-Event-ID 'e-1'" in str(failed.value)


async def test_a_stream_resumed_until_the_timeout_says_it_was_resumed() -> None:
    """Each GET resuming the stream brings a new event id and ends again, never with the
    response: the call fails at its timeout saying how often the stream was resumed (the
    server's retry of 10 ms is no wait 'later than the request may wait')."""

    async def moving_on(_: int, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        writer.write(b"id: e-%d\nretry: 10\ndata: \n\n" % time.monotonic_ns())

    async with raw_server(_resumable(moving_on)) as server:
        async with connect_http(server.url, versions=["2025-11-25"], timeout=1.0) as client:
            with pytest.raises(RequestTimeout) as failed:
                await client.list_tools()
    assert "later than the request may wait" not in str(failed.value)
    assert server.url in str(failed.value) and re.search(r"resumed \d+ times", str(failed.value)), (
        failed.value
    )


async def test_a_401_to_a_request_that_carried_a_token_says_the_token_was_refused() -> None:
    async with raw_server(_serving(_body("401 Unauthorized", {}, b""))) as server:
        headers = {"Authorization": "Bearer not-taken"}
        async with connect_http(server.url, versions=["2025-11-25"], timeout=10.0, headers=headers) as client:
            with pytest.raises(TransportError) as failed:
                await client.list_tools()
    assert "HTTP 401 (no WWW-Authenticate challenge; the credentials sent were refused)" in str(failed.value)
    assert "not-taken" not in str(failed.value)
