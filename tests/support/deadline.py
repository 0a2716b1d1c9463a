"""A generous deadline for code that must finish on hostile input, without timing asserts.

A test feeds input big enough that a super-linear parse would run for minutes, and
``within`` turns "never finishes" into a failure naming what was being done. The limit is
a hang guard, not a timing: 60 s (30 s at the least), far above what a linear parse
takes on a loaded machine, and far below what the super-linear one would take. Where
the code can show which path it took (a size check before any reading), the test checks
that instead.
Uses ``SIGALRM``: main thread, Unix only (a regular expression is interrupted too).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def within(seconds: float, what: str) -> Iterator[None]:
    """Fail with ``AssertionError`` naming ``what`` if the block runs past ``seconds``."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"{what} did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
