"""Streamable HTTP, client side: one request (a POST, or the GET of an event stream) and
what its response delivers, read in a task of its own. ``http_client`` makes them.

Rules:

* A JSON answer is one message; an SSE answer is read event by event (comments and empty
  priming events skipped) until the stream ends; either way the exchange ends with
  ``Ended`` carrying the status, a non-JSON-RPC body, the SSE ``id``/``retry`` (for
  resuming); a 404 naming a session ends it whatever its body (``session_gone``). A broken
  connection ends it with a reason: a ``TransportError`` a person can act on. ``status``
  is the response's HTTP status as soon as it starts (a JSON-RPC error's 503, say).
* Reading happens in a task per exchange feeding a queue, so a wait for the next message
  can be abandoned and resumed; closing an exchange closes its response (on 2026-07-28
  that cancels the request on the server). A response already in is given a moment
  (``_GRACE``) to end on its own, so its connection goes back to the pool. A ``receive``
  waiting when its exchange (or its transport) closes ends then, with a ``TransportError``.
* A malformed response naming the id of the request sent fails that request at once, not
  at its timeout, and so does, on a request's stream or as its 2xx JSON body, what is no JSON
  object at all (cut short, a lone surrogate escape, an array): it may be the answer, and
  cannot be anything else the server may send there; so does a response there to any id
  but the request's. Anything else that is not JSON-RPC is logged and skipped. A server's
  request that is not valid JSON-RPC, but whose id can be read, is answered -32600 (by the
  transport, ``HttpTransport.answer_unreadable``); on the stream of a request sent at a
  modern revision none is: that revision's client POSTs no responses (its servers send
  no requests), so it is logged and skipped.
* A JSON body, and each SSE line and event, is capped at 16 MiB; a response over the cap
  fails its request with a reason naming the limit. An SSE stream is read on only while
  fewer than 256 messages wait for the client: a server that sends faster than the client
  handles waits, rather than the client holding all it sent. A response compressed though none
  was asked for fails its request unread, naming the encoding.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

import httpx

from mcp_elicit.client.reaping import reap
from mcp_elicit.client.transport import (
    Ended,
    QueuedExchange,
    invalid_request_reply,
    malformed_reply,
    message_json,
    session_gone,
    unreadable_reply,
)
from mcp_elicit.command_redaction import header_secrets, redact_secrets, url_secrets
from mcp_elicit.errors import AuthorizationError, ParseError, ProtocolError, ProtocolViolation, TransportError
from mcp_elicit.log_labels import peer_text
from mcp_elicit.telemetry import redact_urls
from mcp_elicit.transports.http_documents import read_capped
from mcp_elicit.transports.http_redirects import MARK, compressed
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.sse import EventDecoder

if TYPE_CHECKING:
    from mcp_elicit.transports.http_client import HttpTransport

__all__ = ["HttpExchange", "describe"]

log = logging.getLogger("mcp_elicit.http_client")

_MAX_BODY: Final = 16 * 1024 * 1024
_SHOWN_HEADER: Final = 200  # what an error quotes of a header (a challenge, a Retry-After)
#: How long a response already in may take to end on its own when its exchange closes.
_GRACE: Final = 0.25
#: How many messages may wait for the client before the stream is read on: a server that
#: writes faster than the client handles what it sends waits (TCP holds the rest).
_BACKLOG: Final = 256


class HttpExchange(QueuedExchange):
    """One HTTP request and what its response delivers."""

    def __init__(
        self,
        owner: HttpTransport,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        *,
        rid: object = None,
        modern: bool = False,
    ) -> None:
        self._owner = owner
        self._rid = rid  # the id of the request sent, whose malformed response fails it
        self._modern = modern  # sent at a modern revision: no response goes back on it
        self._sent_with = headers  # whose session headers answer an unreadable request
        self._method = method
        super().__init__()
        self._answered = False
        #: What ``aclose`` put for a ``receive`` (not how the response ended: ``refusal``).
        self._closing: Ended | None = None
        self._room = asyncio.Event()  # set as the client takes a message from the backlog
        self.headers: dict[str, str] = {}
        #: The response's HTTP status, once it has started.
        self.status: int | None = None
        #: Set once the response has started (or failed); ``streaming`` says whether it is SSE.
        self.started = asyncio.Event()
        self.streaming = False
        self._task = asyncio.ensure_future(self._pump(headers, content))

    async def receive(self) -> jsonrpc.Message | Ended:
        item = await super().receive()
        self._room.set()
        return item

    async def _backlog_taken(self) -> None:
        """Wait while the backlog is full (the client has not taken what arrived)."""
        while self._queue.qsize() >= _BACKLOG:
            self._room.clear()
            await self._room.wait()

    async def aclose(self, *, why: str = "its exchange was closed") -> None:
        """Stop reading the response; a ``receive`` waiting (or to come) then ends, with a
        ``TransportError`` saying ``why`` unless the response had ended by itself."""
        self._owner.forget(self)
        try:
            if not self._task.done() and self._answered:
                # The response is in: let the stream end on its own (the connection then goes
                # back to the pool) rather than cutting it, unless the server keeps it open.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_GRACE):
                        await asyncio.shield(self._task)
        finally:  # a close its caller cancels meanwhile still stops the response
            try:
                await reap(self._task)
            finally:
                self._end(why)

    def _end(self, why: str) -> None:
        """After the pump: an ``Ended`` after what it put, so that no ``receive`` waits for
        ever (one that comes after the pump's own ``Ended`` is never read)."""
        if self._final is None:
            reason = f"the request to {self._owner.where} ended before the server's answer came: {why}"
            self._closing = Ended(self.status, reason=reason, error=TransportError(reason))
            self._queue.put_nowait(self._closing)

    def refusal(self) -> Ended:
        """How a request that opened no stream ended (a GET refused): what its response
        said, once it is over."""
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, Ended) and item is not self._closing:
                return item
        return Ended(reason=f"{self._owner.where} did not answer the GET within the connect timeout")

    def _put(self, message: jsonrpc.Message) -> None:
        if isinstance(message, jsonrpc.Response | jsonrpc.ErrorResponse):
            self._answered = True
        if self._owner.trace is not None:
            self._owner.trace("receive", message_json(message))
        self._queue.put_nowait(message)

    async def _pump(self, headers: dict[str, str], content: bytes | None) -> None:
        url, shown = self._owner.url, self._owner.where
        status: int | None = None
        decoder = EventDecoder()
        try:
            async with self._owner.client.stream(
                self._method, url, headers=_utf8(headers), content=content, extensions={MARK: self._owner}
            ) as response:
                status = self.status = response.status_code
                self.headers = {k.lower(): v for k, v in response.headers.items()}
                coding = compressed(response)
                if coding is not None:
                    self._queue.put_nowait(
                        Ended(
                            status,
                            reason=f"{shown} sent a response compressed ({coding}), though this client "
                            "asks for none (Accept-Encoding: identity); it was not read",
                        )
                    )
                    return
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "text/event-stream" and status < 300:
                    self.streaming = True
                    self.started.set()
                    async for chunk in response.aiter_bytes():
                        for event in decoder.feed(chunk):
                            if event.data.strip():
                                self._decode(event.data)
                        await self._backlog_taken()
                    ended = "" if self._answered else "its event stream ended before the response"
                    self._queue.put_nowait(
                        Ended(
                            status,
                            last_event_id=decoder.last_event_id,
                            retry_ms=decoder.retry,
                            detail=ended,
                            broken=bool(ended),
                        )
                    )
                    return
                body = await read_capped(response.aiter_bytes(), _MAX_BODY)
            # The response is closed (its connection back in the pool) before delivery.
            text = body.decode("utf-8", errors="replace")
            is_json = kind == "application/json" or kind.endswith("+json") or not kind
            if (gone := session_gone(headers, status, text, is_json)) is not None:
                self._queue.put_nowait(gone)
            elif body.strip() and is_json and self._decode(body, answer=status < 300 and bool(kind)):
                self._queue.put_nowait(Ended(status))
            else:
                self._queue.put_nowait(
                    Ended(
                        status,
                        body=_unechoed(text.strip(), url, response.request.headers.items()),
                        detail=_wrong(
                            status, self.headers, kind, body, credentials=self._credentials(headers)
                        ),
                    )
                )
        except asyncio.CancelledError:
            raise
        except AuthorizationError as exc:
            self._queue.put_nowait(Ended(status, reason=f"authorization failed: {exc}", error=exc))
        except TransportError as exc:  # a redirect refused
            self._queue.put_nowait(Ended(status, reason=str(exc), error=exc))
        except httpx.ConnectTimeout:  # the host took no connection (a firewall drops it, a full queue)
            self._queue.put_nowait(
                Ended(
                    reason=f"cannot connect to {shown}: no connection within the connect timeout "
                    f"({self._owner.connect_timeout:g} s); is the server reachable from here?"
                )
            )
        except httpx.ConnectError as exc:
            self._queue.put_nowait(
                Ended(reason=f"cannot connect to {shown} ({describe(exc)}); is the server running there?")
            )
        except httpx.PoolTimeout:  # never sent: every connection the client may open is in use
            waited = self._owner.client.timeout.pool
            self._queue.put_nowait(
                Ended(
                    reason=f"the request was not sent: no connection to {shown} came free within "
                    f"the HTTP client's pool timeout ({waited or 0:g} s), every one it may open "
                    "being in use; wait for requests to end, or give the client more connections"
                )
            )
        except httpx.ProxyError as exc:  # never sent: the proxy refused or failed the tunnel
            self._queue.put_nowait(
                Ended(
                    reason=f"cannot connect to {shown} through the proxy ({describe(exc)}); check "
                    "HTTPS_PROXY, HTTP_PROXY and ALL_PROXY, or list the host in NO_PROXY"
                )
            )
        except httpx.TooManyRedirects:
            limit = self._owner.client.max_redirects
            self._queue.put_nowait(
                Ended(reason=f"{shown} redirected more than {limit} times in a row (a redirect loop?)")
            )
        except ValueError as exc:  # a size cap (of a body, an SSE line or event) was hit
            self._queue.put_nowait(Ended(status, reason=f"the response from {shown} was refused: {exc}"))
        except (httpx.HTTPError, OSError) as exc:
            self._queue.put_nowait(
                Ended(
                    status,
                    last_event_id=decoder.last_event_id,
                    retry_ms=decoder.retry,
                    reason=f"the connection to {shown} broke ({describe(exc)})",
                    broken=(status is None or status < 300) and not self._answered,
                )
            )
        except Exception as exc:  # a bug below us (an auth flow, say): fail the request, never hang it
            log.exception("the request to %s failed", shown)
            self._queue.put_nowait(Ended(status, reason=f"the request to {shown} failed ({describe(exc)})"))
        finally:
            self.started.set()

    def _credentials(self, sent: Mapping[str, str]) -> bool:
        """Whether the request went with credentials: its own ``Authorization`` header, or
        the transport's (or its client's) ``auth``."""
        given = self._owner.auth is not None or self._owner.client.auth is not None
        return given or any(k.lower() == "authorization" for k in sent)

    def _decode(self, data: str | bytes, *, answer: bool = True) -> bool:
        """Deliver the message ``data`` holds; False if there is none. ``answer``: ``data``
        is offered as the request's answer (an SSE event, a 2xx body declared JSON), which
        fails the request if it is not one; an error page (a 500's body) is not."""
        try:
            message = jsonrpc.decode(data)
        except ProtocolError as exc:
            ended = malformed_reply(exc, self._owner.where) if exc.request_id == self._rid else None
            if ended is None and answer and isinstance(self._rid, str | int) and _not_an_object(data, exc):
                # On a request's own stream (or as its body), it may well be the answer: no
                # notification or request of the server's is anything but an object.
                ended = unreadable_reply(self._rid, exc, self._owner.where)
            if ended is not None:
                self._queue.put_nowait(ended)  # the request fails now, not at its timeout
                return True
            log.warning(
                "%s sent something that is not a JSON-RPC message (%s); ignored",
                self._owner.where,
                peer_text(str(exc)),  # it may quote what the server sent: cut, inert
            )
            reply = None if self._modern else invalid_request_reply(exc)
            if reply is not None:  # a request we cannot read, but can answer: it gets -32600
                self._owner.answer_unreadable(reply, self._sent_with, self.headers)
            return False
        if (
            answer
            and isinstance(message, jsonrpc.Response | jsonrpc.ErrorResponse)
            and isinstance(self._rid, str | int)
            and message.id is not None
            and message.id != self._rid
        ):
            self._queue.put_nowait(self._misdirected(message))  # not a wait for the right one
            return True
        self._put(message)
        return True

    def _misdirected(self, message: jsonrpc.Response | jsonrpc.ErrorResponse) -> Ended:
        """How a request ends that got, on its own stream or as its body, a response to an
        id not its own."""
        if self._owner.trace is not None:
            self._owner.trace("receive", message_json(message))
        what = f"{self._owner.where} answered request {self._rid!r} with a response to id {message.id!r}"
        return Ended(reason=what, error=ProtocolViolation(f"{what}, which is not its id"))


