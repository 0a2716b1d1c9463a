"""stdio, client side: one request's exchange, on the process it was sent to.

Rules: an exchange holds the state of the process it was made on (its requests in
flight, those given up), never the state of one opened after it. A request given up
before its answer (or the server's end) was read is remembered, the last
``ABANDONED_KEEP`` of them, so that its answer, if it comes, is dropped quietly.
"""

from __future__ import annotations

import asyncio
from typing import Final

from mcp_elicit.client.transport import Ended
from mcp_elicit.wire import jsonrpc

__all__ = ["ABANDONED_KEEP", "StdioExchange"]

#: How many ids of requests given up are remembered, so their late answers pass quietly.
ABANDONED_KEEP: Final = 256


class StdioExchange:
    """One request's answer; it holds the state of the process it was made on (its
    requests in flight, those given up), never the state of one opened after it."""

    def __init__(
        self,
        pending: dict[jsonrpc.RequestId, asyncio.Queue[jsonrpc.Message | Ended]],
        abandoned: dict[jsonrpc.RequestId, None],
        rid: jsonrpc.RequestId,
        queue: asyncio.Queue[jsonrpc.Message | Ended],
    ):
        self._pending = pending
        self._abandoned = abandoned
        self._rid = rid
        self._queue = queue
        self._final: Ended | None = None
        self.headers: dict[str, str] = {}

    async def receive(self) -> jsonrpc.Message | Ended:
        if self._final is not None:
            return self._final
        item = await self._queue.get()
        if isinstance(item, Ended):
            self._final = item
        elif isinstance(item, jsonrpc.Response | jsonrpc.ErrorResponse):
            self._final = Ended()
        return item

    async def aclose(self) -> None:
        if self._pending.get(self._rid) is self._queue:
            del self._pending[self._rid]
        if self._final is None:  # given up before its answer (or the server's end) was read:
            self._abandoned[self._rid] = None  # its answer, if it comes, is dropped quietly
            if len(self._abandoned) > ABANDONED_KEEP:
                del self._abandoned[next(iter(self._abandoned))]
