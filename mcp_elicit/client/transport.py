"""The contract between the client and its transports (Streamable HTTP, stdio, in memory).

The client speaks JSON-RPC messages as decoded dicts; a transport moves them. One request
is one *exchange*: the transport sends it and hands back, one at a time, what arrives for
it (notifications and, on handshake-era HTTP, the server's own requests, then the
response), ending with ``Ended`` when nothing more will come. What arrives outside any
exchange (stdio's notifications and, on handshake revisions, the server's requests) goes to
the ``unsolicited`` callback given to ``open``.

Rules: ``Exchange.receive`` is safe to cancel (a timeout may abandon one wait and retry
it); ``aclose`` on an exchange abandons the request (on Streamable HTTP, closing the
response stream is the cancellation signal); ``gone`` says when the server can take
nothing more, even with no exchange open (a person answering a 2026-07-28 round); a transport never interprets the protocol
beyond routing responses by id, and reports a broken connection as ``TransportError`` with
a message a person can act on (or, in ``Ended.error``, the error itself). A malformed
response carrying the id of a request in flight (a ``result`` that is not an object, an
``error`` without an integer ``code``) ends that request at once with
:func:`malformed_reply`'s ``ProtocolViolation``, rather than leaving it to time out. A
server's request that is not valid JSON-RPC but whose id can be read is answered by the
transport with :func:`invalid_request_reply`'s -32600 (the client never sees it), so that
the server is not left waiting for an answer; but not at a modern revision
(:func:`speaks_modern`), where the client sends no JSON-RPC response at all (the revision's
servers send no requests): there it is logged and skipped, as a well-formed one is.

A transport's own work may wait for a person (signing in to the server, say): it does so
inside :func:`person_at_work`, and that time does not count against the timeout of the
client's requests, like an answerer's. The client opens every exchange inside
:func:`clocked`, which is how the work (and the tasks it starts) finds the clock to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from mcp_elicit.core.client import ThinkClock
from mcp_elicit.core.quoting import shown_text
from mcp_elicit.errors import (
    InvalidRequest,
    InvalidResponse,
    MCPElicitError,
    ProtocolError,
    ProtocolViolation,
)
from mcp_elicit.url_redaction import redact_urls
from mcp_elicit.wire.jsonrpc import ErrorResponse, Message, Notification, Request, Response, decode
from mcp_elicit.wire.meta import PROTOCOL_VERSION_META_KEY
from mcp_elicit.wire.versions import is_modern

__all__ = [
    "Ended",
    "Exchange",
    "QueuedExchange",
    "Trace",
    "Transport",
    "Unsolicited",
    "clocked",
    "invalid_request_reply",
    "malformed_reply",
    "message_json",
    "person_at_work",
    "session_gone",
    "speaks_modern",
    "thinking",
]

#: How much of a body that is no JSON-RPC message an error message quotes.
SAID_MAX: Final = 300

_CLOCK: ContextVar[ThinkClock | None] = ContextVar("mcp_elicit_think_clock", default=None)


@contextlib.contextmanager
def thinking(clock: ThinkClock) -> Iterator[None]:
    """Time spent in this block is a person's: ``clock`` counts it, and request budgets
    leave it out."""
    loop = asyncio.get_running_loop()
    clock.start(loop.time())
    try:
        yield
    finally:
        clock.stop(loop.time())


@contextlib.contextmanager
def clocked(clock: ThinkClock) -> Iterator[None]:
    """Exchanges opened in this block (and the tasks they start) stop ``clock`` for a
    person (see :func:`person_at_work`)."""
    token = _CLOCK.set(clock)
    try:
        yield
    finally:
        _CLOCK.reset(token)


@contextlib.contextmanager
def person_at_work() -> Iterator[None]:
    """A transport waits for a person in this block: the time does not count against the
    client's request timeouts (nothing happens outside a client's exchange)."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    with thinking(clock):
        yield


