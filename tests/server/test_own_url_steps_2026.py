"""A handler's own ``URLElicitationRequired`` on 2026-07-28, where it is no -32042: its
steps become URL-mode questions (``ctx.url_steps``), checked as ``ctx.require_url``
checks them. A step whose ``mode`` is given and is not ``"url"`` is the handler's fault
(-32603, logged), on both revisions, never sent as a URL step. A step's ``_meta`` is not
sent: the 2026-07-28 schema's ``ElicitRequestURLParams`` has no place for it. A
handler's own protocol error holding a value JSON cannot carry is answered -32603
(logged), not left without a response."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import InvalidParams, URLElicitationRequired

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

STEP = {"mode": "url", "message": "Link your account", "url": "https://example.com/link"}
URL_CAPS = {"elicitation": {"form": {}, "url": {}}}


def raising(error: Exception) -> Server:
    """A server whose prompt ``link`` and tool ``link`` raise ``error``."""
    app = Server("raises")

    @app.prompt(name="link")
    async def link_prompt(ctx: Context) -> str:
        raise error

    @app.tool(name="link")
    async def link_tool(ctx: Context) -> str:
        raise error

    return app


CALLS = [("prompts/get", {"name": "link"}), ("tools/call", {"name": "link"})]


@pytest.mark.parametrize(("method", "params"), CALLS, ids=["prompt", "tool"])
async def test_a_steps_meta_is_not_sent_where_the_schema_has_no_place_for_it(
    wire: WireChecker, method: str, params: dict[str, Any]
) -> None:
    meta = {"example.com/reason": "link", "progressToken": "p-1"}
    app = raising(URLElicitationRequired("Link first", {"elicitations": [{**STEP, "_meta": meta}]}))
    client = MemoryClient(app, capabilities=URL_CAPS, checker=wire)
    result = await client.result(method, params)  # checked against ElicitRequestURLParams
    assert result["resultType"] == "input_required", result
    (request,) = result["inputRequests"].values()
    assert request["params"] == STEP, request


async def test_a_step_of_another_mode_is_the_prompts_fault(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcp_elicit")
    app = raising(URLElicitationRequired("Link first", {"elicitations": [{**STEP, "mode": "form"}]}))
    client = MemoryClient(app, capabilities=URL_CAPS, checker=wire)
    answer = await client.request("prompts/get", {"name": "link"})
    assert answer.get("error", {}).get("code") == -32603, answer
    assert any(r.levelno >= logging.ERROR for r in caplog.records), "the handler's fault is logged"


async def test_a_step_of_another_mode_is_the_tools_error(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool's fault is its ``isError`` result (as a step with a bad URL is), logged."""
    caplog.set_level(logging.ERROR, "mcp_elicit")
    app = raising(URLElicitationRequired("Link first", {"elicitations": [{**STEP, "mode": "form"}]}))
    client = MemoryClient(app, capabilities=URL_CAPS, checker=wire)
    result = await client.result("tools/call", {"name": "link"})
    assert result.get("isError") is True, result
    assert "mode must be 'url'" in result["content"][0]["text"], result
    assert any(r.levelno >= logging.ERROR for r in caplog.records), "the handler's fault is logged"


@pytest.mark.parametrize(("method", "params"), CALLS, ids=["prompt", "tool"])
async def test_a_protocol_error_json_cannot_carry_is_answered_32603(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, method: str, params: dict[str, Any]
) -> None:
    caplog.set_level(logging.ERROR, "mcp_elicit")
    app = raising(InvalidParams("Invalid params: no such account", data={"example.com/ids": {1, 2}}))
    client = MemoryClient(app, capabilities=URL_CAPS, checker=wire)
    answer = await client.request(method, params)
    assert answer["error"]["code"] == -32603, answer
    assert any(r.levelno >= logging.ERROR for r in caplog.records), "the handler's fault is logged"
    assert await client.result("tools/list") is not None
