"""The calls a client has in flight, so that closing it ends them.

A call waits on its exchange (the server's answer) or on its answerer (a person); once
the client is closed neither can come, and a call left waiting only ended at its timeout
(network time, which a question stops: never), blaming the server for not answering.

Rules:

* ``Calls.run(what, work)`` runs a call in its caller's task, registered while it runs.
* ``Calls.end()`` (the close) cancels each call in flight and waits until it has ended,
  so its cleanup (a question withdrawn from the person, its exchange closed, the server
  told) runs while the connection still stands. That call raises ``TransportError``
  saying the client was closed; a cancellation aimed at the caller itself at the same
  time still propagates as one (``Task.uncancel``, as ``asyncio.timeout`` does).
* The close never cancels its own task (a close from inside an answerer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp_elicit.errors import TransportError

__all__ = ["Calls"]

T = TypeVar("T")


@dataclass
class Calls:
    """The tasks in a call, and those of them the close cut short."""

    _running: set[asyncio.Task[Any]] = field(default_factory=set)
    _cut: set[asyncio.Task[Any]] = field(default_factory=set)

    async def run(self, what: Callable[[], str], work: Callable[[], Awaitable[T]]) -> T:
        """``await work()``; ``TransportError`` saying ``what()`` was cut short when the
        client is closed meanwhile."""
        task = asyncio.current_task()
        assert task is not None
        self._running.add(task)
        try:
            return await work()
        except asyncio.CancelledError:
            if task in self._cut:
                self._cut.discard(task)
                if task.uncancel() == 0:
                    raise TransportError(
                        f"{what()} was cut short: the client was closed (Client.aclose, or the end of "
                        "its 'async with') while it waited"
                    ) from None
            raise
        finally:
            self._running.discard(task)
            if task in self._cut:  # the cancellation never reached the call: take it back
                self._cut.discard(task)
                task.uncancel()

    async def end(self) -> None:
        """Cut short every call in flight and wait until each has ended."""
        cut = {task for task in self._running if task is not asyncio.current_task() and not task.done()}
        for task in cut:
            task.cancel()
        self._cut |= cut
        if cut:
            await asyncio.wait(cut)
