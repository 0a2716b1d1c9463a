"""-32042 at 2025-11-25 that the server keeps answering because its step was never finished
(the user said "done" before the page was, or a script that does not wait for the server's
notice): after the round limit the error says which step was asked again and how to wait
for it, not only that the limit was reached."""

from __future__ import annotations

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Scripted
from mcp_elicit.errors import RoundsExceeded
from mcp_elicit.transports.memory import connect_memory

pytestmark = pytest.mark.anyio

app = Server("bank")


@app.tool()
async def balance(ctx: Context) -> str:
    """Needs the account linked on a page that is never finished here."""
    answer = await ctx.require_url("Link your account", "https://bank.example.com/link", key="link")
    return f"link: {answer.action}"


async def test_a_step_asked_again_after_it_was_done_is_named_with_how_to_wait() -> None:
    answers = Scripted.from_script([{"mode": "url", "action": "accept"}])
    with pytest.raises(RoundsExceeded) as caught:
        async with connect_memory(app, answerer=answers, versions=["2025-11-25"]) as client:
            await client.call_tool("balance", {})
    said = str(caught.value)
    assert "still needed URL elicitations after" in said, said
    assert "asked again for a step said to be done (https://bank.example.com/link)" in said, said
    assert '"await_completion": true' in said, said
