"""How a store's outage is said in the log: when it starts, now and then while it lasts, and
when it ends; never once per call, so that a busy server whose store is down writes a few
lines, not one per request.

Rules:

* ``failed(exc)`` after a success (or first): one line at the chosen level, ``what`` and
  the cause (``failure_text``). Further failures are counted; while they go on, one more
  line every ``every`` seconds (60) says how many failed since the last line and the
  latest cause. Nothing else is logged for them: the callers have their own answers
  (``StoreUnavailable`` for a request).
* ``answered()`` after failures: one line at INFO, ``again`` and how many calls failed
  since the outage began; otherwise nothing (it is called on every success).
* Calls may be of kinds (``kind=``: a store's keys and its channels, which Redis grants
  apart). A success ends the outage only when its kind failed in it: a store whose keys
  answer while its channels are refused is failing still, so a put that succeeds between
  two refused publishes writes no "answers again" and the next refusal no new first line
  (a pair a try, before). A call of a kind that failed answering ends it for every kind.
* The clock is monotonic unless given; a clock that goes back counts as a minute passed.
* One ``FailureLog`` per store and concern, used from one event loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from mcp_elicit.stores.base import failure_text

__all__ = ["FailureLog"]

#: Seconds between the lines that say an outage goes on.
EVERY = 60.0


class FailureLog:
    """The outage of one store, as ``logger`` says it (see the module rules)."""

    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        again: str,
        *,
        level: int = logging.ERROR,
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log, self._what, self._again, self._level = logger, what, again, level
        self._every, self._clock = every, clock
        self._failures = 0  # since the outage began; 0: no outage
        self._kinds: set[str] = set()  # the kinds of call that failed in it
        self._unsaid = 0  # failures since the last line
        self._said = 0.0  # when the last line was written

    @property
    def failing(self) -> bool:
        """Whether the last call failed."""
        return self._failures > 0

    def failed(self, exc: BaseException, kind: str = "") -> None:
        now = self._clock()
        self._failures += 1
        self._kinds.add(kind)
        if self._failures == 1:
            self._log.log(self._level, "%s: %s", self._what, failure_text(exc))
            self._said = now
            return
        self._unsaid += 1
        if not self._said <= now < self._said + self._every:
            self._log.log(
                self._level,
                "%s, %d more times in the last %.0f s (%d since it began): %s",
                self._what,
                self._unsaid,
                max(now - self._said, 0.0),
                self._failures,
                failure_text(exc),
            )
            self._said, self._unsaid = now, 0

    def answered(self, kind: str = "") -> None:
        if self._failures and kind in self._kinds:
            self._log.info("%s, after %d failed calls", self._again, self._failures)
            self._failures = self._unsaid = 0
            self._kinds.clear()
