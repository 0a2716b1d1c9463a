"""The calls a client has in flight, so that closing it ends them.

A call waits on its exchange (the server's answer) or on its answerer (a person); once
the client is closed neither can come, and a call left waiting only ended at its timeout
(network time, which a question stops: never), blaming the server for not answering.

Rules:

* ``Calls.run(what, work)`` runs a call in its caller's task, registered while it runs.
* ``Calls.close(end)`` (the close) runs once at a time, in a task of its own: it cancels
  each call in flight, waits until that *call* has ended (its cleanup: a question
  withdrawn from the person, its exchange closed, the server told, while the connection
  still stands; not the rest of its caller's task), then ``end()`` (the session, the
  transport). A second close meanwhile cuts nothing again: it waits for the first and
  ends as it does.
* A call cut short waits for the close to finish, then raises ``TransportError`` saying
  the client was closed; a cancellation aimed at the caller itself at the same time still
  propagates as one (``Task.uncancel``, as ``asyncio.timeout`` does). One that ends
  otherwise meanwhile (its answerer's own error) waits for the close too, then ends so.
* A call its caller cancelled (its timeout) that ends with an error meanwhile (an answerer
  failing as its question is withdrawn) ends cancelled all the same, the error logged: a
  timeout around it would otherwise see that error, not its cancellation.
* A close whose caller is cancelled while the calls are being cut (an answerer running
  the close, its question withdrawn by that very cut) leaves the close to finish on its
  own: waiting would wait for itself. So ``aclose()`` from inside an answerer raises
  ``CancelledError`` there, as any withdrawn question's answerer sees it (let it
  propagate); the call then raises ``TransportError`` once the close has finished. Cancelled later (``end()``: a DELETE the server
  holds), it cancels the close, whose ``end()`` still closes the transport, and waits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp_elicit.client.reaping import reap
from mcp_elicit.errors import TransportError

__all__ = ["Calls"]

T = TypeVar("T")

log = logging.getLogger("mcp_elicit.client")


@dataclass(eq=False)
class _Call:
    task: asyncio.Task[Any]
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    cut: bool = False  # cancelled by the close, not yet taken back


@dataclass
class Calls:
    """The calls in flight, and the close under way."""

    _running: set[_Call] = field(default_factory=set)
    _closing: asyncio.Task[None] | None = None
    _cutting: bool = False

    @property
    def running(self) -> bool:
        """Whether a call is in flight."""
        return bool(self._running)

    async def run(self, what: Callable[[], str], work: Callable[[], Awaitable[T]]) -> T:
        """``await work()``; ``TransportError`` saying ``what()`` was cut short when the
        client is closed meanwhile."""
        task = asyncio.current_task()
        assert task is not None
        call = _Call(task)
        self._running.add(call)
        try:
            return await work()
        except asyncio.CancelledError:
            if call.cut:
                call.cut = False
                if task.uncancel() == 0:
                    self._ended(call)
                    await self._until_closed()
                    raise TransportError(
                        f"{what()} was cut short: the client was closed (Client.aclose, or the end of "
                        "its 'async with') while it waited"
                    ) from None
            raise
        except Exception as exc:
            if call.cut or not task.cancelling():
                raise
            # its caller cancelled it (a timeout), and it failed meanwhile (an answerer failing
            # as its question was withdrawn): the cancellation is what the caller waits for
            log.error("%s failed as it was cancelled", what(), exc_info=exc)
            raise asyncio.CancelledError from exc
        finally:
            self._ended(call)
            if call.cut:  # the call ended otherwise (an answerer's own error): take it back
                call.cut = False
                task.uncancel()
                await self._until_closed()

    async def _until_closed(self) -> None:
        """Wait until the close under way has ended; its outcome is the closer's."""
        closing = self._closing
        if closing is not None and not closing.done():
            await asyncio.wait([closing])

    def _ended(self, call: _Call) -> None:
        self._running.discard(call)
        call.ended.set()

    async def close(self, end: Callable[[], Awaitable[None]]) -> None:
        """Cut short every call in flight, wait until each has ended, then ``await end()``;
        one close at a time (see the module docstring)."""
        closing = self._closing
        if closing is None or closing.done():
            closing = self._closing = asyncio.ensure_future(self._close(end))
        task = asyncio.current_task()
        assert task is not None
        before = task.cancelling()
        try:
            await asyncio.shield(closing)
        except asyncio.CancelledError:
            if task.cancelling() == before:
                return  # the close was given up by another closer: it has ended
            if not self._cutting:
                await reap(closing)
            raise

    async def _close(self, end: Callable[[], Awaitable[None]]) -> None:
        try:
            self._cutting = True
            cut = [call for call in self._running if not call.cut and not call.task.done()]
            for call in cut:
                call.cut = True
                call.task.cancel()
            for call in cut:
                await call.ended.wait()
        finally:
            self._cutting = False
            await end()
