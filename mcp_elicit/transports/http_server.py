"""Streamable HTTP, server side: a plain ASGI application serving one ``Server`` at ``/mcp``.

Rules:

* Only loopback ``Host``/``Origin`` values are accepted by default (DNS-rebinding
  protection); a bad Host is 421, a bad Origin 403.
* A POST carries one JSON-RPC message as ``application/json``, at most ``max_body``
  bytes (413 beyond, checked on Content-Length before reading and while reading).
* A request is answered with one JSON object, unless its handler sends notifications
  first (progress, logs): then the response becomes an SSE stream scoped to that request,
  the notifications flushed as they happen and the result last. No server-to-client
  request is ever sent on a modern stream.
* Closing the connection cancels the request's handler.
* Errors carry the request id whenever it could be read, and the HTTP status the spec
  names (400 for ``_meta``/header/version/capability errors, 404 for unknown methods).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any, Final

from mcp_elicit.errors import InvalidRequest, ParseError, ProtocolError
from mcp_elicit.server.app import Server
from mcp_elicit.server.auth import Principal, TokenVerifier
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.sse import encode_event

__all__ = ["StreamableHTTP", "LOOPBACK_HOSTS"]

log = logging.getLogger("mcp_elicit.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
_JSON_HEADERS: Final = [(b"content-type", b"application/json")]
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_RUNS_USER_CODE: Final = frozenset({"tools/call", "prompts/get", "resources/read", "completion/complete"})


def _host_only(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end >= 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class _Exchange:
    """One POST's response: JSON by default, switched to SSE by the first notification."""

    __slots__ = ("closed", "send", "sse_ok", "streaming")

    def __init__(self, send: Send, sse_ok: bool) -> None:
        self.send = send
        self.sse_ok = sse_ok
        self.streaming = False
        self.closed = False

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if not self.sse_ok or self.closed:
            return
        if not self.streaming:
            self.streaming = True
            await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        body = encode_event(jsonrpc.encode_notification(method, params))
        await self.send({"type": "http.response.body", "body": body, "more_body": True})

    async def reply(self, payload: bytes, status: int = 200) -> None:
        if self.closed:
            return
        self.closed = True
        if self.streaming:
            await self.send({"type": "http.response.body", "body": encode_event(payload), "more_body": False})
            return
        await self.send({"type": "http.response.start", "status": status, "headers": _JSON_HEADERS})
        await self.send({"type": "http.response.body", "body": payload})


