"""A person's Ctrl-C (or a ``SystemExit``) in a task of the client's own: carried to the
call that waits for it, not raised out of the event loop.

The client asks its answerer in tasks of its own (a round's questions beside the server
watch, a 2025-11-25 server's questions while their request's stream is read). asyncio
raises a ``KeyboardInterrupt`` from a task straight out of the event loop: the call that
waited for the task never sees it, its cleanup runs only when ``asyncio.run`` cancels
what is left, and the task's exception is reported as "never retrieved".

Rules:

* ``carried(aw)`` runs ``aw`` in such a task (``carrying(aw)`` starts one): a ``KeyboardInterrupt`` or ``SystemExit``
  it raises ends the task with ``Interrupt`` (an ``Exception``), which holds it.
* The task that waits for it takes the result with ``outcome(task)``, which raises the
  ``KeyboardInterrupt`` itself: it leaves the client call as if the answerer had been
  called there, through the call's own cleanup (its connection closed by the ``async
  with`` around it), with the cause, context and traceback it was raised with.
* One that nobody waits for any more is raised again where it is noticed (``reraise``),
  out of the event loop, as asyncio would have: a Ctrl-C is never swallowed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import NoReturn, TypeVar

__all__ = ["Interrupt", "carried", "carrying", "outcome", "reraise"]

T = TypeVar("T")


class Interrupt(Exception):
    """A ``KeyboardInterrupt`` or ``SystemExit`` raised in a task of the client's own,
    carried to the task waiting for it (``raised``); at 2025-11-25, also an answerer's or
    callback's own exception, once the server was told -32603 (``rev_2025_11_25_questions``)."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(f"{type(raised).__name__} in a task of the client's own")
        self.raised = raised
        #: Raised in the call it was carried to, or logged in place of another it raised
        #: (whoever notices it later leaves it be).
        self.taken = False


async def carried(aw: Awaitable[T]) -> T:
    """``await aw``, its ``KeyboardInterrupt`` or ``SystemExit`` carried as ``Interrupt``."""
    try:
        return await aw
    except (KeyboardInterrupt, SystemExit) as exc:
        raise Interrupt(exc) from None


def carrying(aw: Awaitable[T]) -> asyncio.Task[T]:
    """A task of its own running ``carried(aw)``. A task cancelled before it starts never
    awaits ``aw``: a coroutine is then closed, not left to warn "never awaited"."""
    task = asyncio.ensure_future(carried(aw))
    if inspect.iscoroutine(aw):
        task.add_done_callback(lambda _: aw.close())  # a no-op once it has run
    return task


def outcome(future: asyncio.Future[T]) -> T:
    """``future.result()``; a carried ``KeyboardInterrupt`` or ``SystemExit`` is raised as itself."""
    try:
        return future.result()
    except Interrupt as exc:
        reraise(exc)


def reraise(carrier: Interrupt) -> NoReturn:
    """Raise what ``carrier`` holds (with its own traceback), its chaining as it was raised:
    raising it again where ``Interrupt`` is handled would make that its context (and
    ``from None`` would cut its ``__cause__``)."""
    raised = carrier.raised
    chained = raised.__cause__, raised.__context__, raised.__suppress_context__
    try:
        raise raised
    finally:
        raised.__cause__, raised.__context__, raised.__suppress_context__ = chained
