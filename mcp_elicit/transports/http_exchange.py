"""Streamable HTTP, server side: one request's response (JSON, or SSE once the handler
sends something first) and the small HTTP helpers every route shares.

Rules: a JSON body always carries Content-Length; an SSE response carries
``X-Accel-Buffering: no`` and flushes each event as it is sent; an error response has
the status its error names (a 429 with ``Retry-After`` when its data says when), and no
``id`` when the request's could not be read. A header the server acts on (``Host``, ``Origin``, ``Content-Type``, the ``Mcp-*`` ones...) sent
twice with different values is refused, since an intermediary may have acted on the
other one; ``Accept`` or ``Content-Encoding`` sent twice counts as one list. A response that stays silent a long
time (a person answering, a page being completed) can be kept alive with SSE comments,
which proxies see as traffic; once streaming, every write of a response goes through one
lock, so a keep-alive and the handler's own events never interleave mid-message or race
the response head.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final

import orjson

from mcp_elicit.errors import HeaderMismatch, InvalidRequest, ParseError, ProtocolError, TransportError
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.headers import OWS
from mcp_elicit.wire.sse import KEEPALIVE, encode_event

__all__ = [
    "ASGIApp",
    "Exchange",
    "ListenExchange",
    "Receive",
    "SSE_HEADERS",
    "Scope",
    "Send",
    "SessionChannel",
    "Watchlist",
    "acceptable",
    "accepted",
    "error_response",
    "host_only",
    "json_headers",
    "keep_alive",
    "media_type",
    "network_attributes",
    "no_answer_start",
    "plain",
    "repeated_headers",
    "retry_after",
    "route_path",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_JSON_TYPE: Final = (b"content-type", b"application/json")


def json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    """A JSON body's headers; a Content-Length spares the server chunked framing."""
    return [_JSON_TYPE, (b"content-length", b"%d" % len(body))]


SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


def no_answer_start(sse_ok: bool) -> dict[str, Any]:
    """The response head for a request that gets no JSON-RPC response (the client cancelled
    it) before anything was streamed: an event stream with no event, since a POSTed
    request's response is an event stream or JSON; 204 only for a client that takes no
    event stream (its ``Accept`` left it out: no answer fits it)."""
    if sse_ok:
        return {"type": "http.response.start", "status": 200, "headers": SSE_HEADERS}
    return {"type": "http.response.start", "status": 204, "headers": []}


def route_path(scope: Scope) -> str:
    """The request's path inside this app. An app mounted under a prefix (Starlette's
    ``Mount``, ``uvicorn --root-path``) is told the prefix in ``root_path``; current ASGI
    servers also leave it at the start of ``path``, where it is taken off here. So the
    URL the client used is always ``root_path + route_path(scope)``."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
        return path[len(root) :]
    return path


def network_attributes(scope: Scope) -> dict[str, str | int]:
    """OpenTelemetry's attributes of the connection a request came on: TCP, its HTTP
    version, and the client's address and port (as the ASGI server saw them)."""
    out: dict[str, str | int] = {"network.transport": "tcp", "network.protocol.name": "http"}
    version = scope.get("http_version")
    if isinstance(version, str):
        out["network.protocol.version"] = version
    client = scope.get("client")
    if client:
        out["client.address"], out["client.port"] = str(client[0]), int(client[1])
    return out


#: Headers read as one value: a second, different one is refused (so are repeated ``mcp-*``).
#: ``Authorization`` and ``DPoP`` are not here: the authentication refuses any repeat of
#: them itself, with the challenge (``WWW-Authenticate``) a client acts on.
_ONE_VALUE: Final = frozenset({"host", "origin", "content-type", "last-event-id"})
#: Headers that are lists the server reads whole: each line is joined into one value (in
#: order), never the last line alone (a second ``Content-Encoding: identity`` line does not
#: hide the first's ``gzip``).
_LISTS: Final = frozenset({"accept", "content-encoding"})


