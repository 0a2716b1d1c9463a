"""What both revisions share on one connection: sending a request and collecting what
arrives for it within its time budget, dispatching notifications, and handing what the
server asks to the answerer and the callbacks (``client.inputs``).

Rules:

* A request's timeout counts network time only: every wait on the transport is bounded by
  what is left of the budget, and time an answerer spends (a person thinking) is added
  back, even when it runs concurrently (a server request on another stream).
* What the server asks (elicitation, sampling, roots) is answered by ``Inputs``
  (``client.inputs``), which keeps its own rules; ``Inputs`` is importable from here too.
* Notifications go to the ``on_notification`` callback; a failing callback is logged, not
  fatal.
* A paginated list is followed to its end; a page without its list, a cursor given
  again (a server loop), one that is not a string, or more than ``MAX_PAGES`` (1000)
  pages is a ``ProtocolViolation``. An empty ``nextCursor`` is a cursor at 2026-07-28 (the spec
  forbids taking it for the end), the end before it.
* A request abandoned (timeout, or the caller cancelled it) is closed; over stdio and on
  handshake revisions the server is also sent ``notifications/cancelled``.
* A person answering while none of the call's requests is in flight (a 2026-07-28 round,
  a -32042's URL steps) is watched against the server going away (``while_present``):
  no exchange could say so. A server gone for good (``Transport.gone``: a stdio server
  process exited) withdraws the questions and fails the call with ``TransportError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp_elicit.client.answerers import SERVER_STOPPED
from mcp_elicit.client.inputs import Inputs
from mcp_elicit.client.interrupts import carrying, outcome
from mcp_elicit.client.transport import Ended, Exchange, Transport, clocked
from mcp_elicit.core.client import Budget, MessageBuilder, ThinkClock, ToolIndex
from mcp_elicit.core.client_inputs import ServerInfo
from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import ProtocolViolation, RequestTimeout, TransportError
from mcp_elicit.log_labels import method_label, request_label, request_where
from mcp_elicit.telemetry import Telemetry, notifying
from mcp_elicit.wire.jsonrpc import ErrorResponse, Message, Notification, Request, RequestId, Response
from mcp_elicit.wire.meta import PROTOCOL_VERSION_META_KEY
from mcp_elicit.wire.versions import LATEST_HANDSHAKE, is_modern

__all__ = [
    "Connection",
    "Inputs",
    "NotificationCallback",
    "NotificationHandler",
    "Reply",
    "ServerRequestHandler",
    "list_pages",
    "withdraw",
]

log = logging.getLogger("mcp_elicit.client")

NotificationCallback = Callable[[str, Mapping[str, Any]], Awaitable[None] | None]
#: Answers a server's own request (handshake revisions) that arrived within an exchange
#: (given too: its response's headers were in before the request).
ServerRequestHandler = Callable[[Request, Exchange], Awaitable[None]]
#: Takes the notifications that arrive on a request's own stream (default: ``notify``).
NotificationHandler = Callable[[Notification], Awaitable[None]]
Reply = Response | ErrorResponse | Ended

T = TypeVar("T")

#: The most pages a list is read to (a server naming a new cursor on every page never ends).
MAX_PAGES = 1000


@dataclass
class Connection:
    """One client's connection to one server, whatever its revision."""

    transport: Transport
    builder: MessageBuilder
    inputs: Inputs
    timeout: float
    clock: ThinkClock
    on_notification: NotificationCallback | None = None
    server: ServerInfo = field(default_factory=ServerInfo)
    tools: ToolIndex = field(default_factory=ToolIndex)
    #: OpenTelemetry (``mcp_elicit.telemetry``): a CLIENT span per request and per
    #: notification sent, its context in ``params._meta``; a SERVER span per notification
    #: received and per question answered; None when off.
    telemetry: Telemetry | None = None
    _background: set[asyncio.Task[None]] = field(default_factory=set)

    def budget(self, timeout: float | None = None) -> Budget:
        return Budget.begin(self.timeout if timeout is None else timeout, _now(), self.clock)

    async def receive(self, exchange: Exchange, budget: Budget) -> Message | Ended:
        """The next thing the exchange delivers, within the budget (think time excluded)."""
        while True:
            remaining = budget.remaining(_now())
            if remaining <= 0:
                raise RequestTimeout(
                    f"no answer from {self.server} within {budget.timeout:g} s "
                    "(network time; time spent answering questions does not count)"
                )
            try:
                async with asyncio.timeout(remaining):
                    return await exchange.receive()
            except TimeoutError:
                continue

    async def request(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        *,
        budget: Budget | None = None,
        on_request: ServerRequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        cancellable: bool = True,
    ) -> tuple[Reply, Exchange]:
        """Send one request and collect what arrives for it until its response (or the end
        of the exchange). The exchange is returned open for a caller that wants to resume
        it; close it with ``aclose``. ``cancellable=False``: an abandoned request is not
        followed by ``notifications/cancelled`` (the era probe, before any handshake)."""
        telemetry = self.telemetry
        if telemetry is None or not telemetry.active:
            return await self._request(message, headers, budget, on_request, on_notification, cancellable)
        params = message.get("params")
        method, rid = str(message.get("method")), message.get("id")
        version, session = _revision_and_session(headers)  # on 2025-11-25 (and stdio), the session's
        with telemetry.request(
            method,
            rid,
            params if isinstance(params, Mapping) else {},
            version=version,
            session=session,
            network=self.transport.network,
        ) as traced:
            message = telemetry.with_context(message)
            reply, exchange = await self._request(
                message, headers, budget, on_request, on_notification, cancellable
            )
            if traced is not None:
                if isinstance(reply, Response):
                    traced.read({"result": reply.result})
                elif isinstance(reply, ErrorResponse):
                    traced.read({"error": reply.error})
                else:
                    traced.failed("no_response", reply.reason or f"the exchange ended (HTTP {reply.status})")
            return reply, exchange

    async def _request(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        budget: Budget | None,
        on_request: ServerRequestHandler | None,
        on_notification: NotificationHandler | None,
        cancellable: bool,
    ) -> tuple[Reply, Exchange]:
        rid = message["id"]
        budget = budget or self.budget()
        with clocked(self.clock):  # a transport that waits for a person stops this clock
            exchange = await self.transport.exchange(message, headers)
        try:
            reply = await self.collect(exchange, rid, budget, on_request, on_notification, headers)
        except RequestTimeout:
            await exchange.aclose()
            if cancellable:
                await self.cancel_request(message, headers, "timed out")
            raise
        except asyncio.CancelledError:
            await exchange.aclose()
            if cancellable:
                self.cancel_soon(message, headers)
            raise
        except BaseException:
            await exchange.aclose()
            raise
        return reply, exchange

    async def cancel_request(
        self, message: Mapping[str, Any], headers: Mapping[str, str], reason: str
    ) -> None:
        """Tell the server a request is abandoned (``notifications/cancelled``), where that
        is how it is done: stdio, and handshake revisions. On modern HTTP closing the
        response stream already said it. Best effort; never for ``initialize``."""
        if message.get("method") == "initialize":
            return
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, Mapping) else None
        modern = isinstance(version, str) and is_modern(version)
        if modern and self.transport.http:
            return
        revision = str(version) if modern else LATEST_HANDSHAKE
        note = self.builder.notification(
            "notifications/cancelled", {"requestId": message["id"], "reason": reason}, revision
        )
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.send_notification(note, headers)

    def cancel_soon(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        """``cancel_request`` for a request its caller cancelled, in the background (the
        cancellation goes on at once)."""
        task = asyncio.ensure_future(self.cancel_request(message, headers, "cancelled by the caller"))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def send_notification(self, note: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        """Send one notification (as built by ``builder``), in its span, within the request
        timeout (a server that takes its POST and never answers fails it then)."""
        params = note.get("params")
        method = str(note.get("method"))
        version, session = _revision_and_session(headers)
        with notifying(
            self.telemetry,
            method,
            params,
            incoming=False,
            version=version,
            session=session,
            network=self.transport.network,
        ) as sent:
            try:
                async with asyncio.timeout(self.timeout):
                    await self.transport.send(note if sent is params else {**note, "params": sent}, headers)
            except TimeoutError:
                raise RequestTimeout(
                    f"{self.server} did not take {method} within {self.timeout:g} s (its sending got no answer)"
                ) from None

    def receiving(
        self, message: Notification, version: str | None, session: str | None = None
    ) -> contextlib.AbstractContextManager[object]:
        """Handle one notification from the server (``version``: the revision it came
        in; ``session``: the 2025-11-25 HTTP session's id) inside its span."""
        return notifying(
            self.telemetry,
            message.method,
            message.params,
            incoming=True,
            version=version,
            session=session,
            network=self.transport.network,
        )

    async def collect(
        self,
        exchange: Exchange,
        rid: RequestId,
        budget: Budget,
        on_request: ServerRequestHandler | None,
        on_notification: NotificationHandler | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        while True:
            item = await self.receive(exchange, budget)
            if isinstance(item, Ended):
                return item
            if isinstance(item, Response | ErrorResponse):
                if item.id == rid or item.id is None:
                    return item
                if log.isEnabledFor(logging.DEBUG):  # the server's id: cut and inert
                    log.debug("ignoring a response to %s while waiting for %s", request_where(item.id), rid)
            elif isinstance(item, Notification):
                with self.receiving(item, *_revision_and_session(headers)):
                    if on_notification is not None:
                        await on_notification(item)
                    else:
                        await self.notify(item.method, item.params or {})
            elif on_request is not None:
                await on_request(item, exchange)
            else:
                log.warning(
                    "%s sent %s on a request's stream, which its revision forbids; ignored",
                    self.server,
                    request_label(item.method, item.params, item.id),
                )

    async def while_present(self, answer: Awaitable[T], gone_error: Callable[[str], str]) -> T:
        """``await answer`` (a person answering while no request is in flight) in a task of
        its own, while the server lasts: once it is gone for good (``Transport.gone``) the
        answer is withdrawn (cancelled) and ``TransportError`` raised, saying
        ``gone_error(why)``. A KeyboardInterrupt the answerer raises comes out here
        (``interrupts``); an answerer that cancels its own question (``CancelledError``)
        cancels the caller, as it would with no ``gone`` to watch."""
        watch = getattr(self.transport, "gone", None)
        if watch is None:  # a transport written before ``gone``: nothing to watch
            return await answer
        answering = carrying(answer)
        gone = asyncio.ensure_future(watch())
        went = False
        try:
            await asyncio.wait([answering, gone], return_when=asyncio.FIRST_COMPLETED)
            went = gone.done()
        finally:
            gone.cancel()  # first: withdrawing may raise the answerer's own error
            if not answering.done():
                await withdraw(answering, SERVER_STOPPED if went else None)
        if answering.cancelled() and went:  # withdrawn: the server went first
            raise TransportError(gone_error(gone.result()))
        return outcome(answering)

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        if self.on_notification is None:
            return
        try:
            out = self.on_notification(method, params)
            if out is not None:
                await out
        except Exception:
            log.exception("the notification callback failed on %s", method_label(method))


async def withdraw(answering: asyncio.Future[Any], why: str | None = None) -> None:
    """Take a question back from the person (the task no longer waits for it), cancelled
    with ``why`` (``SERVER_STOPPED``, or None); an error the answerer met before that is
    still raised."""
    answering.cancel(why)
    await asyncio.wait([answering])
    if not answering.cancelled() and answering.exception() is not None:
        outcome(answering)  # raises it


def _revision_and_session(headers: Mapping[str, str] | None) -> tuple[str | None, str | None]:
    """The revision and the 2025-11-25 HTTP session a request's headers name."""
    if headers is None:
        return None, None
    return headers.get("MCP-Protocol-Version"), headers.get("Mcp-Session-Id")


async def list_pages(
    call: Callable[[str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]],
    method: str,
    key: str,
    *,
    empty_is_a_cursor: bool = False,
) -> list[dict[str, Any]]:
    """Every item of a paginated list, following ``nextCursor`` until it ends. A page
    without its list (``key``), a cursor given again (a server loop), one that is not a
    string, or more than ``MAX_PAGES`` pages is a ``ProtocolViolation`` naming the page:
    never a list cut short as if whole.
    An empty ``nextCursor`` ends it, unless ``empty_is_a_cursor`` (2026-07-28 says a client
    must not take "" for the end)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    page_number = 0
    while True:
        if cursor is not None and len(seen) >= MAX_PAGES:
            raise ProtocolViolation(
                f"{method} gave more than {MAX_PAGES} pages, each naming another (the last cursor was "
                f"{cursor[:100]!r}); this client reads no further"
            )
        result = await call(method, {"cursor": cursor} if cursor is not None else None)
        page_number += 1
        page = result.get(key)
        if not isinstance(page, list):
            raise ProtocolViolation(f"page {page_number} of {method} has no {key} list: {quoted(page)}")
        items.extend(dict(i) for i in page if isinstance(i, Mapping))
        nxt = result.get("nextCursor")
        if nxt is None or (nxt == "" and not empty_is_a_cursor):
            return items
        if not isinstance(nxt, str):
            raise ProtocolViolation(
                f"page {page_number} of {method} gives a nextCursor that is not a string: "
                f"{quoted(nxt)}; to end the list, leave nextCursor out of the last page"
            )
        if nxt in seen:
            rule = " (at 2026-07-28 an empty nextCursor is a cursor, not the end)" if nxt == "" else ""
            raise ProtocolViolation(
                f"{method} never ends: page {page_number} gives the cursor {nxt[:100]!r} again{rule}; "
                "to end the list, leave nextCursor out of the last page"
            )
        seen.add(nxt)
        cursor = nxt


def _now() -> float:
    return asyncio.get_running_loop().time()
