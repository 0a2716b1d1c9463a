"""stdio, client side: one request's exchange, on the process it was sent to.

Rules: an exchange holds the state of the process it was made on (its requests in
flight, those given up), never the state of one opened after it. A request given up
before its answer (or the server's end) was read is remembered, the last
``ABANDONED_KEEP`` of them, so that its answer, if it comes, is dropped quietly
(``dropped_late``: a debug line on ``mcp_elicit.stdio_client``, its label built only
when debug is on). A request
read back from the server that is one in flight, whole (the same JSON value as the one
sent: ``echoed``), ends that request saying the program echoes its input (``cat``) and is
no MCP server, rather than being taken for the server's own request, refused, and the
refusal echoed back as the answer. A request of a method either side may send (``ping``,
the tasks methods: ``BOTH_WAYS``) is never taken for an echo: each side numbers its own
ids, so a server's ``ping`` may read exactly like ours, and it is answered as the server's.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from mcp_elicit.client.transport import Ended
from mcp_elicit.log_labels import request_where
from mcp_elicit.wire import jsonrpc

__all__ = ["ABANDONED_KEEP", "BOTH_WAYS", "Pending", "StdioExchange", "dropped_late", "echoed"]

#: The stdio client's logger: a late answer's line is one of the client's.
log = logging.getLogger("mcp_elicit.stdio_client")

#: How many ids of requests given up are remembered, so their late answers pass quietly.
ABANDONED_KEEP: Final = 256

#: Requests a server may send a client as well as be sent: never read as an echo.
BOTH_WAYS: Final = frozenset({"ping", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})


class Pending(asyncio.Queue[jsonrpc.Message | Ended]):
    """What arrives for one request in flight; ``method`` and ``sent`` (as written) are
    the request's."""

    def __init__(self, sent: Mapping[str, Any]) -> None:
        super().__init__()
        self.method = str(sent.get("method"))
        self.sent = jsonrpc.encode(sent)


def echoed(
    line: bytes, message: jsonrpc.Message, pending: dict[jsonrpc.RequestId, Pending], where: str
) -> bool:
    """Whether ``message`` (read as ``line``) is a request in flight read back whole; if so,
    that request ends."""
    if not isinstance(message, jsonrpc.Request) or message.id is None or message.method in BOTH_WAYS:
        return False
    queue = pending.get(message.id)
    if queue is None or queue.method != message.method or json.loads(line) != json.loads(queue.sent):
        return False
    queue.put_nowait(
        Ended(
            reason=f"{where} sent back the request it was sent ({message.method}, id {message.id!r}): "
            "the program echoes what it is sent (as cat does); it is not an MCP server"
        )
    )
    return True


class StdioExchange:
    """One request's answer; it holds the state of the process it was made on (its
    requests in flight, those given up), never the state of one opened after it."""

    def __init__(
        self,
        pending: dict[jsonrpc.RequestId, Pending],
        abandoned: dict[jsonrpc.RequestId, None],
        rid: jsonrpc.RequestId,
        queue: Pending,
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


def dropped_late(abandoned: dict[jsonrpc.RequestId, None], rid: jsonrpc.RequestId | None, where: str) -> bool:
    """Whether ``rid`` is the id of a request given up before its answer came (one of
    ``abandoned``): then it is forgotten, and the answer dropped with a debug line naming
    it (``where``: the server), built only when debug is on."""
    if rid is None or rid not in abandoned:
        return False
    del abandoned[rid]
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s answered %s, given up before; dropped", where, request_where(rid))
    return True
