"""The line of completions of URL steps made on one event loop (``server/step_records.py``
writes it): what each completion carries, and what is said of those not recorded.

Rules:

* ``Line.waiting`` is appended to wherever ``record`` runs (a signal handler, another
  thread: one ``deque.append``, no lock); everything else of a line is used on its loop.
* A log line names at most ``_NAMED_MOST`` steps, and says how many more.
* Past its bound a line drops its oldest completions (``drop_over``): the first drop says
  so at once, and those dropped within the next ``DROPS_SAID_EVERY`` seconds are said in
  one warning when they end (then again at most once per such window), so an outage that
  lasts, completions arriving one at a time, does not write a warning per completion.
  What is gathered but not yet said is said when the line settles (``settle_drops``: the
  server stopping) or is let go of with its closed loop.
* A completion given up once its marker is written (only its notices were left to
  publish) is recorded: it is said so (``lost``), not "could not be recorded".
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias

from mcp_elicit.server.url_steps import StepCompletions

__all__ = ["Completion", "Line", "Told", "holds", "lost", "names", "untold"]

log = logging.getLogger("mcp_elicit.server")

#: How many steps one log line names at most.
_NAMED_MOST = 20
#: Seconds during which the completions a line drops past its bound are gathered into one
#: warning, after the one said at once.
DROPS_SAID_EVERY = 10.0

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
    retry_at: float = 0.0  # set aside (the store refuses it alone): when it is tried again
    delay: float = 0.0  # set aside: the pause before the try after that


class Line:
    """The completions made on one event loop, written in order by one task of that loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        #: Appended by ``record`` wherever it runs (one step, no lock); taken on the loop.
        self.waiting: deque[Completion] = deque()
        self.writing: Completion | None = None  # taken from ``waiting``, not yet written
        self.batch: list[Completion] = []  # taken from ``waiting``, being written together
        self.aside: list[Completion] = []  # failing alone, each tried again on its own
        self.task: asyncio.Task[None] | None = None
        self.opened: dict[str, StepCompletions] = {}  # stores opened for its writes, by URL
        self.wake: asyncio.Future[None] | None = None  # its pause before trying again
        self.idle = False  # that pause waits only for ``aside``: a new completion ends it
        self.untold = False  # the store refuses the notices for its configuration: said
        self.refused = False  # the store refuses the writes for its configuration: said
        self.dropped: list[Completion] = []  # dropped past the bound, not yet said (named ones)
        self.dropped_count = 0  # how many, named or not
        self.bound = 0  # the bound they were dropped past
        self.quiet: asyncio.TimerHandle | None = None  # a drop was said: the window's end

    def drop_over(self, most: int) -> None:
        """On the loop: drop the oldest waiting past ``most``, said as the rules say."""
        excess = min(len(self.waiting) + len(self.aside) - most, len(self.waiting))
        if excess <= 0:
            return
        dropped = [self.waiting.popleft() for _ in range(excess)]
        self.dropped += dropped[: max(0, _NAMED_MOST - len(self.dropped))]
        self.dropped_count += excess
        self.bound = most
        if self.quiet is None:  # none said within the window: this one is, at once
            self._said_in_window()

    def _said_in_window(self) -> None:
        """Say what was dropped since the last warning, if anything; then gather for a window."""
        self.quiet = None
        if not self.dropped_count:
            return
        self._say_dropped()
        if not self.loop.is_closed():
            self.quiet = self.loop.call_later(DROPS_SAID_EVERY, self._said_in_window)

    def _say_dropped(self) -> None:
        """Say, in one warning, the completions dropped and not said yet (none: nothing)."""
        if not self.dropped_count:
            return
        count, named = self.dropped_count, self.dropped
        self.dropped, self.dropped_count = [], 0
        more = count - len(named)
        log.warning(
            "%d completions of URL steps wait for the store already, the most kept: the oldest "
            "are dropped, not recorded (%s%s): 2026-07-28 requests waiting on them go on waiting "
            "until their bound (completions dropped within %g s of this are said together)",
            self.bound,
            ", ".join(repr(done.elicitation_id[:64]) for done in named),
            f" and {more} more" if more > 0 else "",
            DROPS_SAID_EVERY,
        )

    def settle_drops(self) -> None:
        """Say what was dropped and not yet said, and end the window (the line settles)."""
        if self.quiet is not None:
            self.quiet.cancel()
            self.quiet = None
        self._say_dropped()

    def take_all(self) -> list[Completion]:
        """Every completion it holds, taken out of it, in order."""
        held = [*self.aside, *self.batch] + ([] if self.writing is None else [self.writing])
        self.writing, self.batch, self.aside = None, [], []
        while self.waiting:  # popleft, not clear: one appended meanwhile is taken too
            held.append(self.waiting.popleft())
        return held


def holds(line: Line | None) -> bool:
    return line is not None and (
        line.writing is not None or bool(line.waiting) or bool(line.batch) or bool(line.aside)
    )


def names(completions: Iterable[Completion]) -> str:
    ids = [repr(done.elicitation_id[:64]) for done in completions]
    more = len(ids) - _NAMED_MOST
    return ", ".join(ids[:_NAMED_MOST]) + (f" and {more} more" if more > 0 else "")


def lost(completions: list[Completion], why: str) -> None:
    """Say that ``completions`` are given up, for ``why``: not recorded, or (their marker
    written) recorded but not told."""
    unmarked = [done for done in completions if not done.marked]
    marked = [done for done in completions if done.marked]
    if unmarked:
        one = len(unmarked) == 1
        log.warning(
            "the completion%s of URL step%s %s could not be recorded in the store (%s): 2026-07-28 "
            "requests waiting on %s go on waiting until their bound",
            "" if one else "s",
            "" if one else "s",
            names(unmarked),
            why,
            "it" if one else "them",
        )
    if marked:
        one = len(marked) == 1
        log.warning(
            "the completion%s of URL step%s %s %s recorded in the store, but not told (%s): "
            "2026-07-28 requests held on %s see it when they next look, and the 2025-11-25 "
            "sessions of other instances waiting on %s are not told",
            "" if one else "s",
            "" if one else "s",
            names(marked),
            "is" if one else "are",
            why,
            "it" if one else "them",
            "it" if one else "them",
        )


def untold(line: Line, done: Completion, said: str) -> None:
    """``done`` is recorded, but the store refuses to publish that it is, for its
    configuration (the Redis user's channels): said once while that lasts."""
    if line.untold:
        log.debug("the completion of URL step %r is recorded, not told: %s", done.elicitation_id[:64], said)
        return
    line.untold = True
    log.error(
        "the completion of URL step %r is recorded, but the store refuses to tell it for its "
        "configuration: %s. Until the Redis user may use the store's channels again, the "
        "requests held on a step see it done only when they look again, and the sessions of "
        "other instances are not told (nothing more is said of the completions that follow)",
        done.elicitation_id[:64],
        said,
    )
