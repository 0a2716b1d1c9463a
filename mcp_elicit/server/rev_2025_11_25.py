"""Serving the handshake revisions (2025-11-25 and earlier) with the same handlers.

Rules:

* ``initialize`` opens a session; its capabilities decide what may be asked, as per-request
  ``_meta`` does on 2026-07-28.
* A question is a server-to-client request (``elicitation/create``,
  ``sampling/createMessage``, ``roots/list``) sent on the stream of the request being
  handled, awaited in place for up to ``ask_timeout`` seconds (a person is answering).
  Questions asked together go out together. An answer that does not fit is asked again
  once, with the reason; a second bad answer, an error from the client or no answer in
  time counts as ``cancel`` for an elicitation and fails the handler for sampling/roots.
  A question given up (no answer in time, or its request ended first) is withdrawn with
  ``notifications/cancelled``.
* Once a request is answered, a ``Context`` kept past it asks nothing on its stream (a
  ``RuntimeError`` saying the request ended), and sends no progress or log for it.
* A request still running when its session ends answers all the same: -32600 when the
  client deleted the session (HTTP ``DELETE``: its own doing), -32603 when the server
  ended it (shutting down), even when its handler catches the cancellation and returns (or
  fails, a -32042 included) all the same. A question its handler asks after the end is not
  sent, as after a cancel below (logged at INFO: no failure of the tool's own).
* A request the client cancels (``notifications/cancelled``) is not answered, even when its
  handler catches the cancellation and returns (or fails, a -32042 included) all the same,
  and asks nothing more: a question its handler asks after it is not sent (an elicitation
  reads as ``cancel``, sampling and roots fail the handler). The session keeps no trace of
  it.
* URL-mode elicitations carry an ``elicitationId`` (generated when the handler gives
  none; made unique when one the session still waits on has the handler's), remembered by
  the session so ``notifications/elicitation/complete`` reaches only the sessions that
  sent it, and only those of the principal it is completed for (an id a handler chose may
  be in use by several users). ``ctx.require_url`` answers -32042 here; so does a
  handler's own ``URLElicitationRequired``, its steps made as ``ctx.require_url`` makes
  them (a message and a valid URL each, a client that declared URL mode: -32021
  otherwise; an ``elicitationId`` each) keeping what else it gave (a step's ``_meta``,
  the other keys of ``data``); one naming no such step, one whose message is no string
  (JSON-RPC's error message is one), or a step whose ``_meta`` is not an object or has a
  ``progressToken`` neither a string nor an integer, is the handler's fault: a tool's
  ``isError`` (as ``ctx.require_url`` given that URL, and as at 2026-07-28), a prompt's or
  resource's -32603. One holding a value JSON cannot carry is -32603 whatever the handler,
  as a result that cannot be encoded is (logged; the request is answered all the same).
  A -32042 whose steps were made but that is not sent (its handler caught it
  and went on, failed or raised another; it could not be encoded; the client cancelled
  the request) leaves the session waiting on none of their ids; caught and raised again
  (the error, a copy of it, the same step asked again), its steps keep the ids they were
  given, unless the handler changed a step's id in it (the session then waits on the id
  sent) or the session stopped waiting on one meanwhile (completed by the app, say: the
  step is then waited on anew). Withdrawing a step never ends one that another request
  sent under the same id since.
* A question of a tool, prompt or resource asked from a sibling task (``asyncio.TaskGroup``)
  that fails the request (a URL step's -32042, a capability the client did not declare)
  fails it as in the handler's own task, not as the handler's failure over the group (a
  tool's ``isError`` result, a prompt's or resource's -32603), as on 2026-07-28.
* A session subscribes to at most ``MAX_SUBSCRIPTIONS`` resources, each URI at most
  ``MAX_SUBSCRIBED_URI`` characters long (-32600 and -32602 beyond: the client's own
  doing, not a server fault), so a client cannot grow the server's memory by subscribing.
* A request's ``_meta`` progressToken is read as at 2026-07-28 (``wire.meta.progress_token``:
  a string or an integer of at most 64 bits, 2.0 being 2, else -32602): the revision's
  progress page has the same MUST.
* A URI nothing serves is -32002 (what these revisions name for it), not 2026-07-28's -32602,
  for ``resources/subscribe`` as for ``resources/read``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp_elicit.core.mrtr import ELICIT, Ask
from mcp_elicit.core.rev_2025_11_25 import check_method, parse_set_level
from mcp_elicit.core.server import Call
from mcp_elicit.errors import (
    FormSchemaError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    ProtocolError,
    ReplayMismatchError,
    ResourceNotFound,
    ToolError,
    TransportError,
    URLElicitationRequired,
)
from mcp_elicit.log_labels import log_answered_error, request_label, request_where
from mcp_elicit.server.asking import InPlaceAsker, Refused
from mcp_elicit.server.context import Channel, Context
from mcp_elicit.server.sessions import MAX_SUBSCRIBED_URI, MAX_SUBSCRIPTIONS, Session
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.headers import shown
from mcp_elicit.wire.meta import progress_token

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.auth import Principal
    from mcp_elicit.telemetry import Telemetry

__all__ = ["HandshakeChannel", "SessionAsker", "respond_in_session"]

log = logging.getLogger("mcp_elicit.server")


class HandshakeChannel(Channel, Protocol):
    """A request's stream on a handshake session: notifications and requests to the client."""

    async def send(self, message: bytes) -> None: ...


