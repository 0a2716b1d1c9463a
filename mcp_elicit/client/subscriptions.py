"""``subscriptions/listen``, client side (revision 2026-07-28): one long request whose
notifications the caller iterates.

Rules:

* Opening waits for the server's acknowledgement (within the client's timeout) and keeps
  what it agreed to (``Subscription.agreed``); an error answer raises it.
* Only notifications carrying this subscription's id are delivered: over HTTP they come on
  the request's own stream, over stdio (one channel for everything) the client routes
  them here by that id.
* Iteration ends when the server answers the request or cancels it
  (``notifications/cancelled`` naming it) (``ended_by_server``: a graceful closure, e.g.
  it stops) or the stream drops (the caller may open a new one). Leaving
  the ``async with`` ends it: over HTTP the stream is closed, over stdio the request is
  cancelled (``notifications/cancelled``). Closing the client ends every iteration as
  a dropped stream would (``Subscription.dropped``): over HTTP it waited for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from mcp_elicit.client.connection import Connection
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.transport import Ended, Exchange
from mcp_elicit.core.client import request_headers
from mcp_elicit.core.subscriptions import SUBSCRIPTION_ID
from mcp_elicit.errors import ProtocolError, ProtocolViolation, RequestTimeout
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, RequestId, Response

__all__ = ["Subscription", "open_subscription"]

_ACK: Final = "notifications/subscriptions/acknowledged"
_CANCELLED: Final = "notifications/cancelled"
_END: Final = None


class Subscription:
    """An open ``subscriptions/listen``: ``async for method, params in subscription``."""

    def __init__(self, rid: RequestId) -> None:
        self.id = rid
        #: What the server agreed to send (the acknowledgement's ``notifications``).
        self.agreed: dict[str, Any] = {}
        #: True once the server ended it (its answer, or ``notifications/cancelled`` naming the
        #: request): a graceful end, not a dropped stream.
        self.ended_by_server = False
        self._acknowledged = asyncio.Event()
        self._acked = False
        self._error: Mapping[str, Any] | None = None
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, dict[str, Any]]:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # iterating again ends again
            raise StopAsyncIteration
        return item

    def deliver(self, message: Notification) -> bool:
        """Take a notification if it belongs to this subscription (by its id)."""
        params = dict(message.params or {})
        if message.method == _CANCELLED and _same_id(params.get("requestId"), self.id):
            # The server tears it down (its answer may follow). The request id names the
            # subscription whether or not _meta repeats it (the spec's example does not).
            self._end(by_server=True)
            return True
        meta = params.get("_meta")
        if not isinstance(meta, Mapping) or meta.get(SUBSCRIPTION_ID) != self.id:
            return False
        if message.method == _ACK and not self._acked:
            agreed = params.get("notifications")
            self.agreed = dict(agreed) if isinstance(agreed, Mapping) else {}
            self._acked = True
            self._acknowledged.set()
        else:
            self._queue.put_nowait((message.method, params))
        return True

    def dropped(self) -> None:
        """End the iteration as a dropped stream does (the client is closed)."""
        self._end(by_server=False)

    def _end(self, *, by_server: bool, error: Mapping[str, Any] | None = None) -> None:
        self.ended_by_server = self.ended_by_server or by_server  # the stream may drop after
        self._error = error
        self._acknowledged.set()  # an opening that ends first stops waiting
        self._queue.put_nowait(_END)


def _same_id(named: Any, rid: RequestId) -> bool:
    """Whether ``named`` is the request id ``rid``: of the same JSON type too (1 is not "1";
    True, a bool, is no id)."""
    return type(named) is type(rid) and named == rid


@contextlib.asynccontextmanager
async def open_subscription(
    conn: Connection, revision: str, notifications: Mapping[str, Any], routes: dict[RequestId, Subscription]
) -> AsyncIterator[Subscription]:
    """Open a subscription; ``routes`` is where the client looks for the subscription a
    stdio notification belongs to."""
    _, message = conn.builder.request(
        "subscriptions/listen", {"notifications": dict(notifications)}, revision
    )
    headers = request_headers(message, revision)
    subscription = Subscription(message["id"])
    routes[subscription.id] = subscription
    exchange = await conn.transport.exchange(message, headers)
    pump = asyncio.ensure_future(_pump(exchange, subscription, conn, revision))
    try:
        try:
            async with asyncio.timeout(conn.timeout):
                await subscription._acknowledged.wait()
        except TimeoutError:
            raise RequestTimeout(
                f"{conn.server} did not acknowledge subscriptions/listen within {conn.timeout:g} s"
            ) from None
        if subscription._error is not None:
            raise ProtocolError.from_error(subscription._error)
        if not subscription._acked:
            raise ProtocolViolation(f"{conn.server} ended subscriptions/listen before acknowledging it")
        yield subscription
    finally:
        routes.pop(subscription.id, None)
        await reap(pump, failures=True)
        await exchange.aclose()
        if not subscription.ended_by_server and not conn.transport.http:
            await conn.cancel_request(message, headers, "the client stopped listening")


async def _pump(exchange: Exchange, subscription: Subscription, conn: Connection, revision: str) -> None:
    """Everything the request's own stream carries, until it ends."""
    while True:
        item = await exchange.receive()
        if isinstance(item, Ended):
            subscription._end(by_server=False)
            return
        if isinstance(item, Response) and item.id == subscription.id:
            subscription._end(by_server=True)
            return
        if isinstance(item, ErrorResponse) and item.id in (subscription.id, None):
            subscription._end(by_server=True, error=item.error)
            return
        if isinstance(item, Notification):
            with conn.receiving(item, revision):
                if not subscription.deliver(item):
                    await conn.notify(item.method, item.params or {})
