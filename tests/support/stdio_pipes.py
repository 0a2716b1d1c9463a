"""A ``StdioServer`` run in the test's own process, spoken to over two real pipes: an
initialized 2025-11-25 session whose server objects (its session's maps, the app) the
test can look at between messages. Two messages written at once are read, and handled,
in the same turn of the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

import orjson

from mcp_elicit import Server
from mcp_elicit.transports.stdio_server import StdioServer

from support.sessions import initialize_body


class Pipes:
    """A ``StdioServer`` in this process, spoken to over two real pipes."""

    def __init__(self, server: StdioServer, write_fd: int, reader: asyncio.StreamReader) -> None:
        self.server = server
        self.write_fd = write_fd
        self.reader = reader

    def write(self, *messages: dict[str, Any]) -> None:
        """Every message in one write: the server reads them in one chunk."""
        os.write(self.write_fd, b"".join(orjson.dumps(m) + b"\n" for m in messages))

    async def read(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.reader.readline(), 5)
        assert line, "the server closed stdout"
        message: dict[str, Any] = orjson.loads(line)
        return message

    async def until(self, rid: Any) -> list[dict[str, Any]]:
        """The messages read up to and including the response to ``rid``."""
        seen = [await self.read()]
        while seen[-1].get("id") != rid or "method" in seen[-1]:
            seen.append(await self.read())
        return seen


@contextlib.asynccontextmanager
async def stdio_session(app: Server, capabilities: dict[str, Any] | None = None) -> AsyncIterator[Pipes]:
    """An initialized 2025-11-25 session with ``app`` over stdio, whose client declared
    ``capabilities`` (form elicitation when None)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = StdioServer(app, grace=0.1)
    with os.fdopen(in_r, "rb", buffering=0) as stdin, os.fdopen(out_w, "wb", buffering=0) as stdout:
        running = asyncio.ensure_future(server.run(stdin, stdout))
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", buffering=0)
        )
        pipes = Pipes(server, in_w, reader)
        try:
            initialize = initialize_body(capabilities=capabilities)
            pipes.write(initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert "result" in await pipes.read()
            yield pipes
        finally:
            os.close(in_w)  # stdin's end: the server stops
            await asyncio.wait_for(running, 10)
            transport.close()
