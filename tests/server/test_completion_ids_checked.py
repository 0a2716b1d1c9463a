"""``server.complete_elicitation(elicitation_id, principal)`` names a step by the string
its handler gave (``ctx.require_url(..., elicitation_id=...)``, checked there to be a
non-empty string). A webhook that passes something else (a number parsed from its JSON,
``None``, bytes, an empty string) could never complete anything: it is refused at once,
where it is called, with a ``ValueError`` saying what to pass, rather than returning
False like a step nobody waits on and leaving the person's request waiting. The
session waiting on the real id is untouched, and the real id still completes it."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Server

from support.stdio_pipes import stdio_session

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}


def build() -> Server:
    app = Server("deposits")

    @app.tool()
    async def pay(ctx: Context) -> str:
        await ctx.require_url("Pay the deposit", "https://pay.example.com/d/7", elicitation_id="7")
        return "paid"

    return app


@pytest.mark.parametrize("bad", [7, "", "  ", None, b"7"], ids=["int", "empty", "blank", "none", "bytes"])
async def test_a_completion_naming_no_string_id_is_refused_at_once(bad: Any) -> None:
    app = build()
    async with stdio_session(app, URL_CAPS) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pay"}})
        (answer,) = await pipes.until(1)
        assert answer["error"]["code"] == -32042, answer
        with pytest.raises(ValueError, match="non-empty string"):
            app.complete_elicitation(bad)
        assert app.complete_elicitation("7"), "the session still waits on the real id"
        notice = await pipes.read()
        assert notice["params"] == {"elicitationId": "7"}, notice
