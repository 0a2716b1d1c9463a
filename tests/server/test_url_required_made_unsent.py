"""A 2025-11-25 -32042 made by ``ctx.require_url`` (its steps waited on by the session)
that something else touches before it is sent: the app completes the step meanwhile and
another request asks it again; the handler changes a step's id in the error it caught and
raises it again; the client cancels the request and the handler, catching that, asks the
step. The session waits on the ids the client was sent, and on no other. Over stdio, in
this process, so the app and the session can be looked at between messages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import URLElicitationRequired

from support.stdio_pipes import Pipes, stdio_session

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
MESSAGE, URL = "Link your account", "https://example.com/link"
STEP = {"mode": "url", "message": MESSAGE, "url": URL, "elicitationId": "l-1"}


class Gates:
    def __init__(self) -> None:
        self.made = asyncio.Event()  # the -32042 was made (and caught)
        self.go_on = asyncio.Event()


def build(gates: Gates) -> Server:
    app = Server("made-unsent")

    @app.tool()
    async def link(ctx: Context) -> str:
        await ctx.require_url(MESSAGE, URL, elicitation_id="l-1")
        return "linked"

    @app.tool()
    async def goes_on_later(ctx: Context) -> str:
        try:
            await ctx.require_url(MESSAGE, URL, elicitation_id="l-1")
        except URLElicitationRequired:
            gates.made.set()
            await gates.go_on.wait()
            return "went on without it"
        return "linked"

    @app.tool()
    async def renames(ctx: Context) -> str:
        try:
            await ctx.require_url(MESSAGE, URL, elicitation_id="l-1")
        except URLElicitationRequired as exc:
            exc.data["elicitations"][0]["elicitationId"] = "l-2"
            raise
        return "linked"

    @app.tool()
    async def renames_a_copy(ctx: Context) -> str:
        try:
            await ctx.require_url(MESSAGE, URL, elicitation_id="l-1")
        except URLElicitationRequired as exc:
            exc.data["elicitations"][0]["elicitationId"] = "l-2"
            raise URLElicitationRequired(exc.message, exc.data) from None
        return "linked"

    @app.tool()
    async def asks_when_cancelled(ctx: Context) -> str:
        try:
            gates.made.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await ctx.require_url(MESSAGE, URL, elicitation_id="l-1")
        return "unreachable"

    return app


def call(pipes: Pipes, rid: int, name: str) -> None:
    pipes.write({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}})


async def test_a_step_completed_before_it_was_sent_and_asked_again_elsewhere_stays_waited_on() -> None:
    """The app completes ``l-1`` while the -32042 that made it is caught (not sent); a
    later request sends ``l-1`` as its own. When the first handler goes on, the session
    stopped waiting on ``l-1`` (the later request's), so its completion told nobody."""
    gates = Gates()
    app = build(gates)
    async with stdio_session(app, URL_CAPS) as pipes:
        call(pipes, 1, "goes_on_later")
        async with asyncio.timeout(5):
            await gates.made.wait()
        assert app.complete_elicitation("l-1")  # made, not sent: the session waits on it
        notice = await pipes.read()
        assert notice["method"] == "notifications/elicitation/complete", notice
        call(pipes, 2, "link")
        (later,) = await pipes.until(2)
        assert later["error"]["data"]["elicitations"] == [STEP], later
        gates.go_on.set()
        (first,) = await pipes.until(1)
        assert "went on without it" in first["result"]["content"][0]["text"], first
        session = pipes.server.session
        assert session is not None and session.elicitations == {"l-1": ["l-1"]}, "request 2's step"
        assert app.complete_elicitation("l-1")
        notice = await pipes.read()
        assert notice["params"] == {"elicitationId": "l-1"}


@pytest.mark.parametrize("tool", ["renames", "renames_a_copy"])
async def test_a_step_whose_id_the_handler_changed_is_waited_on_under_the_id_sent(tool: str) -> None:
    """The handler renamed ``l-1`` to ``l-2`` in the -32042 it caught, and raised it (or a
    copy sharing its data) again: the client is sent ``l-2``, and the session waited on
    ``l-1``, so completing ``l-2`` told nobody."""
    app = build(Gates())
    async with stdio_session(app, URL_CAPS) as pipes:
        call(pipes, 1, tool)
        (answer,) = await pipes.until(1)
        assert answer["error"]["data"]["elicitations"] == [{**STEP, "elicitationId": "l-2"}], answer
        session = pipes.server.session
        assert session is not None and session.elicitations == {"l-2": ["l-2"]}
        assert app.complete_elicitation("l-2")
        notice = await pipes.read()
        assert notice["params"] == {"elicitationId": "l-2"}


async def test_a_step_asked_after_the_client_cancelled_is_not_sent_nor_waited_on() -> None:
    """The client cancelled the request; its handler caught that and asked a URL step
    (-32042). Nothing is answered to a cancelled request, and the session waits on no
    step the client will never see."""
    gates = Gates()
    app = build(gates)
    async with stdio_session(app, URL_CAPS) as pipes:
        call(pipes, 1, "asks_when_cancelled")
        async with asyncio.timeout(5):
            await gates.made.wait()
        pipes.write({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        pipes.write({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        seen: list[dict[str, Any]] = await pipes.until(2)
        assert seen == [{"jsonrpc": "2.0", "id": 2, "result": {}}], seen
        session = pipes.server.session
        assert session is not None and session.elicitations == {}, "a step nobody was sent"
        assert not app.complete_elicitation("l-1")
