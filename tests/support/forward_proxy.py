"""A forward proxy on 127.0.0.1, as a company's is: ``CONNECT host:port`` opens a tunnel
(https through it), and a request whose target is a whole URL (``GET http://host:port/path``,
the absolute form) is sent on (plain http through it). The proxy looks names up itself, in
``hosts`` (the test's internet: the client needs no address for them); an address written
as the host is used as it is, and any other host is answered 502.

``seen`` lists each request's method and target as it arrived (``("CONNECT",
"auth.example.net:443")``, ``("GET", "http://localhost:8000/x")``). Switches: ``refuse``,
a status answered (and the connection closed) instead of serving a request whose target
names one of ``refused`` (any host when empty); ``credentials``, the user and password a
request must carry in ``Proxy-Authorization`` (Basic), else it is answered 407 with a
``Proxy-Authenticate`` challenge.

``forward_proxy(hosts)`` runs one until the block ends; ``mute_proxy`` runs one that never
answers. ``clear_proxy_environment`` takes the machine's proxy settings out of a test's
environment (for a module's autouse fixture).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

__all__ = ["ForwardProxy", "clear_proxy_environment", "forward_proxy", "mute_proxy"]

#: The environment's proxy settings (each also read in lower case).
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def clear_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy in the test's environment, whatever the machine's is."""
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)  # urllib drops HTTP_PROXY under CGI


_DROPPED = frozenset({"proxy-authorization", "proxy-connection", "connection", "keep-alive"})


@dataclass
class ForwardProxy:
    hosts: dict[str, str]
    refuse: int | None = None
    refused: tuple[str, ...] = ()
    credentials: tuple[str, str] | None = None
    seen: list[tuple[str, str]] = field(default_factory=list)
    port: int = 0
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One request per connection: a tunnel, or one request sent on with
        ``Connection: close`` (its answer carries that back, so the client opens another)."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await _read_head(reader)
            if head is None:
                return
            method, target, headers = head
            self.seen.append((method, target))
            host, port = _split(target)
            status = self._refusal(host, headers)
            address = self.hosts.get(host) or (host if _is_address(host) else None)
            if status is not None or address is None:
                await _answer(writer, status or 502)
            elif method == "CONNECT":
                await self._tunnel(address, port, reader, writer)
            else:
                await self._forward(method, target, headers, address, port, reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away, or sent what no proxy reads
        except asyncio.CancelledError:
            pass  # the proxy closing: its connections end with it
        finally:
            writer.transport.abort()
            self._tasks.discard(task)

    def _refusal(self, host: str, headers: dict[str, str]) -> int | None:
        if self.refuse is not None and (not self.refused or host in self.refused):
            return self.refuse
        if self.credentials is not None:
            user, password = self.credentials
            expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            if headers.get("proxy-authorization") != expected:
                return 407
        return None

    async def _tunnel(
        self, address: str, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(address, port)
        except OSError:
            await _answer(writer, 502)
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.transport.abort()

    async def _forward(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        address: str,
        port: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        parts = urllib.parse.urlsplit(target)
        body = await _read_body(reader, headers)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{method} {path} HTTP/1.1"]
        lines += [f"{name}: {value}" for name, value in headers.items() if name not in _DROPPED]
        lines.append("connection: close")
        try:
            up_reader, up_writer = await asyncio.open_connection(address, port)
        except OSError:
            await _answer(writer, 502)
            return
        try:
            up_writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await up_writer.drain()
            await _pipe(up_reader, writer)
        finally:
            up_writer.transport.abort()


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]] | None:
    """The request line and headers (names in lower case), or None at the end of the stream."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    first, *rest = raw.decode("latin-1").split("\r\n")
    method, target, _ = first.split(" ", 2)
    headers: dict[str, str] = {}
    for line in rest:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return method, target, headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    """The request's body as it came (chunked stays chunked)."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            line = await reader.readuntil(b"\r\n")
            body += line
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    body += trailer
                body += b"\r\n"
                return bytes(body)
            body += await reader.readexactly(size + 2)
    return await reader.readexactly(int(headers.get("content-length", "0")))


_REASONS = {403: "Forbidden", 407: "Proxy Authentication Required", 502: "Bad Gateway"}


async def _answer(writer: asyncio.StreamWriter, status: int) -> None:
    extra = 'Proxy-Authenticate: Basic realm="test proxy"\r\n' if status == 407 else ""
    reason = _REASONS.get(status, "Refused")
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
    )
    await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


def _split(target: str) -> tuple[str, int]:
    """The host and port of a CONNECT target (``host:port``) or an absolute-form URL."""
    parts = urllib.parse.urlsplit(target if "://" in target else f"//{target}")
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 443)
    return parts.hostname or "", port


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@contextlib.asynccontextmanager
async def forward_proxy(hosts: dict[str, str]) -> AsyncIterator[ForwardProxy]:
    """A ``ForwardProxy`` knowing ``hosts`` on a fresh 127.0.0.1 port, closed at the end
    with its connections; its switches may be set on it while it runs."""
    proxy = ForwardProxy(dict(hosts))
    server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
    proxy.port = server.sockets[0].getsockname()[1]
    try:
        yield proxy
    finally:
        server.close()
        for task in list(proxy._tasks):
            task.cancel()
        await asyncio.gather(*proxy._tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)


@contextlib.asynccontextmanager
async def mute_proxy(*, hangs_up: bool) -> AsyncIterator[int]:
    """A proxy on 127.0.0.1 (its port) that takes each connection and reads the request,
    then never answers (until the client leaves) or, ``hangs_up``, closes the connection."""

    connections: set[asyncio.StreamWriter] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.add(writer)
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            if not hangs_up:
                await reader.read()  # the end of the stream: the client gave up
        writer.transport.abort()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in connections:
            writer.transport.abort()
        await server.wait_closed()
