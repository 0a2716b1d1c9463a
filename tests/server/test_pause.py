"""``ctx.pause()``: one handler polling for something done elsewhere serves both revisions.
At 2026-07-28 each pause is a state-only round the client comes back from; at 2025-11-25
(and in a task) the handler waits in place, and must let the rest of the server run while
it does: a pause that returned at once would hold the event loop for as long as it loops."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.transports.memory import connect_memory

REVISIONS = ("2026-07-28", "2025-11-25")


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_one_polling_handler_serves_both_revisions(revision: str) -> None:
    app = Server("poller")
    checks: list[int] = []

    @app.tool()
    async def wait_ready(ctx: Context) -> str:
        checks.append(len(checks) + 1)
        while len(checks) < 3:  # "done elsewhere" after the third look
            await ctx.pause()
            checks.append(len(checks) + 1)
        return f"ready after {len(checks)} checks"

    async with connect_memory(app, versions=(revision,)) as client:
        result = await client.call_tool("wait_ready", {})
    assert result["content"][0]["text"] == "ready after 3 checks", result
    assert checks == [1, 2, 3]


@pytest.mark.anyio
async def test_a_pause_in_place_lets_the_rest_of_the_server_run() -> None:
    app = Server("poller")
    ticks = 0

    async def ticker() -> None:  # stands for the server's other requests
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    @app.tool()
    async def two_pauses(ctx: Context) -> str:
        before = ticks
        await ctx.pause()
        await ctx.pause()
        return str(ticks - before)

    running = asyncio.get_running_loop().create_task(ticker())
    try:
        async with connect_memory(app, versions=("2025-11-25",)) as client:
            result = await client.call_tool("two_pauses", {})
    finally:
        running.cancel()
    ran = int(result["content"][0]["text"])
    assert ran > 0, "the other work never ran while the handler paused"
