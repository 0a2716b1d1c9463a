"""Proxies between a client and a server on 127.0.0.1.

``stripping``: a reverse proxy's path rewrite, in process (ASGI).

``Breaker``: a TCP proxy that breaks connections the way real networks do. Each ``Fault``
arms on the first request whose bytes hold ``request`` (and not ``unless``), then acts on
that request's response: it forwards ``after`` bytes of it (or up to and including the
``nth`` ``marker``: ``b"\\r\\n\\r\\n"`` ends the headers, ``b"\\n\\n"`` an SSE event) and
then closes the connection (``close``), resets it (``reset``: RST, SO_LINGER 0), or stops
forwarding for ``seconds``, or until ``until`` is set (``stall``), and goes on; ``drop`` closes the connection before the
request reaches the server. ``after=0`` with ``close`` is the client
side going away while the server is still answering. Each fault fires once; ``fresh``
copies one not yet fired (a case's fault is shared by its parameters). ``heard`` is every
byte of the server's that reached the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Breaker", "Fault", "breaking", "fresh", "stripping"]


def stripping(prefix: str, app: Any) -> Any:
    """A reverse proxy's rewrite, as ``location /mcp-app/ { proxy_pass http://up/; }`` does:
    the app is reached under ``prefix``, and sees the path without it."""

    async def proxy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            if not scope["path"].startswith(prefix + "/"):
                await send({"type": "http.response.start", "status": 404, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            path = scope["path"][len(prefix) :]
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await app(scope, receive, send)

    return proxy


@dataclass
class Fault:
    request: bytes
    how: Literal["close", "reset", "stall", "drop"] = "close"
    after: int = 0
    marker: bytes | None = None
    nth: int = 1
    seconds: float = 0.0
    unless: bytes | None = None
    #: Ends a stall before its ``seconds`` when set (another fault's ``fired``, say).
    until: asyncio.Event | None = None
    fired: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set when a stall ends and forwarding goes on.
    resumed: asyncio.Event = field(default_factory=asyncio.Event)

    def matches(self, sent: bytes) -> bool:
        return self.request in sent and (self.unless is None or self.unless not in sent)

    def cut(self, answered: bytes) -> int | None:
        """Where in the response so far the fault acts, if it is there yet."""
        if self.marker is None:
            return self.after if len(answered) >= self.after else None
        at = -1
        for _ in range(self.nth):
            at = answered.find(self.marker, at + 1)
            if at < 0:
                return None
        return at + len(self.marker)


def fresh(fault: Fault) -> Fault:
    """A copy of ``fault`` not yet fired."""
    return dataclasses.replace(fault, fired=asyncio.Event(), resumed=asyncio.Event())


class Breaker:
    """A TCP proxy to ``127.0.0.1:upstream`` applying ``faults``."""

    def __init__(self, upstream: int, faults: list[Fault]) -> None:
        self.upstream, self.faults = upstream, faults
        self.port = 0
        self.heard = bytearray()
        self._tasks: set[asyncio.Task[None]] = set()

    def url(self, path: str = "/mcp") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return
        armed: list[Fault | None] = [None]
        sent = bytearray()

        async def upward() -> None:
            while data := await reader.read(65536):
                sent.extend(data)
                if armed[0] is None:
                    armed[0] = next(
                        (f for f in self.faults if not f.fired.is_set() and f.matches(sent)), None
                    )
                    if armed[0] is not None:
                        armed[0].fired.set()
                        if armed[0].how == "drop":  # the request never reaches the server
                            writer.close()
                            up_writer.close()
                            return
                up_writer.write(data)
                await up_writer.drain()
            if up_writer.can_write_eof():
                up_writer.write_eof()

        async def downward() -> None:
            answered, forwarded = bytearray(), 0
            while True:
                data = await up_reader.read(65536)
                if not data:
                    writer.close()
                    return
                fault = armed[0]
                if fault is None:
                    sent.clear()
                    self.heard.extend(data)
                    writer.write(data)
                    await writer.drain()
                    continue
                answered.extend(data)
                at = fault.cut(bytes(answered))
                self.heard.extend(answered[forwarded : len(answered) if at is None else at])
                writer.write(bytes(answered[forwarded : len(answered) if at is None else at]))
                await writer.drain()
                forwarded = len(answered)
                if at is not None:
                    break
            armed[0] = None
            if fault.how == "stall":
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for((fault.until or asyncio.Event()).wait(), fault.seconds)
                fault.resumed.set()
                self.heard.extend(answered[at:])
                writer.write(bytes(answered[at:]))
                await writer.drain()
                sent.clear()
                while data := await up_reader.read(65536):
                    self.heard.extend(data)
                    writer.write(data)
                    await writer.drain()
                writer.close()
                return
            if fault.how == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
            else:
                writer.close()
            up_writer.close()

        pumps = [asyncio.ensure_future(upward()), asyncio.ensure_future(downward())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_EXCEPTION)
            await asyncio.wait([pumps[1]])
        except asyncio.CancelledError:
            pass  # the proxy closing: its connections end with it
        finally:
            for pump in pumps:
                pump.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*pumps, return_exceptions=True)
            writer.transport.abort()
            up_writer.transport.abort()
            self._tasks.discard(task)


@contextlib.asynccontextmanager
async def breaking(upstream: int, faults: list[Fault]) -> AsyncIterator[Breaker]:
    """A ``Breaker`` listening on a fresh 127.0.0.1 port, closed at the end with its connections."""
    breaker = Breaker(upstream, faults)
    server = await asyncio.start_server(breaker._serve, "127.0.0.1", 0)
    breaker.port = server.sockets[0].getsockname()[1]
    try:
        yield breaker
    finally:
        server.close()
        for task in list(breaker._tasks):
            task.cancel()
        await asyncio.gather(*breaker._tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)
