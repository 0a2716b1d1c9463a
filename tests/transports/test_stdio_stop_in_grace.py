"""stdio: a stop (SIGTERM, SIGINT, stdout's reader going away) in stdin's grace period
while a handler goes on after its cancellation. ``StdioServer`` runs in the test's own
process over two real pipes, with a grace period far longer than the test may take, so
that a server that waits it out is seen to hang, not only to be slow."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.transports.stdio_server import StdioServer

from support.http import meta

pytestmark = pytest.mark.anyio


def _stop_by_signal(server: StdioServer) -> None:
    server.stop("SIGTERM received")  # what serve_stdio's signal handler calls


def _stop_by_closing_stdout(server: StdioServer) -> None:
    server._stdout_gone(None)  # what stdout's pipe protocol calls when its reader went away


@pytest.mark.parametrize("stop", [_stop_by_signal, _stop_by_closing_stdout], ids=["signal", "stdout closed"])
async def test_a_stop_in_stdins_grace_period_is_not_held_by_a_handler_that_goes_on(
    stop: Callable[[StdioServer], None],
) -> None:
    """The handler catches the cancellation the stop makes and waits on: the server does
    not wait out the rest of stdin's grace period (60 s here) for it, as it does not when
    stdin is still open; the handler is cancelled again, and the server ends."""
    app = Server("stops")
    said: list[str] = []
    released = asyncio.Event()

    @app.tool()
    async def goes_on(ctx: Context) -> str:
        await ctx.report_progress(0, 1, "started")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            said.append("cancelled once")
            try:
                await released.wait()
            except asyncio.CancelledError:
                said.append("cancelled again")
                raise
        return "went on"

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = StdioServer(app, grace=60.0)
    with os.fdopen(in_r, "rb", buffering=0) as stdin, os.fdopen(out_w, "wb", buffering=0) as stdout:
        running = asyncio.ensure_future(server.run(stdin, stdout))
        reader = asyncio.StreamReader()
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", buffering=0)
        )
        try:
            listen = {"notifications": {"toolsListChanged": True}, "_meta": meta()}
            call = {"name": "goes_on", "_meta": meta(progressToken=1)}
            os.write(
                in_w,
                orjson.dumps(
                    {"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": listen}
                )
                + b"\n",
            )
            os.write(
                in_w,
                orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}) + b"\n",
            )
            seen = [orjson.loads(await asyncio.wait_for(reader.readline(), 5)) for _ in range(2)]
            assert {m["method"] for m in seen} == {
                "notifications/subscriptions/acknowledged",
                "notifications/progress",
            }
            os.close(in_w)
            in_w = -1
            told, ended = [orjson.loads(await asyncio.wait_for(reader.readline(), 5)) for _ in range(2)]
            assert told["method"] == "notifications/cancelled" and told["params"]["requestId"] == "sub"
            assert ended["id"] == "sub", ended  # answered at stdin's end: the grace period has begun
            stop(server)
            async with asyncio.timeout(10):  # not the grace period's 60 s
                await running
        finally:
            released.set()
            if in_w >= 0:
                os.close(in_w)
            if not running.done():
                await asyncio.wait_for(running, 10)
            transport.close()
    assert said == ["cancelled once", "cancelled again"]
