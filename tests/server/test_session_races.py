"""Races inside a 2025-11-25 session: a client's answer, cancel and next request arriving
together. The stdio server runs in this process on real pipes, so that two lines written
at once are read, and handled, in the same turn of the event loop; the session's maps
are looked at afterwards."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.core.rev_2025_11_25 import Handshake
from mcp_elicit.server.sessions import Sessions
from mcp_elicit.wire.meta import ClientCapabilities

from support.stdio_pipes import stdio_session

pytestmark = pytest.mark.anyio
HANDSHAKE = Handshake("2025-11-25", ClientCapabilities({"elicitation": {}}), None)


def confirming_server(done: list[str]) -> Server:
    app = Server("session-races")

    @app.tool()
    async def act(ctx: Context) -> str:
        answer = await ctx.elicit("Go ahead?", Form(name=String()))
        done.append(answer.action)  # the one-time action, after the person said yes
        return "acted"

    return app


async def test_a_cancel_that_arrives_with_the_answer_stops_the_handler_at_its_question() -> None:
    done: list[str] = []
    async with stdio_session(confirming_server(done)) as pipes:
        pipes.write({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "act"}})
        question = await pipes.read()
        assert question["method"] == "elicitation/create"
        pipes.write(  # the answer and the cancel, read in one turn of the loop
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "x"}},
            },
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        )
        seen = await pipes.until(2)
        assert all(m.get("id") != 1 for m in seen), seen  # a cancelled request is not answered
        assert done == []  # nor did its handler go on past the question
        session = pipes.server.session
        assert session is not None
        assert not session.cancelled and not session.inflight and not session.pending


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_a_wait_for_pushed_messages_cancelled_as_one_comes_is_cancelled(turns: int) -> None:
    """The stdio server cancels the writer of a session's own messages as it stops; a
    message queued about then must not swallow that cancellation (the writer would wait
    on, and the stop with it): a cancel the wait took ends it cancelled, and one that came
    too late finds the message taken."""
    session = Sessions().create(HANDSHAKE, None)
    waiting = asyncio.ensure_future(session.next_pushed(60.0))
    await asyncio.sleep(0)  # waiting for a message
    session.push(b"late")
    for _ in range(turns):
        await asyncio.sleep(0)
    if waiting.cancel():
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 5)
    else:
        assert waiting.result() == b"late"
