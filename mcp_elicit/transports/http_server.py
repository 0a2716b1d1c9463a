"""Streamable HTTP, server side: a plain ASGI application serving one ``Server`` at ``/mcp``.

Rules:

* Only loopback ``Host``/``Origin`` values are accepted by default (DNS-rebinding
  protection); a bad Host is 421, a bad Origin 403, ``Origin: null`` included (a sandboxed
  frame, a page after a cross-site redirect), except on the hosted pages, whose own form is
  posted with it (``pages.PAGE_NULL_ORIGIN``). ``allowed_hosts=["*"]`` turns both off; an
  entry no ``Host`` could match (a URL, a wildcard) is a ``ConfigError`` (``host_check``). A
  header the server acts on sent twice with different values is 400 (``repeated_headers``).
* A POST carries one JSON-RPC message as ``application/json``, at most ``max_body``
  bytes (413 beyond, checked on Content-Length before reading and while reading). A body
  that comes in several pieces must be complete within ``body_timeout`` seconds (30) of
  its first piece, else 408 (-32600) and the connection closes: a client that stalls or
  trickles mid-body holds no request. One that sends the headers and none of the body is
  refused the same way after between one and two ``body_timeout`` (the wait for a first
  piece is watched by one timer for the whole app, as the disconnect watch is). ``body_timeout=None`` waits for ever. The URL-mode
  pages' forms get the same limit (408 as a page).
* A request is answered with one JSON object, unless its handler sends notifications
  first (progress, logs): then the response becomes an SSE stream scoped to that request,
  the notifications flushed as they happen and the result last. A client that does not
  accept JSON gets the SSE stream in any case. No server-to-client request is ever sent
  on a modern stream.
* Closing the connection cancels the request's handler (watched once it runs long),
  unless it is a 2025-11-25 session request whose stream the client can resume
  (``http_streams``): that one waits ``resume_within`` seconds for the client first.
* A request that runs long (a person answering a question, a page being completed) is
  kept alive: every ``keepalive`` seconds without a write its response gets an SSE
  comment, after switching to SSE when the client accepts it, so that proxies and load
  balancers with an idle timeout do not cut it.
* A GET without a session is 405 (``Allow: POST``), as both revisions ask; a person's
  browser gets it as a page saying what the endpoint is and how to try it
  (``endpoint_page``), so each names in ``Vary`` the headers that choose. Every 405 names
  the methods allowed (``Allow``).
* POSTs are served by ``http_post``, sessions of 2025-11-25 clients by ``http_sessions``
  (``route``: the session ids name this instance, for a load balancer); responses are
  built by ``http_exchange``.
* :meth:`StreamableHTTP.begin_shutdown` (called by ``mcp-elicit serve`` as soon as the
  server is told to stop) ends every session this app opened (``server.lifecycle``: those
  of another transport serving the same server go on): their standalone streams close, their
  requests still waiting (for a person, say) answer with an error, and new requests get
  503. Without it, an ASGI server's graceful shutdown would wait for those streams, which
  a connected client keeps open forever.
* A token verifier (``auth=``) that has not answered within ``verify_timeout`` seconds (10;
  None: no limit) refuses the request with 503, as one that raises does (``http_bearer``).
* Errors carry the request id whenever it could be read, and the HTTP status the spec
  names (400 for ``_meta``/header/version/capability errors, 404 for unknown methods).
  An ``MCP-Protocol-Version`` naming no revision served is 400 on every POST, a
  notification's included.
* Mounted under a path (Starlette's ``Mount``, ``--root-path``: the ASGI ``root_path``), it
  routes from there, and the URLs it gives out (page links, the protected-resource
  metadata, what a DPoP proof must name) carry it, or the public URL when one is set: as
  a URL's path, spelled as the request did, else %-escaped (``mount_path``), never as
  ASGI gives it (decoded: a ``Mount("/{tenant}", ...)`` takes it from the request).
  Without a public URL, the page links a request's handler makes (and the sign-in
  callback a page names) start with that request's own allow-listed Host, never with
  another request's.
  A parent app does not pass lifespan events on: :meth:`StreamableHTTP.lifespan` is
  what it runs instead.
* A limit that cannot work is a ``ConfigError`` when the app is made, naming it: a
  ``max_body`` that is not a whole number above zero, a duration (``body_timeout``,
  ``keepalive``, ``verify_timeout``, ``resume_within``) that is not a finite number of
  seconds above zero (None where it may be), ``True`` for either.
* uvicorn's access log never shows a page link's token nor a sign-in callback's code
  and state (``access_log``: a filter added at the lifespan start-up or the first
  request, whoever runs uvicorn).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Final

from mcp_elicit.errors import (
    ConfigError,
    InvalidRequest,
)
from mcp_elicit.server.app import Server
from mcp_elicit.server.auth import ResourceMetadata, TokenVerifier
from mcp_elicit.server.left_loops import ServedElsewhere
from mcp_elicit.server.lifecycle import start_for, stop_for
from mcp_elicit.server.options import whole
from mcp_elicit.server.url_mode import PAGES_PATH
from mcp_elicit.transports.access_log import keep_page_secrets_out
from mcp_elicit.transports.endpoint_page import VARY, endpoint_page, endpoint_url, public_name, wants_page
from mcp_elicit.transports.given import instance, wrong_type
from mcp_elicit.transports.host_check import HostCheck
from mcp_elicit.transports.http_bearer import app_base, serve_metadata
from mcp_elicit.transports.http_exchange import (
    ASGIApp,
    Receive,
    Scope,
    Send,
    Watchlist,
    error_response,
    plain,
    repeated_headers,
    route_path,
)
from mcp_elicit.transports.http_post import SHUTTING_DOWN, PostRoutes
from mcp_elicit.transports.http_sessions import claim_route
from mcp_elicit.transports.mount_path import escape_path, mount_path
from mcp_elicit.transports.oauth_client import HttpTokenExchange
from mcp_elicit.transports.page_hosts import learned_base
from mcp_elicit.transports.pages import pages_app

__all__ = ["StreamableHTTP", "LOOPBACK_HOSTS"]

log = logging.getLogger("mcp_elicit.http")

LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
_PAGES: Final = PAGES_PATH + "/"


class StreamableHTTP(PostRoutes):
    """The ASGI app. Mount it, or run it with uvicorn (``mcp-elicit serve --http``)."""

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] | None = None,
        max_body: int = 4 * 1024 * 1024,
        auth: TokenVerifier | None = None,
        resource_metadata: ResourceMetadata | None = None,
        fallback: ASGIApp | None = None,
        keepalive: float | None = 15.0,
        watch_after: float = 0.05,
        resume_within: float = 60.0,
        body_timeout: float | None = 30.0,
        verify_timeout: float | None = 10.0,
        route: str | None = None,
        max_in_flight: int = 1024,
    ) -> None:
        instance("server", server, Server, "the Server to serve (Server('name'))")
        instance("path", path, str, "the endpoint's path as a string ('/mcp')")
        if auth is not None and not callable(getattr(auth, "verify", None)):
            wrong_type(
                "auth", auth, "a token verifier (an object with async verify(token), such as StaticTokens)"
            )
        _positive_seconds("keepalive", keepalive, nullable=True)
        _positive_seconds("resume_within", resume_within, nullable=False)
        #: Seconds a 2025-11-25 session request waits for its client to resume a dropped
        #: stream (``Last-Event-ID``), and keeps a finished stream's answer for it.
        self.resume_within = resume_within
        #: Requests one 2025-11-25 session may have running at once (one more is refused).
        self.max_in_flight = whole("max_in_flight", max_in_flight)
        self._running: dict[str, int] = {}
        #: This instance's name in its sessions' ids (``a`` gives ``a.<random>``), so that a
        #: load balancer can send a 2025-11-25 session's requests to it (None: plain ids).
        self.route = route
        self._misrouted: set[str] = set()
        claim_route(server.sessions, route)
        self.server = server
        self._watchlist = Watchlist(watch_after)
        #: Seconds of silence after which a stream gets an SSE comment: a session's
        #: standalone stream, and the response of a request still running (None: never).
        self.keepalive = keepalive
        #: The hosted URL-mode pages, next to the MCP endpoint.
        self._pages = pages_app(server, body_timeout=body_timeout)
        self._learned = learned_base(server)  # the pages' base: one for every app of the server
        if server.url_mode.token_exchange is None:
            server.url_mode.token_exchange = HttpTokenExchange()
        self.path = path.rstrip("/") or "/"
        self._shadowed = self.path.startswith(_PAGES)  # the pages come first, should the paths meet
        self._host_check = HostCheck(allowed_hosts if allowed_hosts is not None else LOOPBACK_HOSTS)
        #: The largest request body taken, in bytes (413 beyond).
        self.max_body = whole("max_body", max_body)
        self._first_piece: Watchlist | None = None
        self._body_timeout: float | None = None
        self.body_timeout = body_timeout
        self.auth = auth if auth is not None else server.auth
        _positive_seconds("verify_timeout", verify_timeout, nullable=True)
        #: Seconds the token verifier has to answer (503 beyond; None: no limit).
        self.verify_timeout = verify_timeout
        #: Where clients get tokens (RFC 9728), published at ``metadata_path``.
        self.resource_metadata = (
            resource_metadata if resource_metadata is not None else server.resource_metadata
        )
        if self.resource_metadata is not None and self.auth is None:
            raise ConfigError(
                "resource_metadata describes where tokens come from: it needs auth= to verify them"
            )
        if server.scoped and self.auth is None:
            raise ConfigError(
                f"{server.scoped_names()[0]} needs scopes: serving it over HTTP needs auth= "
                "to verify tokens (without it, anyone could use it)"
            )
        self.metadata_path = "/.well-known/oauth-protected-resource" + (self.path if self.path != "/" else "")
        self.fallback = fallback
        self.draining = False
        self._unchecked = True  # whether the first request has looked for a started server

    def begin_shutdown(self) -> None:
        """Stop serving: end the 2025-11-25 sessions this app opened (their streams close,
        their waiting requests answer with an error) and the subscriptions it carries
        (answered: a graceful closure), and refuse new MCP requests with 503 until the app
        is started again (its lifespan start-up, or :meth:`lifespan`). Unless another
        transport serving the same server holds a start and is not stopping too
        (``Server.begin_stop``), every session and subscription ends, the wait of 2026-07-28 retries waiting for a page
        ends too (a state-only round: the client retries elsewhere) and the tasks still
        running are cancelled. Call it when the ASGI server starts its graceful shutdown,
        which is before the lifespan shutdown event: that one comes only once every
        connection has closed."""
        self.draining = True
        self.server.begin_stop(transport=self)

    @property
    def watch_after(self) -> float:
        """Seconds a request runs (up to twice that) before its connection is watched for
        a disconnect."""
        return self._watchlist.period

    @watch_after.setter
    def watch_after(self, seconds: float) -> None:
        self._watchlist.period = seconds

    @property
    def body_timeout(self) -> float | None:
        """Seconds a request body has to arrive in full, counted from its first piece
        (408 beyond; None: no limit). A request none of whose body comes is refused
        after between one and two ``body_timeout``."""
        return self._body_timeout

    @body_timeout.setter
    def body_timeout(self, seconds: float | None) -> None:
        _positive_seconds("body_timeout", seconds, nullable=True)
        self._body_timeout = seconds
        self._pages.state.body_timeout = seconds  # the pages' forms take the same limit
        if seconds is None:
            self._first_piece = None
        elif self._first_piece is None:
            self._first_piece = Watchlist(seconds)
        else:
            self._first_piece.period = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._lifespan(receive, send)
            return
        if self._unchecked:
            self._check_started()
        path = (route_path(scope) if scope.get("root_path") else scope["path"]).rstrip("/") or "/"
        if path != self.path or self._shadowed:
            await self._elsewhere(path, scope, receive, send)
            return
        raw_headers = scope["headers"]
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in raw_headers}
        if len(headers) != len(raw_headers):  # a name repeats: rare, and looked at only then
            repeated = repeated_headers(raw_headers, headers)
            if repeated is not None:
                await error_response(send, None, repeated)
                return
        refusal = self._host_check.refusal(headers)
        if refusal is not None:
            await error_response(send, None, InvalidRequest(refusal[1], http_status=refusal[0]))
            return
        if self.draining:
            await error_response(send, None, SHUTTING_DOWN)
            return
        method = scope["method"]
        if method == "POST":
            self._learned.learn((scope, headers))
            await self._post(scope, headers, receive, send)
        elif method in ("GET", "DELETE") and "mcp-session-id" in headers:
            ok, principal = await self._authenticate(scope, headers, send)
            if not ok:
                return
            if method == "GET":
                await self._listen(headers, principal, receive, send)
            else:
                await self._delete(headers, principal, send)
        elif method == "GET" and (kind := wants_page(headers)) is not None:  # a person's browser
            url = endpoint_url(scope, headers, self.path, self.server.url_mode.public_url)
            published = self.resource_metadata.resource_name if self.resource_metadata else None
            whose = public_name(
                self.server.name, self.server.title, guarded=self.auth is not None, resource_name=published
            )
            await endpoint_page(kind, url, whose)(scope, receive, send)
        elif method in ("GET", "DELETE"):
            extra = [(b"allow", b"POST")]
            if method == "GET":  # a person's browser gets a page instead
                extra.append((b"vary", VARY.encode("ascii")))
            await plain(
                send, 405, b"Method Not Allowed: send each JSON-RPC message as its own POST", extra=extra
            )
        else:  # GET and DELETE are served only with a session id
            allowed = b"GET, POST, DELETE" if "mcp-session-id" in headers else b"POST"
            await plain(send, 405, b"Method Not Allowed", extra=[(b"allow", allowed)])

    async def _elsewhere(self, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request for another path than the MCP endpoint's: a hosted page, the protected
        resource metadata, the fallback app (else 404)."""
        if path.startswith(_PAGES):
            page_headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            refusal = self._host_check.refusal(page_headers, page=True)
            if refusal is not None:
                await plain(send, refusal[0], refusal[1].encode())
                return
            self._learned.learn((scope, page_headers))
            await self._pages(scope, receive, send)
        elif path == self.metadata_path and self.resource_metadata is not None:
            await self._resource_metadata(scope, send)
        elif self.fallback is not None:
            await self.fallback(scope, receive, send)
        else:
            where = mount_path(scope) + escape_path(self.path)  # one URL path, whatever was requested
            await plain(send, 404, b"Not Found: the MCP endpoint is " + where.encode("ascii"))

    def _check_started(self) -> None:
        """Once: warn when this app serves while the instances sharing its store cannot be
        heard, or the server's ``lifespan=`` is not entered, because no lifespan startup came
        (mounted without ``lifespan=``)."""
        self._unchecked = False
        keep_page_secrets_out()  # no lifespan start-up may have come
        if self.server.url_mode.shared_store is not None and self.server.relay.listening is None:
            log.warning(
                "serving without a lifespan startup: other instances sharing the store are not "
                "heard; a parent app that mounts this one needs lifespan=<this app>.lifespan"
            )
        try:
            self.server.lifespan_context  # noqa: B018 (read for its error)
        except RuntimeError:
            log.warning(
                "serving without a lifespan startup: the server's lifespan= is not entered, so its "
                "handlers cannot read ctx.lifespan_context; a parent app that mounts this one needs "
                "lifespan=<this app>.lifespan"
            )

    # ---- checks ----------------------------------------------------------------

    async def _resource_metadata(self, scope: Scope, send: Send) -> None:
        assert self.resource_metadata is not None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._host_check.refusal(
            {k: v for k, v in headers.items() if k == "host"}
        )  # any Origin may read
        if refusal is not None:
            await plain(send, refusal[0], refusal[1].encode())
            return
        base = app_base(scope, headers, self.server.url_mode.public_url)
        await serve_metadata(self.resource_metadata, f"{base}{escape_path(self.path)}", scope, send)

    @contextlib.asynccontextmanager
    async def lifespan(self, parent: object = None) -> AsyncIterator[None]:
        """Start-up and shutdown for an app that mounts this one, which Starlette and
        FastAPI do not pass on to a mounted app:
        ``Starlette(routes=[Mount("/tools", app=mcp)], lifespan=mcp.lifespan)``."""
        keep_page_secrets_out()
        await start_for(self.server, self)
        self.draining = False  # served again after a shutdown: it answers again
        try:
            yield
        finally:
            await stop_for(self.server, self)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Start-up and shutdown as uvicorn asks. A second Ctrl-C is uvicorn's force exit,
        which never asks for the shutdown: ``asyncio.run`` then cancels this wait, and the
        server is stopped here instead, quietly (an error would be logged, with a
        traceback, for the Ctrl-C the person meant). A start-up cancelled before it
        ended has undone itself (``Server.start``): stopping then would let go of a share
        another transport serving the same server holds."""
        started = False
        try:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    keep_page_secrets_out()
                    try:
                        await start_for(self.server, self)
                    except (ConfigError, ServedElsewhere) as exc:  # raised, uvicorn's "auto" would serve on
                        await send({"type": "lifespan.startup.failed", "message": str(exc)})
                        return
                    started, self.draining = True, False  # served again: it answers again
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    started = False
                    await stop_for(self.server, self)
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        except asyncio.CancelledError:
            if started:
                await stop_for(self.server, self)


def _positive_seconds(option: str, value: object, *, nullable: bool) -> None:
    """A ``ConfigError`` naming ``option`` unless ``value`` is a finite number of seconds
    above zero (or None, when ``nullable``); ``True`` is no number here."""
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 < value < float("inf"):
        none = " or None" if nullable else ""
        raise ConfigError(f"{option} must be a positive number of seconds{none}, not {value!r}")
