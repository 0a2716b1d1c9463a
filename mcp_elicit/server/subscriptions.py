"""``subscriptions/listen`` on the server (revision 2026-07-28): long-lived requests that
carry the notifications their client opted in to.

Rules:

* A listen request is acknowledged first (``notifications/subscriptions/acknowledged``,
  naming what the server agreed to), then gets each matching notification as it is
  published, on its own stream (SSE over HTTP; stdout over stdio), each stamped with the
  subscription's id. A subscription to tasks is answered with their current state right
  after the acknowledgement, read once the subscription listens: a change between the
  task's creation and the subscription is never missed.
* It ends when the client goes (closes the stream, or cancels the request on stdio;
  then no response is due), or when the server, or the transport carrying it, stops
  (``server.lifecycle``; the channel's ``transport`` names it): then ``notifications/cancelled``
  names the listen request, and the request is answered with an empty result carrying
  the subscription id (graceful closure); both carry that id.
* Asking for task ids needs the tasks extension (-32021); a task the listener may not see
  is left out of the acknowledgement, like a type the server does not offer and a resource
  URI nothing serves (what ``resources/read`` answers "not found" for).
* At most ``max_listeners`` subscriptions are open, ``max_listeners_per_owner`` of them
  for one principal (unauthenticated callers are one), so no one caller can take them
  all: a share of the whole, as for sessions and tasks (``options.share``: a tenth of it
  unless set, above it a ``ConfigError``). Past the server's, a listen is refused with
  -32603 and HTTP 503 (its capacity: try again later); past the caller's share with
  ``PrincipalLimitReached`` (-32600, HTTP 429: the caller's own doing), each naming it.
* A resource update reaches only the listeners allowed to read the resource (its
  ``readable`` rule, asked at each update: access withdrawn stops the updates).
* Publishing never waits: a listener that has fallen ``queue_size`` notifications behind
  loses the newest ones (logged). Subscriptions live in this process; what other instances
  sharing the store publish reaches them through ``server.relay``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_elicit.core.server import Call
from mcp_elicit.core.subscriptions import SUBSCRIPTION_ID, Filter, stamped
from mcp_elicit.core.tasks import require_tasks
from mcp_elicit.errors import InternalError
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.context import Channel
from mcp_elicit.server.options import share, whole
from mcp_elicit.server.shares import share_held

__all__ = ["Subscriptions"]

log = logging.getLogger("mcp_elicit.server")
_END = None


class _Listener:
    __slots__ = ("filter", "owner", "principal", "queue", "rid", "transport")

    def __init__(
        self,
        rid: object,
        owner: str | None,
        principal: Principal | None,
        filter_: Filter,
        size: int,
        transport: object = None,
    ) -> None:
        self.rid = rid
        #: The transport carrying it, whose stop ends it.
        self.transport = transport
        self.owner = owner
        #: Who listens, for the resources whose updates only their readers may hear.
        self.principal = principal
        self.filter = filter_
        self.queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue(size)

    def narrow(self, filter_: Filter) -> None:
        """From now on get only what ``filter_`` wants; what is queued is kept only if it does."""
        self.filter = filter_
        queued = [self.queue.get_nowait() for _ in range(self.queue.qsize())]
        for item in queued:
            if item is _END or filter_.wants(*item):
                self.queue.put_nowait(item)


class Subscriptions:
    """The open subscriptions of one server process."""

    def __init__(
        self, *, max_listeners: int = 1000, max_listeners_per_owner: int | None = None, queue_size: int = 256
    ) -> None:
        self._max_listeners_per_owner: int | None = None  # not set: a tenth of max_listeners
        self.max_listeners = max_listeners
        if max_listeners_per_owner is not None:
            self.max_listeners_per_owner = max_listeners_per_owner
        self.queue_size = queue_size
        self._listeners: set[_Listener] = set()
        self._held: Counter[str | None] = Counter()

    def __len__(self) -> int:
        return len(self._listeners)

    @property
    def max_listeners(self) -> int:
        """How many subscriptions this process holds open at most."""
        return self._max_listeners

    @max_listeners.setter
    def max_listeners(self, value: int) -> None:
        value = whole("Subscriptions.max_listeners", value)
        _share(self._max_listeners_per_owner, value)
        self._max_listeners = value

    @property
    def max_listeners_per_owner(self) -> int:
        """How many of them one principal holds at most (unauthenticated callers are one):
        at most ``max_listeners``; a tenth of it unless set."""
        return _share(self._max_listeners_per_owner, self._max_listeners)

    @max_listeners_per_owner.setter
    def max_listeners_per_owner(self, value: int) -> None:
        value = whole("Subscriptions.max_listeners_per_owner", value)
        _share(value, self._max_listeners)
        self._max_listeners_per_owner = value

    async def listen(
        self,
        call: Call,
        channel: Channel,
        *,
        offered: frozenset[str],
        served: Callable[[str], bool],
        tasks: Callable[[frozenset[str]], Awaitable[Mapping[str, dict[str, Any]]]],
        owner: str | None = None,
        principal: Principal | None = None,
        transport: object = None,
    ) -> dict[str, Any]:
        """Serve one ``subscriptions/listen`` until the server ends it (its result, before
        ``finish``) or the client goes (cancelled). ``offered``: the list-changed flags the
        server honours; ``served``: whether a resource URI is one the caller may subscribe
        to (served here: the others are left out); ``tasks``: the current state of those of the given tasks the caller
        may see; ``owner``: the caller's principal's subject and ``principal`` the caller
        (None: unauthenticated); ``transport``: the one carrying it (its stop ends it)."""
        asked = Filter.parse(call.params)
        if asked.task_ids:
            require_tasks(call.capabilities)
        if len(self._listeners) >= self.max_listeners:
            raise InternalError(
                f"Internal error: this server holds its limit of {self.max_listeners} subscriptions; "
                "try again later",
                http_status=503,
            )
        if self._held[owner] >= self.max_listeners_per_owner:
            raise share_held(
                "subscriptions",
                owner,
                self.max_listeners_per_owner,
                "max_listeners_per_owner",
                "end one first (one listen can carry every notification type)",
            )
        # Listening starts before the tasks' states are read, so a change in between is
        # queued, not lost; what the listener may not have is dropped once that is known.
        listener = _Listener(call.id, owner, principal, asked, self.queue_size, transport)
        self._listeners.add(listener)
        self._held[owner] += 1
        try:
            visible = await tasks(asked.task_ids) if asked.task_ids else {}
            uris = frozenset(uri for uri in asked.uris if served(uri))
            agreed = asked.agreed(offered=offered, served_uris=uris, visible_tasks=frozenset(visible))
            listener.narrow(agreed)
            ack = stamped({"notifications": agreed.wire()}, call.id)
            await channel.notify("notifications/subscriptions/acknowledged", ack)
            for state in visible.values():
                await channel.notify("notifications/tasks", stamped(state, call.id))
            while (item := await listener.queue.get()) is not _END:
                method, params = item
                await channel.notify(method, stamped(params, call.id))
            # The server tears it down: the one use 2026-07-28 leaves a server for
            # notifications/cancelled, before the answer that closes it gracefully.
            ended = {"requestId": call.id, "reason": "the server is stopping"}
            await channel.notify("notifications/cancelled", stamped(ended, call.id))
        finally:
            self._listeners.discard(listener)
            self._held[owner] -= 1
            if not self._held[owner]:
                del self._held[owner]
        return {"_meta": {SUBSCRIPTION_ID: call.id}}

    def publish(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        allowed: Callable[[Principal | None], bool] | None = None,
    ) -> int:
        """Queue a notification for every subscription that wants it (and whose caller is
        ``allowed`` it, when given); how many do."""
        body = dict(params or {})
        count = 0
        for listener in list(self._listeners):
            if listener.filter.wants(method, body) and (allowed is None or allowed(listener.principal)):
                count += 1
                try:
                    listener.queue.put_nowait((method, body))
                except asyncio.QueueFull:
                    log.warning(
                        "subscription %r is %d behind: %s dropped", listener.rid, self.queue_size, method
                    )
        return count

    def close_all(self) -> None:
        """End every subscription gracefully (the server stops): each is answered."""
        for listener in list(self._listeners):
            _end(listener)

    def close_from(self, transport: object) -> None:
        """End gracefully the subscriptions ``transport`` carries (it stops; the others
        go on): each is answered."""
        for listener in list(self._listeners):
            if listener.transport is transport:
                _end(listener)

    def forget_all(self) -> None:
        """Drop every subscription unanswered: the event loop that carried them ended
        (``server/left_loops.py``), nothing can reach their clients."""
        self._listeners.clear()
        self._held.clear()


def _end(listener: _Listener) -> None:
    """Queue the end of ``listener``'s subscription, after what it has not sent yet."""
    while True:
        try:
            listener.queue.put_nowait(_END)
            return
        except asyncio.QueueFull:
            listener.queue.get_nowait()  # the end matters more than a late notice


def _share(per_owner: int | None, max_listeners: int) -> int:
    """``max_listeners_per_owner`` as it stands with ``max_listeners``; ``ConfigError``
    naming both when it is above it."""
    return share(
        "Subscriptions.max_listeners_per_owner", per_owner, "Subscriptions.max_listeners", max_listeners
    )
