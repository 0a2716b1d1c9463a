"""In memory: a client connected to an ``mcp_elicit.Server`` object, no sockets, no pipes.

Every message is encoded to bytes and decoded again on the way in both directions, so the
client and the server see exactly what a wire would carry. ``http=True`` makes it behave
like Streamable HTTP: the mirrored ``Mcp-*`` headers reach the server (and are checked
there), responses carry the HTTP status the server chose, and the client filters tools
for ``x-mcp-header`` validity. Notifications a handler sends arrive before the response,
as on a response stream.

Both eras: a modern request goes to ``Server.respond``; ``initialize`` opens one handshake
session for the transport (as stdio does), whose requests go to
``Server.respond_in_session``, the server's questions arriving on the request's exchange
and the client's answers resolving them.

``connect_memory`` starts the server for the connection and stops it once the client has
closed (``server.lifecycle``: the connection is one more transport serving it, whose
sessions are its own); a ``MemoryTransport`` used on its own starts nothing: await
``server.start(transport=it)`` and ``server.stop(transport=it)`` around it.

``MemoryTransport.sent`` holds the last ``KEEP_SENT`` (100) notifications and responses
the client sent, oldest first (a ``deque``: a client living long answers thousands of
questions); ``trace=`` sees every message both ways. A response of the client's that
answers no question of the server's is dropped, with a debug line as on the other
transports (``log_labels.log_stray_response``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any

from typing_extensions import Unpack

from mcp_elicit.client.answerers import Answerer
from mcp_elicit.client.options import ClientOptions
from mcp_elicit.client.session import Client
from mcp_elicit.client.transport import Ended, QueuedExchange, Trace, Unsolicited, message_json
from mcp_elicit.errors import ProtocolError
from mcp_elicit.log_labels import log_stray_response, request_label
from mcp_elicit.server.app import Server
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.lifecycle import open_session_for, start_for, stop_for
from mcp_elicit.server.sessions import Session
from mcp_elicit.transports.given import instance
from mcp_elicit.wire import jsonrpc

__all__ = ["MemoryTransport", "connect_memory"]

log = logging.getLogger("mcp_elicit.transports.memory")

#: How many of the messages the client sent ``MemoryTransport.sent`` keeps.
KEEP_SENT = 100


class MemoryTransport:
    """Connects a client to ``server`` in this process."""

    def __init__(
        self,
        server: Server,
        *,
        http: bool = False,
        principal: Principal | None = None,
        trace: Trace | None = None,
    ) -> None:
        self.server = instance(
            "server", server, Server, "the Server to connect to in this process (Server('name'))"
        )
        self._http = http
        self.principal = principal
        self.trace = trace
        self._exchanges: set[_MemoryExchange] = set()
        #: The handshake session, once the client sent ``initialize``.
        self.session: Session | None = None
        #: The last ``KEEP_SENT`` notifications and responses the client sent (a client
        #: that lives long answers thousands of questions: older ones are dropped).
        self.sent: deque[dict[str, Any]] = deque(maxlen=KEEP_SENT)

    @property
    def http(self) -> bool:
        return self._http

    @property
    def where(self) -> str:
        return f"memory:{self.server.name}"

    @property
    def network(self) -> Mapping[str, str | int]:
        return {}  # in process: no network

    async def open(self, unsolicited: Unsolicited) -> None:
        return None

    async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> _MemoryExchange:
        if self.trace is not None:
            self.trace("send", message)
        exchange = _MemoryExchange(self, jsonrpc.encode(message), headers)
        self._exchanges.add(exchange)
        return exchange

    async def send(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        if self.trace is not None:
            self.trace("send", message)
        self.sent.append(dict(message))
        decoded = jsonrpc.decode(jsonrpc.encode(message))
        session = self.session
        if isinstance(decoded, jsonrpc.Response | jsonrpc.ErrorResponse):
            if session is None or not session.resolve(decoded):
                log_stray_response(log, "memory", decoded, None if session is None else session.id)
        elif isinstance(decoded, jsonrpc.Notification) and session is not None:
            params = decoded.params or {}
            if decoded.method == "notifications/initialized":
                session.initialized = True
            elif decoded.method == "notifications/cancelled":
                session.cancel(params.get("requestId"))

    async def listen(self, headers: Mapping[str, str], last_event_id: str | None = None) -> None:
        return None

    async def end_session(self, headers: Mapping[str, str]) -> None:
        return None

    async def gone(self) -> str:
        """Never: the server runs in this process."""
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        for exchange in list(self._exchanges):
            await exchange.aclose()
        if self.session is not None:
            self.server.sessions.close(self.session.id)
            self.session = None


class _MemoryExchange(QueuedExchange):
    def __init__(self, owner: MemoryTransport, data: bytes, headers: Mapping[str, str]) -> None:
        self._owner = owner
        super().__init__()
        self.headers: dict[str, str] = {}
        self._task = asyncio.ensure_future(self._run(data, {k.lower(): v for k, v in headers.items()}))

    @property
    def transport(self) -> MemoryTransport:
        """The transport carrying it, as the server's ``Channel`` names it for a
        ``subscriptions/listen`` (whose stop ends it: this client's, no other's)."""
        return self._owner

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """The server's ``Channel``: a handler's notification, through the wire format."""
        self._deliver(jsonrpc.encode_notification(method, params))

    async def send(self, message: bytes) -> None:
        """The server's ``HandshakeChannel``: its own request, on this request's stream."""
        self._deliver(message)

    async def close_stream(self) -> bool:
        return False  # nothing to resume here

    def _deliver(self, data: bytes) -> None:
        message = jsonrpc.decode(data)
        if self._owner.trace is not None:
            self._owner.trace("receive", message_json(message))
        self._queue.put_nowait(message)

    async def _run(self, data: bytes, headers: dict[str, str]) -> None:
        try:
            request = jsonrpc.decode(data)
        except ProtocolError as exc:
            self._queue.put_nowait(Ended(400 if self._owner.http else None, body=str(exc)))
            return
        if not isinstance(request, jsonrpc.Request):
            self._queue.put_nowait(Ended(202 if self._owner.http else None))
            return
        owner = self._owner
        try:
            payload, status = await self._answer(request, headers)
        except Exception as exc:  # what the server let escape ends the exchange, as a 500 would
            label = request_label(request.method, request.params, request.id)  # the client's: cut, inert
            log.exception("the server failed on %s", label)
            self._queue.put_nowait(Ended(500 if owner.http else None, body=f"the server failed: {exc}"))
            return
        if payload is not None:
            self._deliver(payload)
        self._queue.put_nowait(Ended(status if owner.http else None))

    async def _answer(self, request: jsonrpc.Request, headers: dict[str, str]) -> tuple[bytes | None, int]:
        owner = self._owner
        server = owner.server
        given = headers if owner.http else None
        status = 200
        payload: bytes | None
        if (
            owner.session is None
            and request.method == "initialize"
            and server.core.is_handshake_request(request, given)
        ):
            payload, owner.session, status = open_session_for(server, request, owner.principal, owner)
        elif owner.session is not None and server.core.is_handshake_request(request, given, in_session=True):
            payload = await server.respond_in_session(
                request, owner.session, channel=self, principal=owner.principal
            )
        else:
            payload, status = await server.respond(
                request, channel=self, principal=owner.principal, headers=given
            )
        return payload, status

    async def aclose(self) -> None:
        self._owner._exchanges.discard(self)
        if not self._task.done():
            self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task


@contextlib.asynccontextmanager
async def connect_memory(
    server: Server,
    *,
    answerer: Answerer | None = None,
    http: bool = False,
    principal: Principal | None = None,
    trace: Trace | None = None,
    **options: Unpack[ClientOptions],
) -> AsyncIterator[Client]:
    """A connected ``Client`` for ``server`` in memory; ``options`` are ``Client``'s
    keyword arguments. The connection is a transport serving the server, as stdio or an
    HTTP app is (``server.lifecycle``): the server is started for it first
    (``ConfigError`` when it cannot be: a configured store that cannot be used) and
    stopped for it once the client has closed. So the ``lifespan``, the tasks, the relay
    and the URL-mode stores stay while it is connected, whatever another transport serving
    the same server does, and are released when it closes unless another still holds them."""
    transport = MemoryTransport(server, http=http, principal=principal, trace=trace)
    await start_for(server, transport)
    try:
        async with Client(transport, answerer=answerer, **options) as client:
            yield client
    finally:
        await stop_for(server, transport)
