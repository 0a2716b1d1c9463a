"""The HTTP client against a hostile server on a real 127.0.0.1 socket: a raw asyncio
server that answers each request with whatever bytes its script writes (a redirect to
another origin, a body that never ends, a compressed bomb, an SSE ``retry`` of an hour)."""

from __future__ import annotations

import asyncio
import logging
import ssl
import tempfile
import zlib
from pathlib import Path

import httpx
import orjson
import pytest

from mcp_elicit.client.transport import Ended
from mcp_elicit.errors import OAuthError, ProtocolViolation, RequestTimeout, TransportError
from mcp_elicit.server.oauth import OAuthProvider
from mcp_elicit.transports.http_client import HttpTransport, connect_http
from mcp_elicit.transports.oauth_client import HttpTokenExchange
from mcp_elicit.wire import jsonrpc

from support.raw_http import Script, Seen, raw_server, response
from support.tls import self_signed_127
from support.waiting import hang_guard

pytestmark = pytest.mark.anyio


_RESULT = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'


async def _nothing(_: object) -> None:
    return None


async def _first_reply(url: str, *, within: float) -> object:
    """What a ``tools/list`` sent to ``url`` first gets (within ``within`` seconds)."""
    transport = HttpTransport(url)
    await transport.open(_nothing)
    try:
        async with asyncio.timeout(within):
            exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
            try:
                return await exchange.receive()
            finally:
                await exchange.aclose()
    finally:
        await transport.aclose()


async def _answer_json(seen: Seen, writer: asyncio.StreamWriter) -> None:
    writer.write(response("200 OK", {"Content-Type": "application/json"}, _RESULT))
    await writer.drain()


def _moved(status: str, to: str) -> Script:
    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        writer.write(response(status, {"Location": to}))
        await writer.drain()

    return script


async def test_the_session_id_is_not_sent_on_a_redirect_of_the_stream_to_another_origin() -> None:
    """The session id (and the event id a stream resumes from) belong to the configured
    server: a GET stream redirected to another origin does not carry them there."""
    async with (
        raw_server(_answer_json) as elsewhere,
        raw_server(_moved("307 Temporary Redirect", elsewhere.url)) as home,
    ):
        transport = HttpTransport(home.url)
        await transport.open(_nothing)
        session = {"Mcp-Session-Id": "session-secret", "MCP-Protocol-Version": "2025-11-25"}
        await transport.listen(session, last_event_id="event-7")
        await transport.aclose()
    assert home.seen[0].headers.get("mcp-session-id") == "session-secret"
    assert home.seen[0].headers.get("last-event-id") == "event-7"
    assert [s.method for s in elsewhere.seen] == ["GET"]
    assert "mcp-session-id" not in elsewhere.seen[0].headers
    assert "last-event-id" not in elsewhere.seen[0].headers


async def test_a_stream_redirected_elsewhere_is_logged_without_the_locations_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning that a redirect went to another origin names that origin, which the
    server's Location may write with a user name and password: they are redacted."""
    caplog.set_level(logging.WARNING, logger="mcp_elicit")
    async with raw_server(_answer_json) as elsewhere:
        location = elsewhere.url.replace("//", "//me:PASSWORD@", 1)
        async with raw_server(_moved("307 Temporary Redirect", location)) as home:
            transport = HttpTransport(home.url, headers={"X-Api-Key": "k"})
            await transport.open(_nothing)
            await transport.listen({"MCP-Protocol-Version": "2025-11-25"})
            await transport.aclose()
    (said,) = [r.getMessage() for r in caplog.records if "redirected to another origin" in r.getMessage()]
    assert "PASSWORD" not in said and "REDACTED:REDACTED@127.0.0.1" in said, said


