"""Bad input over Streamable HTTP: each gets the right JSON-RPC error, with the request id
whenever it can be read, and never a crash, a hang or a 500.

The cases go to the real ``mcp-elicit serve --http`` process of the session (real sockets),
whose stderr must stay free of tracebacks; the property test posts random bodies to the same
ASGI app in memory. Every JSON-RPC message received is checked against the official schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_elicit.cli.loader import load_server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import (
    ACCEPT_BOTH,
    DROP,
    VERSION,
    McpHttp,
    build_request,
    check_messages,
    meta,
    mirrored_headers,
    parse_sse,
    raw_request,
)
from support.procs import CONFORMANCE_SERVER, HttpProcess
from support.wire import REQUESTS, RESULTS, WireChecker

pytestmark = pytest.mark.anyio

LIMIT = 4 * 1024 * 1024  # the default max_body of StreamableHTTP, which `mcp-elicit serve` keeps
JSON_HEADERS = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}


def _tools_list(rid: object = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": {"_meta": meta()}}


# ---- bodies that are not JSON, or not JSON-RPC ------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "rid"),
    [
        pytest.param(b"{bad", -32700, None, id="not JSON"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', -32700, None, id="truncated"),
        pytest.param(b'{"jsonrpc": "2.0", "id": "\xff", "method": "x"}', -32700, None, id="invalid UTF-8"),
        pytest.param(b"\xef\xbb\xbf" + orjson.dumps(_tools_list()), -32700, None, id="byte order mark"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"n": NaN}}', -32700, None, id="NaN"
        ),
        pytest.param(b"[" * 3000 + b"]" * 3000, -32700, None, id="nested too deep"),
        pytest.param(b"", -32700, None, id="empty body"),
        pytest.param(b" \r\n\t ", -32700, None, id="only whitespace"),
        pytest.param(orjson.dumps([_tools_list()]), -32600, None, id="batch"),
        pytest.param(b"[]", -32600, None, id="empty batch"),
        pytest.param(b"7", -32600, None, id="a number"),
        pytest.param(b'"tools/list"', -32600, None, id="a string"),
        pytest.param(b"null", -32600, None, id="null"),
        pytest.param(b'{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}', -32600, 7, id="jsonrpc 1.0"),
        pytest.param(b'{"id": "a", "method": "tools/list"}', -32600, "a", id="no jsonrpc member"),
        pytest.param(b'{"jsonrpc": 2.0, "id": 8, "method": "tools/list"}', -32600, 8, id="jsonrpc a number"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', -32600, None, id="float id"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', -32600, None, id="boolean id"
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600, None, id="null id"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', -32600, None, id="object id"
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": [1], "method": "tools/list"}', -32600, None, id="list id"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "tools/list"}',
            -32600,
            None,
            id="id beyond 64 bits",
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": 9, "method": 5}', -32600, 9, id="method a number"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 10, "method": ""}', -32600, 10, id="method empty"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 11, "method": null}', -32600, 11, id="method null"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": [1]}',
            -32600,
            12,
            id="params a list",
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": "x"}',
            -32600,
            13,
            id="params a string",
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": 14}', -32600, 14, id="no method, result or error"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 15, "result": {}}', -32600, None, id="a response"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 16, "error": {"code": 1, "message": "x"}}',
            -32600,
            None,
            id="an error response",
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": 17, "result": 5}', -32600, None, id="a malformed response"),
        pytest.param(
            b'{"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}',
            -32600,
            None,
            id="notification with list params",
        ),
    ],
)
async def test_malformed_messages(mcp: McpHttp, body: bytes, code: int, rid: object) -> None:
    reply = await mcp.post(body, {**JSON_HEADERS, **mirrored_headers("tools/list", {})})
    assert reply.status == 400, reply.body
    assert reply.content_type == "application/json"
    assert reply.error["code"] == code
    if rid is None:
        assert "id" not in reply.message
    else:
        assert reply.message["id"] == rid


# ---- well-formed envelopes, params of the wrong shape ----------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "status"),
    [
        pytest.param("tools/call", {"name": 5}, 200, id="tools/call name a number"),
        pytest.param("tools/call", {}, 200, id="tools/call without name"),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text", "arguments": [1, 2]},
            200,
            id="tools/call arguments a list",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text", "arguments": "x"},
            200,
            id="tools/call arguments a string",
        ),
        pytest.param(
            "prompts/get",
            {"name": "test_simple_prompt", "arguments": []},
            200,
            id="prompts/get arguments a list",
        ),
        pytest.param("prompts/get", {"name": 5}, 200, id="prompts/get name a number"),
        pytest.param("prompts/get", {"name": "no_such_prompt"}, 200, id="prompts/get unknown prompt"),
        pytest.param(
            "prompts/get",
            {"name": "test_prompt_with_arguments", "arguments": {"arg1": 5, "arg2": "b"}},
            200,
            id="prompts/get argument of the wrong type",
        ),
        pytest.param(
            "prompts/get",
            {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}},
            200,
            id="prompts/get argument missing",
        ),
        pytest.param("resources/read", {"uri": 5}, 200, id="resources/read uri a number"),
        pytest.param("resources/read", {}, 200, id="resources/read without uri"),
        pytest.param(
            "completion/complete",
            {"ref": "test_simple_prompt", "argument": {"name": "a", "value": ""}},
            200,
            id="completion ref a string",
        ),
        pytest.param(
            "completion/complete",
            {"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}},
            200,
            id="completion ref of an unknown type",
        ),
        pytest.param(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "test_simple_prompt"}},
            200,
            id="completion without argument",
        ),
        pytest.param(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "test_simple_prompt"},
                "argument": {"name": 5, "value": ""},
            },
            200,
            id="completion argument name a number",
        ),
        pytest.param(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "test_simple_prompt"},
                "argument": {"name": "a", "value": 5},
            },
            200,
            id="completion argument value a number",
        ),
        pytest.param(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "test_simple_prompt"}, "argument": {"name": "a"}},
            200,
            id="completion argument without value",
        ),
        pytest.param("tools/list", {"cursor": 5}, 200, id="cursor a number"),
        pytest.param("tools/list", {"cursor": "bm9wZQ=="}, 200, id="cursor not ours"),
        pytest.param(
            "tools/call",
            {"name": "test_input_required_result_elicitation", "requestState": 5},
            200,
            id="requestState a number",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_input_required_result_elicitation", "requestState": "v1.forged"},
            200,
            id="requestState forged",
        ),
        pytest.param("tools/list", {"_meta": "x"}, 400, id="_meta a string"),
        pytest.param("tools/list", {"_meta": [meta()]}, 400, id="_meta a list"),
        pytest.param(
            "tools/list",
            {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": 20260728}},
            400,
            id="protocolVersion a number",
        ),
        pytest.param(
            "tools/list",
            {"_meta": {**meta(), "io.modelcontextprotocol/clientCapabilities": ["sampling"]}},
            400,
            id="clientCapabilities a list",
        ),
        pytest.param(
            "tools/list",
            {"_meta": {**meta(), "io.modelcontextprotocol/logLevel": "loud"}},
            400,
            id="unknown logLevel",
        ),
    ],
)
async def test_params_of_the_wrong_type_are_invalid_params(
    mcp: McpHttp, method: str, params: dict[str, Any], status: int
) -> None:
    meta_ = DROP if "_meta" in params else None
    reply = await mcp.request(method, params, rid="bad-params", meta_=meta_, malformed=True)
    assert (reply.status, reply.error["code"]) == (status, -32602), reply.body
    assert reply.message["id"] == "bad-params"


# ---- unknown fields are ignored -------------------------------------------------------------


async def test_unknown_top_level_member_is_ignored(mcp: McpHttp) -> None:
    message = {**_tools_list("x"), "extra": {"nested": [1, 2]}}
    reply = await mcp.post(orjson.dumps(message), mirrored_headers("tools/list", {}), method="tools/list")
    assert reply.status == 200 and reply.message["id"] == "x" and "tools" in reply.result


@pytest.mark.parametrize(
    ("method", "params", "meta_"),
    [
        pytest.param("tools/list", {"unknownField": [1, 2]}, None, id="in params"),
        pytest.param("tools/list", {}, meta(**{"com.example/trace": "abc", "unknown": 1}), id="in _meta"),
        pytest.param(
            "tools/list",
            {},
            meta(capabilities={"elicitation": {}, "com.example/x": {}}),
            id="in capabilities",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text", "arguments": {}, "whatever": True},
            None,
            id="in tools/call",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text", "arguments": {"surprise": 1}},
            None,
            id="unknown argument",
        ),
        pytest.param(
            "resources/read", {"uri": "test://static-text", "extra": None}, None, id="in resources/read"
        ),
    ],
)
async def test_unknown_fields_are_ignored(
    mcp: McpHttp, method: str, params: dict[str, Any], meta_: dict[str, Any] | None
) -> None:
    reply = await mcp.request(method, params, meta_=meta_, malformed=True)
    assert reply.status == 200
    assert reply.result["resultType"] == "complete"


# ---- Content-Type and Accept -----------------------------------------------------------------


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


# ---- bodies too large ------------------------------------------------------------------------


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
        pytest.param("2025-03-26", 202, id="supported, older"),
        pytest.param(None, 202, id="none"),
    ],
)
async def test_a_notification_outside_a_session_checks_the_version_header(
    mcp: McpHttp, version: str | None, status: int
) -> None:
    """An unsupported MCP-Protocol-Version is 400 on every POST, a notification's too (it
    was 202, as if taken, though nothing the server speaks could read it)."""
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    headers: dict[str, str | bytes] = {**JSON_HEADERS}
    if version is not None:
        headers["MCP-Protocol-Version"] = version.encode("latin-1")
    reply = await mcp.post(orjson.dumps(note), headers)  # type: ignore[arg-type]
    assert reply.status == status, reply.body
    if status == 400:
        assert reply.error["code"] == -32022 and "id" not in reply.message
        assert reply.error["data"]["requested"] == (version if len(version) <= 60 else version[:60] + "...")
        assert len(reply.body) < 600


async def test_a_host_with_a_no_break_space_is_no_loopback_name(mcp: McpHttp) -> None:
    """Host is trimmed of HTTP's white space (spaces, tabs) only: ``str.strip()`` also took
    the byte 0xA0, so ``Host: localhost\xa0`` passed the DNS-rebinding allow-list."""
    message, headers = build_request("tools/list", rid="nbsp")
    reply = await mcp.post(orjson.dumps(message), {**headers, "Host": b"localhost\xa0"})  # type: ignore[dict-item]
    assert reply.status == 421 and reply.error["code"] == -32600, reply.body


# ---- headers sent more than once ------------------------------------------------------------


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


# ---- header values outside visible ASCII ----------------------------------------------------


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


# ---- connections that go away ----------------------------------------------------------------


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


# ---- any body at all: never a 500 (property test, in memory) ------------------------------


@functools.cache
def conformance_app() -> StreamableHTTP:
    return StreamableHTTP(load_server(str(CONFORMANCE_SERVER)))


class AsgiClient:
    """A checked client of the conformance app over ``httpx.ASGITransport`` (no socket)."""

    def __init__(self, wire: WireChecker) -> None:
        self.wire = wire
        transport = httpx.ASGITransport(app=conformance_app())
        self.client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")

    async def __aenter__(self) -> McpHttp:
        await self.client.__aenter__()
        return McpHttp(self.client, "http://127.0.0.1/mcp", self.wire)

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)


TOOLS = [
    "test_simple_text",
    "test_error_handling",
    "test_image_content",
    "test_x_mcp_header",
    "test_missing_capability",
    "test_input_required_result_elicitation",
    "test_input_required_result_multiple_inputs",
    "json_schema_2020_12_tool",
    "no_such_tool",
]
METHODS = [
    *sorted(REQUESTS),
    "server/discover",
    "notifications/cancelled",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "no/such",
    "",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
metas = st.one_of(
    st.just(meta()),
    st.builds(
        meta,
        capabilities=st.dictionaries(st.sampled_from(["elicitation", "sampling", "roots"]), st.just({}))
        | st.just({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        progressToken=st.integers(0, 9) | st.text(max_size=4),
    ),
    json_values,
)
params = st.one_of(
    st.fixed_dictionaries(
        {"_meta": metas},
        optional={
            "name": st.sampled_from(TOOLS) | json_values,
            "arguments": st.dictionaries(st.sampled_from(["region", "text", "name", "address"]), json_values)
            | json_values,
            "uri": st.sampled_from(["test://static-text", "test://template/1/data", "test://nope"])
            | json_values,
            "cursor": json_values,
            "requestState": st.text(max_size=30) | json_values,
            "inputResponses": st.dictionaries(st.sampled_from(["user_name", "greeting"]), json_values),
            "taskId": st.text(max_size=8) | json_values,
            "ref": st.fixed_dictionaries({"type": st.sampled_from(["ref/prompt", "ref/resource"])})
            | json_values,
            "argument": st.fixed_dictionaries({"name": st.text(max_size=4), "value": st.text(max_size=4)})
            | json_values,
        },
    ),
    json_values,
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0") | json_values, "method": st.sampled_from(METHODS) | json_values},
    optional={
        "id": st.integers(-(2**63), 2**63 - 1) | st.text(max_size=6) | json_values,
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)
bodies = st.one_of(messages.map(orjson.dumps), json_values.map(orjson.dumps), st.binary(max_size=64))


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # wire and anyio_backend are constants
)
@given(body=bodies, mirror=st.booleans(), content_type=st.sampled_from(["application/json", "text/plain"]))
async def test_no_body_gets_a_500(wire: WireChecker, body: bytes, mirror: bool, content_type: str) -> None:
    try:
        sent: object = orjson.loads(body)
    except orjson.JSONDecodeError:
        sent = None
    method = sent.get("method") if isinstance(sent, dict) else None
    headers = {"Content-Type": content_type, "Accept": ACCEPT_BOTH}
    if mirror and isinstance(method, str) and method.isprintable() and method.isascii():
        p = sent.get("params") if isinstance(sent, dict) else None
        headers.update(mirrored_headers(method, p if isinstance(p, dict) else None))
        headers["Content-Type"] = content_type
    async with AsgiClient(wire) as mcp:
        response = await mcp.client.post(mcp.url, content=body, headers=headers)
    assert response.status_code in {200, 202, 400, 404, 406, 413, 415}, (response.status_code, response.text)
    ctype = response.headers.get("content-type", "")
    if response.status_code == 202:
        assert response.content == b""
        assert isinstance(sent, dict) and "id" not in sent and isinstance(method, str)
        return
    if ctype.startswith("text/event-stream"):
        received = [orjson.loads(event) for event in parse_sse(response.text)]
    else:
        assert ctype == "application/json", ctype
        received = [orjson.loads(response.content)]
    known = method if isinstance(method, str) and method in RESULTS else None
    check_messages(wire, known, received)
    last = received[-1]
    if (
        response.status_code not in (406, 413, 415)
        and isinstance(sent, dict)
        and "method" in sent
        and _valid_id(sent.get("id"))
    ):
        assert last.get("id") == sent["id"], (sent, last)
    else:
        assert "id" not in last or (isinstance(sent, dict) and last["id"] == sent.get("id")), (sent, last)


async def test_the_property_harness_reaches_the_handlers(wire: WireChecker) -> None:
    async with AsgiClient(wire) as mcp:
        reply = await mcp.request("server/discover")
    assert reply.result["supportedVersions"][0] == VERSION
