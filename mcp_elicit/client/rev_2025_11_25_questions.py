"""The server's own requests to a handshake-era session (2025-11-25, 2025-06-18,
2025-03-26): answering them, withdrawing them, and the notifications about them.

Rules:

* The server's requests (``elicitation/create``, ``sampling/createMessage``,
  ``roots/list``, ``ping``), on a response stream, on the event stream or over stdio, are
  answered through the same answerer and callbacks as in 2026-07-28, with the same checks.
  A request for a capability the client did not declare (sampling or roots without a
  callback, elicitation without an answerer) is a method it does not offer: -32601 naming
  the capability, as a server says of its own; so does ``elicitation/create`` at a revision
  that has none (2025-03-26, offered or chosen: ``client.declared``). An elicitation in an
  undeclared mode (URL mode at 2025-06-18, even if offered 2025-11-25 declared it) gets
  -32602; so does a form outside the flat subset (a nested object, an array of objects, an
  unknown type, a ``$ref``, no ``requestedSchema``), naming the field, and nobody is asked: ``cancel`` would tell the
  server the person dismissed it (2026-07-28, which can send no error for one input
  request, answers ``cancel``). So does one without its text ``message``, which both
  revisions require (the person would see a question saying nothing of what it is for),
  and a URL-mode one without its ``elicitationId`` (2025-11-25 requires it: the name its
  completion notice gives), or under the id of a URL step still open (its notice would
  finish both). Anything else unknown gets -32601. An answer
  that does not fit, or an answerer or callback that fails (a ``CancelledError`` of its
  own, nobody having cancelled it, included), gets -32603 (a failure's own text is not sent): every request of the server is answered, unless it withdraws it or
  the client's request is abandoned. The failure is then carried to the client's request
  the question came during, as a KeyboardInterrupt is (below): that request is cancelled
  and raises it, as at 2026-07-28 (``answerers``); during no request, it is logged. It is
  held for that request from the moment it fails (``rev_2025_11_25_failures``): a request
  whose response came first (the server, told -32603, answered the call before the POST
  that told it) raises it all the same, once the -32603 is sent (or after
  ``TELLING`` seconds of trying, the -32603 still on its way); a request that had
  already returned (a question off its stream, which it does not wait for) is too late
  for it, and it is logged. A -32603 that cannot be sent is logged, and the request
  raises the answerer's exception all the same. Each is
  answered in a task of its own (its answer POSTed again once if the connection broke:
  ``rev_2025_11_25_answers``), so that the stream it came on goes on being read while a
  person answers (its notifications, the next questions); a request returns once its
  server's questions are answered. The server's ``notifications/cancelled`` for one withdraws
  it (no answer is sent), wherever it arrives, but a stray already withdrawn (below). At most
  ``RoundLimits.max_requests`` (32) are answered at once: one more (but a ``ping``) is
  refused at once (-32600, saying so) and never reaches the person. One warning tells of
  a burst of such refusals, how many and the limit, once it is over (an answer frees a
  place, or the session closes), not one for each. So is a question
  beyond ``max_rounds`` x ``max_requests`` (320) during one request: as many as its
  rounds could carry at 2026-07-28, so a server asking for ever is not answered for ever
  (one warning, when the request is over, tells how many were refused).
  A request under the id of one still being answered gets no response at all, and a
  warning names the id: a server must not reuse an id within a session (2025-11-25,
  basic), and a response names nothing but the id, so the server would read any response
  to the second (-32600, say) as the answer to the first, whose question would be lost.
  The first is answered as usual.
  A request but ``ping`` that comes before the session is initialized (while
  ``initialize`` is unanswered: the client knows neither the server nor what it agreed
  to) is refused too (-32600, ``refuse_early``).
* A KeyboardInterrupt (or SystemExit) the answerer raises (a person's Ctrl-C in
  ``input()``) leaves the client's request the question came during, as if the answerer
  had been called there: that request is cancelled and raises it (``interrupts``). A
  question during no request in flight raises it out of the event loop, as asyncio would.
* A question that arrived outside any exchange but was taken to belong to the one request
  in flight (a *stray*) is withdrawn from the person when that request is abandoned
  (cancelled, timed out, failed), and answered as dismissed (``cancel``; -32603 for
  sampling or roots), since nothing on the wire said it was that request's (its answerer
  is told: ``CANCEL_SENT``; the server's withdrawal read meanwhile cancels it no more). A
  request that completes does not wait for it, unless its answer failed: then for its -32603.
* A URL-mode ``elicitation/create`` with an ``elicitationId``: the answerer may learn from
  ``ElicitationRequest.finished`` that the server saw the step finished
  (``notifications/elicitation/complete``, wherever it arrives) while the person is still
  on the page. The notices, those that come before their steps included, are matched to
  the steps by ``notices`` (``rev_2025_11_25_notices``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from mcp_elicit.client.answerers import CANCEL_SENT
from mcp_elicit.client.connection import Connection
from mcp_elicit.client.declared import declared_modes
from mcp_elicit.client.interrupts import Interrupt, carrying
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.rev_2025_11_25_answers import AnswerPosts
from mcp_elicit.client.rev_2025_11_25_failures import TELLING, Failures, settle
from mcp_elicit.client.rev_2025_11_25_notices import CompletionNotices
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, parse_elicitation
from mcp_elicit.core.quoting import quoted
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import FormValidationError, InvalidAnswer, ProtocolViolation
from mcp_elicit.log_labels import peer_text, request_label
from mcp_elicit.wire.jsonrpc import Notification, Request

__all__ = ["ServerQuestions", "SessionView", "refused_early"]

log = logging.getLogger("mcp_elicit.client")


class SessionView(Protocol):
    """What the questions need of their session: the headers an answer goes with, and the
    revision and session id its span names."""

    @property
    def revision(self) -> str: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def declared(self) -> dict[str, Any]: ...

    def headers(self, message: Mapping[str, Any]) -> dict[str, str]: ...


class ServerQuestions:
    """The server's requests being answered on one handshake-era session."""

    def __init__(self, conn: Connection, session: SessionView, limits: RoundLimits) -> None:
        self.conn, self.session, self.limits = conn, session, limits
        #: The URL steps waiting for the server's completion notices, and notices kept.
        self.notices = CompletionNotices()
        self.posts = AnswerPosts(conn)  # our answers being POSTed
        #: How many questions each request in flight was asked, by its id.
        self._questions: dict[Any, int] = {}
        #: Questions from outside any exchange (ids and tasks), by the request in flight then.
        self._strays: dict[Any, list[tuple[Any, asyncio.Task[None]]]] = {}
        #: Ids of the server's questions withdrawn with the request they seemed to belong to.
        self._withdrawn: set[Any] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        #: The server's requests being answered, by id (``notifications/cancelled`` finds them).
        self._answering: dict[Any, asyncio.Task[None]] = {}
        #: The answerers' failures and Ctrl-Cs, carried to the requests they came during.
        self.failures = Failures()
        #: Requests refused beyond ``max_requests`` since the last warning of it.
        self._refused = 0
        #: The client's requests in flight during which questions were refused beyond the
        #: limit for one request (what each is, for the warning).
        self._beyond: dict[Any, Origin] = {}

    def answer(
        self, request: Request, origin: Origin, *, during: Any = None, stray: bool = False
    ) -> asyncio.Task[None]:
        """Answer one of the server's requests in a task of its own. A request under an id
        still in use by a question being answered gets no response (see the rules): the
        earlier question keeps its id, so a cancellation still finds it. A request beyond ``RoundLimits.max_requests`` being answered at once, and one beyond
        the questions allowed ``during`` one of the client's requests (its id), is refused.
        ``stray``:
        it came outside that request's exchange (see the rules)."""
        rid = request.id
        asked = 0
        if during is not None and request.method != "ping":
            asked = self._questions[during] = self._questions.get(during, 0) + 1
        most = self.limits.max_rounds * self.limits.max_requests
        reused = rid is not None and rid in self._answering
        if reused:
            log.warning(
                "%s sent %s, the id of its request still being answered; no response is "
                "sent to it (the server would read any response under that id as the answer to the "
                "first), and the first is answered as usual",
                self.conn.server,
                request_label(request.method, request.params, rid),
            )
            task = asyncio.ensure_future(asyncio.sleep(0))
        elif request.method != "ping" and len(self._answering) >= self.limits.max_requests:
            text = (
                f"Invalid Request: the client is already answering {len(self._answering)} requests of "
                "this server (its limit); send more once those are answered"
            )
            self._refused += 1  # one warning for the burst: see _answered
            task = asyncio.ensure_future(self._respond_error(request, -32600, text))
        elif asked > most:
            text = (
                f"Invalid Request: the client answers at most {most} of the server's questions during "
                f"one request (RoundLimits: max_rounds x max_requests); {origin} asked more"
            )
            self._beyond[during] = origin  # one warning when the request is over: see finish
            task = asyncio.ensure_future(self._respond_error(request, -32600, text))
        else:
            task = carrying(self.respond(request, origin, during=during))
            task.add_done_callback(functools.partial(self.failures.carry, during))
            if rid is not None:
                self._answering[rid] = task
                task.add_done_callback(functools.partial(self._answered, rid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if stray and during is not None and not reused:  # a reused id names the first question
            self._strays.setdefault(during, []).append((rid, task))
        return task

    def begin(self, during: Any) -> None:
        """The client's request ``during`` (its id) is in flight, in the running task: a
        KeyboardInterrupt while answering a question during it leaves that request."""
        self.notices.begin(during)
        self.failures.begin(during)

    async def finish(
        self, during: Any, answering: list[asyncio.Task[None]], *, done: bool, why: str | None = None
    ) -> None:
        """The client's request ``during`` (its id) is over: wait for the answers to the
        questions on its own stream (``answering``). When it failed or was abandoned
        (``done`` false) they are cancelled first (with ``why``: ``SERVER_STOPPED`` when the
        server did), and its strays withdrawn. A KeyboardInterrupt met answering one of its
        questions is raised here."""
        asked = self._questions.pop(during, 0)
        beyond = self._beyond.pop(during, None)
        if beyond is not None:
            most = self.limits.max_rounds * self.limits.max_requests
            log.warning(
                "%s asked %d questions during %s, more than the %d one request is answered "
                "(RoundLimits: max_rounds x max_requests); %s refused (-32600)",
                self.conn.server,
                asked,
                beyond,
                most,
                "the last one was" if asked - most == 1 else f"the last {asked - most} were",
            )
        strays = self._strays.pop(during, [])
        try:
            if done:
                self.posts.cut(answering)  # the server needs no answer to an answered request
                carried = await self.failures.answered(during, answering)
            else:
                carried = await settle([*answering, *self._withdraw(strays, why)], cancel=True, why=why)
            for carrier in carried:  # whether or not their done callbacks have run yet
                self.failures.hold(during, carrier)
            if not await self.failures.sent(during):  # a failed answer's -32603: sent first, if it can be
                log.warning(
                    "%s has not taken, within %g s, the -32603 saying an answer failed (has it stopped "
                    "reading?); the request ends with the answerer's exception, the -32603 still on its way",
                    self.conn.server,
                    TELLING,
                )
        finally:
            self.failures.end(during)  # raises what was carried to it

    async def close(self) -> None:
        """Stop answering: every answer still being made is cancelled (none is sent)."""
        await reap(*self._tasks)
        self._warn_refused()

    def _answered(self, rid: Any, _: object) -> None:
        """The question ``rid`` is answered (or withdrawn): its place is free again, so a
        burst of refusals beyond the limit is over."""
        self._answering.pop(rid, None)
        self._warn_refused()

    def _warn_refused(self) -> None:
        """One warning for the requests refused beyond the limit since the last one."""
        refused, self._refused = self._refused, 0
        if refused:
            log.warning(
                "%s sent %d request%s beyond the limit of %d questions answered at once "
                "(RoundLimits.max_requests); %s refused (-32600)",
                self.conn.server,
                refused,
                "" if refused == 1 else "s",
                self.limits.max_requests,
                "it was" if refused == 1 else "each was",
            )

    async def on_notification(self, message: Notification) -> None:
        """A notification of the server's, wherever it arrived: the ones about its questions
        are acted on here; each goes on to the client's callback."""
        params = message.params or {}
        if message.method == "notifications/elicitation/complete":
            eid = params.get("elicitationId")
            if isinstance(eid, str):
                self.notices.heard(eid)
        elif message.method == "notifications/cancelled":
            rid = params.get("requestId")
            task = self._answering.get(rid) if isinstance(rid, str | int) else None
            if task is not None and not task.done() and rid not in self._withdrawn:  # not answered yet
                log.info(
                    "%s withdrew its question (%s)",
                    self.conn.server,
                    peer_text(str(params.get("reason", "no reason given"))),
                )
                task.cancel()
        await self.conn.notify(message.method, params)

    def _withdraw(self, strays: list[tuple[Any, asyncio.Task[None]]], why: str | None) -> list[Any]:
        """The tasks of questions to withdraw with the request they seemed to belong to:
        each is cancelled (``why``, else ``CANCEL_SENT``: its answerer learns it is answered
        as dismissed when it ends, see ``respond``)."""
        for qid, task in strays:
            if not task.done():
                self._withdrawn.add(qid)
                task.add_done_callback(functools.partial(_forget, self._withdrawn, qid))
                task.cancel(why or CANCEL_SENT)
        return [task for _, task in strays]

    async def respond(self, request: Request, origin: Origin | None = None, *, during: Any = None) -> None:
        """Answer one of the server's requests in the running task (``answer`` starts one
        for it, with the limits, ``during`` the client's request it came during; the
        requests on ``initialize``'s own stream come here)."""
        try:
            message = await self._traced_response(request, origin)
        except Failed as failed:  # told -32603, then carried to the call it came during
            carrier = Interrupt(failed.raised)
            self.failures.failed(during, carrier)  # before the -32603: the call's result may come first
            task = asyncio.current_task()
            if task is None or not task.cancelling():  # a question withdrawn gets no answer
                log.info(
                    "answering %s from %s failed (%s); the server is told -32603",
                    request_label(request.method, request.params, request.id),
                    self.conn.server,
                    type(failed.raised).__name__,
                )
                try:
                    await self.conn.transport.send(failed.message, self.session.headers(failed.message))
                except Exception as exc:  # the caller still gets the answerer's own exception
                    log.warning("%s could not be told -32603: %s", self.conn.server, peer_text(str(exc)))
            raise carrier from None
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
                    await self.conn.transport.send(message, self.session.headers(message))
            raise
        await self.posts.send(request, message, self.session.headers(message))

    async def _traced_response(self, request: Request, origin: Origin | None) -> dict[str, Any]:
        telemetry = self.conn.telemetry
        if telemetry is None or not telemetry.active:
            message = await self._response(request, origin)
        else:  # a span of its own (kind SERVER), in the trace of the server's question
            with telemetry.request(
                request.method,
                request.id,
                request.params or {},
                version=self.session.revision,
                session=self.session.session_id,
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
            elif request.method == "elicitation/create" and not self._modes():
                text = f"no elicitation capability at {self.session.revision} (initialize declared {self._declared()})"
                return error(request.id, -32601, f"Method not found: {request.method} is not offered: {text}")
            elif request.method == "elicitation/create":
                asked = parse_elicitation(
                    params,
                    server=self.conn.server,
                    key=f"request {request.id}",
                    origin=origin or Origin(request.method),
                )
                if asked.mode in self.conn.inputs.modes - self._modes():  # the revision's, not the answerer's
                    text = (
                        f"this client declared no {asked.mode}-mode elicitation at {self.session.revision} "
                        f"(its initialize declared {self._declared()})"
                    )
                    return error(request.id, -32602, f"Invalid params: {text}")
                missing = _unfit(params)
                if missing is not None:
                    return error(request.id, -32602, f"Invalid params: {missing}")
                if asked.schema_problem is not None and asked.mode in self.conn.inputs.modes:
                    self.conn.inputs.report(
                        f"{asked.server} sent a form this client cannot show ({asked.schema_problem}); "
                        f"{asked.describe()}; answering that its requestedSchema is invalid (-32602)"
                    )
                    text = f"requestedSchema is not a form this client can show: {asked.schema_problem}"
                    return error(request.id, -32602, f"Invalid params: {text}")
                result = await self._elicit(asked)
            elif request.method in ("sampling/createMessage", "roots/list"):
                result = await self.conn.inputs.answer(
                    request.method,
                    params,
                    key=f"request {request.id}",
                    origin=origin or Origin(request.method),
                    server=self.conn.server,
                )
            else:
                return error(request.id, -32601, f"Method not found: {request.method}")
        except ProtocolViolation as exc:
            return error(request.id, -32602, f"Invalid params: {exc}")
        except (FormValidationError, InvalidAnswer) as exc:  # not said: it may quote what the person typed
            named = ", ".join(sorted({p.field for p in getattr(exc, "problems", ()) if p.field}))
            text = f"The client could not produce a valid answer to {request.method}{named and f' (fields: {named})'}"
            raise Failed(error(request.id, -32603, text), exc) from None
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise  # withdrawn (by the server, the call's end, a close): see respond
            # the answerer's own (nobody cancelled it): a failure like any other, so the
            # server is not left waiting for an answer
            text = f"Internal error: the client failed to answer {request.method}"
            raise Failed(error(request.id, -32603, text), exc) from None
        except Exception as exc:  # the server still gets an answer, without the details (which may
            # quote what the person typed: int("…") in an answerer); the caller gets them
            text = f"Internal error: the client failed to answer {request.method}"
            raise Failed(error(request.id, -32603, text), exc) from None
        return self.conn.builder.result(request.id, result)

    def _modes(self) -> frozenset[str]:
        """The elicitation modes this session declared at its revision that the answerer takes."""
        return declared_modes(self.session.declared, self.session.revision) & self.conn.inputs.modes

    def _declared(self) -> str:
        """What ``initialize`` declared of elicitation, and for which revision, said for the server."""
        elicitation = self.session.declared.get("elicitation")
        return "no elicitation" if elicitation is None else f"elicitation {elicitation!r}"

    async def _elicit(self, asked: ElicitationRequest) -> dict[str, Any]:
        """The checked answer to an ``elicitation/create``; a URL step with an
        ``elicitationId`` learns when the server says it is complete."""
        eid = asked.elicitation_id if asked.mode == "url" else None
        if eid is None:
            return await self.conn.inputs.elicit(asked)
        if self.notices.waiting(eid):
            raise ProtocolViolation(
                f"elicitationId {quoted(eid)} is already in use by a URL step still open; each step "
                "needs an id of its own, which its completion notice names"
            )
        event = self.notices.completion(eid)
        try:
            return await self.conn.inputs.elicit(replace(asked, finished=event.wait))
        finally:
            self.notices.done_with(eid)

    async def refuse_early(self, request: Request) -> None:
        """Answer -32600 to a request (not a ``ping``) the server sent before the session
        was initialized: nobody is asked."""
        await self._respond_error(request, -32600, refused_early(self.conn.server, request))

    async def _respond_error(self, request: Request, code: int, text: str) -> None:
        message = self.conn.builder.error(request.id, code, text)
        await self.conn.transport.send(message, self.session.headers(message))


def refused_early(server: object, request: Request, why: str = "") -> str:
    """Log that ``server`` sent ``request`` (not a ``ping``) before the session was
    initialized, and give the text of the -32600 refusing it: what came, and that only
    ``ping`` may come before ``notifications/initialized`` (``why``: the client's side of
    it, in parentheses). ``refuse_early`` sends it, and the session does while it settles
    the revision, before any handshake began."""
    log.warning(
        "%s sent %s before the session was initialized; refused",
        server,
        request_label(request.method, request.params, request.id),
    )
    said = f" ({why})" if why else ""
    return (
        f"Invalid Request: {request.method} came before the session was initialized{said}; a "
        "server may send only ping until it has notifications/initialized"
    )


class Failed(Exception):
    """The client's answerer or callback failed (``raised``): ``message``, the -32603 the
    server is told, goes out before ``raised`` is carried to the caller."""

    def __init__(self, message: dict[str, Any], raised: BaseException) -> None:
        super().__init__(str(message.get("error", {}).get("message", "")))
        self.message = message
        self.raised = raised


def _unfit(params: Mapping[str, Any]) -> str | None:
    """What a URL step's ``elicitationId`` lacks (a ``message`` that is not text is the
    reader's ``ProtocolViolation``, at both revisions); said for the server, None when nothing."""
    eid = params.get("elicitationId")
    if params.get("mode") != "url" or isinstance(eid, str):
        return None
    how = "has no elicitationId" if eid is None else f"has elicitationId {quoted(eid)}, not text"
    return (
        f"URL-mode elicitation/create {how}; it must name its step with one (a string), as "
        "notifications/elicitation/complete does"
    )


def _forget(ids: set[Any], qid: Any, _: object) -> None:
    ids.discard(qid)
