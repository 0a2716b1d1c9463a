"""A 2025-11-25 -32042 whose steps were made (each given the ``elicitationId`` the session
then waits on) but that never reaches the client: the error could not be sent (a value
JSON cannot carry), or the handler caught it and went on, failed, or raised another that
names no URL step. The session forgets those ids at once, rather than wait on them until
evicted: their completion tells nobody, and a later step under the same id is sent under
it, with no suffix. A handler that raises the -32042 it caught again, as a new error with
the same data or by asking the same step again, sends the same steps under the same ids.
Over stdio, in this process, so the app's ``complete_elicitation`` can be asked between
messages."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ToolError, URLElicitationRequired

from support.stdio_pipes import Pipes, stdio_session

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}
MESSAGE, URL = "Link your account", "https://example.com/link"
STEP = {"mode": "url", "message": MESSAGE, "url": URL, "elicitationId": "l-1"}


def build() -> Server:
    app = Server("refused-steps")

    async def asked(ctx: Context) -> None:
        await ctx.require_url(MESSAGE, URL, elicitation_id="l-1")

    @app.tool()
    async def link(ctx: Context) -> str:
        await asked(ctx)
        return "linked"

    @app.tool()
    async def unsendable(ctx: Context) -> str:
        raise URLElicitationRequired("Link first", {"elicitations": [STEP], "example.com/ids": {1, 2}})

    @app.tool()
    async def goes_on(ctx: Context) -> str:
        try:
            await asked(ctx)
        except URLElicitationRequired:
            return "went on without it"
        return "linked"

    @app.tool()
    async def fails(ctx: Context) -> str:
        try:
            await asked(ctx)
        except URLElicitationRequired:
            raise ToolError("no account to link") from None
        return "linked"

    @app.tool()
    async def raises_no_step(ctx: Context) -> str:
        try:
            await asked(ctx)
        except URLElicitationRequired:
            raise URLElicitationRequired("Link first", {"elicitations": []}) from None
        return "linked"

    @app.tool()
    async def raises_a_copy(ctx: Context) -> str:
        try:
            await asked(ctx)
        except URLElicitationRequired as exc:
            raise URLElicitationRequired(exc.message, exc.data) from None
        return "linked"

    @app.tool()
    async def asks_again(ctx: Context) -> str:
        try:
            await asked(ctx)
        except URLElicitationRequired:
            await asked(ctx)
        return "linked"

    return app


async def call(pipes: Pipes, rid: int, name: str) -> dict[str, Any]:
    pipes.write({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}})
    (answer,) = await pipes.until(rid)
    return answer


@pytest.mark.parametrize(
    ("tool", "outcome"),
    [
        ("unsendable", -32603),
        ("goes_on", "went on without it"),
        ("fails", "no account to link"),
        ("raises_no_step", "URLElicitationRequired needs data="),  # the tool's isError
    ],
)
async def test_steps_never_sent_are_not_waited_on(tool: str, outcome: int | str) -> None:
    app = build()
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await call(pipes, 1, tool)
        if isinstance(outcome, int):
            assert answer["error"]["code"] == outcome, answer
        else:
            assert outcome in answer["result"]["content"][0]["text"], answer
        assert not app.complete_elicitation("l-1"), "the session waits on a step it never sent"
        later = await call(pipes, 2, "link")  # the same step, asked by a later request
        assert later["error"]["data"]["elicitations"] == [STEP], later
        assert app.complete_elicitation("l-1")
        notice = await pipes.read()
        assert notice["method"] == "notifications/elicitation/complete"
        assert notice["params"] == {"elicitationId": "l-1"}


@pytest.mark.parametrize("tool", ["raises_a_copy", "asks_again"])
async def test_a_caught_32042_raised_again_sends_the_same_steps_under_the_same_ids(tool: str) -> None:
    app = build()
    async with stdio_session(app, URL_CAPS) as pipes:
        answer = await call(pipes, 1, tool)
        assert answer["error"]["code"] == -32042, answer
        assert answer["error"]["data"]["elicitations"] == [STEP], answer
        session = pipes.server.session
        assert session is not None and session.elicitations == {"l-1": ["l-1"]}, "one step, waited on once"
        assert app.complete_elicitation("l-1")
        notice = await pipes.read()
        assert notice["params"] == {"elicitationId": "l-1"}
        assert not app.complete_elicitation("l-1"), "nothing else waits under it"


@pytest.mark.parametrize("tool", ["raises_a_copy", "asks_again"])
async def test_raised_again_while_another_request_waits_under_the_id_it_keeps_its_own(tool: str) -> None:
    """The session already waits on ``l-1`` (an earlier request's step): the caught step
    was sent under an id of its own, and raised again keeps that one."""
    app = build()
    async with stdio_session(app, URL_CAPS) as pipes:
        assert (await call(pipes, 1, "link"))["error"]["data"]["elicitations"] == [STEP]
        answer = await call(pipes, 2, tool)
        (step,) = answer["error"]["data"]["elicitations"]
        assert step["elicitationId"].startswith("l-1#"), step
        session = pipes.server.session
        assert session is not None and session.elicitations == {"l-1": ["l-1", step["elicitationId"]]}
        assert app.complete_elicitation("l-1")
        notices = [await pipes.read(), await pipes.read()]
        assert [n["params"]["elicitationId"] for n in notices] == ["l-1", step["elicitationId"]]
