"""Streamable HTTP (2026-07-28) over real sockets: ``mcp-elicit serve --http`` in a subprocess
serving the conformance server, spoken to with httpx. Every JSON-RPC message received (JSON
bodies and every SSE event) is checked against the official schema by method."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import DROP, VERSION, McpHttp, build_request, meta, raw_request, sentinel
from support.procs import HttpProcess, uvicorn_server
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

#: The status of a -32602 raised by a handler (unknown resource, wrong param types). The
#: spec names none; only ``_meta`` problems are 400.
HANDLER_INVALID_PARAMS_STATUS = 200


# ---- requests that succeed ------------------------------------------------------------------


async def test_discover(mcp: McpHttp) -> None:
    reply = await mcp.request("server/discover")
    assert reply.status == 200 and reply.content_type == "application/json"
    result = reply.result
    assert result["supportedVersions"][0] == VERSION
    assert {"tools", "prompts", "resources", "completions"} <= set(result["capabilities"])
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-elicit-conformance"


async def test_tools_list(mcp: McpHttp) -> None:
    reply = await mcp.request("tools/list")
    tools = {t["name"]: t for t in reply.result["tools"]}
    assert "test_simple_text" in tools and "test_input_required_result_elicitation" in tools
    region = tools["test_x_mcp_header"]["inputSchema"]["properties"]["region"]
    assert region["x-mcp-header"] == "Region"
    assert reply.result["resultType"] == "complete"


async def test_tool_call_is_answered_as_json(mcp: McpHttp) -> None:
    reply = await mcp.call("test_simple_text", rid="call-1")
    assert reply.status == 200
    assert reply.content_type == "application/json"
    assert reply.message["id"] == "call-1"
    assert reply.result["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]


async def test_tool_failure_is_a_result_not_an_http_error(mcp: McpHttp) -> None:
    reply = await mcp.call("test_error_handling")
    assert reply.status == 200
    assert reply.result["isError"] is True
    unknown = await mcp.call("no_such_tool")
    assert unknown.status == 200 and unknown.result["isError"] is True


async def test_progress_turns_the_answer_into_an_sse_stream(mcp: McpHttp) -> None:
    reply, times = await mcp.stream(
        "tools/call", {"name": "test_tool_with_progress"}, meta_=meta(progressToken="tok-1")
    )
    assert reply.status == 200
    assert reply.sse
    assert reply.headers["x-accel-buffering"] == "no"
    assert "no-cache" in reply.headers["cache-control"]
    assert [m.get("method") for m in reply.notifications] == ["notifications/progress"] * 3
    assert [n["params"]["progress"] for n in reply.notifications] == [0, 50, 100]
    assert all(n["params"]["progressToken"] == "tok-1" for n in reply.notifications)
    assert reply.result["content"][0]["text"] == "Progress complete"
    assert len(times) == 4


async def test_log_messages_stream_at_the_requested_level(mcp: McpHttp) -> None:
    reply = await mcp.call(
        "test_tool_with_logging", meta_=meta(**{"io.modelcontextprotocol/logLevel": "info"})
    )
    assert reply.sse
    assert [n["params"]["data"] for n in reply.notifications] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert reply.result["content"][0]["text"] == "Logging complete"
    quiet = await mcp.call("test_tool_with_logging")
    assert not quiet.sse and quiet.notifications == []


async def test_a_client_accepting_only_json_gets_json(mcp: McpHttp) -> None:
    reply = await mcp.call(
        "test_tool_with_progress", meta_=meta(progressToken=7), headers={"Accept": "application/json"}
    )
    assert reply.status == 200 and reply.content_type == "application/json"
    assert reply.notifications == []
    assert reply.result["content"][0]["text"] == "Progress complete"


async def test_elicitation_round_trip(mcp: McpHttp) -> None:
    params = {"name": "test_input_required_result_elicitation"}
    first = await mcp.request("tools/call", params, rid=1)
    assert first.status == 200
    result = first.result
    assert result["resultType"] == "input_required"
    ask = result["inputRequests"]["user_name"]
    assert ask["method"] == "elicitation/create"
    assert ask["params"]["requestedSchema"]["required"] == ["name"]
    retry = {
        **params,
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": result["requestState"],
    }
    second = await mcp.request("tools/call", retry, rid=2)
    assert second.result["resultType"] == "complete"
    assert second.result["content"][0]["text"] == "Hello, Ada!"


async def test_two_rounds_then_complete(mcp: McpHttp) -> None:
    params = {"name": "test_input_required_result_multi_round"}
    answers = {"step1": {"name": "Ada"}, "step2": {"color": "green"}}
    retry: dict[str, Any] = dict(params)
    asked: list[str] = []
    for _ in range(4):
        result = (await mcp.request("tools/call", retry)).result
        if result["resultType"] == "complete":
            break
        keys = list(result["inputRequests"])
        asked += keys
        retry = {
            **params,
            "inputResponses": {k: {"action": "accept", "content": answers[k]} for k in keys},
            "requestState": result["requestState"],
        }
    assert asked == ["step1", "step2"]
    assert result["content"][0]["text"] == "name={'name': 'Ada'} color={'color': 'green'}"


async def test_tampered_request_state_is_invalid_params(mcp: McpHttp) -> None:
    params = {"name": "test_input_required_result_tampered_state"}
    state = (await mcp.request("tools/call", params)).result["requestState"]
    forged = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
    reply = await mcp.request(
        "tools/call",
        {
            **params,
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
            "requestState": forged,
        },
        rid="forged",
    )
    assert reply.error["code"] == -32602
    assert reply.message["id"] == "forged"


async def test_prompts(mcp: McpHttp) -> None:
    listed = (await mcp.request("prompts/list")).result["prompts"]
    assert "test_prompt_with_arguments" in [p["name"] for p in listed]
    got = await mcp.request(
        "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}
    )
    assert got.result["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='a', arg2='b'"


async def test_resources(mcp: McpHttp) -> None:
    listed = (await mcp.request("resources/list")).result["resources"]
    assert "test://static-text" in [r["uri"] for r in listed]
    templates = (await mcp.request("resources/templates/list")).result["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
    text = (await mcp.request("resources/read", {"uri": "test://static-text"})).result["contents"][0]
    assert text["text"] == "This is the content of the static text resource."
    item = (await mcp.request("resources/read", {"uri": "test://template/42/data"})).result["contents"][0]
    assert '"Data for ID: 42"' in item["text"]


async def test_unknown_resource_is_invalid_params_naming_the_uri(mcp: McpHttp) -> None:
    reply = await mcp.request("resources/read", {"uri": "test://missing"}, rid="r-9")
    assert reply.status == HANDLER_INVALID_PARAMS_STATUS
    assert reply.message["id"] == "r-9"
    assert reply.error["code"] == -32602
    assert reply.error["data"] == {"uri": "test://missing"}


async def test_completion(mcp: McpHttp) -> None:
    reply = await mcp.request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "test"},
        },
    )
    assert reply.result["completion"]["values"] == ["test1", "test2", "testValue"]


async def test_ignored_legacy_headers(mcp: McpHttp) -> None:
    reply = await mcp.request("tools/list", headers={"Last-Event-ID": "5"})
    assert reply.status == 200 and "tools" in reply.result


async def test_a_session_id_header_on_a_modern_request_is_ignored(mcp: McpHttp) -> None:
    reply = await mcp.request("tools/list", headers={"Mcp-Session-Id": "abc"})
    assert reply.status == 200 and "tools" in reply.result
    assert "mcp-session-id" not in reply.headers


async def test_header_names_are_case_insensitive(mcp: McpHttp) -> None:
    reply = await mcp.call(
        "test_simple_text",
        headers={
            "MCP-Protocol-Version": DROP,
            "Mcp-Method": DROP,
            "Mcp-Name": DROP,
            "mcp-protocol-version": VERSION,
            "MCP-METHOD": "tools/call",
            "mcp-NAME": "test_simple_text",
        },
    )
    assert reply.status == 200 and reply.result["content"][0]["type"] == "text"


# ---- the 2026-07-28 error table ----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "meta_", "headers", "status", "code"),
    [
        pytest.param("tools/list", {}, DROP, {}, 400, -32602, id="no _meta"),
        pytest.param(
            "tools/list",
            {},
            {"io.modelcontextprotocol/protocolVersion": VERSION},
            {},
            400,
            -32602,
            id="_meta without clientCapabilities",
        ),
        pytest.param(
            "tools/list",
            {},
            {"io.modelcontextprotocol/clientCapabilities": {}},
            {},
            400,
            -32602,
            id="_meta without protocolVersion",
        ),
        pytest.param(
            "tools/list", {}, None, {"MCP-Protocol-Version": DROP}, 400, -32020, id="no version header"
        ),
        pytest.param(
            "tools/list",
            {},
            None,
            {"MCP-Protocol-Version": "2099-01-01"},
            400,
            -32020,
            id="version header differs from _meta",
        ),
        pytest.param(
            "tools/list",
            {},
            None,
            {"MCP-Protocol-Version": "2025-11-25"},
            400,
            -32020,
            id="handshake-era version header differs from _meta",
        ),
        pytest.param("tools/list", {}, None, {"Mcp-Method": DROP}, 400, -32020, id="no Mcp-Method"),
        pytest.param(
            "tools/list", {}, None, {"Mcp-Method": "prompts/list"}, 400, -32020, id="Mcp-Method differs"
        ),
        pytest.param(
            "tools/list",
            {},
            None,
            {"Mcp-Method": "Tools/List"},
            400,
            -32020,
            id="header values are case-sensitive",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": DROP},
            400,
            -32020,
            id="no Mcp-Name",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": "test_error_handling"},
            400,
            -32020,
            id="Mcp-Name differs (tool)",
        ),
        pytest.param(
            "prompts/get",
            {"name": "test_simple_prompt"},
            None,
            {"Mcp-Name": "other"},
            400,
            -32020,
            id="Mcp-Name differs (prompt)",
        ),
        pytest.param(
            "resources/read",
            {"uri": "test://static-text"},
            None,
            {"Mcp-Name": "test://static-binary"},
            400,
            -32020,
            id="Mcp-Name differs (resource)",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": "=?base64?not base64!?="},
            400,
            -32020,
            id="malformed Base64 sentinel",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": sentinel("test_error_handling")},
            400,
            -32020,
            id="Base64 sentinel of another name",
        ),
        pytest.param("initialize", {}, None, {}, 404, -32601, id="initialize"),
        pytest.param("ping", {}, None, {}, 404, -32601, id="ping"),
        pytest.param("logging/setLevel", {"level": "info"}, None, {}, 404, -32601, id="logging/setLevel"),
        pytest.param(
            "resources/subscribe", {"uri": "test://static-text"}, None, {}, 404, -32601, id="subscribe"
        ),
        pytest.param(
            "resources/unsubscribe", {"uri": "test://static-text"}, None, {}, 404, -32601, id="unsubscribe"
        ),
        pytest.param("no/such/method", {}, None, {}, 404, -32601, id="unknown method"),
    ],
)
async def test_error_table(
    mcp: McpHttp,
    method: str,
    params: dict[str, Any],
    meta_: Any,
    headers: dict[str, object],
    status: int,
    code: int,
) -> None:
    reply = await mcp.request(method, params, rid="e-1", meta_=meta_, headers=headers, malformed=True)
    assert (reply.status, reply.error["code"]) == (status, code), reply.body
    assert reply.message["id"] == "e-1"
    assert reply.content_type == "application/json"


async def test_unsupported_version_lists_what_is_supported(mcp: McpHttp) -> None:
    wanted = "2099-01-01"
    reply = await mcp.request(
        "tools/list",
        rid=41,
        meta_={**meta(), "io.modelcontextprotocol/protocolVersion": wanted},
        headers={"MCP-Protocol-Version": wanted},
        malformed=True,
    )
    assert (reply.status, reply.error["code"]) == (400, -32022)
    assert reply.message["id"] == 41
    assert reply.error["data"]["requested"] == wanted
    assert VERSION in reply.error["data"]["supported"]


async def test_missing_client_capability(mcp: McpHttp) -> None:
    reply = await mcp.call("test_missing_capability", rid="cap", meta_=meta(capabilities={}))
    assert (reply.status, reply.error["code"]) == (400, -32021)
    assert reply.message["id"] == "cap"
    assert reply.error["data"]["requiredCapabilities"] == {"sampling": {}}
    elicit = await mcp.call("test_input_required_result_elicitation", meta_=meta(capabilities={}))
    assert (elicit.status, elicit.error["code"]) == (400, -32021)
    assert "elicitation" in elicit.error["data"]["requiredCapabilities"]


async def test_base64_sentinel_names_are_decoded(mcp: McpHttp) -> None:
    tool = await mcp.call("test_simple_text", headers={"Mcp-Name": sentinel("test_simple_text")})
    assert tool.status == 200 and tool.result["content"][0]["type"] == "text"
    resource = await mcp.request(
        "resources/read", {"uri": "test://static-text"}, headers={"Mcp-Name": sentinel("test://static-text")}
    )
    assert resource.status == 200 and resource.result["contents"][0]["uri"] == "test://static-text"


@pytest.mark.parametrize(
    ("region", "header", "status", "code"),
    [
        pytest.param("eu-west1", "eu-west1", 200, None, id="matching"),
        pytest.param("Zürich", sentinel("Zürich"), 200, None, id="matching, Base64"),
        pytest.param(" padded ", sentinel(" padded "), 200, None, id="matching, whitespace kept by Base64"),
        pytest.param("eu-west1", "us-east1", 400, -32020, id="mismatching"),
        pytest.param("eu-west1", sentinel("us-east1"), 400, -32020, id="mismatching, Base64"),
        pytest.param("eu-west1", DROP, 400, -32020, id="missing"),
        pytest.param("eu-west1", "=?base64?%%%?=", 400, -32020, id="malformed sentinel"),
    ],
)
async def test_x_mcp_header_parameter(
    mcp: McpHttp, region: str, header: object, status: int, code: int | None
) -> None:
    reply = await mcp.call(
        "test_x_mcp_header", {"region": region}, rid="hdr", headers={"Mcp-Param-Region": header}
    )
    assert reply.status == status, reply.body
    if code is None:
        assert reply.result["content"][0]["text"] == f"region={region}"
    else:
        assert reply.error["code"] == code
        assert reply.message["id"] == "hdr"


@pytest.mark.parametrize("arguments", [{}, {"region": None}], ids=["absent", "null"])
async def test_an_x_mcp_header_without_its_argument_is_a_mismatch(
    mcp: McpHttp, arguments: dict[str, Any]
) -> None:
    """No value, no header: a header naming a region the body does not carry would have a
    gateway route on a value the tool never sees."""
    reply = await mcp.call("test_x_mcp_header", arguments, rid="h", headers={"Mcp-Param-Region": "us-east1"})
    assert (reply.status, reply.error["code"]) == (400, -32020), reply.body
    assert "Mcp-Param-Region" in reply.error["message"]


async def test_x_mcp_header_not_expected_without_the_argument(mcp: McpHttp) -> None:
    reply = await mcp.call("test_x_mcp_header", {})
    assert reply.status == 200
    assert reply.result["isError"] is True  # the argument is required by the tool itself


# ---- notifications, methods, endpoint ---------------------------------------------------------


@pytest.mark.parametrize(
    "notification",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}},
    ],
)
async def test_a_notification_is_accepted_with_202_and_no_body(
    mcp: McpHttp, notification: dict[str, Any]
) -> None:
    response = await mcp.client.post(
        mcp.url, json=notification, headers={"Accept": "application/json, text/event-stream"}
    )
    assert response.status_code == 202
    assert response.content == b""


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT", "PATCH", "OPTIONS"])
async def test_only_post_is_allowed_without_a_session(mcp: McpHttp, verb: str) -> None:
    response = await mcp.client.request(verb, mcp.url, headers={"Accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


@pytest.mark.parametrize("verb", ["PUT", "PATCH", "OPTIONS", "HEAD"])
async def test_a_session_may_also_get_and_delete(mcp: McpHttp, wire_2025: WireChecker, verb: str) -> None:
    """With a session id, GET (its stream) and DELETE are served too: the 405 says so."""
    headers = await open_session(mcp.client, mcp.url, wire_2025)
    response = await mcp.client.request(verb, mcp.url, headers=headers)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST, DELETE"


async def test_other_paths_are_not_found(mcp: McpHttp) -> None:
    response = await mcp.client.post(mcp.url.replace("/mcp", "/other"), json={})
    assert response.status_code == 404
    trailing = await mcp.client.post(
        mcp.url + "/", json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert trailing.status_code == 202


# ---- DNS rebinding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        pytest.param({"Host": "evil.example.com"}, 421, id="foreign host"),
        pytest.param({"Host": "evil.example.com:80"}, 421, id="foreign host with port"),
        pytest.param({"Host": "127.0.0.1.evil.example.com"}, 421, id="loopback-looking host"),
        pytest.param({"Origin": "http://evil.example.com"}, 403, id="foreign origin"),
        pytest.param({"Origin": "https://127.0.0.1.evil.example.com"}, 403, id="loopback-looking origin"),
    ],
)
async def test_dns_rebinding_is_refused(mcp: McpHttp, headers: dict[str, str], status: int) -> None:
    reply = await mcp.request("tools/list", headers=headers, refused=True)
    assert reply.status == status
    assert "id" not in reply.message  # refused before the body is read: no id to echo
    assert reply.error["code"] == -32600


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="127.0.0.1 with port (httpx default)"),
        pytest.param({"Host": "localhost"}, id="localhost"),
        pytest.param({"Host": "localhost:{port}"}, id="localhost with port"),
        pytest.param({"Host": "127.0.0.1"}, id="127.0.0.1 without port"),
        pytest.param({"Origin": "http://127.0.0.1:{port}"}, id="loopback origin"),
        pytest.param({"Origin": "http://localhost:{port}"}, id="localhost origin"),
    ],
)
async def test_loopback_hosts_are_accepted(
    mcp: McpHttp, http_server: HttpProcess, headers: dict[str, str]
) -> None:
    filled = {k: v.format(port=http_server.port) for k, v in headers.items()}
    reply = await mcp.request("tools/list", headers=filled)
    assert reply.status == 200 and "tools" in reply.result


async def test_concurrent_requests_on_separate_connections(mcp: McpHttp) -> None:
    results: dict[str, int] = {}

    async def one(name: str) -> None:
        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await McpHttp(client, mcp.url, mcp.wire).call(name)
            results[name] = reply.status

    async with anyio.create_task_group() as tg:
        for name in [
            "test_tool_with_progress",
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
        ]:
            tg.start_soon(one, name)
    assert set(results.values()) == {200}


# ---- in-process uvicorn: what only the server's own code can show -------------------------


def mirroring_server() -> Server:
    app = Server("mirroring")

    @app.tool(
        input_schema={
            "type": "object",
            "properties": {"count": {"type": "integer", "x-mcp-header": "Count"}},
            "required": ["count"],
        }
    )
    def counted(count: int) -> str:
        return f"count={count}"

    return app


@pytest.mark.parametrize(
    ("count", "header", "served"),
    [
        pytest.param(42, "42", True, id="decimal"),
        pytest.param(42, "42.0", True, id="the same number written with a fraction"),
        pytest.param(-7, "-7", True, id="negative"),
        pytest.param(42, "4.2e1", True, id="the same number with an exponent"),
        pytest.param(42, "4_2", False, id="underscore"),
        pytest.param(42, sentinel("\u0664\u0662"), False, id="Arabic-Indic digits"),
        pytest.param(42, sentinel(" 42 "), False, id="white space inside Base64"),
        pytest.param(42, "42.0000000000000001", False, id="a different number rounding to the same float"),
        pytest.param(9007199254740991, "9007199254740990.9999999", False, id="near the safe limit"),
        pytest.param(42, "43", False, id="another number"),
        pytest.param(42, "0x2a", False, id="hexadecimal"),
        pytest.param(42, "nan", False, id="nan"),
        pytest.param(42, "1e" + "9" * 40, False, id="an exponent beyond any number"),
    ],
)
async def test_an_integer_header_is_compared_as_the_exact_number(
    wire: WireChecker, count: int, header: str, served: bool
) -> None:
    """An integer argument and its header are compared as numbers (``42.0`` is ``42``),
    but only a header that is a decimal number, compared exactly: read with ``float()``,
    ``4_2``, Arabic-Indic digits and ``42.0000000000000001`` all were 42, so a request a
    gateway read as another value (or as no number) ran with the body's."""
    async with (
        uvicorn_server(StreamableHTTP(mirroring_server())) as server,
        httpx.AsyncClient(timeout=10.0) as client,
    ):
        mcp = McpHttp(client, server.url, wire)
        reply = await mcp.call("counted", {"count": count}, rid="n", headers={"Mcp-Param-Count": header})
    if served:
        assert reply.status == 200 and reply.result["content"][0]["text"] == f"count={count}", reply.body
    else:
        assert (reply.status, reply.error["code"]) == (400, -32020), reply.body
        assert "Mcp-Param-Count" in reply.error["message"]


