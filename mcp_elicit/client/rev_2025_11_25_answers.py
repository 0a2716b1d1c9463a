"""Sending a 2025-11-25 server our answer to its request, through a connection that breaks.

Rules:
* An answer is a JSON-RPC response POSTed on its own. A POST whose connection broke may
  or may not have reached the server, and nothing tells which: it is sent once more, on a
  new connection. A server applies one answer per question (a response whose question
  is already answered, or unknown, is ignored), so the person's answer is applied once,
  never twice, and never lost to one dropped connection.
* An answer whose second POST fails too fails the request the question came during
  (``Interrupt``, as an answerer's own error is carried), with a ``TransportError`` saying
  the answer was given but could not be sent and the server may never have had it: the
  call does not wait out its timeout and then blame the server for not answering.
* Once the request the question came during has its response, the server needs no
  answer to it: a POST still under way (a stalled connection) is cancelled
  (``AnswerPosts.cut``), so the result is not held until that POST's own time limit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from mcp_elicit.client.connection import Connection
from mcp_elicit.client.interrupts import Interrupt
from mcp_elicit.core.quoting import shown_text
from mcp_elicit.errors import TransportError
from mcp_elicit.log_labels import request_label
from mcp_elicit.wire.jsonrpc import Request

__all__ = ["AnswerPosts", "send_answer"]

log = logging.getLogger("mcp_elicit.client")


class _Sends(Protocol):
    async def send(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None: ...


async def send_answer(
    transport: _Sends,
    request: Request,
    message: Mapping[str, Any],
    headers: Mapping[str, str],
    server: object,
) -> None:
    """POST ``message``, our answer to ``request``; once more when the first broke."""
    try:
        await transport.send(message, headers)
        return
    except TransportError as first:
        if first.http_status is not None:
            raise
        log.info(
            "the answer to %s's %s was maybe not delivered (%s); sending it again",
            server,
            request_label(request.method, request.params, request.id),
            first,
        )
    try:
        await transport.send(message, headers)
    except TransportError as second:
        lost = TransportError(
            f"the answer to {server}'s {shown_text(request.method)} was given but could not be "
            f"sent, twice ({second}): the server may never have had it, so the call it came "
            f"during is ended; call it again once the server can be reached"
        )
        raise Interrupt(lost) from None


class AnswerPosts:
    """The answers being sent over ``conn``, by the task sending each."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._sending: set[asyncio.Task[Any]] = set()

    async def send(self, request: Request, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        """``send_answer``, known to be under way until it ends."""
        task = asyncio.current_task()
        if task is not None:
            self._sending.add(task)
        try:
            await send_answer(self.conn.transport, request, message, headers, self.conn.server)
        finally:
            if task is not None:
                self._sending.discard(task)

    def cut(self, tasks: list[asyncio.Task[None]]) -> None:
        """Cancel those of ``tasks`` still sending an answer: their request was answered."""
        for task in tasks:
            if task in self._sending:
                task.cancel()
