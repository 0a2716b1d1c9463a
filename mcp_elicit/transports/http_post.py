"""The POST half of ``StreamableHTTP``: a JSON-RPC message POSTed to the MCP endpoint,
checked, authenticated, answered (JSON or SSE) or handed to its 2025-11-25 session, with
requests that run user code watched for a disconnect once they run long.

Rules: the content type must be JSON, with no ``Content-Encoding`` but ``identity`` (a
body is read as sent: a coded one is 415 naming the coding), and ``Accept`` must take JSON
or SSE; a body over
``max_body`` is 413 whatever its declared length; a malformed message is answered with the
error its id allows; a request outside a session goes to ``Server.respond``; a notification
outside a session is taken (202), unless its version header disagrees with its ``_meta``
protocolVersion (-32020, as for a request) or names a handshake revision (400, as for a
request: its session id was lost). With a token verifier (``auth=``) the order is: a body
declared over ``max_body`` (413, not read), the body read (408 or 413: a DPoP proof
digests it, so the token cannot be checked before), the token (401, 403, 400
``invalid_request``, 503: ``http_bearer``), and only then the content type, ``Accept`` and
the message: a request without a valid token is told to sign in whatever else is wrong
with it, and an unauthenticated client learns nothing of how its body reads. A
``tools/call``, ``prompts/get``, ``resources/read``, ``completion/complete``,
``resources/subscribe`` or ``subscriptions/listen`` of what has ``scopes`` (a tool, a
prompt, a resource or template) whose token lacks one is then refused
(403 ``insufficient_scope``, ``http_bearer.refuse_scopes``), in a 2025-11-25 session too,
before it reaches a handler or a stream. Without a
verifier, the content type and ``Accept`` are answered before the body is read. (Host,
Origin and repeated headers are refused before all of this, in ``http_server``.) A
request that runs user code (a tool, a prompt, a resource read, a completion, a listen)
is cancelled when its client goes away, and a long silence on its SSE response gets
keep-alive comments; a request cut short by the shutdown is answered 503 in JSON-RPC. A
body that comes in several pieces must be complete within ``body_timeout`` seconds of the
first: else 408 (-32600) and the connection closes, so a client that stalls mid-body
(slowloris) holds nothing; one that sends no body at all is refused the same way after
between one and two ``body_timeout``. A body read in one piece, the usual case, runs no
timer of its own. Without a public URL, the page links a request's handler makes start
with that request's own allow-listed Host (``page_hosts.LearnedBase``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from typing import Final

from mcp_elicit.core.rev_2025_11_25 import no_session
from mcp_elicit.errors import (
    HeaderMismatch,
    InternalError,
    InvalidRequest,
    InvalidResponse,
    ProtocolError,
)
from mcp_elicit.log_labels import log_unreadable, request_label
from mcp_elicit.server.auth import Principal, ResourceMetadata, TokenVerifier
from mcp_elicit.server.lifecycle import open_session_for
from mcp_elicit.telemetry import notifying
from mcp_elicit.transports.http_bearer import authenticate, refuse_scopes
from mcp_elicit.transports.http_exchange import (
    SSE_HEADERS,
    Exchange,
    ListenExchange,
    Message,
    Receive,
    Scope,
    Send,
    Watchlist,
    acceptable,
    accepted,
    error_response,
    json_headers,
    keep_alive,
    media_type,
    network_attributes,
)
from mcp_elicit.transports.http_sessions import SessionRoutes
from mcp_elicit.transports.page_hosts import LearnedBase
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.headers import OWS, VERSION_HEADER
from mcp_elicit.wire.sse import encode_event
from mcp_elicit.wire.versions import SUPPORTED, is_handshake, unsupported

__all__ = ["SHUTTING_DOWN", "PostRoutes"]

log = logging.getLogger("mcp_elicit.http")

SHUTTING_DOWN: Final = InternalError(
    "Service unavailable: the server is shutting down; send the request again", http_status=503
)


def _coded(coding: str) -> bool:
    """Whether a ``Content-Encoding`` (a list: ``gzip``, ``identity, gzip``) names a coding
    other than ``identity``, in any case, with HTTP's white space and empty items."""
    return any(item.strip(OWS).lower() not in ("", "identity") for item in coding.split(","))