def repeated_headers(raw: Iterable[tuple[bytes, bytes]], headers: dict[str, str]) -> ProtocolError | None:
    """For a request whose header names repeat (``headers`` has fewer entries than ``raw``):
    the error when one read as a single value comes twice with different values, else
    None, with the lines of each list (``Accept``, ``Content-Encoding``) joined into
    ``headers`` as one list."""
    first: dict[str, str] = {}
    lists: dict[str, list[str]] = {}  # joined once at the end: joining line by line is quadratic
    for key, value in raw:
        name, text = key.decode("latin-1").lower(), value.decode("latin-1")
        if name in _LISTS:
            lists.setdefault(name, []).append(text)
            continue
        seen = first.get(name)
        if seen is None:
            first[name] = text
        elif seen.strip(" \t") != text.strip(" \t") and (name in _ONE_VALUE or name.startswith("mcp-")):
            shown = "-".join(part.capitalize() for part in name.split("-"))
            problem = (
                f"Bad request: the {shown} header is sent more than once, with different values; send it once"
            )
            return HeaderMismatch(problem) if name.startswith("mcp-") else InvalidRequest(problem)
    for name, lines in lists.items():
        if len(lines) > 1:
            headers[name] = ", ".join(lines)
    return None


@functools.lru_cache(maxsize=256)
def host_only(value: str) -> str:
    """The name in a ``Host`` (or an allow-list entry), lower-cased and without its port.
    A value whose port is not digits comes back whole, so it matches no allowed name:
    the rest of a Host is repeated in challenges and documents, never unchecked."""
    value = value.strip(OWS)  # HTTP's white space only: "localhost\xa0" is no loopback name
    value = value.lower() if value.isascii() else value  # "\u212a".lower() is an ASCII "k"
    if value.startswith("["):
        end = value.find("]")
        name, rest = (value[: end + 1], value[end + 1 :]) if end >= 0 else (value, "")
    elif value.count(":") == 1:
        name, rest = value.split(":")
        rest = ":" + rest
    else:
        return value
    return name if not rest or (rest[0] == ":" and _is_port(rest[1:])) else value


def _is_port(text: str) -> bool:
    return not text or (len(text) <= 5 and text.isascii() and text.isdigit())