@pytest.mark.parametrize("status", ["307 Temporary Redirect", "308 Permanent Redirect"])
async def test_a_post_redirected_to_another_origin_is_not_followed(status: str) -> None:
    """A 307/308 keeps the POST and its body (tool arguments, a person's answers): to
    another origin it is not followed; the request fails naming the server, the status and
    where it points, so a person who trusts that place can use it directly."""
    async with raw_server(_answer_json) as elsewhere, raw_server(_moved(status, elsewhere.url)) as home:
        with pytest.raises(TransportError) as caught:
            async with asyncio.timeout(10), connect_http(home.url, timeout=5.0):
                pass
    assert elsewhere.seen == []
    assert [s.method for s in home.seen] == ["POST"]
    message = str(caught.value)
    assert f"{home.url} redirects (HTTP {status[:3]}) to {elsewhere.url}, another origin" in message
    assert f"use {elsewhere.url} directly" in message
    assert "REDACTED" not in message  # nothing hidden: to paste as it is


async def test_a_redirect_to_an_address_with_a_key_says_what_its_redacted_parts_are() -> None:
    """The address a person is told to use directly is shown without its password and
    query, so it cannot be pasted as it stands: the message says which parts REDACTED
    stands for, and where they are in full."""
    async with raw_server(_answer_json) as elsewhere:
        location = elsewhere.url.replace("//", "//me x:PASSWORD@", 1) + "?key=SEC RET"
        async with raw_server(_moved("307 Temporary Redirect", location)) as home:
            with pytest.raises(TransportError) as caught:
                async with asyncio.timeout(10), connect_http(home.url, timeout=5.0):
                    pass
    message = str(caught.value)
    assert "PASSWORD" not in message and "RET" not in message, message
    assert "use http://REDACTED:REDACTED@127.0.0.1:" in message
    assert (
        "directly, with its user name and password and its query written out where it shows REDACTED"
        in message
    )


async def test_a_session_is_not_ended_at_another_origin() -> None:
    """DELETE (ending the session) redirected to another origin is not followed either."""
    async with (
        raw_server(_answer_json) as elsewhere,
        raw_server(_moved("307 Temporary Redirect", elsewhere.url)) as home,
    ):
        transport = HttpTransport(home.url)
        await transport.open(_nothing)
        await transport.end_session({"Mcp-Session-Id": "s-1"})
        with pytest.raises(TransportError, match="redirects \\(HTTP 307\\)"):
            await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
        await transport.aclose()
    assert [s.method for s in home.seen] == ["DELETE", "POST"]
    assert elsewhere.seen == []


async def test_a_post_redirected_on_the_same_origin_is_followed() -> None:
    """/mcp answering 307 to /mcp/ (a server mounted with a trailing slash) still works."""

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        if seen.path == "/mcp":
            writer.write(response("307 Temporary Redirect", {"Location": "/mcp/"}))
        else:
            writer.write(response("200 OK", {"Content-Type": "application/json"}, _RESULT))
        await writer.drain()

    async with raw_server(script) as server:
        transport = HttpTransport(server.url, headers={"X-Api-Key": "k"})
        await transport.open(_nothing)
        session = {"Mcp-Session-Id": "s-1"}
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session)
        assert isinstance(await exchange.receive(), jsonrpc.Response)
        await exchange.aclose()
        await transport.aclose()
    assert [(s.method, s.path) for s in server.seen] == [("POST", "/mcp"), ("POST", "/mcp/")]
    assert server.seen[1].body == server.seen[0].body
    assert server.seen[1].headers["mcp-session-id"] == "s-1" and server.seen[1].headers["x-api-key"] == "k"


