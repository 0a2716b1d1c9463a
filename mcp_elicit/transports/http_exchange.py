"""Streamable HTTP, server side: one request's response (JSON, or SSE once the handler
sends something first) and the small HTTP helpers every route shares.

Rules: a JSON body always carries Content-Length; an SSE response carries
``X-Accel-Buffering: no`` and flushes each event as it is sent; an error response has
the status its error names, and no ``id`` when the request's could not be read. A
response that stays silent a long time (a person answering, a page being completed)
can be kept alive with SSE comments, which proxies see as traffic; once streaming, every
write of a response goes through one lock, so a keep-alive and the handler's own events
never interleave mid-message or race the response head.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from mcp_elicit.errors import InvalidRequest, ParseError, ProtocolError, TransportError
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.sse import KEEPALIVE, encode_event

__all__ = [
    "ASGIApp",
    "Exchange",
    "Receive",
    "SSE_HEADERS",
    "Scope",
    "Send",
    "SessionChannel",
    "acceptable",
    "accepted",
    "error_response",
    "host_only",
    "json_headers",
    "plain",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_JSON_TYPE: Final = (b"content-type", b"application/json")


def json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """A JSON body's headers; a Content-Length spares the server chunked framing."""
    return [_JSON_TYPE, (b"content-length", str(len(body)).encode())]


SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


@functools.lru_cache(maxsize=256)
def host_only(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end >= 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@functools.lru_cache(maxsize=64)
def acceptable(accept: str) -> tuple[bool, bool]:
    """Whether an ``Accept`` header admits JSON and SSE: ranges (``*/*``, ``text/*``) count,
    ``q=0`` refuses."""
    json_ok = sse_ok = False
    for item in accept.lower().split(","):
        kind, _, params = item.partition(";")
        kind = kind.strip()
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 1.0
        if q <= 0:
            continue
        json_ok = json_ok or kind in ("*/*", "application/*", "application/json")
        sse_ok = sse_ok or kind in ("*/*", "text/*", "text/event-stream")
    return json_ok, sse_ok


class SessionChannel:
    """The channel a handshake-session request gets: the exchange, plus ``send``."""

    __slots__ = ("exchange",)

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.exchange.notify(method, params)

    async def send(self, message: bytes) -> None:
        await self.exchange.send_message(message)

    async def close_stream(self) -> bool:
        return await self.exchange.close_stream()


class Exchange:
    """One POST's response: JSON by default, switched to SSE by the first notification
    (or by a keep-alive, see :meth:`ping`)."""

    __slots__ = ("_lock", "closed", "gone", "send", "sse_ok", "streaming")

    def __init__(self, send: Send, sse_ok: bool) -> None:
        self.send = send
        self.sse_ok = sse_ok
        self.streaming = False
        self.closed = False
        #: The client went away and the request was cancelled for it (no answer is due).
        self.gone = False
        self._lock: asyncio.Lock | None = None  # made by the first streamed write

    async def close_stream(self) -> bool:
        """End the response before the answer, for the client to resume: only a session's
        stream can (see ``http_streams``); here, False."""
        return False

    def dropped(self, task: asyncio.Task[object]) -> None:
        """The connection closed while ``task`` answered this request: cancel it (a
        resumable stream waits for the client to come back first)."""
        if not self.closed:
            self.gone = True
            self.closed = True
            task.cancel()

    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self.sse_ok and not self.closed:
            await self._event(jsonrpc.encode_notification(method, params))

    async def send_message(self, message: bytes) -> None:
        """Send a server-to-client request on this response's stream (handshake sessions)."""
        if not self.sse_ok:
            raise TransportError(
                "the client does not accept text/event-stream, so the server cannot ask it anything"
            )
        if self.closed:
            raise TransportError("the request's stream is closed")
        await self._event(message)

    async def _event(self, data: bytes) -> None:
        async with self._guard():
            await self._start_stream()
            await self.send({"type": "http.response.body", "body": encode_event(data), "more_body": True})

    async def _start_stream(self) -> None:
        """Send the SSE response head, once (under the lock)."""
        if not self.streaming:
            await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            self.streaming = True

    async def ping(self) -> bool:
        """Keep a silent response alive: one SSE comment, after switching the response to
        SSE if it was still to be JSON. False (and nothing sent) when the response is over
        or the client takes only JSON."""
        if self.closed or not self.sse_ok:
            return False
        async with self._guard():
            if self.closed:
                return False
            await self._start_stream()
            await self.send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
        return True

    async def end(self) -> None:
        """Finish without a JSON-RPC response (the client cancelled the request)."""
        if self.closed:
            return
        self.closed = True
        if self.streaming or self._lock is not None:
            async with self._guard():
                if self.streaming:
                    await self.send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
        await self.send({"type": "http.response.start", "status": 204, "headers": []})
        await self.send({"type": "http.response.body", "body": b""})

    async def reply(self, payload: bytes, status: int = 200) -> None:
        if self.closed:
            return
        self.closed = True
        if self.streaming or self._lock is not None:
            async with self._guard():
                if self.streaming:
                    await self.send(
                        {"type": "http.response.body", "body": encode_event(payload), "more_body": False}
                    )
                    return
        await self._send_json(payload, status)

    async def _send_json(self, payload: bytes, status: int) -> None:
        await self.send({"type": "http.response.start", "status": status, "headers": json_headers(payload)})
        await self.send({"type": "http.response.body", "body": payload})


async def error_response(send: Send, rid: jsonrpc.RequestId | None, exc: ProtocolError) -> None:
    status = (
        exc.http_status
        if exc.http_status != 200
        else (400 if isinstance(exc, (ParseError, InvalidRequest)) else 200)
    )
    body = jsonrpc.encode_error(rid, exc)
    await send({"type": "http.response.start", "status": status, "headers": json_headers(body)})
    await send({"type": "http.response.body", "body": body})


async def accepted(send: Send) -> None:
    await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def plain(
    send: Send, status: int, text: bytes, *, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