def _wrong(status: int, headers: Mapping[str, str], kind: str, body: bytes, *, credentials: bool) -> str:
    """What was wrong with an answer (``headers`` named in lower case) that held no
    JSON-RPC response, for a person; empty if the status says all. ``credentials``: the
    request carried some (an ``Authorization`` header, an ``auth``)."""
    if status in (401, 403):
        challenge = redact_urls(headers.get("www-authenticate", ""))[:_SHOWN_HEADER]  # redacted, then cut
        said = f"WWW-Authenticate: {challenge}" if challenge else "no WWW-Authenticate challenge"
        if credentials:
            return f"{said}; the credentials sent were refused"
        how = "sign in with auth=OAuth(...), or " if challenge else ""
        return f"{said}; {how}pass a token with headers={{'Authorization': ...}}"
    if (wait := headers.get("retry-after")) is not None:
        # quoted, not promised either way: the client decides (a task's polls go on)
        return f"Retry-After: {wait[:_SHOWN_HEADER]}"
    if status == 202:
        return "202 Accepted answers a notification; a request is owed a JSON-RPC response"
    if 200 <= status < 300 and kind and kind != "application/json" and not kind.endswith("+json"):
        return f"Content-Type {kind}, neither application/json nor text/event-stream"
    if 200 <= status < 300 and not body.strip():
        return "an empty body"
    return ""