def _tls_for_127_0_0_1() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for 127.0.0.1, and a client context
    trusting it."""
    pem, secret = self_signed_127()
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as directory:  # load_cert_chain reads files only
        chain = Path(directory) / "chain.pem"
        chain.write_bytes(secret + pem)
        server.load_cert_chain(chain)
    client = ssl.create_default_context(cadata=pem.decode())
    return server, client


async def test_a_redirect_from_https_to_plain_http_is_not_followed() -> None:
    """Not even the GET stream (no body) leaves https for http: the session's requests would
    travel in the clear, readable and changeable by anyone on the way."""
    server_tls, client_tls = _tls_for_127_0_0_1()
    async with (
        raw_server(_answer_json) as plain,
        raw_server(_moved("307 Temporary Redirect", plain.url), tls=server_tls) as home,
        httpx.AsyncClient(verify=client_tls, follow_redirects=True) as http,
    ):
        transport = HttpTransport(home.url, client=http)
        await transport.open(_nothing)
        refused = await transport.listen({})
        assert isinstance(refused, Ended) and "does not leave https" in (refused.reason or "")
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
        ended = await exchange.receive()
        await exchange.aclose()
        await transport.aclose()
    assert [s.method for s in home.seen] == ["GET", "POST"]
    assert plain.seen == []
    assert isinstance(ended, Ended) and isinstance(ended.error, TransportError)
    assert f"{home.url} redirects (HTTP 307) to {plain.url}, plain http" in str(ended.error)


async def _endless(written: list[int]) -> Script:
    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n")
        writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"100000\r\n" + b"x" * 0x100000 + b"\r\n"  # 1 MiB, for ever
        while True:
            writer.write(chunk)
            await writer.drain()
            written.append(len(chunk))

    return script


async def test_an_answer_to_a_notification_that_never_ends_is_not_read_on() -> None:
    """A notification's (or an answer's) POST reads no more of the server's reply than it
    logs: an endless body is neither kept in memory nor waited for."""
    written: list[int] = []
    async with raw_server(await _endless(written)) as server:
        transport = HttpTransport(server.url)
        await transport.open(_nothing)
        async with asyncio.timeout(10):
            await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
            await transport.end_session({"Mcp-Session-Id": "s-1"})
        await transport.aclose()
    assert [s.method for s in server.seen] == ["POST", "DELETE"]
    assert sum(written) < 64 * 1024 * 1024


def _gzip_bomb(unit: bytes, megabytes: int) -> bytes:
    """``unit`` repeated to ``megabytes`` MB, gzip-compressed (a thousandth of the size)."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = unit * (1_000_000 // len(unit))
    return b"".join(squeeze.compress(block) for _ in range(megabytes)) + squeeze.flush()


@pytest.mark.parametrize(
    ("kind", "unit"),
    [("application/json", b" "), ("text/event-stream", b"data: x\n\n")],
    ids=["json", "sse"],
)
async def test_a_compressed_answer_is_refused_not_inflated(kind: str, unit: bytes) -> None:
    """The client asks for answers uncompressed; one gzip-compressed all the same (a few KB
    swelling to gigabytes) fails its request at once, naming the encoding, unread."""
    bomb = _gzip_bomb(unit, 4)

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        writer.write(response("200 OK", {"Content-Type": kind, "Content-Encoding": "gzip"}, bomb))
        await writer.drain()

    async with raw_server(script) as server:
        ended = await _first_reply(server.url, within=5)
    assert server.seen[0].headers["accept-encoding"] == "identity"
    assert isinstance(ended, Ended) and ended.reason is not None
    assert "compressed (gzip)" in ended.reason and server.url in ended.reason


async def test_a_stream_asking_to_be_resumed_in_an_hour_still_ends_at_the_timeout() -> None:
    """A request's stream that closes with ``retry: 3600000`` and an event id to resume
    from: the client waits to resume no longer than the request has left."""

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        message = orjson.loads(seen.body) if seen.body else {}
        if seen.method != "POST" or "id" not in message:
            status = "405 Method Not Allowed" if seen.method == "GET" else "202 Accepted"
            writer.write(response(status, {}))
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "resume-later", "version": "1"},
            }
            body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
            headers = {"Content-Type": "application/json", "Mcp-Session-Id": "s-1"}
            writer.write(response("200 OK", headers, body))
        else:
            stream = b"id: e-1\nretry: 3600000\ndata: \n\n"
            writer.write(response("200 OK", {"Content-Type": "text/event-stream"}, stream))
        await writer.drain()

    async with raw_server(script) as server:
        async with connect_http(server.url, versions=["2025-11-25"], timeout=1.0) as client:
            with pytest.raises(RequestTimeout, match="within 1 s"):
                async with hang_guard("a request whose stream asks to be resumed in an hour"):
                    await client.list_tools()