@functools.lru_cache(maxsize=64)
def media_type(content_type: str) -> str:
    """The media type a ``Content-Type`` names, lower-cased, without its parameters."""
    return content_type.split(";", 1)[0].strip().lower()


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
    (or by a keep-alive, see :meth:`ping`); SSE throughout for a client that does not
    accept JSON (``json_ok`` false)."""

    __slots__ = ("_lock", "closed", "gone", "json_ok", "send", "sse_ok", "streaming")

    def __init__(self, send: Send, sse_ok: bool, json_ok: bool = True) -> None:
        self.send = send
        self.sse_ok = sse_ok
        self.json_ok = json_ok
        self.streaming = False
        self.closed = False
        #: The client went away and the request was cancelled for it (no answer is due).
        self.gone = False
        self._lock: asyncio.Lock | None = None  # made by the first streamed write

    async def close_stream(self) -> bool:
        """End the response before the answer, for the client to resume: only a session's
        stream can (see ``http_streams``); here, False."""
        return False

    def gone_reason(self) -> str:
        """Why the request was given up once ``gone``, as the log says it."""
        return "the client closed the connection"

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
        await self.send(no_answer_start(self.sse_ok))
        await self.send({"type": "http.response.body", "body": b""})

    def reply(self, payload: bytes, status: int = 200) -> Awaitable[None]:
        """Answer with ``payload``: await what this hands back. (A plain method: a JSON
        answer with nothing streamed before, nearly every one, costs one coroutine.)"""
        if self.closed:
            return _ready()
        self.closed = True
        if self._lock is None and (self.json_ok or status != 200):  # an HTTP error status stays JSON
            return self._send_json(payload, status)
        return self._reply_locked(payload, status)

    async def _reply_locked(self, payload: bytes, status: int) -> None:
        """``reply`` once something was streamed, or may be, or the client takes SSE only."""
        as_event = not self.json_ok and status == 200
        async with self._guard():
            if self.streaming or as_event:
                await self._start_stream()
                await self.send(
                    {"type": "http.response.body", "body": encode_event(payload), "more_body": False}
                )
                return
        await self._send_json(payload, status)

    async def _send_json(self, payload: bytes, status: int) -> None:
        send = self.send
        headers = [_JSON_TYPE, (b"content-length", b"%d" % len(payload))]  # json_headers, without its call
        if status == 429:
            headers += retry_after(payload)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


async def _ready() -> None:
    """Nothing to do (an answer to an exchange already closed)."""


async def error_response(
    send: Send,
    rid: jsonrpc.RequestId | None,
    exc: ProtocolError,
    *,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    status = (
        exc.http_status
        if exc.http_status != 200
        else (400 if isinstance(exc, (ParseError, InvalidRequest)) else 200)
    )
    body = jsonrpc.encode_error(rid, exc)
    headers = json_headers(body) + (retry_after(body) if status == 429 else []) + (extra or [])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def retry_after(payload: bytes) -> list[tuple[bytes, bytes]]:
    """A 429 error's Retry-After header, from its ``data.retryAfter`` (whole seconds, as
    a rate limit refusal says); none when it has no such value."""
    try:
        after = orjson.loads(payload)["error"]["data"]["retryAfter"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return []
    if isinstance(after, int) and not isinstance(after, bool) and after >= 0:
        return [(b"retry-after", b"%d" % after)]
    return []


class ListenExchange(Exchange):
    """A ``subscriptions/listen`` request's response: an ``Exchange`` naming the app that
    carries it (``transport``), whose stop ends the subscription (``server.lifecycle``)."""

    __slots__ = ("transport",)

    def __init__(self, send: Send, sse_ok: bool, json_ok: bool, *, transport: object) -> None:
        super().__init__(send, sse_ok, json_ok)
        self.transport = transport


async def accepted(send: Send) -> None:
    await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def plain(
    send: Send, status: int, text: bytes, *, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})


class Watchlist:
    """Requests running user code, to be watched for a disconnect once they run long.

    One timer for the whole app rather than one per request (a timer per request cost
    more than the rest of the transport's bookkeeping): every ``period`` seconds a tick
    starts the watch of each request that was already running at the previous tick, so
    a request is watched after it has run between one and two periods. The timer runs
    only while some request is registered, in a context of its own (not that of the
    request that started it, which it would keep while the app stays busy)."""

    __slots__ = ("_loop", "_old", "_timer", "_young", "period")

    def __init__(self, period: float) -> None:
        self.period = period
        self._young: set[Callable[[], object]] = set()
        self._old: set[Callable[[], object]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, start: Callable[[], object], loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Register a running request; ``start`` begins its watch. ``loop``: the running one,
        when the caller has it at hand (asking for it costs a system call on Python 3.11)."""
        if loop is None:
            loop = asyncio.get_running_loop()
        if loop is not self._loop:  # first use, or a new event loop: the old one's timer is dead
            self._loop, self._timer = loop, None
            self._young, self._old = set(), set()
        self._young.add(start)
        if self._timer is None:  # in a context of its own: the request's would live as long
            self._timer = loop.call_later(self.period, self._tick, context=contextvars.Context())

    def __contains__(self, start: Callable[[], object]) -> bool:
        """Whether ``start`` is registered: added, neither discarded nor called yet."""
        return start in self._young or start in self._old

    def discard(self, start: Callable[[], object]) -> None:
        """The request is over."""
        self._young.discard(start)
        self._old.discard(start)

    def _tick(self) -> None:
        due, self._old, self._young = self._old, self._young, set()
        for start in due:
            start()
        loop = self._loop
        self._timer = (
            loop.call_later(self.period, self._tick, context=contextvars.Context())
            if self._old and loop is not None
            else None
        )


async def keep_alive(exchange: Exchange, period: float) -> None:
    """An SSE comment on ``exchange`` every ``period`` seconds, until it is over."""
    while True:
        await asyncio.sleep(period)
        if not await exchange.ping():
            return