def _not_an_object(data: str | bytes, exc: ProtocolError) -> bool:
    """Whether ``data``, which failed to decode with ``exc``, is no JSON object at all (not
    JSON, or another JSON value): nothing in it can be read, an id least of all."""
    start = data.lstrip()[:1]
    return isinstance(exc, ParseError) or start not in ("{", b"{")


def _utf8(headers: Mapping[str, str]) -> httpx.Headers:
    """``headers`` as they go: each value as its UTF-8 bytes, as EventSource sends a
    ``Last-Event-ID`` of any text (httpx would encode a ``str`` as ASCII, failing). The
    others are ASCII already: the protocol's own, and the caller's fixed headers, checked
    when the transport was made."""
    return httpx.Headers(headers, encoding="utf-8")


def describe(exc: BaseException) -> str:
    """An exception as a reason names it: its type, and its message if it has one."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _unechoed(text: str, url: str, sent: Iterable[tuple[str, str]]) -> str:
    """A body that is no JSON-RPC message, for an error to quote, without the keys of the
    address's query (a 404 page echoing "Cannot POST /mcp?key=..."), nor those of any URL it
    holds: they are redacted wherever the address is shown (``redact_urls``); nor the values
    of the headers ``sent`` but the protocol's own (a debugging endpoint echoing
    "Authorization: Bearer ..."), the credential after a scheme alone too: as the command
    line hides what it was given (``command_redaction.redact_secrets``)."""
    return redact_urls(redact_secrets(text, [*url_secrets(url), *header_secrets(sent)]))
