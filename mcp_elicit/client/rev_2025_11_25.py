"""Speaking the handshake revisions (2025-11-25, and 2025-06-18 / 2025-03-26 when the server
chooses them): ``initialize``, sessions, and the server's own requests.

Rules:

* ``initialize`` offers the client's most preferred handshake revision; the server's
  choice must be one of the client's configured ``versions``. Then ``notifications/initialized``. Over HTTP the
  ``Mcp-Session-Id`` the server assigns goes on every later request, with
  ``MCP-Protocol-Version``; a 404 on a request carrying it means the session is gone: run
  ``initialize`` again once and retry. Over HTTP the GET event stream is opened after the
  handshake (a server may send its requests there; a 405 or any error just means it has
  none) and resumed after a graceful close. Closing sends DELETE (best effort).
* The server's requests (``elicitation/create``, ``sampling/createMessage``,
  ``roots/list``, ``ping``), on a response stream, on the event stream or over stdio, are
  answered through the same answerer and callbacks as in 2026-07-28, with the same checks.
  A request for a capability the client did not declare (sampling or roots without a
  callback, elicitation without an answerer) is a method it does not offer: -32601 naming
  the capability, as a server says of its own. An elicitation in an undeclared mode (of a
  declared elicitation capability) gets -32602; anything else unknown -32601. An answer
  that does not fit, or an answerer or callback that fails, gets -32603: every request of
  the server is answered, unless it withdraws it or the client's request is abandoned. Each is
  answered in a task of its own, so that the stream it came on goes on being read while a
  person answers (its notifications, the next questions); a request returns once its
  server's questions are answered. The server's ``notifications/cancelled`` for one of
  them withdraws the question (no answer is sent), wherever it arrives. At most
  ``RoundLimits.max_requests`` (32) are answered at once: one more (but a ``ping``) is
  refused at once (-32600, saying so) and never reaches the person. So is a question
  beyond ``max_rounds`` x ``max_requests`` (320) during one request: as many as its
  rounds could carry at 2026-07-28, so a server asking for ever is not answered for ever.
* A question that arrives outside any exchange (stdio, the event stream) while exactly one
  request is in flight belongs to that request: if the request is abandoned (cancelled,
  timed out, failed) the question is withdrawn from the person, as one on the request's
  own stream is, and answered as dismissed (``cancel``; -32603 for sampling or roots),
  since nothing on the wire said it was that request's. A request that completes does
  not wait for it.
* A response stream that ends before the response, after an event with an id, is resumed
  with GET and ``Last-Event-ID``, no sooner than the ``retry`` the stream gave (at most
  five times per request).
* A URL-mode ``elicitation/create`` with an ``elicitationId``: the answerer may learn from
  ``ElicitationRequest.finished`` that the server saw the step finished
  (``notifications/elicitation/complete``, on the request's stream, the event stream or
  stdio) while the person is still on the page. A notice that arrives before anything
  waits for it (it overtook a -32042 on another stream, say) is kept, the last
  ``_EARLY_NOTICES`` of them.
* ``-32042`` (URL elicitation required): each URL is put to the answerer (the user sees it
  and consents); ``notifications/elicitation/complete`` arrives on the event stream; the
  original request is retried (a new id) when every accepted URL is complete or the
  user says it is done. A declined URL ends the request with the error. Bounded by the
  round limit; an error listing more URLs than ``RoundLimits.max_requests`` is a
  ``ProtocolViolation`` and none of them is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_elicit.client.connection import Connection, Reply
from mcp_elicit.client.rev_2026_07_28 import end_error
from mcp_elicit.client.transport import Ended, Exchange
from mcp_elicit.core.client import request_headers
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo, parse_elicitation
from mcp_elicit.core.era import handshake_choice
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import (
    FormValidationError,
    ProtocolError,
    ProtocolViolation,
    RoundsExceeded,
    UnsupportedProtocolVersion,
)
from mcp_elicit.wire.jsonrpc import ErrorResponse, Message, Notification, Request, Response
from mcp_elicit.wire.versions import HANDSHAKE

__all__ = ["HandshakeSession"]

log = logging.getLogger("mcp_elicit.client")

_RESUMES: Final = 5
_DEFAULT_RETRY_MS: Final = 1000
_LISTEN_RECONNECTS: Final = 3
_EARLY_NOTICES: Final = 64


class HandshakeSession:
    """A handshake-era session over one connection."""

    def __init__(self, conn: Connection, *, preferred: Sequence[str], limits: RoundLimits) -> None:
        self.conn = conn
        self.preferred = handshake_choice(preferred) or HANDSHAKE
        self.limits = limits
        self.revision: str = self.preferred[0]
        self.session_id: str | None = None
        self.initialized: dict[str, Any] = {}
        self._negotiated = False
        self._opened: float | None = None  # when the session opened (monotonic)
        self._completions: dict[str, asyncio.Event] = {}
        self._listener: asyncio.Task[None] | None = None
        #: The requests in flight, by id: what a server's question during them belongs to.
        self._inflight: dict[Any, Origin] = {}
        #: How many questions each request in flight was asked, by its id.
        self._questions: dict[Any, int] = {}
        #: Questions from outside any exchange (their ids and tasks), by the one request in
        #: flight when they came.
        self._strays: dict[Any, list[tuple[Any, asyncio.Task[None]]]] = {}
        #: Ids of the server's questions withdrawn with the request they seemed to belong to.
        self._withdrawn: set[Any] = set()
        #: Responses that arrived on the event stream instead of their request's stream
        #: (kept only while that request is in flight).
        self._late: dict[Any, Response | ErrorResponse] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: The server's requests being answered, by id (``notifications/cancelled`` finds them).
        self._answering: dict[Any, asyncio.Task[None]] = {}
        #: ``elicitationId``s the server said were complete before anything waited for them.
        self._completed: dict[str, None] = {}

    # ---- lifecycle -------------------------------------------------------------

    def headers(self, message: Mapping[str, Any]) -> dict[str, str]:
        headers = request_headers(message, self.revision if self._negotiated else None)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    async def initialize(self) -> dict[str, Any]:
        """Run the handshake; the ``InitializeResult``."""
        self._negotiated = False
        self.session_id = None
        params = {
            "protocolVersion": self.preferred[0],
            # extensions (the tasks extension) exist from 2026-07-28 on
            "capabilities": {k: v for k, v in self.conn.builder.capabilities.items() if k != "extensions"},
            "clientInfo": self.conn.builder.info.to_json(),
        }
        _, message = self.conn.builder.request("initialize", params, self.preferred[0])
        reply, exchange = await self.conn.request(message, self.headers(message), on_request=self._on_request)
        await exchange.aclose()
        if isinstance(reply, ErrorResponse):
            raise ProtocolError.from_error(reply.error)
        if not isinstance(reply, Response):
            raise end_error(reply, self.conn.server, "initialize")
        result = reply.result
        chosen = result.get("protocolVersion")
        if not isinstance(chosen, str) or chosen not in self.preferred:
            raise UnsupportedProtocolVersion(
                f"The server chose protocol version {chosen!r} in initialize; this client was "
                f"configured for {', '.join(self.preferred)} there",
                {"supported": list(self.preferred), "requested": str(chosen)},
            )
        self.revision = chosen
        self._negotiated = True
        self._opened = time.monotonic()
        self.session_id = self._session_from(exchange.headers)
        self.initialized = dict(result)
        self.conn.server = ServerInfo.from_json(result.get("serverInfo"), self.conn.transport.where)
        note = self.conn.builder.notification("notifications/initialized", None, self.revision)
        await self.conn.send_notification(note, self.headers(note))
        await self._listen()
        return self.initialized

    @staticmethod
    def _session_from(headers: Mapping[str, str]) -> str | None:
        value = headers.get("mcp-session-id")
        if value and all(0x21 <= ord(c) <= 0x7E for c in value):
            return value
        return None

    async def close(self) -> None:
        for task in [self._listener, *self._tasks]:
            if task is not None and not task.done():
                task.cancel()
        for task in [self._listener, *self._tasks]:
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._listener = None
        if self.session_id is not None:
            with contextlib.suppress(Exception):
                await self.conn.transport.end_session(self.headers({}))
        telemetry, opened, self._opened = self.conn.telemetry, self._opened, None
        if telemetry is not None and opened is not None:
            telemetry.session_ended(self.revision, self.conn.transport.network, time.monotonic() - opened)

    # ---- requests --------------------------------------------------------------

    async def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """One request, with URL-elicitation retries and one re-initialize on an expired
        session; its result."""
        origin = Origin.of(method, params)
        reinitialized = False
        for _ in range(self.limits.max_rounds):
            _, message = self.conn.builder.request(method, params, self.revision)
            reply = await self._send(message, origin)
            if isinstance(reply, Response):
                return reply.result
            if isinstance(reply, ErrorResponse):
                if reply.error.get("code") == -32042:
                    await self._url_required(reply.error, origin)
                    continue
                raise ProtocolError.from_error(reply.error)
            if reply.status == 404 and self.session_id is not None and not reinitialized:
                log.info("the session with %s expired; initializing a new one", self.conn.server)
                reinitialized = True
                await self.initialize()
                continue
            raise end_error(reply, self.conn.server, method)
        raise RoundsExceeded(
            f"{method} still needed URL elicitations after {self.limits.max_rounds} attempts; abandoned"
        )

    async def _send(self, message: Mapping[str, Any], origin: Origin) -> Reply:
        budget = self.conn.budget()
        rid = message["id"]

        answering: list[asyncio.Task[None]] = []

        async def in_band(request: Request) -> None:
            answering.append(self._answer(request, origin, during=rid))

        self._inflight[rid] = origin
        try:
            reply, exchange = await self.conn.request(
                message,
                self.headers(message),
                budget=budget,
                on_request=in_band,
                on_notification=self._on_notification,
            )
        except BaseException:
            self._inflight.pop(rid, None)
            self._questions.pop(rid, None)
            self._late.pop(rid, None)
            await _settle([*answering, *self._withdraw(self._strays.pop(rid, []))], cancel=True)
            raise
        done = False
        try:
            resumes = 0
            while isinstance(reply, Ended):
                late = self._late.pop(rid, None)
                if late is not None:
                    done = True
                    return late
                if reply.last_event_id is None or resumes >= _RESUMES:
                    break
                resumes += 1
                delay = reply.retry_ms if reply.retry_ms is not None else _DEFAULT_RETRY_MS
                await asyncio.sleep(delay / 1000)
                await exchange.aclose()
                resumed = await self.conn.transport.listen(self.headers(message), reply.last_event_id)
                if resumed is None:
                    break
                exchange = resumed
                reply = await self.conn.collect(
                    exchange, rid, budget, in_band, self._on_notification, self.headers(message)
                )
            done = not isinstance(reply, Ended)  # else the request failed: its questions are moot
            return reply
        finally:
            self._inflight.pop(rid, None)
            self._questions.pop(rid, None)
            self._late.pop(rid, None)
            strays = self._strays.pop(rid, [])
            await exchange.aclose()
            await _settle(answering, cancel=not done)
            if not done:  # the request failed: the questions it may have had are moot
                await _settle(self._withdraw(strays), cancel=True)

    # ---- the server's requests and notifications ---------------------------------

    async def on_unsolicited(self, message: Message) -> None:
        """Messages outside any exchange (stdio, the event stream)."""
        if isinstance(message, Request):
            # Off a request's stream the question cannot be tied to a request, unless only
            # one is in flight.
            origins = set(self._inflight.values())
            origin = origins.pop() if len(origins) == 1 else Origin(message.method)
            during = next(iter(self._inflight)) if len(self._inflight) == 1 else None
            task = self._answer(message, origin, during=during)
            if during is not None:
                self._strays.setdefault(during, []).append((message.id, task))
        elif isinstance(message, Notification):
            await self._on_notification(message)
        elif message.id is not None and message.id in self._inflight:
            # A response on the event stream (some servers resume there): kept for the
            # request it answers, which looks for it when its own stream ends. One for no
            # request in flight is dropped (nothing would ever take it).
            self._late[message.id] = message
        else:
            log.debug("ignoring a response to id %r, which no request in flight has", message.id)

    def _answer(self, request: Request, origin: Origin, *, during: Any = None) -> asyncio.Task[None]:
        """Answer one of the server's requests in a task of its own. An id still in use by
        a question being answered is refused (JSON-RPC ids are unique among requests in
        flight): the earlier question keeps its id, so a cancellation still finds it. So is
        a request beyond ``RoundLimits.max_requests`` being answered at once, and one beyond
        the questions allowed ``during`` one of the client's requests (its id)."""
        rid = request.id
        asked = 0
        if during is not None and request.method != "ping":
            asked = self._questions[during] = self._questions.get(during, 0) + 1
        most = self.limits.max_rounds * self.limits.max_requests
        if rid is not None and rid in self._answering:
            text = f"Invalid Request: id {rid!r} is already in use by a request still being answered"
            task = asyncio.ensure_future(self._respond_error(request, -32600, text))
        elif request.method != "ping" and len(self._answering) >= self.limits.max_requests:
            text = (
                f"Invalid Request: the client is already answering {len(self._answering)} requests of "
                "this server (its limit); send more once those are answered"
            )
            log.warning(
                "%s sent %s beyond the limit of questions at once; refused", self.conn.server, request.method
            )
            task = asyncio.ensure_future(self._respond_error(request, -32600, text))
        elif asked > most:
            text = (
                f"Invalid Request: the client answers at most {most} of the server's questions during "
                f"one request (RoundLimits: max_rounds x max_requests); {origin} asked more"
            )
            log.warning("%s asked more than %d questions during %s; refused", self.conn.server, most, origin)
            task = asyncio.ensure_future(self._respond_error(request, -32600, text))
        else:
            task = asyncio.ensure_future(self._on_request(request, origin))
            if rid is not None:
                self._answering[rid] = task
                task.add_done_callback(lambda _: self._answering.pop(rid, None))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _completion(self, eid: str) -> asyncio.Event:
        """The event set when the server says the URL step ``eid`` is complete."""
        event = self._completions.setdefault(eid, asyncio.Event())
        if self._completed.pop(eid, False) is None:  # the notice came first
            event.set()
        return event

    async def _on_notification(self, message: Notification) -> None:
        params = message.params or {}
        if message.method == "notifications/elicitation/complete":
            eid = params.get("elicitationId")
            if isinstance(eid, str):
                event = self._completions.get(eid)
                if event is not None:
                    event.set()
                else:
                    self._completed[eid] = None
                    while len(self._completed) > _EARLY_NOTICES:
                        del self._completed[next(iter(self._completed))]
        elif message.method == "notifications/cancelled":
            rid = params.get("requestId")
            task = self._answering.get(rid) if isinstance(rid, str | int) else None
            if task is not None and not task.done():
                log.info(
                    "%s withdrew its question (%s)", self.conn.server, params.get("reason", "no reason given")
                )
                task.cancel()
        await self.conn.notify(message.method, params)

    def _withdraw(self, strays: list[tuple[Any, asyncio.Task[None]]]) -> list[asyncio.Task[None]]:
        """The tasks of questions to withdraw with the request they seemed to belong to:
        each is answered as dismissed when it ends (see ``_on_request``)."""
        for qid, task in strays:
            if not task.done():
                self._withdrawn.add(qid)
                task.add_done_callback(functools.partial(_forget, self._withdrawn, qid))
        return [task for _, task in strays]

    async def _on_request(self, request: Request, origin: Origin | None = None) -> None:
        try:
            message = await self._traced_response(request, origin)
        except asyncio.CancelledError:
            if request.id not in self._withdrawn:
                raise  # the server withdrew it, or the session closes: nothing to send
            self._withdrawn.discard(request.id)
            # Nothing on the wire tied it to the abandoned request: the server may still
            # wait for it, so it hears the question was dismissed.
            if request.method == "elicitation/create":
                message = self.conn.builder.result(request.id, {"action": "cancel"})
            else:
                text = f"the client's request during which {request.method} came was abandoned"
                message = self.conn.builder.error(request.id, -32603, f"Internal error: {text}")
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await self.conn.transport.send(message, self.headers(message))
            raise
        await self.conn.transport.send(message, self.headers(message))

    async def _traced_response(self, request: Request, origin: Origin | None) -> dict[str, Any]:
        telemetry = self.conn.telemetry
        if telemetry is None or not telemetry.active:
            message = await self._response(request, origin)
        else:  # a span of its own (kind SERVER), in the trace of the server's question
            with telemetry.request(
                request.method,
                request.id,
                request.params or {},
                version=self.revision,
                session=self.session_id,
                incoming=True,
                network=self.conn.transport.network,
            ) as traced:
                message = await self._response(request, origin)
                if traced is not None:
                    traced.read(message)
        return message

    async def _response(self, request: Request, origin: Origin | None) -> dict[str, Any]:
        """Our response to a server's request: its result, or an error."""
        params = request.params or {}
        error = self.conn.builder.error
        try:
            if request.method == "ping":
                result: dict[str, Any] = {}
            elif (missing := self.conn.inputs.undeclared(request.method)) is not None:
                text = f"{request.method} is not offered (this client declares no {missing} capability)"
                return error(request.id, -32601, f"Method not found: {text}")
            elif request.method in ("elicitation/create", "sampling/createMessage", "roots/list"):
                raw_id = params.get("elicitationId") if params.get("mode") == "url" else None
                eid = raw_id if isinstance(raw_id, str) else None
                event = self._completion(eid) if eid is not None else None
                try:
                    result = await self.conn.inputs.answer(
                        request.method,
                        params,
                        key=f"request {request.id}",
                        origin=origin or Origin(request.method),
                        server=self.conn.server,
                        finished=event.wait if event is not None else None,
                    )
                finally:
                    if eid is not None:
                        self._completions.pop(eid, None)
            else:
                return error(request.id, -32601, f"Method not found: {request.method}")
        except ProtocolViolation as exc:
            return error(request.id, -32602, f"Invalid params: {exc}")
        except (FormValidationError, ValueError) as exc:  # an answer or callback result that does not fit
            self.conn.inputs.report(str(exc))
            return error(request.id, -32603, f"The client could not produce a valid answer: {exc}")
        except Exception:  # the server still gets an answer; the details stay here
            log.exception("answering %s from %s failed", request.method, self.conn.server)
            return error(request.id, -32603, f"Internal error: the client failed to answer {request.method}")
        return self.conn.builder.result(request.id, result)

    async def _respond_error(self, request: Request, code: int, text: str) -> None:
        message = self.conn.builder.error(request.id, code, text)
        await self.conn.transport.send(message, self.headers(message))

    # ---- URL elicitation required (-32042) ------------------------------------------

    async def _url_required(self, error: Mapping[str, Any], origin: Origin) -> None:
        data = error.get("data")
        raw = data.get("elicitations") if isinstance(data, Mapping) else None
        if not isinstance(raw, list) or not raw:
            raise ProtocolError.from_error(error)
        if len(raw) > self.limits.max_requests:
            raise ProtocolViolation(
                f"{self.conn.server} answered {origin} with -32042 listing {len(raw)} URL-mode "
                f"elicitations; this client puts at most {self.limits.max_requests} to the user at once "
                "(RoundLimits.max_requests), so none was shown"
            )
        requests = [
            parse_elicitation(
                entry if isinstance(entry, Mapping) else {},
                server=self.conn.server,
                key=f"url {entry.get('elicitationId') if isinstance(entry, Mapping) else i}",
                origin=origin,
            )
            for i, entry in enumerate(raw)
        ]
        if "url" not in self.conn.inputs.modes:
            raise ProtocolError.from_error(error)
        for request in requests:  # all checked before the person sees any
            if request.mode != "url":
                raise ProtocolViolation(f"{request.describe()}: -32042 may only carry URL-mode elicitations")
        waits: list[tuple[ElicitationRequest, asyncio.Event]] = []
        for request in requests:
            event = self._completion(request.elicitation_id or request.key)
            answer = await self.conn.inputs.elicit(request)
            if answer.get("action") != "accept":
                self._completions.pop(request.elicitation_id or request.key, None)
                told = f"{error.get('message', '')} (the user answered {answer.get('action')})"
                raise ProtocolError.from_error({**error, "message": told})
            waits.append((request, event))
        for request, event in waits:
            await self._until_done(request, event)
            self._completions.pop(request.elicitation_id or request.key, None)

    async def _until_done(self, request: ElicitationRequest, event: asyncio.Event) -> None:
        if event.is_set():
            return
        done = asyncio.ensure_future(self.conn.inputs.url_done(request))
        heard = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait({done, heard}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (done, heard):
                if not task.done():
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _listen(self) -> None:
        """Open the event stream (HTTP): servers send requests and notifications unrelated to
        a request there (some SDKs send every server request there). It is open before this
        returns, so nothing sent to it afterwards is lost. Over stdio everything arrives on
        stdout anyway."""
        if not self.conn.transport.http:
            return
        if self._listener is not None and not self._listener.done():
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        stream = await self.conn.transport.listen(self.headers({}))
        if stream is None:
            log.debug("%s offers no event stream", self.conn.server)
            return
        self._listener = asyncio.ensure_future(self._listen_loop(stream))

    async def _listen_loop(self, stream: Exchange) -> None:
        for attempt in range(_LISTEN_RECONNECTS + 1):
            try:
                ended = await self._pump(stream)
            finally:
                await stream.aclose()
            if ended.last_event_id is None or attempt == _LISTEN_RECONNECTS:
                return
            await asyncio.sleep((ended.retry_ms or _DEFAULT_RETRY_MS) / 1000)
            resumed = await self.conn.transport.listen(self.headers({}), ended.last_event_id)
            if resumed is None:
                return
            stream = resumed

    async def _pump(self, stream: Exchange) -> Ended:
        while True:
            item = await stream.receive()
            if isinstance(item, Ended):
                return item
            if isinstance(item, Notification):
                with self.conn.receiving(item, self.revision, self.session_id):
                    await self.on_unsolicited(item)
            else:
                await self.on_unsolicited(item)


def _forget(ids: set[Any], qid: Any, _: object) -> None:
    ids.discard(qid)


async def _settle(tasks: list[asyncio.Task[None]], *, cancel: bool) -> None:
    """Wait for the answers to a request's questions (cancelled first when the request
    failed or was abandoned); an answer that failed is logged, not raised."""
    if cancel:
        for task in tasks:
            task.cancel()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, Exception):
            log.error("answering the server's question failed", exc_info=outcome)