_RUNS_USER_CODE: Final = frozenset(
    {"tools/call", "prompts/get", "resources/read", "completion/complete", "subscriptions/listen"}
)


async def _watch_disconnect(receive: Receive, exchange: Exchange, task: asyncio.Task[object]) -> None:
    """Wait for the client to close the connection, then cancel ``task`` (``Exchange.dropped``)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    exchange.dropped(task)


class _Watch:
    """What a running request registers in the app's ``Watchlist``: called, it starts
    watching the connection for a disconnect and, with a ``period``, keeping the response
    alive. (An object, not a closure: cheaper to make on every request.)"""

    __slots__ = ("exchange", "period", "pinger", "receive", "task", "watcher")

    def __init__(
        self, exchange: Exchange, receive: Receive, task: asyncio.Task[object], period: float | None
    ) -> None:
        self.exchange = exchange
        self.receive = receive
        self.task = task
        self.period = period
        self.watcher: asyncio.Future[None] | None = None
        self.pinger: asyncio.Future[None] | None = None

    def __call__(self) -> None:
        exchange = self.exchange
        if not exchange.closed:
            self.watcher = asyncio.ensure_future(_watch_disconnect(self.receive, exchange, self.task))
            if self.period is not None and exchange.sse_ok:
                self.pinger = asyncio.ensure_future(keep_alive(exchange, self.period))


class PostRoutes(SessionRoutes):
    """The POST half of ``StreamableHTTP`` (a mixin: the app sets up what it declares)."""

    max_body: int
    body_timeout: float | None
    verify_timeout: float | None
    _first_piece: Watchlist | None
    auth: TokenVerifier | None
    resource_metadata: ResourceMetadata | None
    metadata_path: str
    draining: bool
    _watchlist: Watchlist
    _learned: LearnedBase

    async def _authenticate(
        self, scope: Scope, headers: Mapping[str, str], send: Send, body: bytes = b""
    ) -> tuple[bool, Principal | None]:
        if self.auth is None:
            return True, None
        return await authenticate(
            self.auth,
            self.resource_metadata,
            self.metadata_path,
            scope,
            headers,
            send,
            body,
            self.server.sealer,
            self.server.url_mode.spend_proof,
            self.server.url_mode.public_url,
            self.verify_timeout,
        )

    async def _post(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        ctype = media_type(headers.get("content-type", ""))
        json_ok, sse_ok = acceptable(headers.get("accept", "*/*"))
        unfit: InvalidRequest | None = None
        if ctype != "application/json":
            unfit = InvalidRequest(
                f"Unsupported Media Type: send application/json, not {ctype or 'nothing'!r}",
                http_status=415,
            )
        elif (coding := headers.get("content-encoding")) is not None and _coded(coding):
            unfit = InvalidRequest(  # never decompressed, nor read as if it were not coded
                "Unsupported Media Type: send the body uncompressed, not with Content-Encoding "
                f"{coding.strip(OWS)!r}",
                http_status=415,
            )
        elif not (sse_ok or json_ok):
            unfit = InvalidRequest(
                "Not Acceptable: accept application/json and text/event-stream", http_status=406
            )
        if unfit is not None and self.auth is None:  # no token to ask for first: said at once
            await error_response(send, None, unfit)
            return
        declared = headers.get("content-length")
        if (  # ASCII digits only ("²" is a digit int() cannot read); past 18 of them, over any limit
            declared is not None
            and declared.isascii()
            and declared.isdigit()
            and (len(declared) > 18 or int(declared) > self.max_body)
        ):
            await error_response(
                send,
                None,
                InvalidRequest(f"Request body too large (limit {self.max_body} bytes)", http_status=413),
            )
            return
        task = asyncio.current_task()  # once: the body's watch and the handler's both need it
        assert task is not None
        # The body's first event. The wait is watched by the app's one ``Watchlist``
        # ticking every ``body_timeout`` (so it gives up after between one and two of
        # them), not by a timer per request: the body is nearly always there when the app
        # starts, and a timer would cost more than the wait it guards.
        watch = self._first_piece
        if watch is None:
            event = await receive()
        else:
            give_up = task.cancel  # what the watch calls, taking it off its list, when the wait is too long
            watch.add(give_up, task.get_loop())
            try:
                event = await receive()
            except asyncio.CancelledError:
                if give_up in watch or task.uncancel() != 0:  # someone else cancelled
                    raise
                await self._body_too_slow(send)  # the watch gave up
                return
            finally:
                watch.discard(give_up)
        body: bytes | None
        if event["type"] == "http.request" and not event.get("more_body", False):  # all in one
            body = event.get("body", b"")
            if len(body) > self.max_body:
                body = None
        else:  # in pieces: only this path is timed (a timer per request costs)
            try:
                async with asyncio.timeout(self.body_timeout):
                    body = await self._read_body(receive, event)
            except TimeoutError:
                await self._body_too_slow(send)
                return
        if body is None:
            await error_response(
                send,
                None,
                InvalidRequest(f"Request body too large (limit {self.max_body} bytes)", http_status=413),
            )
            return
        principal = None
        if self.auth is not None:  # before the request is judged: without a valid token, 401
            ok, principal = await self._authenticate(scope, headers, send, body)
            if not ok:
                return
            if unfit is not None:
                await error_response(send, None, unfit)
                return
        try:
            message = jsonrpc.decode(body)
        except InvalidResponse as exc:  # its id answers no request of the client's: not echoed
            if exc.request_id is None:
                await error_response(send, None, exc)
            else:
                sid = headers.get("mcp-session-id")
                await self._malformed_response(sid, exc.request_id, exc, principal, send)
            return
        except ProtocolError as exc:
            log_unreadable(log, "HTTP", exc, len(body), headers.get("mcp-session-id"))  # its header's
            await error_response(send, exc.request_id, exc)
            return
        if self.draining:  # the shutdown began while the body or the token's check was on its way
            await error_response(
                send, message.id if isinstance(message, jsonrpc.Request) else None, SHUTTING_DOWN
            )
            return
        if self.server.scoped and not await self._scoped(message, principal, scope, headers, send):
            return
        telemetry = self.server.telemetry
        network = network_attributes(scope) if telemetry is not None and telemetry.active else None
        sid = headers.get("mcp-session-id")
        # The era matters only to a message naming a session, or to an initialize: decided only then.
        modern = (
            isinstance(message, jsonrpc.Request)
            and (sid is not None or message.method == "initialize")
            and not self.server.core.is_handshake_request(message, headers)
        )
        if sid is not None and not modern:
            await self._in_session(
                sid, message, headers, principal, sse_ok, receive, send, network, json_ok=json_ok
            )
            return
        if isinstance(message, jsonrpc.Notification):  # outside a session: nothing to do but take it
            version = headers.get(VERSION_HEADER)
            try:  # its _meta and header disagreeing: the mismatch a request gets, before the rest
                self.server.core.check_notification_version(message.params, headers)
            except HeaderMismatch as mismatch:
                await error_response(send, None, mismatch)
                return
            if version is not None and version.strip(OWS) not in SUPPORTED:
                refused = unsupported(version.strip(OWS))
                await error_response(send, None, refused)
                return
            if version is not None and is_handshake(version.strip(OWS)):  # its session is lost
                await error_response(send, None, no_session())
                return
            with notifying(telemetry, message.method, message.params, incoming=True, network=network):
                await accepted(send)
            return
        if not isinstance(message, jsonrpc.Request):
            await error_response(
                send, None, InvalidRequest("Invalid request: a client may not POST JSON-RPC responses here")
            )
            return
        if message.method == "initialize" and not modern:
            payload, session, status = open_session_for(self.server, message, principal, self)
            if session is not None:
                session.network = network_attributes(scope)
            extra = [(b"mcp-session-id", session.id.encode("ascii"))] if session is not None else []
            if json_ok or status != 200:
                head, body = json_headers(payload), payload
            else:  # the client takes SSE only
                head, body = SSE_HEADERS, encode_event(payload)
            await send({"type": "http.response.start", "status": status, "headers": [*head, *extra]})
            await send({"type": "http.response.body", "body": body})
            return
        if message.method != "subscriptions/listen":
            exchange = Exchange(send, sse_ok, json_ok)
        elif not sse_ok:
            await error_response(
                send,
                message.id,
                InvalidRequest(
                    "Not Acceptable: subscriptions/listen streams its notifications; accept text/event-stream",
                    http_status=406,
                ),
            )
            return
        else:  # its channel names this app, whose stop ends it (``server.lifecycle``)
            exchange = ListenExchange(send, sse_ok, json_ok, transport=self)
        if message.method in _RUNS_USER_CODE:
            await self._run_watched(
                exchange,
                message,
                receive,
                self.server.respond(
                    message, channel=exchange, principal=principal, headers=headers, network=network
                ),
                task,
            )
        else:
            payload, status = await self.server.respond(
                message, channel=exchange, principal=principal, headers=headers, network=network
            )
            await exchange.reply(payload, status)

    async def _scoped(
        self,
        message: jsonrpc.Message,
        principal: Principal | None,
        scope: Scope,
        headers: Mapping[str, str],
        send: Send,
    ) -> bool:
        """Whether ``message`` may go on: anything but a request of a tool, prompt or
        resource with ``scopes`` (``Catalog.needed_scopes``), or one whose token holds them;
        else refused (``refuse_scopes``), in either revision and a 2025-11-25 session too,
        before any handler or stream starts."""
        if not isinstance(message, jsonrpc.Request) or message.method not in self.server.scoped:
            return True
        found = self.server.needed_scopes(message.method, message.params, principal)
        if found is None:
            return True
        what, needed = found
        return await refuse_scopes(
            what,
            needed,
            principal,
            self.resource_metadata,
            self.metadata_path,
            scope,
            headers,
            send,
            self.server.url_mode.public_url,
        )

    async def _run_watched(
        self,
        exchange: Exchange,
        message: jsonrpc.Request,
        receive: Receive,
        work: Awaitable[tuple[bytes | None, int]],
        task: asyncio.Task[object] | None = None,
    ) -> None:
        """Run a request that executes user code; a closed connection cancels it, and a
        long silence gets keep-alive comments.

        The watch for the disconnect (and the keep-alive) starts only once the request
        has run for ``watch_after`` seconds (up to twice that, see :class:`Watchlist`):
        most requests finish sooner, and a watching task per request would cost more than
        the MCP work itself. ``task``: the one running this (found when not given)."""
        if task is None:
            task = asyncio.current_task()
            assert task is not None
        watch = _Watch(exchange, receive, task, self.keepalive)
        watchlist = self._watchlist
        watchlist.add(watch, task.get_loop())
        try:
            payload, status = await work
            if watch.pinger is not None:  # no comment after the answer: stop before writing it
                watch.pinger.cancel()
            if payload is None:
                await exchange.end()
            else:
                await exchange.reply(payload, status)
        except asyncio.CancelledError:
            if exchange.gone:
                log.info(
                    "%s cancelled: %s",
                    request_label(message.method, message.params, message.id),
                    exchange.gone_reason(),
                )
                task.uncancel()
            elif self.draining and not exchange.closed:
                # the server stops and this request ran out of grace: say so, in JSON-RPC
                log.info(
                    "%s cut short by the shutdown", request_label(message.method, message.params, message.id)
                )
                task.uncancel()
                await exchange.reply(jsonrpc.encode_error(message.id, SHUTTING_DOWN), 503)
            else:
                raise
        finally:
            watchlist.discard(watch)
            if watch.watcher is not None:
                watch.watcher.cancel()
            if watch.pinger is not None:
                watch.pinger.cancel()

    async def _body_too_slow(self, send: Send) -> None:
        """408, and the connection closed: the rest of the body is not waited for."""
        seconds = f"{self.body_timeout:g}"
        refused = InvalidRequest(
            f"Request body not received within {seconds} s: send it again, at once", http_status=408
        )
        log.info("a request body did not arrive within %s s: answered 408", seconds)
        body = jsonrpc.encode_error(None, refused)
        headers = [*json_headers(body), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 408, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _read_body(self, receive: Receive, message: Message) -> bytes | None:
        """The request body, from its first event ``message`` on; None when over ``max_body``."""
        chunks: list[bytes] = []
        size = 0
        while True:
            if message["type"] == "http.disconnect":
                return b""
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            message = await receive()