async def test_a_flood_of_unreadable_requests_gets_a_bounded_number_of_answers() -> None:
    """Each request of the server's that is not valid JSON-RPC is owed a -32600, one POST
    each; a stream carrying thousands of them (while the server leaves every answer
    hanging) does not make the client pile up thousands of POSTs waiting for a connection."""
    flood = 5000
    held = asyncio.Event()

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        message = orjson.loads(seen.body)
        if "method" not in message:  # an answer: left hanging
            await held.wait()
            return
        events = b"".join(
            b'data: {"jsonrpc":"2.0","id":"q-%d","method":"elicitation/create","params":[]}\n\n' % i
            for i in range(flood)
        )
        writer.write(
            response("200 OK", {"Content-Type": "text/event-stream"}, events + b"data: " + _RESULT + b"\n\n")
        )
        await writer.drain()

    async with raw_server(script) as server:
        transport = HttpTransport(server.url)
        await transport.open(_nothing)
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {})
        while not isinstance(item := await exchange.receive(), jsonrpc.Response | Ended):
            pass
        assert isinstance(item, jsonrpc.Response)
        await exchange.aclose()
        await asyncio.sleep(0.5)
        outstanding, answers = len(transport._replies), len(server.seen) - 1
        held.set()
        await transport.aclose()
    assert outstanding <= 16 and answers <= 16


async def test_a_compressed_token_answer_is_refused_not_inflated() -> None:
    """A token request asks for its answer uncompressed; a gzip one all the same (a few KB
    that one network read would inflate to megabytes, before the 64 KiB cap is checked) is
    refused unread, naming the encoding: the grant is not thereby refused."""
    bomb = _gzip_bomb(b" ", 64)

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        writer.write(response("200 OK", headers, bomb))
        await writer.drain()

    async with raw_server(script) as server:
        provider = OAuthProvider("example", "https://id.example.com/a", server.url, "cid", "s")
        with pytest.raises(OAuthError) as caught:
            async with asyncio.timeout(10):
                await HttpTokenExchange().exchange(provider, "the-code", "v" * 43, "http://127.0.0.1:1/cb")
    assert server.seen[0].headers["accept-encoding"] == "identity"
    assert (caught.value.error, caught.value.refused) == ("invalid_response", False)
    assert "compressed (gzip)" in str(caught.value) and "example" in str(caught.value)


def _assigning(session_id: str) -> Script:
    """Answers ``initialize`` assigning ``session_id``, anything else 202 (or 405 to GET)."""

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        message = orjson.loads(seen.body) if seen.body else {}
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "odd-session", "version": "1"},
            }
            body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
            headers = {"Content-Type": "application/json", "Mcp-Session-Id": session_id}
            writer.write(response("200 OK", headers, body))
        else:
            writer.write(response("405 Method Not Allowed" if seen.method == "GET" else "202 Accepted", {}))
        await writer.drain()

    return script


@pytest.mark.parametrize("session_id", ["bad id", "s" * 5000], ids=["space", "enormous"])
async def test_an_invalid_session_id_over_http_fails_the_handshake(session_id: str) -> None:
    async with raw_server(_assigning(session_id)) as server:
        with pytest.raises(ProtocolViolation, match="sent an invalid Mcp-Session-Id"):
            async with asyncio.timeout(10), connect_http(server.url, versions=["2025-11-25"], timeout=5):
                pass
    assert [orjson.loads(s.body)["method"] for s in server.seen] == ["initialize"]


