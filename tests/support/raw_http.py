"""A raw HTTP/1.1 server on 127.0.0.1 for client tests: it reads each request whole and
lets a script write whatever bytes it likes in answer (one request per connection), so a
test can play a server that misbehaves in ways no framework would let it."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["Raw", "Script", "Seen", "raw_server", "response"]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Script = Callable[[Seen, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Raw:
    port: int
    scheme: str = "http"
    seen: list[Seen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/mcp"


@contextlib.asynccontextmanager
async def raw_server(script: Script, *, tls: ssl.SSLContext | None = None) -> AsyncIterator[Raw]:
    """A server on 127.0.0.1 that reads each request whole and lets ``script`` answer it
    (one request per connection), over TLS with ``tls``; stopped on exit, a script still
    writing (a stream kept open) with it."""
    raw = Raw(0, "https" if tls is not None else "http")
    open_writers: set[asyncio.StreamWriter] = set()
    handlers: set[asyncio.Task[object]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        open_writers.add(writer)
        if (task := asyncio.current_task()) is not None:
            handlers.add(task)
        try:
            method, path, _ = (await reader.readline()).decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            seen = Seen(method, path, headers, body)
            raw.seen.append(seen)
            await script(seen, writer)
        except (ConnectionError, ValueError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except asyncio.CancelledError:  # stopped with the server: the connection just closes
            pass
        finally:
            handlers.discard(asyncio.current_task())  # type: ignore[arg-type]
            open_writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    raw.port = server.sockets[0].getsockname()[1]
    try:
        yield raw
    finally:
        server.close()
        for writer in list(open_writers):
            writer.close()
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await server.wait_closed()


def response(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
