"""``ctx.secret(name)``: the name is what the vault keeps the secret under and what its
page asks for ("Please enter your NAME"). One that is not a string, or is empty, is the
handler's fault, said at once naming what to give (the tool's ``isError``), before any
page is made or anything is asked: not an ``AttributeError`` from deep in the vault, nor
a page asking for nothing in particular."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.stores import MemoryStore

from support.memory import MemoryClient
from support.stdio_pipes import stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
BAD = [5, "", "  ", None]
IDS = ["int", "empty", "blank", "none"]


def build(name: Any) -> Server:
    app = Server("secrets", store=MemoryStore(), public_url="http://127.0.0.1:9")

    @app.tool()
    async def check(ctx: Context) -> str:
        return (await ctx.secret(name)).action

    return app


def said_wrong(result: dict[str, Any]) -> None:
    assert result.get("isError") is True, result
    assert "secret's name must be a non-empty string" in result["content"][0]["text"], result


@pytest.mark.parametrize("name", BAD, ids=IDS)
async def test_a_bad_name_is_the_tools_error_at_2026(wire: WireChecker, name: Any) -> None:
    client = MemoryClient(build(name), capabilities=URL_CAPS, checker=wire)
    said_wrong(await client.result("tools/call", {"name": "check"}))


@pytest.mark.parametrize("name", BAD, ids=IDS)
async def test_a_bad_name_is_the_tools_error_at_2025(name: Any) -> None:
    async with stdio_session(build(name), URL_CAPS) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "check"}})
        (answer,) = await pipes.until(1)  # nothing asked before it
    said_wrong(answer["result"])
