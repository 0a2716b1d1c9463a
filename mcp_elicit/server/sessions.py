"""Sessions of the handshake revisions (2025-11-25 and earlier).

Rules:

* A session is created by ``initialize``; its id is unguessable visible ASCII
  (``secrets.token_urlsafe``, 192 bits), after ``prefix`` (empty unless the HTTP
  transport names its instance's route: ``a.``). When the server authenticates, a session belongs to the
  principal that created it: another principal presenting its id finds nothing (404),
  exactly like an unknown id.
* Sessions are bounded in number and expire when idle: not in use (no request in
  flight, no question pending, no open standalone stream) for ``idle_timeout`` seconds
  since it was last seen or last stopped being in use. An expired or deleted session is
  gone (404), and closing one cancels what it had in flight and every question it was
  waiting on — nothing is left behind. A session the client deleted says so (``deleted``):
  its requests cut short answer -32600, the client's own doing, not -32603. At the bound, the least recently seen session
  that is not in use makes room; when every session is in use, a new one is refused (503).
  An authenticated principal holds at most ``max_sessions_per_principal`` of them (a
  tenth of ``max_sessions`` when not given; above it is a ``ConfigError``): past
  it, its own least recently seen idle session makes room, and when all of its own are in
  use it alone is refused (``PrincipalLimitReached``: -32600, HTTP 429, its own doing), so
  no one principal can take every session or push everyone else's out. Unauthenticated callers are bounded by ``max_sessions`` only.
* Server-to-client requests wait on a future keyed by their id; the client's response
  resolves it. The wait has its own budget (a person is answering), not the request
  timeout; cancellation and timeouts remove the entry.
* No server-to-client request goes out before the client's ``notifications/initialized``
  (2025-11-25 lifecycle: only pings and logging may precede it): one asked before waits
  for it, ``initialized_wait`` seconds at most (``INITIALIZED_WAIT``, 10 s, or the
  question's own budget when shorter), and that wait is not taken out of the budget: the
  person has all of it once the question is sent. Past it, nothing was sent: ``ClientNotReady``
  (a ``TimeoutError``; its asker's one warning names the request): a client that never
  sends it is asked nothing, and its question ends soon, not after ``ask_timeout``.
* A session waits to hear the URL elicitations it sent finish, by id, until they
  complete or end without their page (declined, cancelled, unanswered in time, given
  up); at most ``MAX_ELICITATIONS`` ids, the least recently sent making room. An id is
  unique per elicitation: a question asked under an id the handler chose that one still
  waiting in the session was sent under (a handler may give every step of a kind one id)
  is sent under an id of its own, the handler's with a random suffix. Completing the
  handler's id completes every question asked under it, each notice naming the id its
  question was sent with.
* A URL step's completion notice goes on the stream of the request that asked it while
  that request runs (``RequestStream.tell``: a step waited on in place), before its answer;
  otherwise (the request answered, with a -32042 say) it is not tied to a running request.
  Notifications not tied to one (those, resource updates) go to the session's standalone
  stream, or wait in a small bounded queue until one opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from mcp_elicit.core.rev_2025_11_25 import Handshake
from mcp_elicit.core.subscriptions import MAX_URI
from mcp_elicit.errors import ProtocolError, TransportError
from mcp_elicit.log_labels import session_label
from mcp_elicit.server.asking import ClientNotReady
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.options import share
from mcp_elicit.server.shares import share_held
from mcp_elicit.telemetry import Telemetry, notifying
from mcp_elicit.wire import jsonrpc

__all__ = [
    "INITIALIZED_WAIT",
    "MAX_ELICITATIONS",
    "MAX_SUBSCRIBED_URI",
    "MAX_SUBSCRIPTIONS",
    "RequestStream",
    "Session",
    "Sessions",
]

log = logging.getLogger("mcp_elicit.sessions")

#: The most URL elicitations a session waits to hear finished; past it, the oldest is forgotten.
MAX_ELICITATIONS = 256
#: The most resources one session may be subscribed to, and the longest URI it may name.
MAX_SUBSCRIPTIONS = 256
MAX_SUBSCRIBED_URI = MAX_URI
#: How long a question waits for the client's ``notifications/initialized`` (which a client
#: sends right after the ``InitializeResult``), apart from the time it waits for its answer.
INITIALIZED_WAIT = 10.0

Send = Callable[[bytes], Awaitable[None]]
COMPLETE = "notifications/elicitation/complete"


@runtime_checkable
class RequestStream(Protocol):
    """Who asked a URL step (``Session.expect``'s ``owner``) when its request's own stream
    can carry the step's completion notice."""

    def tell(self, message: bytes) -> bool:
        """Send ``message`` on the asking request's stream, before its answer; False once
        that request is over (nothing is sent)."""
        ...


class Session:
    def __init__(self, sid: str, handshake: Handshake, principal: str | None, now: float) -> None:
        self.id = sid
        self.version = handshake.version
        self.capabilities = handshake.capabilities
        self.client_info = handshake.client_info
        #: The kinds of server capability its ``initialize`` result declared (set there):
        #: only their ``list_changed`` notifications are sent to it.
        self.offered: frozenset[str] = frozenset()
        self.principal = principal
        #: The transport that opened it (``Server.open_session``): its stop ends it.
        self.transport: object = None
        self.started = now
        #: The transport's attributes for telemetry (``Telemetry.request``), set by it.
        self.network: Mapping[str, str | int] | None = None
        self._initialized = asyncio.Event()
        #: Seconds a question waits for ``notifications/initialized`` (see the module's rules).
        self.initialized_wait = INITIALIZED_WAIT
        self.log_level: str | None = None
        #: The resources subscribed to, each with the caller that subscribed (its updates
        #: reach the session only while that caller may read it).
        self.subscriptions: dict[str, Principal | None] = {}
        #: URL elicitations sent and not yet finished: the ids the questions under each id
        #: the handler gave were sent with (a handler may use one id in several requests),
        #: least recently sent first.
        self.elicitations: dict[str, list[str]] = {}
        #: The id the handler gave, of each id sent and not yet finished.
        self._sent_for: dict[str, str] = {}
        #: Who asked each id sent and not yet finished (``expect``'s ``owner``): an id freed
        #: (completed, say) and sent again by another request is no longer the first's.
        self._owners: dict[str, object] = {}
        self.pending: dict[jsonrpc.RequestId, asyncio.Future[dict[str, Any]]] = {}
        self.inflight: dict[jsonrpc.RequestId, asyncio.Task[Any]] = {}
        #: Requests the client cancelled (``notifications/cancelled``): no response is sent.
        self.cancelled: set[jsonrpc.RequestId] = set()
        #: The transport's resumable request streams, by stream id (HTTP only).
        self.streams: dict[str, Any] = {}
        #: The ids of its finished streams, oldest first: how many it keeps is bounded,
        #: apart for those whose answer was written to their connection and the others.
        self.finished_streams: deque[str] = deque()
        self.unanswered_streams: deque[str] = deque()
        #: Standalone streams (``GET``) the client holds open now, set by the transport.
        self.listeners = 0
        self.last_seen = now
        self.closed = False
        #: The client ended the session itself (HTTP ``DELETE``), not the server.
        self.deleted = False
        self._ids = itertools.count(1)
        self._queue: deque[bytes] = deque(maxlen=100)
        self._wakeup = asyncio.Event()

    @property
    def initialized(self) -> bool:
        """The client sent ``notifications/initialized``: it may be asked questions."""
        return self._initialized.is_set()

    @initialized.setter
    def initialized(self, value: bool) -> None:
        if value:
            self._initialized.set()
        else:
            self._initialized.clear()

    @property
    def in_use(self) -> bool:
        """A request in flight, a question pending or a standalone stream open: never idle."""
        return bool(self.inflight or self.pending or self.listeners)

    # ---- questions to the client ---------------------------------------------------

    def new_request_id(self) -> str:
        """An id for a request to the client, unique in this session."""
        return f"s-{next(self._ids)}"

    async def request(
        self,
        send: Send,
        method: str,
        params: Mapping[str, Any],
        *,
        timeout: float,
        rid: str | None = None,
        telemetry: Telemetry | None = None,
    ) -> dict[str, Any]:
        """Send a request to the client and wait (up to ``timeout``) for its response message.

        When the time is up, or the request it belongs to ends first (cancelled by the
        client, its stream closed), the client is told the question is withdrawn
        (``notifications/cancelled``, best effort), so a person stops being asked; then
        TimeoutError, or the cancellation goes on. ``rid``: from :meth:`new_request_id`.
        Before the client's ``notifications/initialized`` nothing is sent: it is waited for
        ``initialized_wait`` seconds at most (``timeout`` when shorter), apart from ``timeout``."""
        if not self._initialized.is_set():
            await self._await_initialized(method, min(self.initialized_wait, timeout))
        if self.closed:
            raise TransportError("the session is closed")
        rid = rid or self.new_request_id()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[rid] = future
        try:
            await send(jsonrpc.encode_request(rid, method, dict(params)))
            try:
                # not wait_for: on Python 3.11 it returns an answer that came in the same
                # turn as the cancellation, and the handler goes on as if not cancelled
                async with asyncio.timeout(timeout):
                    return await future
            except (TimeoutError, asyncio.CancelledError) as exc:
                timed_out = isinstance(exc, TimeoutError)
                reason = f"no answer within {timeout:g} s" if timed_out else "the request it belongs to ended"
                withdraw, note = "notifications/cancelled", {"requestId": rid, "reason": reason}
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(1.0):
                        with self._sending(telemetry, withdraw, note) as sent:
                            await send(jsonrpc.encode_notification(withdraw, sent))
                raise
        finally:
            self.pending.pop(rid, None)

    async def _await_initialized(self, method: str, timeout: float) -> None:
        """Wait up to ``timeout`` for ``notifications/initialized``."""
        try:
            async with asyncio.timeout(timeout):  # not wait_for (see ``request``)
                await self._initialized.wait()
        except TimeoutError:
            reason = (
                f"the client sent no notifications/initialized within {timeout:g} s; {method} was not sent"
            )
            raise ClientNotReady(reason) from None  # its asker logs it, naming the request

    def resolve(self, message: jsonrpc.Response | jsonrpc.ErrorResponse) -> bool:
        """Hand the client's response to the question waiting for it; False when none is."""
        future = self.pending.get(message.id) if message.id is not None else None
        if future is None or future.done():
            return False
        if isinstance(message, jsonrpc.Response):
            future.set_result({"result": message.result})
        else:
            future.set_result({"error": message.error})
        return True

    def refuse(self, rid: jsonrpc.RequestId, reason: str) -> bool:
        """Give up the question ``rid`` whose answer could not be read, as if the client had
        answered it with an error; False when no question waits under that id."""
        return self.resolve(jsonrpc.ErrorResponse(rid, {"code": -32600, "message": reason}))

    def cancel(self, rid: object) -> bool:
        """Cancel the in-flight request ``rid`` at the client's request (a string or an
        integer: ``true`` names no request, though Python holds it equal to 1)."""
        task = self.inflight.get(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
        if task is None:
            return False
        self.cancelled.add(rid)  # type: ignore[arg-type]
        task.cancel()
        return True

    # ---- URL elicitations ------------------------------------------------------------

    def expect(self, elicitation_id: str, owner: object = None) -> str:
        """A URL elicitation is asked under ``elicitation_id`` (by ``owner``, its asker):
        the id to send it with, whose completion is then awaited. That is
        ``elicitation_id`` itself unless a question still waiting was sent with it; then a
        new one, ``elicitation_id`` with a random suffix. Past ``MAX_ELICITATIONS`` ids, the
        least recently sent one is forgotten (its completion notice, which is optional, is
        then not sent)."""
        sent_as = elicitation_id
        if sent_as in self._sent_for:
            sent_as = f"{elicitation_id}#{secrets.token_hex(8)}"
        sent = self.elicitations.pop(elicitation_id, [])
        sent.append(sent_as)
        self.elicitations[elicitation_id] = sent
        self._sent_for[sent_as] = elicitation_id
        self._owners[sent_as] = owner
        while len(sent) > MAX_ELICITATIONS:
            self._forget(sent.pop(0))
        while len(self.elicitations) > MAX_ELICITATIONS:
            for forgotten in self.elicitations.pop(next(iter(self.elicitations))):
                self._forget(forgotten)
        return sent_as

    def holds(self, sent_as: str, owner: object) -> bool:
        """Whether the question ``owner`` sent as ``sent_as`` is still waited on: not once
        it finished, even if another question was sent under that id since."""
        return sent_as in self._sent_for and self._owners.get(sent_as) is owner

    def withdraw(self, sent_as: str, owner: object) -> None:
        """``abandon`` the question ``owner`` sent as ``sent_as``, if it is still waited on
        (``holds``); a question sent under that id since is another's, and left alone."""
        if self.holds(sent_as, owner):
            self.abandon(sent_as)

    def abandon(self, elicitation_id: str) -> None:
        """One question ended without its page (declined, cancelled, unanswered in time,
        given up): nothing will complete it. ``elicitation_id``: the id it was sent with,
        or the handler's (then its least recently sent question under it)."""
        given = self._sent_for.get(elicitation_id)
        if given is None:
            sent_as = self.elicitations.get(elicitation_id)
            if not sent_as:
                return
            given, elicitation_id = elicitation_id, sent_as[0]
        self._forget(elicitation_id)
        sent = self.elicitations[given]
        sent.remove(elicitation_id)
        if not sent:
            del self.elicitations[given]

    def complete(self, elicitation_id: str, telemetry: Telemetry | None) -> bool:
        """The step of the handler's ``elicitation_id`` is done: tell the client of each
        question asked under it (``notifications/elicitation/complete``, naming the id it
        was sent with) on the stream of the request that asked it while that request runs,
        else on the standalone stream. False when no question waited under it."""
        owners = [self._owners[sent_as] for sent_as in self.elicitations.get(elicitation_id, [])]
        for sent_as, owner in zip(self.completed(elicitation_id), owners, strict=True):
            with self._sending(telemetry, COMPLETE, {"elicitationId": sent_as}) as params:
                message = jsonrpc.encode_notification(COMPLETE, params)
            if not (isinstance(owner, RequestStream) and owner.tell(message)):
                self.push(message)
        return bool(owners)

    def completed(self, elicitation_id: str) -> list[str]:
        """The step of the handler's ``elicitation_id`` is done: no question asked under it
        waits any more. The ids they were sent with, least recently sent first."""
        sent = self.elicitations.pop(elicitation_id, [])
        for sent_as in sent:
            self._forget(sent_as)
        return sent

    def _forget(self, sent_as: str) -> None:
        del self._sent_for[sent_as]
        del self._owners[sent_as]

    # ---- the standalone stream -------------------------------------------------

    def notify(self, method: str, params: Mapping[str, Any] | None, telemetry: Telemetry | None) -> None:
        """Queue a notification for the standalone stream (in its span, with ``telemetry``)."""
        with self._sending(telemetry, method, params) as sent:
            self.push(jsonrpc.encode_notification(method, sent))

    def _sending(
        self, telemetry: Telemetry | None, method: str, params: Mapping[str, Any] | None
    ) -> contextlib.AbstractContextManager[Mapping[str, Any] | None]:
        """One notification this session's server sends, in its span when tracing."""
        version, network = self.version, self.network
        return notifying(
            telemetry, method, params, incoming=False, version=version, session=self.id, network=network
        )

    def push(self, data: bytes) -> None:
        """Queue a session-level message for the standalone stream."""
        self._queue.append(data)
        self._wakeup.set()

    async def next_pushed(self, timeout: float | None) -> bytes | None:
        """The next queued message, or None after ``timeout`` (for keep-alives; None
        waits for a message however long it takes)."""
        if not self._queue:
            self._wakeup.clear()
            try:
                async with asyncio.timeout(timeout):  # not wait_for (see ``request``)
                    await self._wakeup.wait()
            except TimeoutError:
                return None
        return self._queue.popleft() if self._queue else None

    # ---- the end -----------------------------------------------------------------

    def close(self, *, deleted: bool = False) -> None:
        """End the session: what it had in flight is cancelled. ``deleted``: the client
        ended it (HTTP ``DELETE``), which its requests cut short answer with."""
        if self.closed:
            return
        self.closed = True
        self.deleted = deleted
        for future in self.pending.values():
            if not future.done():
                future.cancel()
        for task in list(self.inflight.values()):
            task.cancel()
        self._wakeup.set()


class Sessions:
    """Every live session of one server."""

    def __init__(
        self,
        *,
        max_sessions: int = 1000,
        max_sessions_per_principal: int | None = None,
        idle_timeout: float = 1800.0,
        clock: Callable[[], float] = time.monotonic,
        ended: Callable[[str, Mapping[str, str | int] | None, float], None] | None = None,
    ) -> None:
        self.max_sessions = max_sessions
        #: How many of them one authenticated principal holds at most.
        self.max_sessions_per_principal = share(
            "max_sessions_per_principal", max_sessions_per_principal, "max_sessions", max_sessions
        )
        self.idle_timeout = idle_timeout
        self.clock = clock
        #: Told of each session that ends: its revision, network attributes and seconds.
        self.ended = ended
        #: What every new session id starts with (the HTTP transport's ``route``, with a dot).
        self.prefix = ""
        #: Whether an HTTP transport set ``prefix`` (another may not set a different one).
        self.routed = False
        self._live: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._live)

    def create(self, handshake: Handshake, principal: str | None) -> Session:
        now = self.clock()
        self._expire(now)
        if principal is not None:
            held = [s for s in self._live.values() if s.principal == principal]
            if len(held) >= self.max_sessions_per_principal:
                idle = [s for s in held if not s.in_use]
                if not idle:
                    raise share_held(
                        "sessions",
                        principal,
                        self.max_sessions_per_principal,
                        "max_sessions_per_principal",
                        "all of them are in use: end one (DELETE) first",
                    )
                self.close(min(idle, key=lambda s: s.last_seen).id)
        if len(self._live) >= self.max_sessions:
            idle = [s for s in self._live.values() if not s.in_use]
            if not idle:
                raise ProtocolError("Too many sessions; try again later", http_status=503)
            self.close(min(idle, key=lambda s: s.last_seen).id)
        session = Session(self.prefix + secrets.token_urlsafe(24), handshake, principal, now)
        self._live[session.id] = session
        return session

    def get(self, sid: str, principal: str | None) -> Session | None:
        session = self._live.get(sid)
        if session is None:
            return None
        now = self.clock()
        if now - session.last_seen > self.idle_timeout and not session.in_use:
            self.close(sid)
            return None
        if session.principal != principal:
            return None
        session.last_seen = now
        return session

    def seen(self, session: Session) -> None:
        """``session`` stopped being in use (a request answered, a stream closed): its idle
        time starts now."""
        session.last_seen = self.clock()

    def close(self, sid: str, *, deleted: bool = False) -> bool:
        """End session ``sid`` (``deleted``: at the client's request); False when unknown."""
        session = self._live.pop(sid, None)
        if session is None:
            return False
        session.close(deleted=deleted)
        if self.ended is not None:
            self.ended(session.version, session.network, self.clock() - session.started)
        return True

    def close_all(self) -> None:
        for sid in list(self._live):
            self.close(sid)

    def awaiting(self, elicitation_id: str, principal: str | None) -> list[Session]:
        """The sessions of ``principal`` that sent a URL elicitation ``elicitation_id`` and
        have not heard it finish: never another principal's, whatever the id."""
        return [
            s for s in self._live.values() if s.principal == principal and elicitation_id in s.elicitations
        ]

    def complete(self, elicitation_id: str, principal: str | None, telemetry: Telemetry | None) -> bool:
        """Tell the sessions ``awaiting`` the step that it is done; False when none waits."""
        sessions = self.awaiting(elicitation_id, principal)
        for session in sessions:
            session.complete(elicitation_id, telemetry)
        return bool(sessions)

    def live(self) -> list[Session]:
        """The sessions open now."""
        return list(self._live.values())

    def subscribed(self, uri: str) -> list[Session]:
        return [s for s in self._live.values() if uri in s.subscriptions]

    def _expire(self, now: float) -> None:
        for sid, session in list(self._live.items()):
            if now - session.last_seen > self.idle_timeout and not session.in_use:
                log.info("session %s expired after %.0f s idle", session_label(sid), now - session.last_seen)
                self.close(sid)