class Gates:
    """Events a tool and its test meet at (created inside the test's event loop)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()


def gated_server(gates: Gates) -> Server:
    app = Server("gated")

    @app.tool()
    async def held(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "first")
        await gates.release.wait()
        return "released"

    @app.tool()
    async def hang() -> str:
        gates.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            gates.cancelled.set()
            raise
        return "never"

    return app


async def test_notifications_are_flushed_as_they_happen(wire: WireChecker) -> None:
    gates = Gates()
    message, headers = build_request("tools/call", {"name": "held"}, rid=1, meta_=meta(progressToken="p"))
    async with (
        uvicorn_server(StreamableHTTP(gated_server(gates))) as server,
        httpx.AsyncClient(timeout=10.0) as client,
    ):
        body = b""
        async with client.stream("POST", server.url, json=message, headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            chunks = response.aiter_bytes()
            async with asyncio.timeout(5):  # the tool is still waiting: the event came early
                while b"\n\n" not in body:
                    body += await anext(chunks)
            assert b"notifications/progress" in body and b'"result"' not in body
            gates.release.set()
            async for chunk in chunks:
                body += chunk
        mcp = McpHttp(client, server.url, wire)
        reply = mcp.checked(httpx.Response(200, headers=response.headers, content=body), "tools/call")
    assert [m.get("method") for m in reply.messages] == ["notifications/progress", None]
    assert reply.result["content"][0]["text"] == "released"


async def test_closing_the_connection_cancels_the_handler(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit.http")
    gates = Gates()
    message, headers = build_request("tools/call", {"name": "hang"}, rid="h-1")
    async with uvicorn_server(StreamableHTTP(gated_server(gates))) as server:
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            writer.write(raw_request(server.port, orjson.dumps(message), headers))
            await writer.drain()
            await asyncio.wait_for(gates.started.wait(), 5)
        finally:
            writer.close()
            await writer.wait_closed()
        await asyncio.wait_for(gates.cancelled.wait(), 5)
        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await McpHttp(client, server.url, wire).request("tools/list")
        assert reply.status == 200 and [t["name"] for t in reply.result["tools"]] == ["held", "hang"]
    assert "cancelled: the client closed the connection" in caplog.text


async def test_the_watchlist_watches_only_requests_that_run_long() -> None:
    """One timer for the app: a request over before the second tick is never watched; one
    still running is watched once it has run a period (two at most, on an idle loop);
    the timer stops when no request runs."""
    from mcp_elicit.transports.http_exchange import Watchlist

    period = 0.05
    watchlist = Watchlist(period)
    loop = asyncio.get_running_loop()
    started: dict[str, float] = {}
    slow_started = asyncio.Event()

    def starter(name: str) -> Any:
        def start() -> None:
            started.setdefault(name, loop.time())
            slow_started.set()

        return start

    quick, slow = starter("quick"), starter("slow")
    begun = loop.time()
    watchlist.add(quick)
    watchlist.add(slow)
    await asyncio.sleep(period / 2)
    watchlist.discard(quick)
    await asyncio.wait_for(slow_started.wait(), 2.0)
    assert "quick" not in started
    assert started["slow"] - begun >= period * 0.9  # never before it has run one period
    watchlist.discard(slow)
    await asyncio.sleep(period * 2.5)  # a tick with nothing left to watch stops the timer
    assert watchlist._timer is None
    watchlist.add(quick)  # and the next request starts it again
    assert watchlist._timer is not None
    watchlist.discard(quick)