class SessionAsker(InPlaceAsker):
    """Asks questions as server-to-client requests on the request's own stream."""

    def __init__(
        self,
        session: Session,
        send: Callable[[bytes], Awaitable[None]],
        timeout: float,
        telemetry: Telemetry | None = None,
        request_id: jsonrpc.RequestId | None = None,
    ) -> None:
        self.session = session
        self.send = send
        self.timeout = timeout
        self.telemetry = telemetry
        #: The id of the request asking (a question of one the client cancelled is not sent).
        self.request_id = request_id
        self.memo: dict[str, Any] = {}
        #: Set once the request is answered: its stream is over.
        self.ended = False
        #: The -32042 this asker made (``url_required``), sent as it is.
        self.required: URLElicitationRequired | None = None
        #: The ids its steps were given (the session waits on them while ``holds`` says so).
        self._made: list[str] = []
        #: The handler's context (``Dispatch`` sets it): its own -32042's steps are made by it.
        self.context: Context | None = None
        #: Notices on their way to the request's stream (``tell``), sent before its answer.
        self._telling: set[asyncio.Task[None]] = set()

    def tell(self, message: bytes) -> bool:
        """Send a notice of a step this request asked (its completion) on the request's
        own stream; False once the request is answered (``Session.complete`` then queues
        it for the standalone stream). Sent before the answer (``told``)."""
        if self.ended:
            return False
        task = asyncio.get_running_loop().create_task(self._tell(message))
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)
        return True

    async def _tell(self, message: bytes) -> None:
        try:
            await self.send(message)
        except TransportError:  # the stream is closed after all: the standalone stream's, then
            self.session.push(message)

    async def told(self) -> None:
        """The request is answered next: nothing more goes on its stream, and the notices
        ``tell`` took are sent first."""
        self.ended = True
        if self._telling:
            await asyncio.wait(set(self._telling))

    def where(self) -> str:
        ctx = self.context
        if ctx is None:
            return request_where(self.request_id, self.session.id)
        return request_label(ctx.call.method, ctx.call.params, self.request_id, self.session.id)

    async def require_url(self, ask: Ask) -> Any:
        raise self.url_required("This request needs you to complete a step in your browser first", [ask])

    def url_required(self, message: str, asks: list[Ask]) -> URLElicitationRequired:
        """The -32042 that asks ``asks`` (URL steps, checked as ``ctx.elicit_url`` checks
        them), each with the ``elicitationId`` the session then waits on (``_remade``)."""
        self.required = URLElicitationRequired(message, {"elicitations": self._remade(asks)})
        return self.required

    def own_url_required(self, ctx: Context, raised: URLElicitationRequired) -> URLElicitationRequired:
        """``raised``, a handler's own -32042, made as ``url_required`` makes one: its steps
        checked and made by ``ctx.url_steps`` (a ``ValueError`` for one that is no URL step,
        and for a message that is no string, which JSON-RPC's error would not carry),
        each keeping the ``_meta`` it was given (an object whose ``progressToken``, if any,
        is a string or an integer, else a ``ValueError``), and the other keys of its ``data``
        sent as given (the schema admits any)."""
        asks = ctx.url_steps(raised)
        if not isinstance(raised.message, str):  # the error's own message: JSON-RPC's is a string
            raise ValueError(
                "URLElicitationRequired's message must be a string saying why the request needs "
                f"the steps (the -32042's error message), not {type(raised.message).__name__}"
            )
        data: Mapping[str, Any] = raised.data  # url_steps checked it: an object, its steps objects
        metas = [step.get("_meta") for step in data["elicitations"]]
        for meta in metas:
            if meta is not None and not isinstance(meta, Mapping):
                raise ValueError(f"a URL step's _meta must be an object (a dict), not {type(meta).__name__}")
            token = meta.get("progressToken", 0) if meta is not None else 0
            if isinstance(token, bool) or not isinstance(token, (str, int)):
                raise ValueError(
                    f"a URL step's _meta progressToken must be a string or an integer, not {token!r}"
                )
        elicitations = self._remade(asks)
        for params, meta in zip(elicitations, metas, strict=True):
            if meta is not None:
                params["_meta"] = dict(meta)
        self.required = URLElicitationRequired(raised.message, {**data, "elicitations": elicitations})
        return self.required

    def _remade(self, asks: list[Ask]) -> list[dict[str, Any]]:
        """The params of a -32042's steps ``asks``, each with the ``elicitationId`` the
        session then waits on. They replace the -32042 this asker made before, if any (its
        handler caught it and raises, or asks, again; it was never sent): a step under the
        id a step of that one was given keeps it while the session still waits on it for
        this asker (the same step under the same id, not registered twice with a suffix),
        and the session stops waiting on the others. The ids are this asker's record, not
        the error's ``data``, which the handler may have changed."""
        earlier = [i for i in self._made if self.session.holds(i, self)]
        kept: list[str | None] = []
        for ask in asks:
            given = ask.params.get("elicitationId")
            kept.append(given if given in earlier else None)
            if given in earlier:
                earlier.remove(given)
        for sent_as in earlier:
            self.session.withdraw(sent_as, self)
        self.required = None
        steps = [
            self._prepare(a) if k is None else {**a.params, "elicitationId": k}
            for a, k in zip(asks, kept, strict=True)
        ]
        self._made = [p["elicitationId"] for p in steps]
        return steps

    def as_made(self, error: URLElicitationRequired) -> bool:
        """Whether ``error`` is the -32042 this asker made, its steps still under the ids
        they were given (the handler may have changed them in the error it caught)."""
        if error is not self.required:
            return False
        steps = error.data.get("elicitations") if isinstance(error.data, Mapping) else None
        if not isinstance(steps, list) or not all(isinstance(s, Mapping) for s in steps):
            return False
        return [s.get("elicitationId") for s in steps] == self._made

    def unsent(self) -> None:
        """The -32042 this asker made is not the request's answer (the handler went on,
        failed, or raised another), or could not be sent: its steps never reached the
        client, so the session stops waiting on their ids."""
        self._remade([])

    def _prepare(self, ask: Ask) -> dict[str, Any]:
        """The request's params: a URL step gets its ``elicitationId`` (kept by the session)."""
        params = dict(ask.params)
        if params.get("mode") == "url":
            given = params.get("elicitationId") or str(uuid.uuid4())
            params["elicitationId"] = self.session.expect(given, self)
        return params

    def _ended(self, ask: Ask, prepared: Any, answer: Any) -> None:
        """A URL step not accepted (declined, cancelled, unanswered) will not complete."""
        params: dict[str, Any] = prepared
        if params.get("mode") == "url" and (not isinstance(answer, dict) or answer.get("action") != "accept"):
            self.session.withdraw(params["elicitationId"], self)

    async def _exchange(self, ask: Ask, prepared: Any, note: str | None) -> Any:
        params: dict[str, Any] = prepared
        if self.request_id is not None and self.request_id in self.session.cancelled:
            # its handler caught the cancellation and asks on: the client has given it up
            raise Refused(f"the client cancelled request {shown(self.request_id)}; {ask.method} was not sent")
        if self.session.closed:  # its handler caught the session's end and asks on: no failure of its own
            by = (
                "the client ended it (HTTP DELETE)" if self.session.deleted else "the server is shutting down"
            )
            raise Refused(f"the session ended ({by}); {ask.method} was not sent")
        if note is not None and ask.method == ELICIT:
            params = {**params, "message": f"{note}\n\n{params.get('message', '')}".rstrip()}
        telemetry = self.telemetry
        if telemetry is None or not telemetry.active:
            reply = await self.session.request(self.send, ask.method, params, timeout=self.timeout)
        else:  # a span of its own (kind CLIENT), its context sent along in params._meta
            session, rid = self.session, self.session.new_request_id()
            with telemetry.request(
                ask.method,
                rid,
                params,
                version=session.version,
                session=session.id,
                incoming=False,
                network=session.network,
            ) as traced:
                params = telemetry.with_context({"params": params})["params"]
                reply = await session.request(
                    self.send, ask.method, params, timeout=self.timeout, rid=rid, telemetry=telemetry
                )
                if traced is not None:
                    traced.read(reply)
        if "error" in reply:
            # quoted and cut short: it reaches the log, which a newline or an escape would forge or act on
            said = shown(reply["error"].get("message", "error"))
            raise Refused(f"the client refused {ask.method}: {said}")
        return reply["result"]


