"""A prompt or resource that needs a URL-mode step the person declines or cancels, over real
HTTP on 127.0.0.1: the request fails with -32600 saying the person did not complete the
step (their choice, not a server fault: never -32603, nothing logged at ERROR), on
2026-07-28 (a round answered ``decline``/``cancel``) and on a 2025-11-25 session (the
question answered in place). A tool gets the same refusal as its ``isError`` result.
Every message is checked against the schema of its revision."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, KeyRing, Server, ToolError
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.http import McpHttp, meta
from support.procs import uvicorn_server
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"form": {}, "url": {}}}
LINK = {"mode": "url", "message": "Link your account", "url": "https://example.com/link"}
NEEDS = "This needs your Example account"
CONNECT = "'Please connect your example account on this page.'"
PAST = {"decline": "declined", "cancel": "cancelled"}


def build() -> Server:
    app = Server("refusals", state_keys=KeyRing([bytes(range(9, 41))]), store=MemoryStore())
    app.oauth_provider(
        "example",
        authorize_url="https://provider.example/authorize",
        token_url="https://provider.example/token",
        client_id="client",
        client_secret="secret",
    )

    async def connected(ctx: Context) -> str:
        answer = await ctx.connect("example")
        if answer.connection is None:
            raise ToolError(NEEDS)
        return "connected"

    @app.prompt()
    async def account(ctx: Context) -> str:
        return await connected(ctx)

    @app.resource("test://account")
    async def account_page(ctx: Context) -> str:
        return await connected(ctx)

    @app.tool()
    async def account_tool(ctx: Context) -> str:
        return await connected(ctx)

    @app.prompt()
    async def linked() -> str:
        raise URLElicitationRequired("Link your account first", {"elicitations": [LINK]})

    @app.resource("test://linked")
    async def linked_page() -> str:
        raise URLElicitationRequired("Link your account first", {"elicitations": [LINK]})

    return app


TARGETS = [("prompts/get", {"name": "account"}), ("resources/read", {"uri": "test://account"})]
REQUIRED = [("prompts/get", {"name": "linked"}), ("resources/read", {"uri": "test://linked"})]


@contextlib.asynccontextmanager
async def serving(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.INFO, "mcp_elicit")
    async with uvicorn_server(StreamableHTTP(build())) as running, httpx.AsyncClient(timeout=10) as http:
        yield running, http
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def refused_2026(mcp: McpHttp, method: str, params: dict[str, Any], action: str) -> dict[str, Any]:
    """The answer of the retry that declines (or cancels) every input request of round one."""
    first = await mcp.request(method, params, meta_=meta(URL_CAPS))
    result = first.result
    assert result["resultType"] == "input_required", result
    (request,) = result["inputRequests"].values()
    assert request["params"]["mode"] == "url"
    answers = {key: {"action": action} for key in result["inputRequests"]}
    retry = {**params, "requestState": result["requestState"], "inputResponses": answers}
    return (await mcp.request(method, retry, meta_=meta(URL_CAPS))).error


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refused_step_of_a_prompt_or_resource_is_32600_on_2026(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, action: str
) -> None:
    async with serving(caplog) as (running, http):
        mcp = McpHttp(http, running.url, wire)
        for method, params in TARGETS:
            error = await refused_2026(mcp, method, params, action)
            assert error == {
                "code": -32600,
                "message": f"Invalid request: {NEEDS} (the user {PAST[action]} the URL-mode step {CONNECT})",
            }, method
        for method, params in REQUIRED:  # the handler's own URLElicitationRequired (no -32042 here)
            error = await refused_2026(mcp, method, params, action)
            assert error == {
                "code": -32600,
                "message": "Invalid request: the user did not complete a step this request needs "
                f"({action}): Link your account (https://example.com/link)",
            }, method
        # a tool gets the refusal as its result, as before
        first = (await mcp.call("account_tool", meta_=meta(URL_CAPS))).result
        answers = {key: {"action": action} for key in first["inputRequests"]}
        extra = {"requestState": first["requestState"], "inputResponses": answers}
        tool = (await mcp.call("account_tool", extra=extra, meta_=meta(URL_CAPS))).result
        assert tool["isError"] is True and tool["content"][0]["text"] == NEEDS


async def in_session(
    http: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    wire: WireChecker,
    method: str,
    params: dict[str, Any],
    action: str,
) -> list[dict[str, Any]]:
    """Send a request on a 2025-11-25 session, answer each question it asks with
    ``action``; every message of its stream, the response last."""
    body = {"jsonrpc": "2.0", "id": 11, "method": method, "params": params}
    wire.request(body)
    messages: list[dict[str, Any]] = []
    async with asyncio.timeout(10), http.stream("POST", url, json=body, headers=headers) as response:
        assert response.status_code == 200
        if response.headers["content-type"].startswith("application/json"):  # answered at once
            return [orjson.loads(await response.aread())]
        decoder = EventDecoder()
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                message = orjson.loads(event.data)
                messages.append(message)
                if message.get("method") == "elicitation/create":
                    wire.request(message)
                    answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": action}}
                    wire.response("elicitation/create", answer)
                    assert (await http.post(url, json=answer, headers=headers)).status_code == 202
    return messages


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refused_step_of_a_prompt_or_resource_is_32600_on_a_2025_session(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture, action: str
) -> None:
    async with serving(caplog) as (running, http):
        headers = await open_session(http, running.url, wire_2025, capabilities=URL_CAPS)
        for method, params in TARGETS:
            *notes, last = await in_session(http, running.url, headers, wire_2025, method, params, action)
            assert [n.get("method") for n in notes] == ["elicitation/create"]
            assert notes[0]["params"]["mode"] == "url"
            wire_2025.response(method, last)
            assert last["error"] == {
                "code": -32600,
                "message": f"Invalid request: {NEEDS} (the user {PAST[action]} the URL-mode step {CONNECT})",
            }, method
        for method, params in REQUIRED:  # the step is the client's to put to the person: -32042
            (last,) = await in_session(http, running.url, headers, wire_2025, method, params, action)
            wire_2025.response(method, last)
            assert last["error"]["code"] == -32042, last
