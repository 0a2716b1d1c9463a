"""Streamable HTTP, server side: the routes of 2025-11-25 (and earlier) sessions.

Rules: a request names its session with ``Mcp-Session-Id``; an unknown, expired or
foreign session is 404 (the client starts a new one); a version header other than the
session's is 400, on POST, GET and DELETE alike; a GET's refusal names in ``Vary`` the
headers that chose it, as a GET's 405 does, so that a cache never gives a 404 of one
session to another session's GET, nor to a browser. POSTed notifications and responses are
202 (a response that does not decode is 400 without an id, and the question it answers
is given up); requests run with a channel that can ask the client questions on their own
stream. ``GET`` opens the session's standalone stream (completions, resource updates,
keep-alives), written to one connection at a time: a second ``GET`` replaces the first
(``http_streams``). With ``Last-Event-ID`` it resumes that stream or a request's: one it
cannot resume is 400, never 404, which would tell the client to drop a session
that is still open. ``DELETE`` ends the session: a request of it still running (waiting for
a person, say) answers -32600 saying the client ended the session (``rev_2025_11_25``).
A session has at most ``max_in_flight`` requests running at once (1024; one whose stream
dropped counts until it is given up, ``resume_within`` later): one more is refused at
once, -32600 with its id and HTTP 429, so a client cannot pile up handlers waiting for a
person without end (stdio has the same bound, ``StdioServer(max_in_flight=)``).

Routes: an instance given a ``route`` (``StreamableHTTP(route="a")``, ``serve --route a``)
starts every session id with it and a dot (``a.`` and 32 random URL-safe characters), so
that a load balancer can send a session's requests to the instance holding it by the id
alone (``initialize``, which has none, goes anywhere). A route is 1 to 32 letters,
digits, ``-`` or ``_``, and names the process: every ``StreamableHTTP`` of one ``Server``
(one session table) has the same one, or the second is refused (``claim_route``). An id
naming another route is still a 404 (the instance cannot tell a misrouted request from
one whose instance is gone, and the client's answer to 404, a new session, is right for
that), but its message names both routes, and the log says once per route that the
balancer does not route by the session id.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Final

from mcp_elicit.errors import ConfigError, InvalidRequest, ProtocolError
from mcp_elicit.log_labels import log_stray_response
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.sessions import Session, Sessions
from mcp_elicit.telemetry import notifying
from mcp_elicit.transports.endpoint_page import VARY
from mcp_elicit.transports.http_exchange import (
    Exchange,
    Receive,
    Send,
    SessionChannel,
    acceptable,
    accepted,
    error_response,
)
from mcp_elicit.transports.http_streams import (
    ResumableExchange,
    StandaloneStream,
    disconnected,
    parse_event_id,
)
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.headers import OWS, VERSION_HEADER, shown

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

__all__ = ["SessionRoutes", "claim_route", "route_prefix"]

log = logging.getLogger("mcp_elicit.http")

_ROUTE: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: The most foreign routes warned about (once each) in the log.
_WARNED_ROUTES: Final = 32
#: What a GET's refusal names in ``Vary``: the headers that chose it over the stream, the
#: bare 405 or the page (a GET without a session), all at one URL (``endpoint_page``).
_GET_VARY: Final = [(b"vary", VARY.encode("ascii"))]


def route_prefix(route: str | None) -> str:
    """What the session ids of an instance with ``route`` start with ("" for None)."""
    if route is None:
        return ""
    if not isinstance(route, str) or not _ROUTE.fullmatch(route):
        raise ConfigError(
            f"route must be 1 to 32 letters, digits, '-' or '_' (it starts every session id, "
            f"before a '.'), not {route!r}"
        )
    return route + "."


def claim_route(sessions: Sessions, route: str | None) -> None:
    """Start every new session id of ``sessions`` with ``route`` (and a dot). One table,
    one route: a route names the process holding the sessions, so a second transport of
    the same server naming another route (or none, after one did) is a ``ConfigError``,
    not a rename of the first one's sessions."""
    prefix = route_prefix(route)
    if sessions.routed and sessions.prefix != prefix:
        raise ConfigError(
            f"this Server's sessions are already served with {_shown(sessions.prefix[:-1] or None)} by "
            f"another StreamableHTTP, not {_shown(route)}: a route names the process holding the "
            "sessions, so every StreamableHTTP of one Server has the same route"
        )
    sessions.prefix, sessions.routed = prefix, True