def _call(message: jsonrpc.Request, session: Session) -> Call:
    params = message.params or {}
    meta = params.get("_meta")
    token = progress_token(meta.get("progressToken")) if isinstance(meta, dict) else None
    return Call(
        id=message.id,
        method=message.method,
        params=params,
        revision=session.version,
        capabilities=session.capabilities,
        client_info=session.client_info,
        log_level=session.log_level,
        progress_token=token,
    )


async def respond_in_session(
    server: Server,
    message: jsonrpc.Request,
    session: Session,
    *,
    channel: HandshakeChannel,
    principal: Principal | None,
) -> bytes | None:
    """Answer one request of an initialized session: the encoded response, or None when
    the client cancelled the request (no response is due)."""
    if message.id in session.inflight:  # two requests in flight under one id: refuse the second
        return jsonrpc.encode_error(
            message.id,
            InvalidRequest(f"Invalid request: id {message.id!r} is already in use by a request in flight"),
        )
    task = asyncio.current_task()
    if task is not None:
        session.inflight[message.id] = task
    failed: bytes | None = None  # the error that answers the request, when it failed
    try:
        result = await _dispatch(server, message, session, channel, principal)
    except asyncio.CancelledError:
        if task is None:
            raise
        if message.id in session.cancelled:
            session.cancelled.discard(message.id)
            task.uncancel()
            log.info("%s cancelled by the client", _label(message, session))
            return None
        if not session.closed:
            raise
        # The session ended under the request: answer, rather than drop the connection.
        task.uncancel()
        return jsonrpc.encode_error(message.id, _ended_with(message, session))
    except ResourceNotFound as exc:  # these revisions name -32002 for it
        log_answered_error(log, message.method, message.params, message.id, exc.for_handshake(), session.id)
        failed = jsonrpc.encode_error(message.id, exc.for_handshake())
    except ProtocolError as exc:
        log_answered_error(log, message.method, message.params, message.id, exc, session.id)
        try:
            failed = jsonrpc.encode_error(message.id, exc)
        except TypeError:  # a value JSON cannot carry in its data (a handler's own -32042's)
            log.exception("%s: the error could not be encoded", _label(message, session))
            failed = jsonrpc.encode_error(message.id, InternalError("Internal error"))
    except (ReplayMismatchError, FormSchemaError, ToolError, TransportError) as exc:  # said on purpose
        log.error("%s: %s", _label(message, session), exc)
        failed = jsonrpc.encode_error(message.id, InternalError(f"Internal error: {exc}"))
    except Exception:
        log.exception("%s failed", _label(message, session))
        failed = jsonrpc.encode_error(message.id, InternalError("Internal error"))
    finally:
        session.inflight.pop(message.id, None)
        ignored = message.id in session.cancelled  # its handler caught the cancellation
        session.cancelled.discard(message.id)
    if ignored and task is not None:  # and returned (or failed) all the same: nothing is sent
        task.uncancel()
        log.info("%s cancelled by the client; what its handler returned is dropped", _label(message, session))
        return None
    if session.closed and task is not None:  # it ended under the handler, which went on all the same
        task.uncancel()
        return jsonrpc.encode_error(message.id, _ended_with(message, session))
    if failed is not None:
        return failed
    try:
        return jsonrpc.encode_result(message.id, result)
    except TypeError:  # a value JSON cannot carry got into the result
        log.exception("%s: the result could not be encoded", _label(message, session))
        return jsonrpc.encode_error(message.id, InternalError("Internal error"))


