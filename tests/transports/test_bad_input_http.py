"""Bad input to the Streamable HTTP server at the HTTP level, over real HTTP: Content-Type and
Accept, bodies too large or of lengths it cannot read, headers sent twice or outside visible
ASCII, and connections that go away mid-request."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from support.bad_input import JSON_HEADERS, AsgiClient, _tools_list
from support.http import (
    ACCEPT_BOTH,
    DROP,
    McpHttp,
    build_request,
    meta,
    mirrored_headers,
    raw_request,
)
from support.procs import HttpProcess
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
LIMIT = 4 * 1024 * 1024  # the default max_body of StreamableHTTP, which `mcp-elicit serve` keeps


@pytest.mark.parametrize(
    ("content_type", "accept", "status"),
    [
        pytest.param("text/plain", ACCEPT_BOTH, 415, id="text/plain"),
        pytest.param(None, ACCEPT_BOTH, 415, id="no Content-Type"),
        pytest.param("application/jsonx", ACCEPT_BOTH, 415, id="application/jsonx"),
        pytest.param("application/x-www-form-urlencoded", ACCEPT_BOTH, 415, id="a form"),
        pytest.param("multipart/form-data; boundary=x", ACCEPT_BOTH, 415, id="multipart"),
        pytest.param("application/json; charset=utf-8", ACCEPT_BOTH, 200, id="with charset"),
        pytest.param("Application/JSON", ACCEPT_BOTH, 200, id="upper case"),
        pytest.param("application/json", None, 200, id="no Accept"),
        pytest.param("application/json", "application/json", 200, id="only JSON"),
        pytest.param("application/json", "text/event-stream", 200, id="only SSE"),
        pytest.param("application/json", "*/*", 200, id="anything"),
        pytest.param("application/json", "application/*", 200, id="application range"),
        pytest.param("application/json", "text/*", 200, id="text range"),
        pytest.param(
            "application/json", "text/event-stream;q=0.5, application/json;q=0.9", 200, id="weights"
        ),
        pytest.param("application/json", "text/html", 406, id="text/html"),
        pytest.param("application/json", "image/png, text/plain", 406, id="nothing usable"),
        pytest.param("application/json", "application/json;q=0, text/html", 406, id="JSON refused by q=0"),
        pytest.param("application/json", "", 406, id="empty Accept"),
    ],
)
async def test_content_type_and_accept(
    mcp: McpHttp, content_type: str | None, accept: str | None, status: int
) -> None:
    reply = await mcp.request(
        "tools/list",
        rid="ct",
        headers={"Content-Type": content_type or DROP, "Accept": accept if accept is not None else DROP},
        refused=status != 200,
    )
    assert reply.status == status, reply.body
    if status == 200:
        assert "tools" in reply.result
    else:
        assert reply.error["code"] == -32600


@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        pytest.param("text/event-stream", "text/event-stream", id="only SSE"),
        pytest.param("text/event-stream, application/json;q=0", "text/event-stream", id="JSON refused"),
        pytest.param("application/json", "application/json", id="only JSON"),
        pytest.param(ACCEPT_BOTH, "application/json", id="both"),
    ],
)
async def test_the_answer_comes_in_a_type_the_client_accepts(
    mcp: McpHttp, accept: str, content_type: str
) -> None:
    """A client that accepts only SSE gets its answer as one SSE event (it got JSON,
    which it had said it does not take)."""
    for method, params in (("tools/list", None), ("tools/call", {"name": "test_simple_text"})):
        reply = await mcp.request(method, params, headers={"Accept": accept})
        assert (reply.status, reply.content_type) == (200, content_type), reply.body
        assert len(reply.messages) == 1 and "result" in reply.message


async def test_sse_only_client_still_gets_its_notifications(mcp: McpHttp) -> None:
    reply = await mcp.call(
        "test_tool_with_progress", meta_=meta(progressToken="t"), headers={"Accept": "text/event-stream"}
    )
    assert reply.sse and len(reply.notifications) == 3


@pytest.mark.parametrize(
    ("coding", "compress", "status"),
    [
        pytest.param("gzip", True, 415, id="a gzip body"),
        pytest.param("gzip", False, 415, id="gzip declared, JSON sent"),
        pytest.param("br, gzip", False, 415, id="two codings"),
        pytest.param("identity", False, 200, id="identity"),
        pytest.param("Identity", False, 200, id="identity, upper case"),
        pytest.param("identity , identity", False, 200, id="identity listed twice"),
        pytest.param("identity, gzip", True, 415, id="gzip after identity"),
    ],
)
async def test_a_body_is_read_as_sent_and_a_content_coding_is_refused(
    mcp: McpHttp, coding: str, compress: bool, status: int
) -> None:
    """A body is never decompressed: a coded one is 415 naming the coding (it was -32700,
    "not UTF-8: byte 0x8b", for gzip), never read as if it were not coded (a body declared
    gzip but sent plain was served)."""
    body = orjson.dumps(_tools_list("coded"))
    headers = {**mirrored_headers("tools/list", {}), "Content-Encoding": coding}
    reply = await mcp.post(gzip.compress(body) if compress else body, headers, method="tools/list")
    assert reply.status == status, reply.body
    if status == 415:
        assert reply.error["code"] == -32600 and "id" not in reply.message
        assert f"Content-Encoding {coding!r}" in reply.error["message"]
    else:
        assert reply.message["id"] == "coded"


@pytest.mark.parametrize(
    "lines",
    [
        pytest.param(["gzip", "identity"], id="gzip, then identity"),
        pytest.param(["identity", "gzip"], id="identity, then gzip"),
    ],
)
async def test_content_encoding_sent_on_several_lines_is_read_as_one_list(
    mcp: McpHttp, lines: list[str]
) -> None:
    """Header lines of one name are one list (RFC 9110 5.3): a gzip body whose second
    Content-Encoding line says identity is still coded (the last line alone was read)."""
    body = gzip.compress(orjson.dumps(_tools_list("coded")))
    headers = [*mirrored_headers("tools/list", {}).items(), *(("Content-Encoding", line) for line in lines)]
    reply = mcp.checked(await mcp.client.post(mcp.url, content=body, headers=headers), "tools/list")
    assert reply.status == 415, reply.body
    assert reply.error["message"] == (
        f"Unsupported Media Type: send the body uncompressed, not with Content-Encoding {', '.join(lines)!r}"
    )


def _padded(size: int) -> bytes:
    """A valid tools/list request padded with whitespace to exactly ``size`` bytes."""
    body = orjson.dumps(_tools_list("big"))
    return body + b" " * (size - len(body))


async def _chunks(data: bytes, size: int = 1024 * 1024) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


async def test_a_body_at_the_limit_is_served(mcp: McpHttp) -> None:
    reply = await mcp.post(_padded(LIMIT), mirrored_headers("tools/list", {}), method="tools/list")
    assert reply.status == 200 and reply.message["id"] == "big"


async def test_a_chunked_body_at_the_limit_is_served(mcp: McpHttp) -> None:
    response = await mcp.client.post(
        mcp.url, content=_chunks(_padded(LIMIT)), headers=mirrored_headers("tools/list", {})
    )
    assert response.request.headers.get("transfer-encoding") == "chunked"
    reply = mcp.checked(response, "tools/list")
    assert reply.status == 200 and reply.message["id"] == "big"


async def test_a_body_over_the_limit_is_413(mcp: McpHttp) -> None:
    reply = await mcp.post(_padded(LIMIT + 1), mirrored_headers("tools/list", {}))
    assert reply.status == 413 and reply.error["code"] == -32600 and "id" not in reply.message


async def test_a_chunked_body_over_the_limit_is_413(mcp: McpHttp) -> None:
    response = await mcp.client.post(
        mcp.url, content=_chunks(_padded(LIMIT + 1)), headers=mirrored_headers("tools/list", {})
    )
    assert "content-length" not in response.request.headers
    reply = mcp.checked(response, None)
    assert reply.status == 413 and reply.error["code"] == -32600


@pytest.mark.parametrize(
    ("declared", "status"),
    [pytest.param(b"\xb2", 200, id="other digits"), pytest.param(b"9" * 5000, 413, id="5000 digits")],
)
async def test_a_declared_length_int_cannot_read_is_no_crash(
    wire: WireChecker, declared: bytes, status: int
) -> None:
    """``Content-Length: ²`` passes ``str.isdigit``, and so do 5000 nines, but ``int()``
    reads neither: each crashed the request. uvicorn's parser refuses such a header before
    the app, but the app is plain ASGI, and other servers may pass it on. Now "²" counts as
    no length (the body is read within the limit), and so many digits as over the limit."""
    message, headers = build_request("tools/list", rid="odd")
    async with AsgiClient(wire) as mcp:
        response = await mcp.client.post(
            mcp.url, content=orjson.dumps(message), headers={**headers, "content-length": declared}
        )
        reply = mcp.checked(response, "tools/list" if status == 200 else None)
    assert reply.status == status
    assert reply.message["id"] == "odd" if status == 200 else reply.error["code"] == -32600


async def test_a_huge_declared_length_is_refused_before_reading(
    http_server: HttpProcess, mcp: McpHttp
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", http_server.port)
    try:
        writer.write(raw_request(http_server.port, b'{"jsonrpc"', JSON_HEADERS, length=10**12))
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    finally:
        writer.close()
        await writer.wait_closed()
    assert head.startswith(b"HTTP/1.1 413 ")
    assert (await mcp.request("tools/list")).status == 200


@pytest.mark.parametrize(
    ("version", "status"),
    [
        pytest.param("1999-01-01", 400, id="unsupported"),
        pytest.param("9" * 5000, 400, id="unsupported and long"),
        pytest.param("2026-07-28\xa0", 400, id="a no-break space is not HTTP white space"),
        pytest.param("2026-07-28", 202, id="supported"),
        pytest.param("2025-03-26", 400, id="supported, older: its session is lost"),
        pytest.param(None, 202, id="none"),
    ],
)
async def test_a_notification_outside_a_session_checks_the_version_header(
    mcp: McpHttp, version: str | None, status: int
) -> None:
    """An unsupported MCP-Protocol-Version is 400 on every POST, a notification's too (it
    was 202, as if taken, though nothing the server speaks could read it). A handshake
    revision's notification outside a session is 400 too: initialize first
    (test_http_session_versions.py)."""
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    headers: dict[str, str | bytes] = {**JSON_HEADERS}
    if version is not None:
        headers["MCP-Protocol-Version"] = version.encode("latin-1")
    reply = await mcp.post(orjson.dumps(note), headers)  # type: ignore[arg-type]
    assert reply.status == status, reply.body
    if version == "2025-03-26":
        assert reply.error["code"] == -32600 and "no session" in reply.error["message"], reply.body
    elif status == 400:
        assert reply.error["code"] == -32022 and "id" not in reply.message
        assert reply.error["data"]["requested"] == (version if len(version) <= 60 else version[:60] + "...")
        assert len(reply.body) < 600


async def test_a_host_with_a_no_break_space_is_no_loopback_name(mcp: McpHttp) -> None:
    """Host is trimmed of HTTP's white space (spaces, tabs) only: ``str.strip()`` also took
    the byte 0xA0, so ``Host: localhost\xa0`` passed the DNS-rebinding allow-list."""
    message, headers = build_request("tools/list", rid="nbsp")
    reply = await mcp.post(orjson.dumps(message), {**headers, "Host": b"localhost\xa0"})  # type: ignore[dict-item]
    assert reply.status == 421 and reply.error["code"] == -32600, reply.body


async def _post_raw(port: int, body: bytes, lines: list[tuple[str, str]]) -> tuple[int, dict[str, Any]]:
    """POST ``body`` with exactly these header lines (repeats kept); the status and JSON body."""
    head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    head += [f"{name}: {value}" for name, value in lines]
    data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        status = int(raw.split(b" ", 2)[1])
        length = int(raw.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        payload = await asyncio.wait_for(reader.readexactly(length), 5)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    return status, orjson.loads(payload)


@pytest.mark.parametrize(
    ("name", "first"),
    [
        pytest.param("Mcp-Method", "tools/list", id="Mcp-Method"),
        pytest.param("Mcp-Name", "test_error_handling", id="Mcp-Name"),
        pytest.param("MCP-Protocol-Version", "2025-11-25", id="MCP-Protocol-Version"),
        pytest.param("Mcp-Session-Id", "abc", id="Mcp-Session-Id"),
        pytest.param("Mcp-Param-Region", "eu-west1", id="Mcp-Param-* (x-mcp-header)"),
        pytest.param("Mcp-Name", "test_simple_text\xa0", id="Mcp-Name, the first with a no-break space"),
        pytest.param("Mcp-Method", "\x85tools/call", id="Mcp-Method, the first led by 0x85"),
    ],
)
async def test_an_mcp_header_sent_twice_with_different_values_is_refused(
    http_server: HttpProcess, wire: WireChecker, name: str, first: str
) -> None:
    """An intermediary may route or enforce policy on the first of two headers, the server
    read the last: a tools/call of one tool named in a second Mcp-Name ran (a gateway
    allowing only ``test_error_handling`` saw that name first). Now refused, 400."""
    message, headers = build_request("tools/call", {"name": "test_simple_text"}, rid="twice")
    lines = [(k, v) for k, v in headers.items() if k.lower() != name.lower()]
    lines += [(name, first), (name, headers.get(name, "xyz"))]
    status, reply = await _post_raw(http_server.port, orjson.dumps(message), lines)
    wire.response("tools/call", reply)
    assert status == 400, reply
    assert reply["error"]["code"] in (-32020, -32600) and "id" not in reply
    assert name.lower() in reply["error"]["message"].lower() and "more than once" in reply["error"]["message"]


async def test_headers_sent_twice_alike_or_a_list_split_in_two_are_served(
    http_server: HttpProcess, wire: WireChecker
) -> None:
    message, headers = build_request("tools/call", {"name": "test_simple_text"}, rid="alike")
    lines = [(k, v) for k, v in headers.items() if k.lower() != "accept"]
    lines += [
        ("Mcp-Name", headers["Mcp-Name"]),
        ("Accept", "application/json"),
        ("Accept", "text/event-stream"),
    ]
    status, reply = await _post_raw(http_server.port, orjson.dumps(message), lines)
    wire.response("tools/call", reply)
    assert status == 200 and reply["id"] == "alike", reply


def _as_latin1(text: str) -> str:
    """``text``'s UTF-8 bytes, one character each: sent as is, they are raw non-ASCII bytes."""
    return text.encode("utf-8").decode("latin-1")


