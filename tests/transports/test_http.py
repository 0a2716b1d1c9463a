"""Streamable HTTP (2026-07-28) over real sockets: ``mcp-elicit serve --http`` in a subprocess
serving the conformance server, spoken to with httpx. Every JSON-RPC message received (JSON
bodies and every SSE event) is checked against the official schema by method."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from support.http import DROP, VERSION, McpHttp, meta
from support.procs import HttpProcess
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


#: The status of a -32602 raised by a handler (unknown resource, wrong param types). The
#: spec names none; only ``_meta`` problems are 400.
HANDLER_INVALID_PARAMS_STATUS = 200


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
    unknown = await mcp.call("no_such_tool")  # a protocol error, not the tool's
    assert unknown.status == 200 and unknown.message["error"]["code"] == -32602


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


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        pytest.param({"Host": "evil.example.com"}, 421, id="foreign host"),
        pytest.param({"Host": "evil.example.com:80"}, 421, id="foreign host with port"),
        pytest.param({"Host": "127.0.0.1.evil.example.com"}, 421, id="loopback-looking host"),
        pytest.param({"Origin": "http://evil.example.com"}, 403, id="foreign origin"),
        pytest.param({"Origin": "https://127.0.0.1.evil.example.com"}, 403, id="loopback-looking origin"),
        # a sandboxed frame, a page after a cross-site redirect: a page not trusted
        pytest.param({"Origin": "null"}, 403, id="null origin"),
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
