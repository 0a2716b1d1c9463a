"""Resource updates across instances: ``Server.notify_resource_updated`` on one instance
reaches the subscribers of every instance sharing its store.

A 2026-07-28 client may send any request to any instance, and a ``subscriptions/listen``
stream stays on the one that took it: without this, a listener would hear only the updates
made on its own instance.

Rules:

* Only with a configured store (``Server(store=...)``, ``--store``). Each update is
  published on one channel per server (its name and ``MCP_ELICIT_SERVER_ID``, as its
  sealed state is), and every instance subscribed delivers it to its own subscribers. So
  it reaches other processes through Redis; SQLite and memory stores publish within their
  process only.
* An instance knows its own messages (a random id in each) and skips them: it has
  delivered those already, at once.
* Publishing never waits for the store; a failure is logged. A subscription that fails
  (the store is down) is opened again after 1, 2, 4... up to 30 seconds; what is published
  meanwhile is lost, as Redis pub/sub loses what is published while a subscriber is away.
* A message that is not one of ours (not JSON, no string ``uri``, longer than 4 KiB) is
  ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import secrets
from collections.abc import Callable

import orjson

from mcp_elicit.stores.base import Store

__all__ = ["ResourceRelay"]

log = logging.getLogger("mcp_elicit.server")

_MAX_MESSAGE = 4096
_RETRY_MAX = 30.0


class ResourceRelay:
    """Publishes this instance's resource updates; delivers the other instances' ones."""

    def __init__(self, server_id: str, deliver: Callable[[str], object]) -> None:
        self.channel = (
            "resources-updated-" + hashlib.sha256(server_id.encode("utf-8", "replace")).hexdigest()[:24]
        )
        self._deliver = deliver
        self._me = secrets.token_hex(8)
        self._store: Store | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._sends: set[asyncio.Task[None]] = set()
        #: Set once the subscription is open (made by :meth:`start`, in its event loop).
        self.listening: asyncio.Event | None = None

    def start(self, store: Store) -> None:
        """Deliver what other instances publish on ``store``, until :meth:`stop`."""
        if self._task is None:
            self._store = store
            self._loop = asyncio.get_running_loop()
            self.listening = asyncio.Event()
            self._task = asyncio.ensure_future(self._listen(store, self.listening))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for send in list(self._sends):
            send.cancel()
        self._store = self.listening = None

    def publish(self, uri: str) -> None:
        """Tell the other instances, without waiting (from any thread); nothing when not
        started."""
        if self._store is None or self._task is None or self._loop is None:
            return
        work = self._send(self._store, orjson.dumps({"uri": uri, "from": self._me}))
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not self._loop:
            asyncio.run_coroutine_threadsafe(work, self._loop)
            return
        send = asyncio.ensure_future(work)
        self._sends.add(send)
        send.add_done_callback(self._sends.discard)

    async def _send(self, store: Store, message: bytes) -> None:
        try:
            await store.publish(self.channel, message)
        except Exception as exc:  # any backend's failure: the update stays local
            log.warning("a resource update could not be sent to the other instances: %s", exc)

    async def _listen(self, store: Store, listening: asyncio.Event) -> None:
        delay = 1.0
        while True:
            try:
                async with store.subscribe(self.channel) as subscription:
                    listening.set()
                    delay = 1.0
                    while True:
                        message = await subscription.next(math.inf)
                        if message is not None:
                            self._receive(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store is down or closed: try again later
                listening.clear()
                log.warning(
                    "resource updates from other instances stopped (%s); retrying in %.0f s", exc, delay
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_MAX)

    def _receive(self, message: bytes) -> None:
        if len(message) > _MAX_MESSAGE:
            return
        try:
            body = orjson.loads(message)
        except orjson.JSONDecodeError:
            return
        if not isinstance(body, dict) or body.get("from") == self._me or not isinstance(body.get("uri"), str):
            return
        self._deliver(body["uri"])
