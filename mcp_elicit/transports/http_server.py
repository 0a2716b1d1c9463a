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
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any, Final

from mcp_elicit.errors import ConfigError, InvalidRequest, ParseError, ProtocolError, TransportError
from mcp_elicit.server.app import Server
from mcp_elicit.server.auth import Principal, TokenVerifier
from mcp_elicit.server.sessions import Session
from mcp_elicit.server.url_mode import PAGES_PATH
from mcp_elicit.transports.oauth_client import HttpTokenExchange
from mcp_elicit.transports.pages import pages_app
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.headers import VERSION_HEADER
from mcp_elicit.wire.sse import KEEPALIVE, encode_event

__all__ = ["StreamableHTTP", "LOOPBACK_HOSTS"]

log = logging.getLogger("mcp_elicit.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
_JSON_TYPE: Final = (b"content-type", b"application/json")


def _json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """A JSON body's headers; a Content-Length spares the server chunked framing."""
    return [_JSON_TYPE, (b"content-length", str(len(body)).encode())]


_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_RUNS_USER_CODE: Final = frozenset({"tools/call", "prompts/get", "resources/read", "completion/complete"})


@functools.lru_cache(maxsize=256)
def _host_only(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end >= 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@functools.lru_cache(maxsize=64)
def _acceptable(accept: str) -> tuple[bool, bool]:
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


class _SessionChannel:
    """The channel a handshake-session request gets: the exchange, plus ``send``."""

    __slots__ = ("exchange",)

    def __init__(self, exchange: _Exchange) -> None:
        self.exchange = exchange

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.exchange.notify(method, params)

    async def send(self, message: bytes) -> None:
        await self.exchange.send_message(message)


class _Exchange:
    """One POST's response: JSON by default, switched to SSE by the first notification."""

    __slots__ = ("closed", "send", "sse_ok", "streaming")

    def __init__(self, send: Send, sse_ok: bool) -> None:
        self.send = send
        self.sse_ok = sse_ok
        self.streaming = False
        self.closed = False

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
        if not self.streaming:
            self.streaming = True
            await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        await self.send({"type": "http.response.body", "body": encode_event(data), "more_body": True})

    async def end(self) -> None:
        """Finish without a JSON-RPC response (the client cancelled the request)."""
        if self.closed:
            return
        self.closed = True
        if self.streaming:
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            await self.send({"type": "http.response.start", "status": 204, "headers": []})
            await self.send({"type": "http.response.body", "body": b""})

    async def reply(self, payload: bytes, status: int = 200) -> None:
        if self.closed:
            return
        self.closed = True
        if self.streaming:
            await self.send({"type": "http.response.body", "body": encode_event(payload), "more_body": False})
            return
        await self.send({"type": "http.response.start", "status": status, "headers": _json_headers(payload)})
        await self.send({"type": "http.response.body", "body": payload})


class _LearnedBase:
    """Where the pages are, learned from the (allow-listed) Host of MCP requests."""

    def __init__(self) -> None:
        self.base: str | None = None

    async def base_url(self) -> str:
        if self.base is None:
            raise ConfigError("the pages' address is not known yet: set Server(public_url=...)")
        return self.base


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
        keepalive: float = 15.0,
        watch_after: float = 0.05,
    ) -> None:
        self.server = server
        #: Seconds a request runs before its connection is watched for a disconnect.
        self.watch_after = watch_after
        #: Seconds between SSE comments on an idle session stream.
        self.keepalive = keepalive
        #: The hosted URL-mode pages, next to the MCP endpoint.
        self._pages = pages_app(server)
        self._learned = _LearnedBase()
        if server.url_mode.page_host is None:
            server.url_mode.page_host = self._learned
        if server.url_mode.token_exchange is None:
            server.url_mode.token_exchange = HttpTokenExchange()
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
        if path.startswith(PAGES_PATH + "/"):
            page_headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            refusal = self._check_origin(page_headers)
            if refusal is not None:
                await _plain(send, refusal[0], refusal[1].encode())
                return
            await self._pages(scope, receive, send)
            return
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
            self._learned.base = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
            await self._post(scope, headers, receive, send)
        elif method in ("GET", "DELETE") and "mcp-session-id" in headers:
            ok, principal = await self._authenticate(headers, send)
            if not ok:
                return
            if method == "GET":
                await self._listen(headers, principal, receive, send)
            else:
                await self._delete(headers, principal, send)
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
        json_ok, sse_ok = _acceptable(headers.get("accept", "*/*"))
        if not (sse_ok or json_ok):
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
        modern = isinstance(message, jsonrpc.Request) and not self.server.core.is_handshake_request(
            message, headers
        )
        sid = headers.get("mcp-session-id")
        if sid is not None and not modern:
            await self._in_session(sid, message, headers, principal, sse_ok, receive, send)
            return
        if isinstance(message, jsonrpc.Notification):
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        if not isinstance(message, jsonrpc.Request):
            await _error(
                send, None, InvalidRequest("Invalid request: a client may not POST JSON-RPC responses here")
            )
            return
        if message.method == "initialize" and not modern:
            payload, session = self.server.open_session(message, principal)
            extra = [(b"mcp-session-id", session.id.encode("ascii"))] if session is not None else []
            await send(
                {"type": "http.response.start", "status": 200, "headers": [*_json_headers(payload), *extra]}
            )
            await send({"type": "http.response.body", "body": payload})
            return
        exchange = _Exchange(send, sse_ok)
        if message.method in _RUNS_USER_CODE:
            await self._run_watched(
                exchange,
                message,
                receive,
                self.server.respond(message, channel=exchange, principal=principal, headers=headers),
            )
        else:
            payload, status = await self.server.respond(
                message, channel=exchange, principal=principal, headers=headers
            )
            await exchange.reply(payload, status)

    # ---- handshake sessions (2025-11-25 and earlier) ----------------------------------

    def _session(self, sid: str, principal: Principal | None) -> Session | None:
        return self.server.sessions.get(sid, principal.subject if principal else None)

    async def _in_session(
        self,
        sid: str,
        message: jsonrpc.Message,
        headers: Mapping[str, str],
        principal: Principal | None,
        sse_ok: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        rid = message.id if isinstance(message, jsonrpc.Request) else None
        session = self._session(sid, principal)
        if session is None:
            await _error(
                send, rid, InvalidRequest("Session not found: initialize a new session", http_status=404)
            )
            return
        version = headers.get(VERSION_HEADER)
        if version is not None and version.strip() != session.version:
            err = InvalidRequest(
                f"Bad request: MCP-Protocol-Version {version.strip()!r} is not this session's {session.version!r}",
                http_status=400,
            )
            await _error(send, rid, err)
            return
        if isinstance(message, jsonrpc.Notification):
            if message.method == "notifications/initialized":
                session.initialized = True
            elif message.method == "notifications/cancelled":
                session.cancel((message.params or {}).get("requestId"))
            await _accepted(send)
            return
        if isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
            session.resolve(message)
            await _accepted(send)
            return
        exchange = _Exchange(send, sse_ok)
        channel = _SessionChannel(exchange)
        await self._run_watched(
            exchange,
            message,
            receive,
            self._session_reply(message, session, channel, principal),
        )

    async def _session_reply(
        self,
        message: jsonrpc.Request,
        session: Session,
        channel: _SessionChannel,
        principal: Principal | None,
    ) -> tuple[bytes | None, int]:
        return await self.server.respond_in_session(
            message, session, channel=channel, principal=principal
        ), 200

    async def _listen(
        self, headers: Mapping[str, str], principal: Principal | None, receive: Receive, send: Send
    ) -> None:
        """The standalone SSE stream of a session: completions, resource updates."""
        session = self._session(headers["mcp-session-id"], principal)
        if session is None:
            await _error(
                send, None, InvalidRequest("Session not found: initialize a new session", http_status=404)
            )
            return
        if not _acceptable(headers.get("accept", "*/*"))[1]:
            await _error(
                send, None, InvalidRequest("Not Acceptable: accept text/event-stream", http_status=406)
            )
            return
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        task = asyncio.current_task()
        assert task is not None

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            task.cancel()

        watcher = asyncio.ensure_future(watch())
        try:
            while not session.closed:
                data = await session.next_pushed(self.keepalive)
                if session.closed:
                    break
                await send(
                    {
                        "type": "http.response.body",
                        "body": KEEPALIVE if data is None else encode_event(data),
                        "more_body": True,
                    }
                )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if watcher.done():
                task.uncancel()
            else:
                raise
        finally:
            watcher.cancel()

    async def _delete(self, headers: Mapping[str, str], principal: Principal | None, send: Send) -> None:
        sid = headers["mcp-session-id"]
        if self._session(sid, principal) is None:
            await _error(send, None, InvalidRequest("Session not found", http_status=404))
            return
        self.server.sessions.close(sid)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _run_watched(
        self,
        exchange: _Exchange,
        message: jsonrpc.Request,
        receive: Receive,
        work: Awaitable[tuple[bytes | None, int]],
    ) -> None:
        """Run a request that executes user code; a closed connection cancels it.

        The watch for the disconnect starts only once the request has run for
        ``watch_after`` seconds: most requests finish sooner, and a watching task per
        request would cost more than the MCP work itself."""
        task = asyncio.current_task()
        assert task is not None
        gone = False
        watcher: asyncio.Future[None] | None = None

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

        def start_watching() -> None:
            nonlocal watcher
            if not exchange.closed:
                watcher = asyncio.ensure_future(watch())

        timer = asyncio.get_running_loop().call_later(self.watch_after, start_watching)
        try:
            payload, status = await work
            if payload is None:
                await exchange.end()
            else:
                await exchange.reply(payload, status)
        except asyncio.CancelledError:
            if not gone:
                raise
            log.info(
                "request %r (%s) cancelled: the client closed the connection", message.id, message.method
            )
            task.uncancel()
        finally:
            timer.cancel()
            if watcher is not None:
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
                self.server.sessions.close_all()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _error(send: Send, rid: jsonrpc.RequestId | None, exc: ProtocolError) -> None:
    status = (
        exc.http_status
        if exc.http_status != 200
        else (400 if isinstance(exc, (ParseError, InvalidRequest)) else 200)
    )
    body = jsonrpc.encode_error(rid, exc)
    await send({"type": "http.response.start", "status": status, "headers": _json_headers(body)})
    await send({"type": "http.response.body", "body": body})


async def _accepted(send: Send) -> None:
    await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def _plain(
    send: Send, status: int, text: bytes, *, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
