"""The ``elicitation_id`` a handler gives a URL step (``ctx.require_url``,
``ctx.elicit_url``, or ``"elicitationId"`` in its own ``URLElicitationRequired``) is the
name ``server.complete_elicitation`` later completes it by, and a string on the wire at
2025-11-25. One that is not a string, or is empty, could never be completed as given: it
is the handler's fault, said before anything is sent (the tool's ``isError``), at both
revisions, rather than sent as a number that breaks the schema (the client then blames
the server), replaced by a generated id (its ``complete_elicitation`` then completes
nothing), or dropped. ``None`` is no id, as when left out."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import URLElicitationRequired

from support.memory import MemoryClient
from support.stdio_pipes import stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
URL = "https://pay.example.com/d/7"
BAD_IDS = [123, "", "   ", ["deposit-7"]]


def build(eid: Any) -> Server:
    app = Server("ids")

    @app.tool()
    async def required(ctx: Context) -> str:
        return (await ctx.require_url("Pay the deposit", URL, elicitation_id=eid)).action

    @app.tool()
    async def opened(ctx: Context) -> str:
        return (await ctx.elicit_url("Pay the deposit", URL, elicitation_id=eid)).action

    @app.tool()
    async def raised(ctx: Context) -> str:
        step = {"mode": "url", "message": "Pay the deposit", "url": URL, "elicitationId": eid}
        raise URLElicitationRequired("Pay first", {"elicitations": [step]})

    return app


TOOLS = ["required", "opened", "raised"]


def said_wrong(result: dict[str, Any]) -> None:
    assert result.get("isError") is True, result
    text = result["content"][0]["text"]
    assert "elicitation" in text.lower() and "non-empty string" in text, text


@pytest.mark.parametrize("eid", BAD_IDS, ids=["int", "empty", "blank", "list"])
@pytest.mark.parametrize("tool", TOOLS)
async def test_a_bad_id_is_the_tools_error_at_2026(wire: WireChecker, tool: str, eid: Any) -> None:
    client = MemoryClient(build(eid), capabilities=URL_CAPS, checker=wire)
    said_wrong(await client.result("tools/call", {"name": tool}))


@pytest.mark.parametrize("eid", BAD_IDS, ids=["int", "empty", "blank", "list"])
@pytest.mark.parametrize("tool", TOOLS)
async def test_a_bad_id_is_the_tools_error_at_2025(tool: str, eid: Any) -> None:
    async with stdio_session(build(eid), URL_CAPS) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}})
        (answer,) = await pipes.until(1)
    assert "result" in answer, f"sent, or failed otherwise: {answer}"
    said_wrong(answer["result"])


@pytest.mark.parametrize("tool", TOOLS)
async def test_an_id_given_as_none_is_no_id(tool: str) -> None:
    async with stdio_session(build(None), URL_CAPS) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}})
        if tool == "opened":  # asked in the session: the server's own request, then the answer
            asked = await pipes.read()
            eid = asked["params"]["elicitationId"]
        else:
            (answer,) = await pipes.until(1)
            (step,) = answer["error"]["data"]["elicitations"]
            eid = step["elicitationId"]
    assert isinstance(eid, str) and eid, "a generated id"
