"""After a round of the browser answerer: its answer server kept a short while for the pages
that have not heard how it ended (``ui.web``).

A page whose event stream is down when its round ends (a flaky network, a proxy, a reload
under way) asks again a little later: an answer server stopped with its round would leave it
nobody to ask, and the page could only say that nobody is waiting any more. So it stays up
for them, bounded.

Rules:

* Only a round with more pages left untold (``Round.untold``) than untold pages with a live
  event stream (``Round.untold_streaming``) is kept; every other answer server stops with
  its round, as before (a stopping server lets its streams say how the round ended).
* A kept answer server answers nothing but how its round ended (its link 410, its page 410
  saying how (``ended``: a reload tells the page), every post 409 with the ending, an event
  stream the ``end`` event), and stops once every such page has asked, or
  ``AFTER_SECONDS`` have passed, whichever comes first.
* At most ``MOST_KEPT`` are kept per answerer: one more stops the oldest. Cancelling the
  keeper (the event loop ending) stops them too, and a round ended by the event loop ending
  (its answer server cancelled with every other task) keeps nothing: a task started then
  would never be cancelled, and the loop would close with it pending.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Final

from mcp_elicit.transports.local import LocalServer
from mcp_elicit.ui.web_round import Round

__all__ = ["AFTER_SECONDS", "MOST_KEPT", "Afterwards", "ended"]

#: How long an ended round's answer server waits for its untold pages: longer than the
#: page's longest pause between asking again (8 s).
AFTER_SECONDS: Final = 30.0
MOST_KEPT: Final = 4
#: How a round ended, for a page loaded after it, as the page says it on its stream's end.
_HOW: Final = {
    "answered": "the answers were sent",
    "decline": "it was declined, and the server was told",
    "cancel": "it was cancelled, and the server was told",
    "cancelled": "it was withdrawn before it was answered, so nothing was sent",
    "withdrawn": "it was withdrawn before it was answered, and the server was told it was cancelled",
    "closed": "the page was closed, so it was cancelled, and the server was told",
    "stopped": "the server stopped, so nothing was sent",
    "timeout": "nobody answered in time, so it was cancelled",
    "finished": "the server says the step on that page is finished",
}
#: The person's own refusals, which are answers: they travel as answers do.
_REFUSED: Final = {"decline": "declined", "cancel": "cancelled"}


def ended(reason: str, carried: str = "") -> str:
    """What a page loaded after its round ended (by ``reason``) says under its heading
    ("This question is no longer open"); ``carried``: what takes the answers to the server
    when that was still to come as the round ended (``form_text.carried_by``: 2026-07-28's
    retry, or a task's update), when they were not sent with the round's end. A decline
    or a cancel is an answer too: it was sent, or goes with ``carried``, the same way."""
    how = _HOW.get(reason)
    if reason == "answered" and carried:
        how = f"the answers were given, and go to the server with {carried}"
    elif reason in _REFUSED and carried:  # a refusal is an answer too, and travels the same way
        how = f"it was {_REFUSED[reason]}, and that goes to the server with {carried}"
    elif reason == "closed" and carried:  # cancelled: an answer, as the person's own Cancel
        how = f"the page was closed, so it was cancelled, and that goes to the server with {carried}"
    return "There is nothing left to answer here." if how is None else f"{how[0].upper()}{how[1:]}."


class Afterwards:
    """The answer servers of ended rounds kept for their untold pages."""

    def __init__(self) -> None:
        self._kept: deque[asyncio.Task[None]] = deque()

    async def end(self, running: LocalServer, round_: Round) -> None:
        """``running``, the answer server of ``round_`` (ended), stopped now, or kept a while
        when a page of it has not heard how it ended."""
        told = round_.untold <= round_.untold_streaming()  # each hears it on its live stream as this stops
        if told or running.task.done() or running.task.cancelling():  # the event loop ending stops it
            await running.stop()
            return
        kept = asyncio.ensure_future(_until_told(running, round_))
        self._kept.append(kept)
        kept.add_done_callback(self._forget)
        while len(self._kept) > MOST_KEPT:
            self._kept.popleft().cancel()

    def _forget(self, kept: asyncio.Task[None]) -> None:
        with contextlib.suppress(ValueError):
            self._kept.remove(kept)


async def _until_told(running: LocalServer, round_: Round) -> None:
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(AFTER_SECONDS):
                await round_.all_told.wait()
    finally:
        await running.stop()
