"""Stopping a task of one's own without swallowing a cancellation aimed at oneself.

A close, or a call, cancels the tasks it started (a listener, an answer being made, a
response being read) and waits for each to end. The wait must swallow the child's own
``CancelledError`` (it was asked to stop) and its failure (the close goes on), but not a
cancellation of the waiting task itself that arrives meanwhile: a caller who cancels
``client.aclose()`` or a call at that moment (``asyncio.timeout``, a ``TaskGroup``
failing, a second Ctrl-C) must see it cancelled, not completed.

Rule: a cancellation of the waiter is one requested after the wait began (the task's
``cancelling()`` count went up). One already pending when it began (a close run in the
``finally`` of a cancelled call) is not re-raised here: the cleanup goes on, and the
cancellation goes on propagating from where it was caught.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["reap"]


async def reap(*tasks: asyncio.Future[Any], failures: bool = False) -> None:
    """Cancel each of ``tasks`` not yet done and wait until it has ended; its cancellation
    is swallowed, and its failure too unless ``failures`` (then the first is raised, once
    all have ended). ``CancelledError`` when the waiting task itself was cancelled
    meanwhile (once every task has ended: none is left running)."""
    current = asyncio.current_task()
    before = current.cancelling() if current is not None else 0
    for future in tasks:
        if not future.done():
            future.cancel()
    failure: BaseException | None = None
    for future in tasks:
        while not future.done():
            # cancelled again if the waiter is: the child then ends all the sooner
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])
            if not future.done():
                future.cancel()
        if not future.cancelled():
            failure = failure or future.exception()  # retrieved, so never logged as lost
    if current is not None and current.cancelling() > before:
        raise asyncio.CancelledError
    if failures and failure is not None:
        raise failure