@pytest.mark.parametrize(
    ("method", "params", "name", "value"),
    [
        pytest.param("tools/list", {}, "Mcp-Method", "tools/list\xa0", id="Mcp-Method + no-break space"),
        pytest.param("tools/list", {}, "Mcp-Method", "\x85tools/list", id="Mcp-Method + next-line byte"),
        pytest.param(
            "tools/list", {}, "MCP-Protocol-Version", "2026-07-28\xa0", id="MCP-Protocol-Version + byte"
        ),
        pytest.param(
            "tools/call",
            {"name": "test_x_mcp_header", "arguments": {"region": _as_latin1("Zürich")}},
            "Mcp-Param-Region",
            _as_latin1("Zürich"),
            id="Mcp-Param raw UTF-8",
        ),
        pytest.param(
            "resources/read",
            {"uri": _as_latin1("test://static-text/é")},
            "Mcp-Name",
            _as_latin1("test://static-text/é"),
            id="Mcp-Name raw UTF-8",
        ),
    ],
)
async def test_a_header_value_outside_visible_ascii_is_refused(
    http_server: HttpProcess, wire: WireChecker, method: str, params: dict[str, Any], name: str, value: str
) -> None:
    """A mirrored header carries visible ASCII, spaces and tabs only; anything else travels
    Base64-encoded. Raw bytes beyond ASCII were read as Latin-1 and compared, or trimmed
    away as Unicode white space: ``Mcp-Param-Region: Zürich`` (UTF-8, as a gateway reads
    it) ran the tool with the argument ``ZÃ¼rich`` of the body, and ``Mcp-Method:
    tools/list`` followed by a no-break space was taken as ``tools/list``. Now 400, -32020."""
    message, headers = build_request(method, params, rid="bytes")
    lines = [(k, v) for k, v in headers.items() if k.lower() != name.lower()] + [(name, value)]
    status, reply = await _post_raw(http_server.port, orjson.dumps(message), lines)
    wire.response(method, reply)
    assert (status, reply["error"]["code"], reply["id"]) == (400, -32020, "bytes"), reply
    assert name.lower() in reply["error"]["message"].lower()
    assert "ASCII" in reply["error"]["message"]


