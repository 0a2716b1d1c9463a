"""stdio, client side: what one server process writes to its stdout, read line by line and
routed (``stdio_client.StdioTransport`` spawns the process and writes to it).

Rules:

* Each message is one line (``wire.framing.LineFramer`` reads them; an oversized or
  undecodable line is logged and skipped, never fatal, and fails at once the request in
  flight it names). A line that is a request but not valid JSON-RPC (``params`` not an
  object, say) and whose id can be read is answered -32600 Invalid Request, so the server
  does not wait for ever; unless the client's last request was at a modern revision, whose
  client writes no responses (``modern``). A line that is not JSON-RPC is noise
  (``stdio_noise``).
* Responses go to their exchange by id (an error without an id, to the one request in
  flight when there is only one: with more, nobody can tell whose); the server's requests
  and notifications to the unsolicited callback, whose failure is logged. An answer to a
  request given up is dropped quietly (``stdio_exchange.dropped_late``), one to an id
  never sent warned about. A request in flight read back whole ends it
  (``stdio_exchange.echoed``).
* It logs on the transport's logger, ``mcp_elicit.stdio_client``, and reads the
  transport's ``where`` and ``trace`` as each line comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mcp_elicit.client.transport import (
    Ended,
    Trace,
    Unsolicited,
    invalid_request_reply,
    malformed_reply,
    message_json,
    unreadable_reply,
)
from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import ParseError, ProtocolError, TransportError
from mcp_elicit.log_labels import message_label, peer_text, request_where
from mcp_elicit.transports.stdio_exchange import Pending, dropped_late, echoed
from mcp_elicit.transports.stdio_noise import StdoutNoise
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.framing import LineFramer, Oversized, leading_id

__all__ = ["StdoutRouting"]

log = logging.getLogger("mcp_elicit.stdio_client")


class Owner(Protocol):
    """What the routing reads of its transport, as each line comes."""

    trace: Trace | None

    @property
    def where(self) -> str: ...


class StdoutRouting:
    """One server process's stdout: its lines framed, decoded and routed."""

    def __init__(
        self,
        owner: Owner,
        max_line: int,
        pending: dict[jsonrpc.RequestId, Pending],
        abandoned: dict[jsonrpc.RequestId, None],
        put: Callable[[Mapping[str, Any]], object],
    ) -> None:
        self._owner = owner
        self.framer = LineFramer(max_line)
        self.noise = StdoutNoise(owner.where, log)
        #: The requests in flight, and those given up (the transport's, shared).
        self._pending = pending
        self._abandoned = abandoned
        #: Queues a message on the server's stdin (raises ``TransportError`` once it is gone).
        self._put = put
        self.unsolicited: Unsolicited | None = None
        #: The last request went at a modern revision: the server's requests get no answer.
        self.modern = False

    async def read(self, stdout: asyncio.StreamReader) -> None:
        """Route every line until the output closes (its last line too, unterminated)."""
        while True:
            chunk = await stdout.read(65536)
            for line in self.framer.feed(chunk) if chunk else self.framer.finish():
                if isinstance(line, Oversized):
                    self._oversized(line)
                    continue
                await self._route(line)
            if not chunk:
                break

    def _oversized(self, line: Oversized) -> None:
        """A line over the limit is skipped; when it starts with the id of a request in
        flight, that request fails now (not at its timeout)."""
        where = self._owner.where
        rid = leading_id(line.head)
        pending = self._pending.get(rid) if rid is not None else None
        if pending is None:
            log.warning("%s wrote a %d-byte line, over the limit; skipped", where, line.size)
            return
        pending.put_nowait(
            Ended(
                reason=f"{where} sent a response of {line.size} bytes, over this client's limit of "
                f"{self.framer.max_line} bytes (StdioTransport's max_line)"
            )
        )

    async def _route(self, line: bytes) -> None:
        where = self._owner.where
        try:
            message = jsonrpc.decode(line)
        except ProtocolError as exc:
            pending = self._pending.get(exc.request_id) if exc.request_id is not None else None
            ended = malformed_reply(exc, where) if pending is not None else None
            if pending is not None and ended is not None:
                pending.put_nowait(ended)  # the request fails now, not at its timeout
                return
            if isinstance(exc, ParseError):  # not JSON: the id it begins with, as for an oversized line
                rid = leading_id(line)
                if rid is not None and (pending := self._pending.get(rid)) is not None:
                    pending.put_nowait(unreadable_reply(rid, exc, where))
                    return
            self.noise.line(line, exc)
            reply = None if self.modern else invalid_request_reply(exc)
            if reply is not None:  # a request we cannot read, but can answer: it gets -32600
                with contextlib.suppress(TransportError):  # gone: the exit says so
                    self._put(reply)
            return
        trace = self._owner.trace
        if trace is not None:
            trace("receive", message_json(message))
        if echoed(line, message, self._pending, where):  # cat: no server, its request unanswered
            return
        if isinstance(message, jsonrpc.Response | jsonrpc.ErrorResponse):
            queue = self._pending.get(message.id) if message.id is not None else None
            if queue is None and message.id is None and len(self._pending) == 1:
                # an error about a request whose id the server could not read: with one
                # request in flight, it is that one's (with more, nobody can tell whose)
                (queue,) = self._pending.values()
            if queue is not None:
                queue.put_nowait(message)
            elif not dropped_late(self._abandoned, message.id, where):
                said = peer_text(quoted(message_json(message)))  # the server's: cut, inert
                log.warning("%s answered an unknown %s: %s", where, request_where(message.id), said)
            return
        if self.unsolicited is not None:
            try:
                await self.unsolicited(message)
            except Exception:
                log.exception("handling %s from %s failed", message_label(message), where)
