"""A server for the stdio shutdown tests whose own stop takes a while, as closing a store or
the URL-mode pages can. It says on stderr when that begins: stdout's pipe is closed by then
(fd 1 itself stays open until the process exits), and a test can send a signal meanwhile."""

from __future__ import annotations

import asyncio
import sys

from mcp_elicit import Server

STOPPING = "slow_stop_server: stopping"


class SlowStop(Server):
    async def stop(self, *, transport: object = None) -> None:
        print(STOPPING, file=sys.stderr, flush=True)
        await asyncio.sleep(3.0)  # the window a signal lands in
        await super().stop(transport=transport)


app = SlowStop("slow-stop")
