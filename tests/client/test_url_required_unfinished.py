"""-32042 at 2025-11-25 that the server keeps answering because its step was never finished
(the user said "done" before the page was, or a script that does not wait for the server's
notice): after the round limit the error says which step was asked again and how to wait
for it, not only that the limit was reached. A server that said the step was complete
(``notifications/elicitation/complete``) and asks for it again all the same is named as
the one at fault: waiting longer would not help."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client.fakes import FakeTransport, error
from mcp_elicit import Context, Server
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import RoundsExceeded
from mcp_elicit.transports.memory import connect_memory

from support.handshake import URL_ELICITATION, V2025, init

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


def asks_again(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
    if message["method"] == "initialize":
        return [init(message)]
    return [error(message, -32042, "Authorization required", {"elicitations": [URL_ELICITATION]})]


class ToldComplete:
    """Accepts the URL and never says done itself: the server's notice that the step is
    complete comes while the URL is shown, each time."""

    modes = frozenset({"form", "url"})

    def __init__(self, transport: FakeTransport) -> None:
        self.transport = transport

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        notice = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete"}
        await self.transport.push({**notice, "params": {"elicitationId": request.elicitation_id}})
        return ElicitAnswer("accept")

    async def url_done(self, request: ElicitationRequest) -> None:
        await asyncio.Event().wait()


async def test_a_step_the_server_said_was_complete_and_asked_again_is_put_to_the_server() -> None:
    transport = FakeTransport(asks_again, http=False)
    with pytest.raises(RoundsExceeded) as caught:
        async with (
            asyncio.timeout(60),
            Client(transport, versions=V2025, answerer=ToldComplete(transport)) as client,
        ):
            await client.call_tool("connect", {})
    said = str(caught.value)
    assert "asked again for a step it had said was complete (https://example.com/connect?" in said, said
    # waiting for that notice would not help: it came
    assert "await_completion" not in said, said
    assert "before saying done" not in said, said
