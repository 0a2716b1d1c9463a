"""The line of completions of URL steps made on one event loop (``server/step_records.py``
writes it): what each completion carries, and what is said of those not recorded.

Rules:

* ``Line.waiting`` is appended to wherever ``record`` runs (a signal handler, another
  thread: one ``deque.append``, no lock); everything else of a line is used on its loop.
* A log line names at most ``_NAMED_MOST`` steps, and says how many more.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias

from mcp_elicit.server.url_steps import StepCompletions

__all__ = ["Completion", "Line", "Told", "holds", "lost", "names"]

log = logging.getLogger("mcp_elicit.server")

#: How many steps one log line names at most.
_NAMED_MOST = 20

#: What to publish once a completion is written: made at each try, a channel and a message
#: (the relay's sealed notice, which lives for a minute: one made at the call would be
#: refused as late by the instances reading it once an outage of the store is over).
Told: TypeAlias = Callable[[], tuple[str, bytes]] | None


@dataclass(eq=False, slots=True)
class Completion:
    elicitation_id: str
    principal: str | None
    told: Told
    until: float  # the loop's time at which it is given up
    marked: bool = False  # its marker is written: what is left is to tell it


class Line:
    """The completions made on one event loop, written in order by one task of that loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        #: Appended by ``record`` wherever it runs (one step, no lock); taken on the loop.
        self.waiting: deque[Completion] = deque()
        self.writing: Completion | None = None  # taken from ``waiting``, not yet written
        self.task: asyncio.Task[None] | None = None
        self.opened: dict[str, StepCompletions] = {}  # stores opened for its writes, by URL
        self.wake: asyncio.Future[None] | None = None  # its pause before trying again
        self.untold = False  # the store refuses the notices for its configuration: said

    def take_all(self) -> list[Completion]:
        """Every completion it holds, taken out of it, in order."""
        held = [] if self.writing is None else [self.writing]
        self.writing = None
        while self.waiting:  # popleft, not clear: one appended meanwhile is taken too
            held.append(self.waiting.popleft())
        return held


def holds(line: Line | None) -> bool:
    return line is not None and (line.writing is not None or bool(line.waiting))


def names(completions: Iterable[Completion]) -> str:
    ids = [repr(done.elicitation_id[:64]) for done in completions]
    more = len(ids) - _NAMED_MOST
    return ", ".join(ids[:_NAMED_MOST]) + (f" and {more} more" if more > 0 else "")


def lost(completions: list[Completion], why: str) -> None:
    if not completions:
        return
    one = len(completions) == 1
    log.warning(
        "the completion%s of URL step%s %s could not be recorded in the store (%s): 2026-07-28 "
        "requests waiting on %s go on waiting until their bound",
        "" if one else "s",
        "" if one else "s",
        names(completions),
        why,
        "it" if one else "them",
    )
