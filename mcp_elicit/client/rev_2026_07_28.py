"""Speaking revision 2026-07-28: stateless requests with per-request ``_meta``, and the
multi round-trip loop.

Rules:

* Every request carries ``_meta`` (version, capabilities, clientInfo) and, over HTTP, the
  mirrored headers; a tool call also mirrors its ``x-mcp-header`` arguments, from the
  tool's schema as listed (over HTTP the client lists tools before its first call). A
  tool whose annotations break the rules is left out of each listing with a warning
  naming it and why, whoever asked for the listing: one warning per listing, naming the
  first few and counting the rest (a server with a thousand such tools is one line).
* ``-32022`` on any request: retry it with a revision from ``data.supported`` (at most
  twice); the connection keeps that revision. ``-32020`` on a tool call over HTTP: list
  the tools again (the schema may have changed, or the tool be new since the listing)
  and retry once.
* A request whose connection or response stream broke before its response
  (``Ended.broken``: nothing resumes at this revision, the request is lost) is sent again
  as a new request, once, if it only reads (lists, ``resources/read``, ``prompts/get``,
  ``server/discover``...); a tool call is not (the tool may have acted): the caller is
  told the stream broke, and that the tool may have acted. When the second stream breaks
  too, the error says the request was already sent again.
* ``input_required`` on ``tools/call``, ``prompts/get`` or ``resources/read``: answer every
  input request (answerer, sampling and roots callbacks), retry with a new id, the answers
  under the same keys and ``requestState`` echoed as received; bounded by ``RoundLimits``.
  State-only rounds after a URL step the person accepted wait for its page, bounded by
  time (``RoundLimits.url_wait``, see ``core.rounds``); the answerer hears once that the
  call waits for that page (its optional ``url_waiting``).
  A round's elicitations go to the answerer together when it can take them so
  (``elicit_many``).
  A retry whose ``requestState`` the server refuses (-32602: it lapsed while the person
  answered) starts the request again, once (``Rounds.restart``): questions identical to
  ones already answered get those answers, only new ones are asked; refused again, the
  call fails saying so. A -32602 that is not about the state (``refuses_state``: a
  handler's own, one about the answers) is raised as is.
  A server gone for good while the person answers (``Transport.gone``: a stdio server
  process exited) withdraws the round's questions and fails the call (``TransportError``).
  A KeyboardInterrupt the answerer raises (Ctrl-C in ``input()``) leaves the call
  (``interrupts``), not the event loop.
  Each logical request keeps its own rounds, so concurrent requests never share state.
* A server request on a response stream is a violation of this revision: it is logged and
  ignored, never answered.
* A ``tools/call`` answered with a task (``resultType: "task"``, the tasks extension, when
  the client declared it) is followed with ``tasks/get`` to its end (``core.task_watch``);
  its questions go to the answerer and back with ``tasks/update``, while the polls go
  on: a question the task stops waiting for is withdrawn (the answerer is cancelled).
  A URL step accepted there is said once through ``url_waiting``, at the first poll
  after the update that asks nothing new (the task waits for the page in place).
  Bounded as the rounds are: a task asking more than ``max_rounds`` x ``max_requests``
  questions in all (as many as its rounds could carry) is given up (``RoundsExceeded``).
  Each change of its
  status or status message reaches ``on_notification`` as ``notifications/tasks`` (the
  task as polled). A call abandoned before the task ended (cancelled, timed out, failed)
  sends ``tasks/cancel``, best effort. A poll, or the ``tasks/update`` carrying the
  person's answers, answered by the server's passing outage (-32603 with HTTP 503, a
  proxy's 502/503/504) is sent again after a backoff, for
  ``RoundLimits.outage_wait`` seconds at most, each retry logged (``core.task_watch``);
  the error that ends it says how long the outage lasted. Beside the polls, the client
  listens for the task (``subscriptions/listen`` with its ``taskIds``): each
  ``notifications/tasks`` polls at once, so a question or the result arrives when it
  happens, not at the next poll interval. Polling stays the ground truth; a server
  without ``subscriptions/listen`` is not asked again on this connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_elicit.client.answerers import SERVER_STOPPED
from mcp_elicit.client.connection import Connection, list_pages, withdraw
from mcp_elicit.client.interrupts import Interrupt, carrying, outcome
from mcp_elicit.client.no_response import (
    NOT_SENT_AGAIN,
    REISSUED,
    SENT_AGAIN,
    describe_end,
    end_error,
    say_more,
    to_named,
)
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.subscriptions import Subscription, open_subscription
from mcp_elicit.core.client import request_headers
from mcp_elicit.core.client_inputs import Origin
from mcp_elicit.core.era import retry_version
from mcp_elicit.core.input_requests import InputRequest
from mcp_elicit.core.quoting import shown_name
from mcp_elicit.core.rounds import (
    Complete,
    NeedInput,
    RoundLimits,
    Rounds,
    refuses_state,
)
from mcp_elicit.core.task_watch import TaskWatch
from mcp_elicit.core.tasks import TASKS_EXTENSION
from mcp_elicit.errors import (
    InvalidParams,
    MCPElicitError,
    MethodNotFound,
    ProtocolError,
    RoundsExceeded,
    TaskCancelled,
    TransportError,
)
from mcp_elicit.log_labels import peer_text
from mcp_elicit.telemetry import rounds as traced_rounds
from mcp_elicit.wire.jsonrpc import ErrorResponse, RequestId, Response

__all__ = ["ModernSession"]

_VERSION_RETRIES: Final = 2
_CANCEL_SECONDS: Final = 2.0
#: Rejected tools a listing's warning names with their reasons; it counts the rest.
_NAMED: Final = 5

log = logging.getLogger("mcp_elicit.client")


class ModernSession:
    """Requests at a modern revision over one connection."""

    def __init__(
        self,
        conn: Connection,
        revision: str,
        *,
        preferred: Sequence[str],
        limits: RoundLimits,
        discover: Mapping[str, Any] | None = None,
        routes: dict[RequestId, Subscription] | None = None,
    ) -> None:
        self.conn = conn
        #: The client's open subscriptions by id (stdio routes their notifications by it).
        self.routes: dict[RequestId, Subscription] = routes if routes is not None else {}
        #: False once the server answered subscriptions/listen with "method not found".
        self.listens = True
        self.revision = revision
        self.preferred = tuple(preferred)
        self.limits = limits
        self.discovered = dict(discover) if discover is not None else None
        self.tools_listed = False

    async def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """One logical request, through every round it takes; its final result."""
        rounds = Rounds(method, dict(params or {}), self.limits)
        origin = Origin.of(method, params)
        send: dict[str, Any] = dict(rounds.params)
        with traced_rounds(self.conn.telemetry):  # its retries' spans follow the first's
            while True:
                try:
                    result = await self.roundtrip(method, send)
                except InvalidParams as exc:
                    send = self._restart(rounds, send, exc, origin)
                    continue
                if result.get("resultType") == "task":
                    return await self.follow_task(method, result, origin)
                step = rounds.step(result, time.monotonic())
                if isinstance(step, Complete):
                    return step.result
                await self._say_waiting(step.awaiting_pages, origin)
                responses = await self._answer(step, origin)
                if step.delay > 0:
                    await asyncio.sleep(step.delay)
                send = rounds.retry(responses)

    def _restart(
        self, rounds: Rounds, sent: Mapping[str, Any], refused: InvalidParams, origin: Origin
    ) -> dict[str, Any]:
        """The params that start ``rounds`` again after its retry ``sent`` was refused
        with -32602 (its ``requestState`` lapsed while the person answered, say), the
        answers kept for the same questions; else the refusal, said so when the state
        was refused again after such a start. A refusal of anything but the state is
        raised as it is (``refuses_state``): it would come again."""
        if not refuses_state(refused.message, refused.data):
            raise refused
        again = rounds.restart()
        if again is not None:
            log.info(
                "%s: the server refused the requestState of %s (%s); the call started again, "
                "with the answers already given",
                self.conn.server,
                origin,
                peer_text(refused.message),
            )
            return again
        if not rounds.restarted or "requestState" not in sent:
            raise refused
        raise InvalidParams(
            f"{refused.message} (the second time: the call was started again once after the "
            "server refused its state, and the state expired or was refused again, so the "
            "answers could not be used)",
            refused.data,
        ) from refused

    async def _say_waiting(self, pages: tuple[InputRequest, ...], origin: Origin) -> None:
        """Tell the answerer of each accepted page the request now waits for (once each:
        ``NeedInput.awaiting_pages``, ``Poll.awaiting_pages``)."""
        for page in pages:
            log.info("%s: %s waits for the page of %s", self.conn.server, origin, shown_name(page.key))
            await self.conn.inputs.url_waiting(page, origin=origin, server=self.conn.server)

    async def _answer(self, step: NeedInput, origin: Origin) -> dict[str, Any]:
        """The answers to one round's questions, while the server lasts: no request is in
        flight while the person answers, so a server gone for good meanwhile (its process
        exited) withdraws the questions and fails the call, saying so. An answerer that
        cancels its own question (``CancelledError``) cancels the call, as it would with no
        ``gone`` to watch."""
        if not step.requests:
            return {}
        answer = self.conn.inputs.answer_round(step.requests, origin=origin, server=self.conn.server)
        return await self.conn.while_present(
            answer,
            lambda why: (
                f"{origin}{to_named(self.conn.server)} cannot go on: {why}; its questions were "
                "withdrawn from the person"
            ),
        )

    async def follow_task(self, method: str, created: Mapping[str, Any], origin: Origin) -> dict[str, Any]:
        """Follow the task ``method`` became to its end; the result it completed with."""
        extensions = self.conn.builder.capabilities.get("extensions")
        declared = isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions
        watch = TaskWatch.start(method, created, declared=declared, now=time.monotonic())
        task = {"taskId": watch.task_id}
        log.info("%s: %s goes on as task %s", self.conn.server, method, shown_name(watch.task_id))
        told: tuple[object, object] | None = None

        async def tell(state: Mapping[str, Any]) -> None:
            nonlocal told
            if (state.get("status"), state.get("statusMessage")) != told:
                told = (state.get("status"), state.get("statusMessage"))
                await self.conn.notify(
                    "notifications/tasks", {k: v for k, v in state.items() if k != "resultType"}
                )

        await tell(created)
        moved = asyncio.Event()  # set when the server says the task moved
        listener = asyncio.ensure_future(self._hear(watch.task_id, moved)) if self.listens else None
        # The person is asked while the polls go on: a question the task stops waiting for is withdrawn.
        answering: asyncio.Future[dict[str, Any]] | None = None
        asking: frozenset[str] = frozenset()
        questions: tuple[InputRequest, ...] = ()  # those being answered
        asked = 0  # questions put to the person during this task
        most = self.limits.max_rounds * self.limits.max_requests
        why: str | None = None  # what a question still asked is withdrawn with
        try:
            while True:
                moved.clear()  # what the server says from here on calls for another poll
                polled = await self._through_outage("tasks/get", task, watch)
                try:
                    step = watch.step(polled, time.monotonic())  # checked before anyone sees it
                except (ProtocolError, TaskCancelled):  # the task failed, or was cancelled
                    await tell(polled)
                    raise
                await tell(polled)
                if isinstance(step, Complete):
                    return step.result
                await self._say_waiting(step.awaiting_pages, origin)
                if answering is not None and not asking & step.outstanding:
                    await withdraw(answering)
                    answering = None
                if answering is None and step.requests:
                    asked += len(step.requests)
                    if asked > most:
                        raise RoundsExceeded(
                            f"task {watch.task_id} asked more than {most} questions during {origin} "
                            "(RoundLimits: max_rounds x max_requests); the server keeps asking, so "
                            "the call was abandoned and the task cancelled"
                        )
                    questions = step.requests
                    asking = frozenset(r.key for r in questions)
                    watch.sent(sorted(asking))
                    answering = carrying(
                        self.conn.inputs.answer_round(
                            step.requests, origin=origin, server=self.conn.server, sent_with="tasks/update"
                        )
                    )
                if await _until(step.delay, moved, answering):  # the poll interval, or sooner
                    assert answering is not None
                    answers, answering = watch.waited_for(outcome(answering)), None
                    if answers:  # those the task stopped waiting for meanwhile are dropped
                        await self._through_outage("tasks/update", {**task, "inputResponses": answers}, watch)
                    watch.updated(questions, answers)
                    await _until(step.delay, moved, None)
        except TransportError as exc:  # no answer at all (its process exited, it cannot be reached)
            why = SERVER_STOPPED if exc.http_status is None else None
            raise
        finally:
            if answering is not None:  # the call ends with its own error, not the answerer's
                answering.cancel(why)
                await asyncio.wait([answering])
                if not answering.cancelled() and isinstance(answering.exception(), Interrupt):
                    outcome(answering)  # a person's Ctrl-C is not swallowed by the call's error
            if listener is not None:
                await reap(listener, failures=True)
            if not watch.ended:  # abandoned: cancelled, timed out, or failed on this side
                await self._cancel_task(task)

    async def _through_outage(
        self, method: str, params: Mapping[str, Any], watch: TaskWatch
    ) -> dict[str, Any]:
        """``method`` about the task (``tasks/get``, or ``tasks/update`` with the person's
        answers: the server ignores answers to questions no longer waiting, so sending them
        again is safe); sent again after a backoff while the server's passing outage lasts
        (``TaskWatch.outage``, bounded by ``RoundLimits.outage_wait``). The error that ends
        it says how long the outage lasted."""
        while True:
            try:
                answered = await self.roundtrip(method, params)
            except (ProtocolError, TransportError) as exc:
                now = time.monotonic()
                delay = watch.outage(exc, now, self.limits.outage_wait)
                if delay is None:
                    say_more(exc, watch.outage_said(now))
                    raise
                said = f"{self.conn.server}: {method} for task {shown_name(watch.task_id)}"
                log.info("%s: %s; sent again in %g s", said, peer_text(str(exc)), delay)
            else:
                watch.reached()
                return answered
            await asyncio.sleep(delay)

    async def _hear(self, task_id: str, moved: asyncio.Event) -> None:
        """Set ``moved`` at each ``notifications/tasks`` the server sends for ``task_id``
        (``subscriptions/listen``); a server that cannot is left to the polls."""
        try:
            async with open_subscription(
                self.conn, self.revision, {"taskIds": [task_id]}, self.routes
            ) as heard:
                if task_id not in heard.agreed.get("taskIds", ()):
                    return
                async for method, _ in heard:
                    if method == "notifications/tasks":
                        moved.set()
        except MethodNotFound:
            self.listens = False
        except (MCPElicitError, OSError) as exc:  # a refusal, a dropped stream: the polls go on
            said = peer_text(str(exc)) if log.isEnabledFor(logging.DEBUG) else ""  # the server's: cut, inert
            log.debug("%s: not listening for task %s: %s", self.conn.server, shown_name(task_id), said)
        except Exception:  # a bug here must not fail the call the polls can finish
            log.warning("listening for task %s failed; polling only", shown_name(task_id), exc_info=True)

    async def _cancel_task(self, task: Mapping[str, Any]) -> None:
        """``tasks/cancel``, best effort and briefly: the call was abandoned."""
        try:
            await asyncio.wait_for(self.roundtrip("tasks/cancel", task), _CANCEL_SECONDS)
        except Exception as exc:
            said = peer_text(str(exc))  # the server's words: cut, inert
            log.info("%s: could not cancel task %s: %s", self.conn.server, shown_name(task["taskId"]), said)

    async def roundtrip(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """One request on the wire (a fresh id each time); its result, version and header retries included."""
        version_retries = 0
        refreshed = reissued = False
        while True:
            _, message = self.conn.builder.request(method, params, self.revision)
            specs = None
            if self.conn.transport.http and method == "tools/call":
                specs = self.conn.tools.specs.get(str(params.get("name")))
            headers = request_headers(message, self.revision, header_specs=specs)
            reply, exchange = await self.conn.request(message, headers)
            await exchange.aclose()
            if isinstance(reply, Response):
                return reply.result
            if isinstance(reply, ErrorResponse):
                code = reply.error.get("code")
                if code == -32022 and version_retries < _VERSION_RETRIES:
                    version_retries += 1
                    self.revision = retry_version(reply.error, self.revision, self.preferred)
                    continue
                if code == -32020 and self.conn.transport.http and not refreshed and method == "tools/call":
                    # the tool's schema changed, or it is new since the listing (no specs)
                    refreshed = True
                    await self.list_all("tools/list", "tools")
                    continue
                error = ProtocolError.from_error(reply.error)
                status = getattr(exchange, "status", None)  # over HTTP, what it came with
                if isinstance(status, int):
                    error.http_status = status
                raise error
            if reply.broken and not reissued and method in REISSUED:
                reissued = True
                log.info("%s; sending it again", describe_end(reply, self.conn.server, method))
                continue  # a new request, with a new id
            lost = end_error(reply, self.conn.server, method)
            if reply.broken and method == "tools/call":
                say_more(lost, NOT_SENT_AGAIN)
            if reissued:
                say_more(lost, SENT_AGAIN)
            raise lost

    async def list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """Every page of a list; tools are filtered for ``x-mcp-header`` validity over HTTP."""
        items = await list_pages(self.call, method, key, empty_is_a_cursor=True)
        if key != "tools":
            return items
        self.conn.tools.reset()
        self.tools_listed = True
        kept = self.conn.tools.admit(items)
        rejected = self.conn.tools.rejected
        if rejected:  # at every listing, asked or not; one line, however many tools
            named = "; ".join(f"tool {n[:128]!r}: {peer_text(r)}" for n, r in list(rejected.items())[:_NAMED])
            more = f"; and {len(rejected) - _NAMED} more" if len(rejected) > _NAMED else ""
            said = "%d tool(s) from %s rejected (Client.rejected_tools has them all): %s%s"
            log.warning(said, len(rejected), self.conn.server, named, more)
        return kept

    async def ensure_tools(self) -> None:
        """Over HTTP, know every tool's ``x-mcp-header`` paths before the first call."""
        if self.conn.transport.http and not self.tools_listed:
            await self.list_all("tools/list", "tools")

    async def discover(self) -> dict[str, Any]:
        self.discovered = await self.call("server/discover")
        return self.discovered

    async def close(self) -> None:
        return None


async def _until(delay: float, moved: asyncio.Event, answering: asyncio.Future[Any] | None) -> bool:
    """Wait ``delay`` seconds, or less: until the server says the task moved, or the
    person answered (then True)."""
    heard = asyncio.ensure_future(moved.wait())
    try:
        await asyncio.wait(
            [heard] if answering is None else [heard, answering],
            timeout=delay,
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        heard.cancel()
    return answering is not None and answering.done()
