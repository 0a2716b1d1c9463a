"""Bad input to the Streamable HTTP server, over real HTTP: bodies that are not JSON or not
JSON-RPC, well-formed envelopes whose params have the wrong shape, and unknown fields, which
are ignored. Each gets the right JSON-RPC code, never a crash."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from support.bad_input import JSON_HEADERS, _tools_list
from support.http import (
    DROP,
    McpHttp,
    meta,
    mirrored_headers,
)

pytestmark = pytest.mark.anyio


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
