"""Speaking the handshake revisions (2025-11-25, and 2025-06-18 / 2025-03-26 when the server
chooses them): ``initialize``, sessions, and the server's own requests.

Rules:

* ``initialize`` offers the client's most preferred handshake revision, with the
  capabilities that revision defines (``declared``); the server's
  choice must be one of the client's configured ``versions``. Then ``notifications/initialized``. Over HTTP the
  ``Mcp-Session-Id`` the server assigns goes on every later request, with
  ``MCP-Protocol-Version``, and on the answers to the server's requests on
  ``initialize``'s own stream (without a version: none is agreed yet), since the
  response's headers, which assign it, arrive before them; an id that is not 1 to 4096
  visible ASCII characters (0x21-0x7E) fails ``initialize`` with a ``ProtocolViolation``
  (an empty header assigns no session); a 404 on a request carrying it means the session is gone,
  whatever the body says (servers, this one included, put a JSON-RPC error in it): run
  ``initialize`` again once and send the request again, whatever its method (a ``tools/call``
  too: the server answered it 404 without acting on it, its session being unknown to it); a
  404 in the new session fails the request with the server's error (``http_status`` 404, its
  message saying so and what usually causes it), or, without one, with the transport's
  ``TransportError`` saying the same. A JSON-RPC error in a response without
  a session's 404 carries that response's status (``http_status``), as at 2026-07-28. Requests that meet the 404 of one session together
  start one new session between them, and no request goes out while it is being set up
  (it would carry neither the session's id nor its version): they wait for it. Over HTTP the GET event stream is listened to for as
  long as the session lasts (``rev_2025_11_25_events``). Closing sends DELETE (best effort), also for a session
  opened by an ``InitializeResult`` whose version the client refused.
* The server's requests, on a response stream, on the event stream or over stdio, are
  answered by ``ServerQuestions`` (``rev_2025_11_25_questions``); before the
  ``InitializeResult`` is read, only ``ping`` is (anything else gets -32600). Each in a task of its
  own, so that the stream it came on goes on being read while a person answers; a request
  returns once its server's questions are answered. A question that arrives outside any
  exchange (stdio, the event stream) while exactly one request is in flight belongs to
  that request: if the request is abandoned (cancelled, timed out, failed) the question is
  withdrawn from the person, as one on the request's own stream is.
* A response stream that ends before the response, after an event with an id, is resumed
  with GET and ``Last-Event-ID``, no sooner than the ``retry`` the stream gave (at most
  five times in a row without a new event: a server that polls, ending each connection
  after something new, is followed as long as the request's budget lasts). The id is the stream's last, whichever connection brought it:
  a resumed connection that ends before any new event is resumed from the same place. A
  request given up meanwhile (timed out, cancelled) is followed by
  ``notifications/cancelled``, as one given up on its first connection is. A resuming
  GET the server refuses fails the request, saying so and with the status; a 404 also
  renews the session, but the request is not sent again (the server may have acted on it).
* A response that broke with nothing to resume from (no event id yet, or the connection
  broke before the response began) loses the request: a read is sent again once, as at
  2026-07-28 (``no_response.REISSUED``); a tool call is not, and the caller is told
  the tool may have acted.
* ``-32042`` (URL elicitation required) is put to the person (``rev_2025_11_25_url``), and
  the original request retried (a new id) once they are done; bounded by the round limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_elicit.client.answerers import SERVER_STOPPED
from mcp_elicit.client.connection import Connection, Reply
from mcp_elicit.client.declared import declared_at
from mcp_elicit.client.no_response import NOT_SENT_AGAIN, REISSUED, SENT_AGAIN, end_error, say_more
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.rev_2025_11_25_events import DEFAULT_RETRY_MS, EventStream, renewed
from mcp_elicit.client.rev_2025_11_25_questions import ServerQuestions
from mcp_elicit.client.rev_2025_11_25_url import FinishedSteps, url_required
from mcp_elicit.client.transport import Ended, Exchange
from mcp_elicit.core.client import request_headers
from mcp_elicit.core.client_inputs import Origin, ServerInfo
from mcp_elicit.core.era import handshake_choice
from mcp_elicit.core.quoting import quoted
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import (
    MCPElicitError,
    ProtocolError,
    ProtocolViolation,
    RequestTimeout,
    RoundsExceeded,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.log_labels import request_where
from mcp_elicit.wire.jsonrpc import ErrorResponse, Message, Notification, Request, Response
from mcp_elicit.wire.versions import HANDSHAKE

__all__ = ["HandshakeSession"]

log = logging.getLogger("mcp_elicit.client")

_RESUMES: Final = 5
#: The longest ``Mcp-Session-Id`` taken (it goes on every request); real ones are far shorter.
_MAX_SESSION_ID: Final = 4096
#: Said after a 404 in the session opened for a request (after the server's error in it).
_GONE_AGAIN: Final = (
    "in a new session too: the server forgets a session as soon as it opens it;"
    " if it runs as several instances, each session's requests must reach the one that opened it"
)


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
        #: The server's initialize answer chose a version the client refused (its -32022
        #: is the client's own word, not the server's).
        self.refused = False
        self._opened: float | None = None  # when the session opened (monotonic)
        self.events = EventStream(self)
        #: The new session being set up in place of an expired one (see ``renew``).
        self._renewing: asyncio.Future[dict[str, Any]] | None = None
        #: The requests in flight, by id: what a server's question during them belongs to.
        self._inflight: dict[Any, Origin] = {}
        #: Responses that arrived on the event stream instead of their request's stream
        #: (kept only while that request is in flight).
        self._late: dict[Any, Response | ErrorResponse] = {}
        self.questions = ServerQuestions(conn, self, limits)
        #: The capabilities ``initialize`` declared (those of the revision it offered).
        self.declared: dict[str, Any] = declared_at(conn.builder.capabilities, self.revision)

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
        self.declared = declared_at(self.conn.builder.capabilities, self.preferred[0])
        params = {
            "protocolVersion": self.preferred[0],
            "capabilities": self.declared,  # as the revision offered defines them (``declared``)
            "clientInfo": self.conn.builder.info.to_json(),
        }
        _, message = self.conn.builder.request("initialize", params, self.preferred[0])
        reply, exchange = await self.conn.request(message, self.headers(message), on_request=self._opening)
        await exchange.aclose()
        if isinstance(reply, ErrorResponse):
            raise ProtocolError.from_error(reply.error)
        if not isinstance(reply, Response):
            raise end_error(reply, self.conn.server, "initialize")
        result = reply.result
        chosen = result.get("protocolVersion")
        if not isinstance(chosen, str) or chosen not in self.preferred:
            # refused: the session the answer opened is ended on close (DELETE)
            self.session_id = self._session_from(exchange.headers)
            self.refused = True
            raise UnsupportedProtocolVersion(
                f"The server chose protocol version {quoted(chosen)} in initialize; this client was "
                f"configured for {', '.join(self.preferred)} there",
                {
                    "supported": list(self.preferred),
                    "requested": chosen if isinstance(chosen, str) else quoted(chosen),
                },
            )
        self.revision = chosen
        self._negotiated = True
        self._opened = time.monotonic()
        self.session_id = self._session_from(exchange.headers, strict=True)
        self.initialized = dict(result)
        server = ServerInfo.from_json(
            result.get("serverInfo"), self.conn.transport.where, self.conn.server.secrets
        )
        self.conn.server = server
        note = self.conn.builder.notification("notifications/initialized", None, self.revision)
        await self.conn.send_notification(note, self.headers(note))
        await self.events.open()
        await self._set_log_level()
        return self.initialized

    async def _set_log_level(self) -> None:
        """``logging/setLevel`` for the session, when the client wants logs and the server
        declares ``logging`` (each new session, a renewed one too). Logs are an extra: a
        server's error answer is reported and the session goes on without them."""
        level = self.conn.builder.log_level
        if level is None or not isinstance(self.initialized.get("capabilities", {}).get("logging"), Mapping):
            return
        _, message = self.conn.builder.request("logging/setLevel", {"level": level}, self.revision)
        reply, exchange = await self.conn.request(message, self.headers(message))
        await exchange.aclose()
        if isinstance(reply, ErrorResponse):
            refused = ProtocolError.from_error(reply.error)
            self.conn.inputs.report(
                f"{self.conn.server} refused logging/setLevel {level!r} ({refused.code}: "
                f"{quoted(refused.message)}); going on without its log messages"
            )
            return
        if not isinstance(reply, Response):
            raise end_error(reply, self.conn.server, "logging/setLevel")

    async def _opening(self, request: Request, exchange: Exchange) -> None:
        """A request of the server's on ``initialize``'s own stream: answered in the session
        the response's headers assign (they came before it; the result is not read yet)."""
        self.session_id = self._session_from(exchange.headers)
        if request.method == "ping":
            await self.questions.respond(request)
        else:
            await self.questions.refuse_early(request)

    def _session_from(self, headers: Mapping[str, str], *, strict: bool = False) -> str | None:
        """The session ``headers`` assign (None: none). An invalid id is no session, or with
        ``strict`` (the ``InitializeResult`` is in) a ``ProtocolViolation`` saying why."""
        value = headers.get("mcp-session-id")
        if not value:
            return None
        if len(value) > _MAX_SESSION_ID:
            why = f"it is {len(value)} characters long"
        else:
            bad = next((i for i, c in enumerate(value) if not 0x21 <= ord(c) <= 0x7E), None)
            if bad is None:
                return value
            why = f"its character {bad + 1} is U+{ord(value[bad]):04X}"
        if not strict:
            return None
        shown = ascii(value[:40]) + ("..." if len(value) > 40 else "")
        raise ProtocolViolation(
            f"{self.conn.transport.where} sent an invalid Mcp-Session-Id: {shown}, {why}; a session id "
            f"is 1 to {_MAX_SESSION_ID} visible ASCII characters (0x21-0x7E), so this client cannot "
            "send it back"
        )

    def discovered(self) -> dict[str, Any]:
        """What ``server/discover`` says at 2026-07-28, from the ``InitializeResult``."""
        init = self.initialized
        out = {
            "supportedVersions": [self.revision],
            **{k: init.get(k, {}) for k in ("capabilities", "serverInfo")},
        }
        if "instructions" in init:
            out["instructions"] = init["instructions"]
        return out

    async def close(self) -> None:
        listener = self.events.stop()
        await self.questions.close()
        if listener is not None:
            await reap(listener)
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
        reinitialized = reissued = False
        finished = FinishedSteps()
        for _ in range(self.limits.max_rounds):
            if self._renewing is not None and not self._renewing.done():
                await asyncio.shield(self._renewing)  # not sent without the new session's headers
            _, message = self.conn.builder.request(method, params, self.revision)
            sent_in = self.session_id
            try:
                reply, status = await self._send(message, origin)
                if isinstance(reply, Response):
                    return reply.result
                if isinstance(reply, ErrorResponse):
                    if reply.error.get("code") != -32042:
                        error = ProtocolError.from_error(reply.error)
                        if status is not None:  # over HTTP, what it came with (a 404, say)
                            error.http_status = status
                        raise error
                    await url_required(self.conn, self.questions, self.limits, reply.error, origin, finished)
                    continue
            finally:  # a completion notice that came first for its steps is of no use after
                self.questions.notices.handled(message["id"])
            if reply.status == 404 and sent_in is not None and not reinitialized:
                reinitialized = True
                await self.renew(sent_in)
                continue
            if reply.broken and not reissued and method in REISSUED:  # nothing to resume from
                reissued = True
                log.info("%s got no response (%s); sending it again", method, reply.reason or reply.detail)
                continue
            lost = end_error(reply, self.conn.server, method)
            if reply.status == 404 and reinitialized:  # the status said once (a transport's says it)
                again = _GONE_AGAIN
                if isinstance(lost, ProtocolError):
                    lost.http_status, again = 404, f"HTTP 404 {again}"
                say_more(lost, f" ({again})")
            if reply.broken and method == "tools/call":
                say_more(lost, NOT_SENT_AGAIN)
            if reissued:
                say_more(lost, SENT_AGAIN)
            raise lost
        raise RoundsExceeded(
            f"{method} still needed URL elicitations after {self.limits.max_rounds} attempts; "
            f"abandoned{finished.hint()}"
        )

    async def renew(self, expired: str) -> None:
        """A new session in place of ``expired``, which a request met a 404 in: one
        ``initialize`` however many requests met it (a later one finds it renewed, or being
        renewed, and waits for that)."""
        renewing = self._renewing
        if renewing is None or renewing.done():
            if self.session_id != expired:
                return  # renewed since that request went out
            log.info("the session with %s expired; initializing a new one", self.conn.server)
            renewing = self._renewing = asyncio.ensure_future(self.initialize())
            # a failure reaches every request waiting for it; none waiting is no error
            renewing.add_done_callback(lambda f: f.cancelled() or f.exception())
        await asyncio.shield(renewing)

    async def _send(self, message: Mapping[str, Any], origin: Origin) -> tuple[Reply, int | None]:
        """The reply to ``message`` and, over HTTP, the status of the response it came in
        (a response that came on the event stream instead: that stream's 200)."""
        budget = self.conn.budget()
        rid = message["id"]

        answering: list[asyncio.Task[None]] = []

        async def in_band(request: Request, _: Exchange) -> None:
            answering.append(self.questions.answer(request, origin, during=rid))

        self._inflight[rid] = origin
        self.questions.begin(rid)
        try:
            reply, exchange = await self.conn.request(
                message,
                self.headers(message),
                budget=budget,
                on_request=in_band,
                on_notification=self.questions.on_notification,
            )
        except BaseException:
            self._inflight.pop(rid, None)
            self._late.pop(rid, None)
            await self.questions.finish(rid, answering, done=False)
            raise
        done = stopped = False
        resumed_in_all = 0  # how often the stream was resumed, for a timeout's message
        try:
            resumes = 0
            last_event_id: str | None = None  # the stream's, across its connections (as EventSource keeps it)
            while isinstance(reply, Ended):
                late = self._late.pop(rid, None)
                if late is not None:
                    done = True
                    return late, 200
                if reply.last_event_id is not None and reply.last_event_id != last_event_id:
                    resumes = 0  # the stream moved on: only resumes in a row that bring nothing count
                last_event_id = reply.last_event_id or last_event_id
                if last_event_id is None or resumes >= _RESUMES:
                    break
                resumes += 1
                delay = (reply.retry_ms if reply.retry_ms is not None else DEFAULT_RETRY_MS) / 1000
                if delay > budget.remaining(asyncio.get_running_loop().time()):
                    asked = f"asking to be resumed after {delay:g} s, later than the request may wait"
                    raise RequestTimeout(
                        f"no answer from {self.conn.server} within {budget.timeout:g} s: its stream "
                        f"ended {'again' if resumed_in_all else asked}"
                    )
                resumed_in_all += 1
                await asyncio.sleep(delay)
                await exchange.aclose()
                sent_with = self.headers(message)
                try:  # within what the request has left, not the transport's own bound
                    async with asyncio.timeout(budget.remaining(asyncio.get_running_loop().time())):
                        resumed = await self.conn.transport.listen(sent_with, last_event_id)
                except TimeoutError:
                    raise RequestTimeout(
                        f"no answer from {self.conn.server} within {budget.timeout:g} s: its stream ended, "
                        f"and the GET resuming it (Last-Event-ID {last_event_id!r}) got no answer"
                    ) from None
                if resumed is None:
                    break
                if isinstance(resumed, Ended):
                    stopped = resumed.status is None  # no answer at all (cannot connect): it stopped
                    raise await self._resume_refused(resumed, message, sent_with, last_event_id)
                exchange = resumed
                reply = await self.conn.collect(
                    exchange, rid, budget, in_band, self.questions.on_notification, self.headers(message)
                )
            done = not isinstance(reply, Ended)  # else the request failed: its questions are moot
            stopped = not done  # its stream ended unanswered, not to be resumed: the server stopped
            status = getattr(exchange, "status", None)
            return reply, status if isinstance(status, int) else None
        except RequestTimeout as exc:  # on a resumed stream: the server still works on it
            await self.conn.cancel_request(message, self.headers(message), "timed out")
            if resumed_in_all:
                times = "once" if resumed_in_all == 1 else f"{resumed_in_all} times"
                raise RequestTimeout(f"{exc}; it had been resumed {times}") from None
            raise
        except asyncio.CancelledError:
            self.conn.cancel_soon(message, self.headers(message))
            raise
        finally:
            self._inflight.pop(rid, None)
            self._late.pop(rid, None)
            try:
                await exchange.aclose()
            finally:  # also when a failed question's answer cancelled this task meanwhile
                # the questions of a request that failed are moot: withdrawn (see ServerQuestions)
                await self.questions.finish(
                    rid, answering, done=done, why=SERVER_STOPPED if stopped else None
                )

    # ---- what arrives outside any exchange --------------------------------------------

    async def on_unsolicited(self, message: Message) -> None:
        """Messages outside any exchange (stdio, the event stream)."""
        if isinstance(message, Request) and not self._negotiated and message.method != "ping":
            await self.questions.refuse_early(message)  # initialize is not answered yet
        elif isinstance(message, Request):
            # Off a request's stream the question cannot be tied to a request, unless only
            # one is in flight.
            origins = set(self._inflight.values())
            origin = origins.pop() if len(origins) == 1 else Origin(message.method)
            during = next(iter(self._inflight)) if len(self._inflight) == 1 else None
            self.questions.answer(message, origin, during=during, stray=True)
        elif isinstance(message, Notification):
            await self.questions.on_notification(message)
        elif message.id is not None and message.id in self._inflight:
            # A response on the event stream (some servers resume there): kept for the
            # request it answers, which looks for it when its own stream ends. One for no
            # request in flight is dropped (nothing would ever take it).
            self._late[message.id] = message
        else:
            if log.isEnabledFor(logging.DEBUG):  # the server's id: cut and inert
                log.debug(
                    "ignoring a response to %s, which no request in flight has", request_where(message.id)
                )

    async def _resume_refused(
        self, refused: Ended, message: Mapping[str, Any], sent_with: Mapping[str, str], last_event_id: str
    ) -> MCPElicitError:
        """What to raise for a request whose stream ended before its response and whose
        resuming GET the server refused (``refused``): that the resume failed, and how. A
        404 ended the session: a new one is opened for later requests, but the request is
        not sent again, since the server may have acted on it."""
        method, server = message["method"], self.conn.server
        if await renewed(self, refused, sent_with):
            return TransportError(
                f"{method} to {server} got no response: the session expired while its response "
                f"was being resumed (GET with Last-Event-ID {last_event_id!r}: HTTP 404); a new "
                f"session is open, but {method} was not sent again, since the server may have acted on it"
            )
        if refused.error is not None:
            return refused.error
        if refused.status is None:
            how = f"resuming it failed: {refused.reason or 'no answer'}"
        else:
            said = refused.reason or refused.said
            how = (
                f"resuming it was refused (GET with Last-Event-ID {last_event_id!r}: HTTP {refused.status}"
                + (f": {said})" if said else ")")
            )
        return TransportError(
            f"{method} to {server} got no response: its stream ended before the response, and {how}"
        )