class StreamableHTTP:
    """The ASGI app. Mount it, or run it with uvicorn (``mcp-elicit serve --http``)."""

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] | None = None,
        max_body: int = 4 * 1024 * 1024,
        auth: TokenVerifier | None = None,
        fallback: ASGIApp | None = None,
    ) -> None:
        self.server = server
        self.path = path.rstrip("/") or "/"
        hosts = tuple(allowed_hosts) if allowed_hosts is not None else LOOPBACK_HOSTS
        self._any_host = "*" in hosts
        self._hosts = frozenset(_host_only(x) for x in hosts)
        self.max_body = max_body
        self.auth = auth if auth is not None else server.auth
        self.fallback = fallback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return
        path = scope["path"].rstrip("/") or "/"
        if path != self.path:
            if self.fallback is not None:
                await self.fallback(scope, receive, send)
            else:
                await _plain(send, 404, b"Not Found: the MCP endpoint is " + self.path.encode())
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._check_origin(headers)
        if refusal is not None:
            await _error(send, None, InvalidRequest(refusal[1], http_status=refusal[0]))
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, headers, receive, send)
        elif method in ("GET", "DELETE"):
            await _plain(
                send,
                405,
                b"Method Not Allowed: send each JSON-RPC message as its own POST",
                extra=[(b"allow", b"POST")],
            )
        else:
            await _plain(send, 405, b"Method Not Allowed", extra=[(b"allow", b"POST")])

    # ---- checks ----------------------------------------------------------------

    def _check_origin(self, headers: Mapping[str, str]) -> tuple[int, str] | None:
        if self._any_host:
            return None
        host = headers.get("host")
        if host is None or _host_only(host) not in self._hosts:
            return 421, f"Misdirected request: host {host!r} is not allowed (DNS-rebinding protection)"
        origin = headers.get("origin")
        if origin is not None and origin != "null":
            rest = origin.split("://", 1)[-1]
            if _host_only(rest) not in self._hosts:
                return 403, f"Forbidden: origin {origin!r} is not allowed (DNS-rebinding protection)"
        return None

    async def _authenticate(self, headers: Mapping[str, str], send: Send) -> tuple[bool, Principal | None]:
        if self.auth is None:
            return True, None
        raw = headers.get("authorization", "")
        scheme, _, token = raw.partition(" ")
        principal = (
            await self.auth.verify(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        )
        if principal is None:
            challenge = b'Bearer realm="mcp"' + (b', error="invalid_token"' if raw else b"")
            await _plain(
                send,
                401,
                b"Unauthorized: send a valid bearer token",
                extra=[(b"www-authenticate", challenge)],
            )
            return False, None
        return True, principal

    # ---- POST ----------------------------------------------------------------

    async def _post(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype != "application/json":
            await _error(
                send,
                None,
                InvalidRequest(
                    f"Unsupported Media Type: send application/json, not {ctype or 'nothing'!r}",
                    http_status=415,
                ),
            )
            return
        accept = headers.get("accept", "*/*").lower()
        sse_ok = "text/event-stream" in accept or "*/*" in accept
        if not (sse_ok or "application/json" in accept):
            await _error(
                send,
                None,
                InvalidRequest(
                    "Not Acceptable: accept application/json and text/event-stream", http_status=406
                ),
            )
            return
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await _error(
                send,
                None,
                InvalidRequest(f"Request body too large (limit {self.max_body} bytes)", http_status=413),
            )
            return
        body = await self._read_body(receive)
        if body is None:
            await _error(
                send,
                None,
                InvalidRequest(f"Request body too large (limit {self.max_body} bytes)", http_status=413),
            )
            return
        try:
            message = jsonrpc.decode(body)
        except ProtocolError as exc:
            await _error(send, exc.request_id, exc)
            return
        ok, principal = await self._authenticate(headers, send)
        if not ok:
            return
        if isinstance(message, jsonrpc.Notification):
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if not isinstance(message, jsonrpc.Request):
            await _error(
                send, None, InvalidRequest("Invalid request: a client may not POST JSON-RPC responses here")
            )
            return
        exchange = _Exchange(send, sse_ok)
        if message.method in _RUNS_USER_CODE:
            await self._run_watched(exchange, message, principal, headers, receive)
        else:
            payload, status = await self.server.respond(
                message, channel=exchange, principal=principal, headers=headers
            )
            await exchange.reply(payload, status)

    async def _run_watched(
        self,
        exchange: _Exchange,
        message: jsonrpc.Request,
        principal: Principal | None,
        headers: Mapping[str, str],
        receive: Receive,
    ) -> None:
        """Run a request that executes user code; a closed connection cancels it."""
        task = asyncio.current_task()
        assert task is not None
        gone = False

        async def watch() -> None:
            nonlocal gone
            while True:
                event = await receive()
                if event["type"] == "http.disconnect":
                    if not exchange.closed:
                        gone = True
                        exchange.closed = True
                        task.cancel()
                    return

        watcher = asyncio.ensure_future(watch())
        try:
            payload, status = await self.server.respond(
                message, channel=exchange, principal=principal, headers=headers
            )
            await exchange.reply(payload, status)
        except asyncio.CancelledError:
            if not gone:
                raise
            log.info(
                "request %r (%s) cancelled: the client closed the connection", message.id, message.method
            )
            task.uncancel()
        finally:
            watcher.cancel()

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b""
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _error(send: Send, rid: jsonrpc.RequestId | None, exc: ProtocolError) -> None:
    status = (
        exc.http_status
        if exc.http_status != 200
        else (400 if isinstance(exc, (ParseError, InvalidRequest)) else 200)
    )
    await send({"type": "http.response.start", "status": status, "headers": _JSON_HEADERS})
    await send({"type": "http.response.body", "body": jsonrpc.encode_error(rid, exc)})


async def _plain(
    send: Send, status: int, text: bytes, *, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