def _shown(route: str | None) -> str:
    return f"route {route!r}" if route is not None else "no route"


class SessionRoutes:
    """The session half of ``StreamableHTTP`` (a mixin: it needs ``server``, ``keepalive``,
    ``resume_within`` and ``_run_watched`` from the app)."""

    server: Server
    keepalive: float | None
    resume_within: float
    max_in_flight: int
    _running: dict[str, int]
    route: str | None
    _misrouted: set[str]

    def _run_watched(
        self,
        exchange: Exchange,
        message: jsonrpc.Request,
        receive: Receive,
        work: Awaitable[tuple[bytes | None, int]],
    ) -> Awaitable[None]:
        raise NotImplementedError

    def _session(self, sid: str, principal: Principal | None) -> Session | None:
        return self.server.sessions.get(sid, principal.subject if principal else None)

    def _not_found(self, sid: str) -> InvalidRequest:
        """The 404 for a session this instance does not hold; when its id names another
        route, saying so (and, once per route, in the log): the balancer sent it here."""
        theirs, dot, _ = sid.partition(".")
        if not dot or theirs == self.route or not _ROUTE.fullmatch(theirs):
            return InvalidRequest("Session not found: initialize a new session", http_status=404)
        ours = _shown(self.route)
        if theirs not in self._misrouted and len(self._misrouted) < _WARNED_ROUTES:
            self._misrouted.add(theirs)
            log.warning(
                "a request of a session of route %r reached this instance (%s) and was told 404: "
                "the load balancer must send each request to the instance its Mcp-Session-Id "
                "prefix names, or that instance is gone (logged once per route)",
                theirs,
                ours,
            )
        return InvalidRequest(
            f"Session not found: its id names route {theirs!r} and this instance has {ours} (the load "
            f"balancer routes by the id's prefix '{theirs}.', or that instance is gone); initialize a new session",
            http_status=404,
        )

    async def _in_session(
        self,
        sid: str,
        message: jsonrpc.Message,
        headers: Mapping[str, str],
        principal: Principal | None,
        sse_ok: bool,
        receive: Receive,
        send: Send,
        network: Mapping[str, str | int] | None = None,
        *,
        json_ok: bool = True,
    ) -> None:
        rid = message.id if isinstance(message, jsonrpc.Request) else None
        session = self._session(sid, principal)
        if session is None:
            await error_response(send, rid, self._not_found(sid))
            return
        refusal = _version_refusal(session, headers)
        if refusal is not None:
            await error_response(send, rid, refusal)
            return
        if isinstance(message, jsonrpc.Notification):
            with notifying(
                self.server.telemetry,
                message.method,
                message.params,
                incoming=True,
                version=session.version,
                session=session.id,
                network=network,
            ):
                if message.method == "notifications/initialized":
                    session.initialized = True
                elif message.method == "notifications/cancelled":
                    session.cancel((message.params or {}).get("requestId"))
                await accepted(send)
            return
        if isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
            if not session.resolve(message):
                log_stray_response(log, "HTTP", message, session.id)
            await accepted(send)
            return
        running = self._running.get(session.id, 0)
        if running >= self.max_in_flight:
            await error_response(send, message.id, _too_many(running))
            return
        self._running[session.id] = running + 1
        exchange = ResumableExchange(send, sse_ok, session, resume_within=self.resume_within, json_ok=json_ok)
        channel = SessionChannel(exchange)
        try:
            await self._run_watched(
                exchange,
                message,
                receive,
                self._session_reply(message, session, channel, principal, network),
            )
        finally:
            self.server.sessions.seen(session)  # a long request is not idle time
            if (left := self._running[session.id] - 1) > 0:
                self._running[session.id] = left
            else:
                del self._running[session.id]

    async def _malformed_response(
        self,
        sid: str | None,
        rid: jsonrpc.RequestId,
        exc: ProtocolError,
        principal: Principal | None,
        send: Send,
    ) -> None:
        """A response to a question of ours that does not decode: refused (400) without an
        id, since it answers no request of the client's; the question it was meant to
        answer is given up as refused (a form reads as cancel), not left waiting."""
        session = self._session(sid, principal) if sid is not None else None
        if session is not None:
            session.refuse(rid, exc.message)
        await error_response(send, None, exc)

    async def _session_reply(
        self,
        message: jsonrpc.Request,
        session: Session,
        channel: SessionChannel,
        principal: Principal | None,
        network: Mapping[str, str | int] | None,
    ) -> tuple[bytes | None, int]:
        return await self.server.respond_in_session(
            message, session, channel=channel, principal=principal, network=network
        ), 200

    async def _listen(
        self, headers: Mapping[str, str], principal: Principal | None, receive: Receive, send: Send
    ) -> None:
        """The standalone SSE stream of a session: completions, resource updates."""
        session = self._session(headers["mcp-session-id"], principal)
        if session is None:  # a 404 may be cached (RFC 9110, 15.5.5): never for a GET it does not fit
            await error_response(send, None, self._not_found(headers["mcp-session-id"]), extra=_GET_VARY)
            return
        refusal = _version_refusal(session, headers)
        if refusal is not None:
            await error_response(send, None, refusal, extra=_GET_VARY)
            return
        if not acceptable(headers.get("accept", "*/*"))[1]:
            await error_response(
                send,
                None,
                InvalidRequest("Not Acceptable: accept text/event-stream", http_status=406),
                extra=_GET_VARY,
            )
            return
        last = headers.get("last-event-id")
        if last is not None:
            await self._resume(session, last, receive, send)
            return
        await self._stream_pushed(session, receive, send)

    async def _stream_pushed(
        self, session: Session, receive: Receive, send: Send, after: int | None = None
    ) -> None:
        """The standalone SSE stream, on this connection until another takes it over."""
        session.listeners += 1  # a session with an open stream is in use: never evicted
        try:
            await StandaloneStream.of(session).serve(
                session, receive, send, after=after, keepalive=self.keepalive
            )
        finally:
            session.listeners -= 1
            self.server.sessions.seen(session)

    async def _resume(self, session: Session, last: str, receive: Receive, send: Send) -> None:
        """A ``GET`` with ``Last-Event-ID``: the rest of that request's stream, or of the
        standalone stream."""
        parsed = parse_event_id(last)
        stream = session.streams.get(parsed[0]) if parsed is not None else None
        if (
            parsed is None
            or not isinstance(stream, (ResumableExchange, StandaloneStream))
            or not stream.can_resume(parsed[1], parsed[2])
        ):
            await error_response(
                send,
                None,
                InvalidRequest(  # not 404: that would tell the client its session is gone
                    f"Bad request: no stream of this session to resume from Last-Event-ID {last.strip(OWS)[:80]!r} "
                    "(unknown, over and forgotten, or its events since then are no longer kept); "
                    "the session is still open",
                    http_status=400,
                ),
            )
            return
        if isinstance(stream, StandaloneStream):
            await self._stream_pushed(session, receive, send, parsed[1])
            return
        link = await stream.resume(parsed[1], send)
        if stream.finished and not stream.attached:
            return
        watcher = asyncio.ensure_future(disconnected(receive))
        done = asyncio.ensure_future(stream.wait_done())
        try:
            await asyncio.wait((watcher, done), return_when=asyncio.FIRST_COMPLETED)
            if not done.done():
                stream.lost(link)  # this connection closed too: wait for the client again
        finally:
            watcher.cancel()
            done.cancel()

    async def _delete(self, headers: Mapping[str, str], principal: Principal | None, send: Send) -> None:
        sid = headers["mcp-session-id"]
        session = self._session(sid, principal)
        if session is None:
            await error_response(send, None, self._not_found(sid))
            return
        refusal = _version_refusal(session, headers)
        if refusal is not None:
            await error_response(send, None, refusal)
            return
        self.server.sessions.close(sid, deleted=True)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _too_many(running: int) -> InvalidRequest:
    return InvalidRequest(
        f"Invalid request: {running} requests of this session are in flight, the most this server "
        "runs at once for one session; wait for their answers (or cancel some) before sending more",
        http_status=429,
    )


def _version_refusal(session: Session, headers: Mapping[str, str]) -> InvalidRequest | None:
    """The 400 for a request of ``session`` (POST, GET or DELETE) whose MCP-Protocol-Version
    header is not the session's; None when it is, or when there is none (before 2025-06-18)."""
    version = headers.get(VERSION_HEADER)
    if version is None or version.strip(OWS) == session.version:
        return None
    return InvalidRequest(
        f"Bad request: MCP-Protocol-Version {shown(version.strip(OWS))} is not this session's {session.version!r}",
        http_status=400,
    )
