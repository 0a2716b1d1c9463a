"""stdio: a handler whose ``asyncio.TaskGroup`` had a child fail is answered like any
other. On Python 3.11 such a group leaves its task's ``cancelling()`` count raised though
nothing cancelled the request, and the transport read that as the client's
``notifications/cancelled``: the answer, and the request's notifications after it, were
dropped, and the client waited for ever. Only what the client (or the end of stdin)
cancelled goes unanswered. A question of the group's that fails the request (a URL step's
-32042) fails it as in the handler's own task. Over real pipes, in this process."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, Server

from support.stdio_pipes import Pipes, stdio_session

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}


def build() -> Server:
    app = Server("task-groups")

    async def fails() -> None:
        raise ValueError("a child failed")

    @app.tool()
    async def caught(ctx: Context) -> str:
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(fails())
        except* ValueError:
            pass
        await ctx.report_progress(1, 1, "done")
        return "went on"

    @app.tool()
    async def step_from_a_sibling(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            group.create_task(ctx.require_url("Link", "https://example.com/link", elicitation_id="l-1"))
        return "linked"

    return app


async def answer(pipes: Pipes, rid: int, name: str) -> list[dict[str, object]]:
    pipes.write(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "_meta": {"progressToken": rid}},
        }
    )
    return await pipes.until(rid)  # a 5 s bound on each line read: the answer never came


async def test_a_handler_that_caught_its_task_groups_failure_is_answered_with_its_notifications() -> None:
    async with stdio_session(build(), URL_CAPS) as pipes:
        *notes, result = await answer(pipes, 1, "caught")
        assert result["result"] == {"content": [{"type": "text", "text": "went on"}]}, result
        assert [n["method"] for n in notes] == ["notifications/progress"], notes


async def test_a_url_step_asked_from_a_sibling_task_is_the_requests_32042() -> None:
    """As in the handler's own task (and as 2026-07-28 asks it): not a tool failure saying
    "unhandled errors in a TaskGroup", and the session waits on the step it sent."""
    app = build()
    async with stdio_session(app, URL_CAPS) as pipes:
        (result,) = await answer(pipes, 1, "step_from_a_sibling")
        assert result["error"]["code"] == -32042, result
        step = {"mode": "url", "message": "Link", "url": "https://example.com/link", "elicitationId": "l-1"}
        assert result["error"]["data"] == {"elicitations": [step]}, result
        assert pipes.server.session is not None and pipes.server.session.elicitations == {"l-1": ["l-1"]}
