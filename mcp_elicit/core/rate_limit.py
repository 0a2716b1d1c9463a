"""Rate limits, sans-IO: how often a caller may do something, decided from a clock value.

Both limits here are the generic cell rate algorithm (GCRA): each key keeps one number,
the time its budget is next whole (its *due* time). A step is allowed when the due time
is at most ``burst - 1`` intervals ahead of now, and pushes it one ``interval``
(``1 / per_second``) further; otherwise it is refused, and the wait until one is allowed
is exact. So ``burst`` steps may come at once, then one each interval.

Rules:

* No I/O and no clock of its own: every decision takes ``now`` (seconds, any
  monotonic origin), so a test moves time by passing a bigger number. A clock that
  went back allows nothing early: a wait grows by the step back.
* ``CallLimit`` keeps a due time per key (a principal's subject; None: every
  unauthenticated caller): a key whose due time is past holds no debt and is the same as
  an unseen one, so it is forgotten when the map is swept. Sweeps happen when the map has doubled since the last one, so memory
  stays proportional to the keys active within one burst's time, and each step costs
  O(1) amortized.
* ``LogBudget`` is one request's: a message over the limit is dropped, never queued.
  The first time a request drops one, a notice says so; the first message sent after a
  run of drops is preceded by a notice saying how many were dropped. Notices are not
  counted against the budget (a request sends at most twice its rate that way).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Final

__all__ = ["LOG_BURST", "LOG_PER_SECOND", "CallLimit", "LogBudget"]

#: How many ``ctx.log`` messages one request sends a second, sustained, and at once.
LOG_PER_SECOND: Final = 100.0
LOG_BURST: Final = 100

#: Float rounding a step exactly on its due time may carry (a nanosecond): not a wait.
_ROUNDING: Final = 1e-9
#: The map of due times is first swept when it holds this many keys.
_FIRST_SWEEP: Final = 64


class CallLimit:
    """At most ``burst`` steps at once per key, then ``per_second`` a second."""

    __slots__ = ("_due", "_sweep_at", "burst", "interval", "per_second", "tolerance")

    def __init__(self, per_second: float, burst: int) -> None:
        if (
            not (per_second > 0 and math.isfinite(per_second) and math.isfinite(1.0 / per_second))
            or burst < 1
        ):
            raise ValueError(
                "a rate limit needs a finite per_second above 0 (with a finite interval, 1 / per_second) "
                f"and burst >= 1, not {per_second!r}, {burst!r}"
            )
        self.per_second = per_second
        self.burst = burst
        self.interval = 1.0 / per_second
        #: How far ahead of now a due time may be for a step to be allowed.
        self.tolerance = self.interval * (burst - 1)
        self._due: dict[Hashable, float] = {}
        self._sweep_at = _FIRST_SWEEP

    def __len__(self) -> int:
        return len(self._due)

    def take(self, key: Hashable, now: float) -> float:
        """Count one step of ``key`` at ``now``: 0.0 when it is allowed, else the seconds
        until one will be (above 0; the refused step is not counted)."""
        due = self._due.get(key, now)
        if due < now:
            due = now
        ahead = due - now - self.tolerance
        if ahead > _ROUNDING:
            return ahead
        self._due[key] = due + self.interval
        if len(self._due) >= self._sweep_at:
            self._sweep(now)
        return 0.0

    def _sweep(self, now: float) -> None:
        """Forget every key with no debt left; sweep again once the map doubles."""
        self._due = {key: due for key, due in self._due.items() if due > now}
        self._sweep_at = max(_FIRST_SWEEP, 2 * len(self._due))


class LogBudget:
    """One request's log messages: ``take`` says what to send for each."""

    __slots__ = ("_limit", "dropped", "told", "worst")

    def __init__(self, per_second: float = LOG_PER_SECOND, burst: int = LOG_BURST) -> None:
        self._limit = CallLimit(per_second, burst)
        #: Messages dropped since the last one sent.
        self.dropped = 0
        #: The most severe level among them (an index into the caller's level order).
        self.worst = -1
        #: Whether the request was told its messages are being dropped.
        self.told = False

    def take(self, now: float, severity: int) -> tuple[bool, str | None, int]:
        """For one message of ``severity`` (higher is more severe) at ``now``: whether to
        send it, and a notice to send first (None: none) with the severity to send it at."""
        if self._limit.take(None, now):
            self.dropped += 1
            self.worst = max(self.worst, severity)
            if self.told:
                return False, None, severity
            self.told = True
            per = self._limit.per_second
            return False, f"log messages past {per:g} a second are dropped for this request", severity
        if not self.dropped:
            return True, None, severity
        count, worst = self.dropped, self.worst
        self.dropped, self.worst = 0, -1
        return (
            True,
            f"{count} log message{'s' if count != 1 else ''} dropped (more than {self._limit.per_second:g} a second)",
            worst,
        )