@pytest.mark.parametrize("body", ["endless", "gzip"])
async def test_the_body_of_a_redirect_followed_is_not_read_on(body: str) -> None:
    """A redirect that is followed (on the same origin) has its body read before the next
    request is sent: one that never ends, or a compressed one that would swell in one
    read, fails the request instead of filling the client's memory."""
    written: list[int] = []
    bomb = _gzip_bomb(b" ", 64)

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        if seen.path != "/mcp":
            return await _answer_json(seen, writer)
        if body == "gzip":
            writer.write(
                response("307 Temporary Redirect", {"Location": "/mcp/", "Content-Encoding": "gzip"}, bomb)
            )
            await writer.drain()
            return
        writer.write(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /mcp/\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"100000\r\n" + b"x" * 0x100000 + b"\r\n"  # 1 MiB, for ever
        while True:
            writer.write(chunk)
            await writer.drain()
            written.append(len(chunk))

    async with raw_server(script) as server:
        ended = await _first_reply(server.url, within=10)
    assert [s.path for s in server.seen] == ["/mcp"]
    assert isinstance(ended, Ended) and ended.reason is not None
    assert f"the redirect from {server.url}" in ended.reason
    assert sum(written) < 64 * 1024 * 1024


async def test_an_unreadable_request_on_a_modern_stream_gets_no_answer() -> None:
    """2026-07-28: the client POSTs requests and notifications only, never a response (the
    revision's servers send no requests). A malformed request on a modern request's stream
    is skipped, as a well-formed one is: no -32600 is POSTed back."""

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        bad = b'data: {"jsonrpc":"2.0","id":"q-0","method":"elicitation/create","params":[]}\n\n'
        writer.write(
            response("200 OK", {"Content-Type": "text/event-stream"}, bad + b"data: " + _RESULT + b"\n\n")
        )
        await writer.drain()

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    async with raw_server(script) as server:
        transport = HttpTransport(server.url)
        await transport.open(_nothing)
        try:
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
            exchange = await transport.exchange(message, {"MCP-Protocol-Version": "2026-07-28"})
            while not isinstance(item := await exchange.receive(), jsonrpc.Response | Ended):
                pass
            assert isinstance(item, jsonrpc.Response)
            await exchange.aclose()
            await asyncio.sleep(0.3)
        finally:
            await transport.aclose()
    assert [orjson.loads(s.body).get("id") for s in server.seen] == [1]


@pytest.mark.parametrize(
    ("event_id", "sent"),
    [
        ("naïve-7", "naïve-7".encode()),
        ("流-7", "流-7".encode()),
        ("  padded-7 ", b"padded-7"),  # "id:  padded-7 ": the field's value keeps a space
    ],
)
async def test_a_stream_is_resumed_from_any_event_id_as_a_browser_sends_it(
    event_id: str, sent: bytes
) -> None:
    """An event id is any text (the SSE standard); a browser's EventSource resumes from it
    with ``Last-Event-ID`` as the id's UTF-8 bytes, HTTP's white space at either end
    trimmed, which the 2025-11-25 transport names as the header to send. A stream that
    broke after such an id is resumed that way and its response read."""
    resumed_with: list[bytes] = []
    broken: list[object] = []  # the id of the request whose stream broke

    async def script(seen: Seen, writer: asyncio.StreamWriter) -> None:
        message = orjson.loads(seen.body) if seen.body else {}
        if seen.method == "GET" and "last-event-id" in seen.headers:
            resumed_with.append(seen.headers["last-event-id"].encode("latin-1"))  # the bytes sent
            answer = b"data: " + orjson.dumps({"jsonrpc": "2.0", "id": broken[0], "result": {"tools": []}})
            answer += b"\n\n"
            writer.write(response("200 OK", {"Content-Type": "text/event-stream"}, answer))
        elif seen.method != "POST" or "id" not in message:
            writer.write(response("405 Method Not Allowed" if seen.method == "GET" else "202 Accepted", {}))
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "any-event-id", "version": "1"},
            }
            body = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
            writer.write(
                response("200 OK", {"Content-Type": "application/json", "Mcp-Session-Id": "s-1"}, body)
            )
        else:  # the request's stream: an event id, then it breaks
            broken.append(message["id"])
            stream = b"id: " + event_id.encode() + b"\nretry: 10\ndata: \n\n"
            writer.write(response("200 OK", {"Content-Type": "text/event-stream"}, stream))
        await writer.drain()

    async with raw_server(script) as server:
        async with connect_http(server.url, versions=["2025-11-25"], timeout=10.0) as client:
            # failed before: "the response from ... was refused: 'ascii' codec can't encode
            # character", and "the connection ... broke (LocalProtocolError: Illegal header
            # value b' padded-7 ')", though the server had sent nothing wrong
            assert await client.list_tools() == []
    assert resumed_with == [sent]