CANCELLED = "cancelled: the client closed the connection"


async def _send_and_close(port: int, data: bytes, *, read_until: bytes | None = None) -> bytes:
    """Open a connection, send ``data``, read up to ``read_until`` (or the end), close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    got = b""
    try:
        writer.write(data)
        await writer.drain()
        if read_until is not None:
            try:
                got = await asyncio.wait_for(reader.readuntil(read_until), 5)
            except asyncio.IncompleteReadError as exc:
                got = exc.partial
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    return got


async def test_connections_closed_mid_request(http_server: HttpProcess, mcp: McpHttp) -> None:
    port = http_server.port
    message, headers = build_request(
        "tools/call", {"name": "test_tool_with_progress"}, rid="slow", meta_=meta(progressToken="s")
    )
    full = raw_request(port, orjson.dumps(message), headers)
    cancelled_before = http_server.stderr().count(CANCELLED)
    await _send_and_close(port, full[:20])  # inside the request line
    await _send_and_close(port, full[: full.index(b"\r\n\r\n") // 2])  # inside the headers
    await _send_and_close(port, full[: full.index(b"\r\n\r\n") + 4 + 10])  # inside the body
    await _send_and_close(port, full)  # all of it, then gone before the answer
    head = await _send_and_close(port, full, read_until=b"\r\n\r\n")  # gone once the stream started
    assert head.startswith(b"HTTP/1.1 200 ") and b"text/event-stream" in head
    quick, quick_headers = build_request("tools/list", rid="q")
    await _send_and_close(port, raw_request(port, orjson.dumps(quick), quick_headers))
    garbage = await _send_and_close(port, b"HELLO THERE\r\n\r\n", read_until=b"\r\n\r\n")
    assert not garbage.startswith(b"HTTP/1.1 5"), garbage
    # the request whose stream had started was cancelled (the one closed before its answer
    # may have been dropped before it started), and the server serves on
    for _ in range(250):  # up to 5 s
        if http_server.stderr().count(CANCELLED) > cancelled_before:
            break
        await asyncio.sleep(0.02)
    assert http_server.stderr().count(CANCELLED) > cancelled_before, http_server.stderr()
    reply = await mcp.call("test_simple_text")
    assert reply.status == 200 and reply.result["content"][0]["type"] == "text"
    stderr = http_server.stderr()
    assert http_server.alive
    assert "Traceback" not in stderr and " ERROR " not in stderr, stderr