Unsolicited = Callable[[Message], Awaitable[None]]
#: Sees every message a transport sends or receives, as JSON (for logs and tests).
Trace = Callable[[Literal["send", "receive"], Mapping[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Ended:
    """An exchange is over: how it ended.

    ``status`` is the HTTP status (None off HTTP); ``body`` a response body that was not a
    JSON-RPC message (for error reports); ``last_event_id`` and ``retry_ms`` what an SSE
    stream said for resuming it; ``reason`` why it ended early (a closed connection, a
    process that exited); ``error`` the error to raise as such (a failed authorization);
    ``detail`` what was wrong with an HTTP answer that held no JSON-RPC response (its
    Content-Type, a 202, an authorization challenge or its absence, a Retry-After);
    ``broken`` that the connection broke before any response (a keep-alive connection
    closed under it, a reset), or that a 2xx response ended before the JSON-RPC response
    (its stream ended, its connection broke): the request was lost, not refused.
    """

    status: int | None = None
    body: str = ""
    last_event_id: str | None = None
    retry_ms: int | None = None
    reason: str | None = None
    error: MCPElicitError | None = None
    detail: str = ""
    broken: bool = False

    @property
    def said(self) -> str:
        """The body's words as an error message quotes them: its first ``SAID_MAX``
        characters, each a terminal could act on escaped (``shown_text``), "..." if cut; its
        URLs redacted before the cut (an HTTP body was already; another transport's may not be)."""
        body = redact_urls(self.body)
        return shown_text(body[:SAID_MAX]) + ("..." if len(body) > SAID_MAX else "")


class Exchange(Protocol):
    """What arrives for one request, in order."""

    @property
    def headers(self) -> Mapping[str, str]:
        """The response's headers, names in lower case (HTTP; empty elsewhere)."""
        ...

    async def receive(self) -> Message | Ended:
        """The next message for this request, or ``Ended`` (then forever ``Ended``)."""
        ...

    async def aclose(self) -> None: ...


class QueuedExchange:
    """An ``Exchange`` whose messages wait in a queue until ``receive`` takes them: its
    transport puts each message, then one ``Ended``, which every later ``receive`` returns."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Message | Ended] = asyncio.Queue()
        self._final: Ended | None = None

    async def receive(self) -> Message | Ended:
        if self._final is not None:
            return self._final
        item = await self._queue.get()
        if isinstance(item, Ended):
            self._final = item
        return item


class Transport(Protocol):
    """Moves messages between the client and one server."""

    #: True when requests travel as HTTP POSTs with mirrored ``Mcp-*`` headers.
    @property
    def http(self) -> bool: ...

    #: Where the server is, for messages: a URL or a command line.
    @property
    def where(self) -> str: ...

    #: OpenTelemetry's attributes of the connection (``network.transport``; over HTTP the
    #: protocol and ``server.address``/``server.port``); empty when there is no network.
    @property
    def network(self) -> Mapping[str, str | int]: ...

    async def open(self, unsolicited: Unsolicited) -> None:
        """Connect (or start the server process)."""
        ...

    async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> Exchange:
        """Send a request; what arrives for it comes through the exchange."""
        ...

    async def send(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        """Send a notification, or a response to a server's request."""
        ...

    async def listen(
        self, headers: Mapping[str, str], last_event_id: str | None = None
    ) -> Exchange | Ended | None:
        """Open the server's event stream (handshake-era HTTP GET), resuming after
        ``last_event_id`` when given; None when the transport has none, and how the GET
        ended when the server refused it (its status: 405 for no stream, 404 for a session
        that is gone, 400 for an event id it does not know)."""
        ...

    async def end_session(self, headers: Mapping[str, str]) -> None:
        """Tell the server a handshake-era session is over (HTTP DELETE); best effort."""
        ...

    async def aclose(self) -> None:
        """Disconnect (or stop the server process)."""
        ...

    async def gone(self) -> str:
        """Wait until the server is gone for good (a stdio server process exited); why,
        for a person. Never returns where the server may answer again (over HTTP each
        request connects anew; in memory the server is in this process). A transport
        written without it still works: the client then has nothing to watch while a person
        answers."""
        ...


def malformed_reply(exc: ProtocolError, server: str) -> Ended | None:
    """``Ended`` for the request that a malformed response (``exc``, an
    ``InvalidResponse`` naming a request id) answers; None for any other decoding error."""
    rid = exc.request_id
    if not isinstance(exc, InvalidResponse) or rid is None:
        return None
    return unreadable_reply(rid, exc, server)


def unreadable_reply(rid: str | int, exc: ProtocolError, server: str) -> Ended:
    """``Ended`` for request ``rid``, whose answer is malformed (``exc``): not JSON-RPC, or
    not JSON at all (then ``rid`` is the id its line or event begins with)."""
    return Ended(
        reason=f"{server} answered request {rid!r} with a malformed response",
        error=ProtocolViolation(
            f"{server} answered request {rid!r} with a malformed response: {exc.message}"
        ),
    )


def session_gone(sent_with: Mapping[str, str], status: int, body: str, is_json: bool) -> Ended | None:
    """How a request sent with the headers ``sent_with`` ended, if they name a session
    (``Mcp-Session-Id``) and the answer was 404 (else None), whatever its ``body``: the
    session is gone (the client opens a new one), and the JSON-RPC error the body holds, if
    any (servers send one, with the request's id or none), is the ``error`` to raise if the
    new session meets a 404 too, never the request's answer."""
    if status != 404 or not any(k.lower() == "mcp-session-id" for k in sent_with):
        return None
    error: ProtocolError | None = None
    if is_json and body.strip():
        with contextlib.suppress(ProtocolError):
            message = decode(body)
            if isinstance(message, ErrorResponse):
                error = ProtocolError.from_error(message.error)
    return Ended(404, body=body.strip(), error=error)


def invalid_request_reply(exc: ProtocolError) -> dict[str, Any] | None:
    """The -32600 error response owed to a server's request that is not valid JSON-RPC
    (``params`` not an object, ``method`` not a non-empty string, ``jsonrpc`` not "2.0")
    when its id could be read; None for anything else (a malformed response, no id), which
    has no one to answer."""
    rid = exc.request_id
    if not isinstance(exc, InvalidRequest) or isinstance(exc, InvalidResponse) or rid is None:
        return None
    return {"jsonrpc": "2.0", "id": rid, "error": exc.to_error()}


def speaks_modern(message: Mapping[str, Any]) -> bool:
    """Whether the client sent ``message`` at a modern revision (its ``_meta`` names one),
    where it writes requests and notifications only, never a response."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return isinstance(meta, Mapping) and is_modern(meta.get(PROTOCOL_VERSION_META_KEY))


def message_json(message: Message) -> dict[str, Any]:
    """A decoded message as the JSON object it came as."""
    if isinstance(message, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
    elif isinstance(message, Notification):
        out = {"jsonrpc": "2.0", "method": message.method}
    elif isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    else:
        assert isinstance(message, ErrorResponse)
        error: dict[str, Any] = {"jsonrpc": "2.0", "error": message.error}
        if message.id is not None:
            error["id"] = message.id
        return error
    if message.params is not None:
        out["params"] = message.params
    return out