def _label(message: jsonrpc.Request, session: Session) -> str:
    """The request, in its session, as a log line names it (``log_labels``)."""
    return request_label(message.method, message.params, message.id, session.id)


def _ended_with(message: jsonrpc.Request, session: Session) -> ProtocolError:
    """The answer of a request its closed ``session`` cut short. The client's own DELETE
    is -32600 (its own doing: a response, not the silence a ``notifications/cancelled``
    request gets, since the client named no request to give up and its stream is open);
    the server ending it (shutting down) is -32603."""
    if session.deleted:
        log.info("%s ended with its session (deleted by the client)", _label(message, session))
        return InvalidRequest(
            "Invalid request: the client ended this session (HTTP DELETE) before the request "
            "finished; it was stopped, and any question it was waiting on withdrawn"
        )
    log.info("%s ended with its session", _label(message, session))
    return InternalError(
        "Internal error: the session ended before the request finished (the server is shutting down)"
    )


async def _dispatch(
    server: Server,
    message: jsonrpc.Request,
    session: Session,
    channel: HandshakeChannel,
    principal: Principal | None,
) -> dict[str, Any]:
    method = message.method
    params = message.params or {}
    check_method(method)
    if method == "initialize":
        raise InvalidRequest("Invalid request: this session is already initialized")
    if method == "ping":
        return {}
    server.core.check_offered(method)
    if method == "logging/setLevel":
        session.log_level = parse_set_level(params)
        return {}
    if method in ("resources/subscribe", "resources/unsubscribe"):
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams(f'Invalid params: {method} needs "uri" (a string)')
        if method == "resources/unsubscribe":
            session.subscriptions.pop(uri, None)
            return {}
        if len(uri) > MAX_SUBSCRIBED_URI:
            raise InvalidParams(
                f'Invalid params: "uri" is {len(uri)} characters long; '
                f"a subscription may name at most {MAX_SUBSCRIBED_URI}"
            )
        server.check_subscribable(uri, principal)  # -32002, as resources/read answers it
        if uri not in session.subscriptions and len(session.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise InvalidRequest(
                f"Invalid request: this session holds its limit of {MAX_SUBSCRIPTIONS} resource "
                "subscriptions; unsubscribe from one (resources/unsubscribe) first"
            )
        session.subscriptions[uri] = principal
        return {}
    asker = SessionAsker(session, channel.send, server.ask_timeout, server.telemetry, message.id)
    sent = False  # the -32042 the asker made is the answer, and can be encoded
    try:
        return await server.handle(_call(message, session), channel=channel, principal=principal, asker=asker)
    except URLElicitationRequired as exc:  # the handler's own, caught here: no layer of its own
        if asker.as_made(exc) or asker.context is None:  # ctx.require_url's, made so already
            sent = asker.as_made(exc) and _encodable(exc)
            raise
        try:
            required = asker.own_url_required(asker.context, exc)
        except ValueError as bad:  # a step it cannot send: a tool's isError, as ctx.require_url's
            result = server.tool_failed(asker.context.call, bad, asker.where())
            if result is None:  # a prompt's or a resource's: -32603, as at 2026-07-28
                raise
            return result
        sent = _encodable(required)
        raise required from None
    finally:
        # steps made but never sent (nor answered: the client cancelled the request, or the
        # session ended)
        if not sent or message.id in session.cancelled or session.closed:
            asker.unsent()
        # a Context kept past its request asks nothing on the request's ended stream
        await asker.told()


def _encodable(error: ProtocolError) -> bool:
    """Whether ``error`` can be sent (``respond_in_session`` answers -32603 otherwise)."""
    try:
        jsonrpc.encode_error(0, error)
    except TypeError:
        return False
    return True
