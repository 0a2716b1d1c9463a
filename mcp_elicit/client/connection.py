"""What both revisions share on one connection: sending a request and collecting what
arrives for it within its time budget, dispatching notifications, and answering what the
server asks through the answerer and the callbacks.

Rules:

* A request's timeout counts network time only: every wait on the transport is bounded by
  what is left of the budget, and time an answerer spends (a person thinking) is added
  back, even when it runs concurrently (a server request on another stream).
* An answer is checked before it leaves (``core.client_inputs``); an elicitation in a mode
  the client did not declare, or a sampling or roots request without a callback, is the
  server's protocol violation, never a silent answer. A request for a capability the
  client did not declare at all (sampling or roots without a callback, elicitation
  without an answerer) is a method it does not offer: ``Inputs.undeclared`` names the
  capability, for both revisions' wording (2025-11-25 answers -32601 with it, as a server
  does for its own undeclared capabilities). A form the client cannot show is
  reported and answered ``cancel``. An answer that still does not fit after three tries
  raises ``FormValidationError``.
* The answerer is asked one question at a time (a person answers one at a time, and a
  terminal can show one prompt): questions that arrive together (a 2025-11-25 server's
  concurrent requests, on any stream) wait their turn.
* A round's input requests (2026-07-28) are checked together first: one the client did
  not declare fails the round before anyone is asked the others. Then they are answered
  in their order; when the answerer has ``elicit_many`` and the round holds two or more
  elicitations it can show, those go to it together (one page for all), and any answer
  among them that does not fit is asked again on its own.
* Notifications go to the ``on_notification`` callback; a failing callback is logged, not
  fatal.
* A paginated list is followed to its end, a repeated cursor, or ``MAX_PAGES`` (1000)
  pages, which is a ``ProtocolViolation``.
* A request abandoned (timeout, or the caller cancelled it) is closed; over stdio and on
  handshake revisions the server is also sent ``notifications/cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_elicit.client.answerers import Answerer, ElicitAnswer, RootsCallback, SamplingCallback
from mcp_elicit.client.transport import Ended, Exchange, Transport, clocked, thinking
from mcp_elicit.core.client import Budget, MessageBuilder, ThinkClock, ToolIndex
from mcp_elicit.core.client_inputs import (
    ElicitationRequest,
    Origin,
    ServerInfo,
    check_elicit_answer,
    check_roots_answer,
    check_sampling_answer,
    check_sampling_request,
    parse_elicitation,
)
from mcp_elicit.core.rounds import InputRequest
from mcp_elicit.errors import FormValidationError, ProtocolViolation, RequestTimeout, ValidationProblem
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
]

log = logging.getLogger("mcp_elicit.client")

NotificationCallback = Callable[[str, Mapping[str, Any]], Awaitable[None] | None]
#: Answers a server's own request (handshake revisions) that arrived within an exchange
#: (given too: its response's headers were in before the request).
ServerRequestHandler = Callable[[Request, Exchange], Awaitable[None]]
#: Takes the notifications that arrive on a request's own stream (default: ``notify``).
NotificationHandler = Callable[[Notification], Awaitable[None]]
Reply = Response | ErrorResponse | Ended

_ATTEMPTS = 3
#: The most pages a list is read to (a server naming a new cursor on every page never ends).
MAX_PAGES = 1000


@dataclass
class Inputs:
    """Answers what a server asks: elicitation (answerer), sampling and roots (callbacks)."""

    answerer: Answerer | None
    sampling: SamplingCallback | None
    roots: RootsCallback | None
    clock: ThinkClock
    report: Callable[[str], None]
    #: Held while the answerer has a question: one at a time.
    _person: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def modes(self) -> frozenset[str]:
        return self.answerer.modes if self.answerer is not None else frozenset()

    def thinking(self) -> contextlib.AbstractContextManager[None]:
        return thinking(self.clock)

    async def answer(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        key: str,
        origin: Origin,
        server: ServerInfo,
        finished: Callable[[], Awaitable[object]] | None = None,
    ) -> dict[str, Any]:
        """The checked result for one input request (``elicitation/create``,
        ``sampling/createMessage`` or ``roots/list``); ``finished`` see ``ElicitationRequest``."""
        if method == "elicitation/create":
            request = parse_elicitation(params, server=server, key=key, origin=origin)
            if finished is not None and request.mode == "url":
                request = replace(request, finished=finished)
            return await self.elicit(request)
        self._check_declared(method, key=key, origin=origin, server=server)
        if method == "sampling/createMessage":
            assert self.sampling is not None
            check_sampling_request(params, key=key, server=server)
            with self.thinking():
                raw = await self.sampling(params)
            return check_sampling_answer(raw)
        assert self.roots is not None
        with self.thinking():
            roots = await self.roots()
        return check_roots_answer(roots)

    def undeclared(self, method: str) -> str | None:
        """The capability ``method`` belongs to when this client did not declare it
        (``sampling`` with no sampling callback, ``roots`` with no roots callback,
        ``elicitation`` with no mode to answer in); None when it did, or ``method`` is none
        of the three."""
        capability, declared = {
            "elicitation/create": ("elicitation", bool(self.modes)),
            "sampling/createMessage": ("sampling", self.sampling is not None),
            "roots/list": ("roots", self.roots is not None),
        }.get(method, ("", True))
        return None if declared else capability

    def _check_declared(self, method: str, *, key: str, origin: Origin, server: ServerInfo) -> None:
        """``ProtocolViolation`` unless this client can answer ``method`` (sampling and
        roots with their callbacks; elicitations are checked by ``_check_mode``)."""
        if method not in ("sampling/createMessage", "roots/list"):
            raise ProtocolViolation(f"{server} asked for {method!r}, which a server may not ask a client")
        missing = self.undeclared(method)
        if missing is not None:
            raise ProtocolViolation(
                f"{server} asked for {method} ({key!r} during {origin}); this client declares no "
                f"{missing} capability"
            )

    def _check_mode(self, request: ElicitationRequest) -> None:
        """``ProtocolViolation`` unless this client declared the elicitation's mode."""
        if self.answerer is None or request.mode not in self.modes:
            raise ProtocolViolation(
                f"{request.describe()}, but this client declared no {request.mode}-mode elicitation"
            )

    async def answer_round(
        self, requests: Sequence[InputRequest], *, origin: Origin, server: ServerInfo
    ) -> dict[str, Any]:
        """The checked answers to one round's input requests, by key (see the rules)."""
        asked = {
            r.key: parse_elicitation(r.params, server=server, key=r.key, origin=origin)
            for r in requests
            if r.method == "elicitation/create"
        }
        for r in requests:  # the whole round is checked before anyone is asked
            if r.key in asked:
                self._check_mode(asked[r.key])
            else:
                self._check_declared(r.method, key=r.key, origin=origin, server=server)
        together = [e for e in asked.values() if e.mode in self.modes and e.schema_problem is None]
        batch = getattr(self.answerer, "elicit_many", None)
        first: dict[str, ElicitAnswer | Mapping[str, Any]] = {}
        if batch is not None and len(together) > 1:
            with self.thinking():
                async with self._person:
                    raws = list(await _awaitable(batch(together), "elicit_many"))
            first = {e.key: raw for e, raw in zip(together, raws, strict=True)}
        out: dict[str, Any] = {}
        for r in requests:
            if r.key in asked:
                out[r.key] = await self.elicit(asked[r.key], first=first.get(r.key))
            else:
                out[r.key] = await self.answer(r.method, r.params, key=r.key, origin=origin, server=server)
        return out

    async def elicit(
        self, request: ElicitationRequest, *, first: ElicitAnswer | Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The checked answer to one elicitation; ``first`` is an answer already given (by
        ``elicit_many``), checked before the answerer is asked again."""
        self._check_mode(request)
        assert self.answerer is not None
        if request.schema_problem is not None:
            self.report(
                f"{request.server} sent a form this client cannot show ({request.schema_problem}); "
                f"{request.describe()}; answering cancel"
            )
            return {"action": "cancel"}
        last: FormValidationError | None = None
        for attempt in range(_ATTEMPTS):
            if attempt == 0 and first is not None:
                raw = first
            else:
                with self.thinking():
                    async with self._person:
                        raw = await _awaitable(self.answerer.elicit(request), "elicit")
            if isinstance(raw, ElicitAnswer):
                answer = raw.to_json()
            elif isinstance(raw, Mapping):
                answer = dict(raw)
            else:
                raise TypeError(
                    f"the answerer's elicit() returned {type(raw).__name__}; return an ElicitAnswer or a "
                    "mapping like {'action': 'accept', 'content': {...}}"
                )
            try:
                return check_elicit_answer(request, answer)
            except FormValidationError as exc:
                last = exc
                request = request.again(exc.problems)
            except ValueError as exc:
                last = FormValidationError((ValidationProblem(None, str(exc)),))
                request = request.again(last.problems)
        assert last is not None
        summary = ValidationProblem(None, f"no valid answer to {request.describe()} after {_ATTEMPTS} tries")
        raise FormValidationError((summary, *last.problems))

    async def url_done(self, request: ElicitationRequest) -> None:
        if self.answerer is not None:
            with self.thinking():
                done = getattr(self.answerer, "url_done", None)  # optional: done at once without it
                if done is not None:
                    await done(request)


def _awaitable(value: Any, method: str) -> Any:
    """``value``, what the answerer's ``method`` returned, when it can be awaited."""
    if not inspect.isawaitable(value):
        raise TypeError(
            f"the answerer's {method}() returned {type(value).__name__}, not an awaitable; declare it async def"
        )
    return value


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
        """Send one notification (as built by ``builder``), in its span."""
        params = note.get("params")
        version, session = _revision_and_session(headers)
        with notifying(
            self.telemetry,
            str(note.get("method")),
            params,
            incoming=False,
            version=version,
            session=session,
            network=self.transport.network,
        ) as sent:
            await self.transport.send(note if sent is params else {**note, "params": sent}, headers)

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
                log.debug("ignoring a response to id %r while waiting for %r", item.id, rid)
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
                    "%s sent a %s request on a request's stream, which its revision forbids; ignored",
                    self.server,
                    item.method,
                )

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        if self.on_notification is None:
            return
        try:
            out = self.on_notification(method, params)
            if out is not None:
                await out
        except Exception:
            log.exception("the notification callback failed on %s", method)


def _revision_and_session(headers: Mapping[str, str] | None) -> tuple[str | None, str | None]:
    """The revision and the 2025-11-25 HTTP session a request's headers name."""
    if headers is None:
        return None, None
    return headers.get("MCP-Protocol-Version"), headers.get("Mcp-Session-Id")


async def list_pages(
    call: Callable[[str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]], method: str, key: str
) -> list[dict[str, Any]]:
    """Every item of a paginated list, following ``nextCursor`` until it ends (or repeats);
    a list of more than ``MAX_PAGES`` pages is a ``ProtocolViolation``."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        if cursor is not None and len(seen) >= MAX_PAGES:
            raise ProtocolViolation(
                f"{method} gave more than {MAX_PAGES} pages, each naming another (the last cursor was "
                f"{cursor[:100]!r}); this client reads no further"
            )
        result = await call(method, {"cursor": cursor} if cursor is not None else None)
        page = result.get(key)
        items.extend(dict(i) for i in (page if isinstance(page, list) else []) if isinstance(i, Mapping))
        nxt = result.get("nextCursor")
        if not isinstance(nxt, str) or not nxt or nxt in seen:
            return items
        seen.add(nxt)
        cursor = nxt


def _now() -> float:
    return asyncio.get_running_loop().time()
