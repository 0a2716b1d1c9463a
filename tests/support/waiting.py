"""Waiting, in tests, for something that happens in another task or process.

No test asserts how long something took (that is for benchmarks): a wait is bounded only
to turn a hang into a failure naming what hung, by a bound far above what the wait
takes, so a loaded machine does not make it fail. Where a test tells "at once" from
"after a long timer", it sets that timer to ``HOURS`` and bounds the wait with ``hang_guard``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

#: A timer the behaviour under test must not wait for: far past any hang guard.
HOURS = 3 * 3600.0
#: The hang guard's bound: far above what any guarded wait takes, loaded or not.
HANG_GUARD = 60.0


@asynccontextmanager
async def hang_guard(what: str, seconds: float = HANG_GUARD) -> AsyncIterator[None]:
    """Fail with ``AssertionError`` naming ``what`` if the block runs past ``seconds`` (a
    ``TimeoutError`` the block raises itself passes through unchanged)."""
    bound = asyncio.timeout(seconds)
    try:
        async with bound:
            yield
    except TimeoutError as exc:
        if bound.expired():
            raise AssertionError(f"{what}: still waiting after {seconds:g} s") from exc
        raise


async def eventually(check: Callable[[], object], what: str, *, within: float = HANG_GUARD) -> None:
    """Return once ``check()`` (plain or async) is true; fail naming ``what`` after
    ``within`` seconds: a hang guard (60 s unless given), not a time the check must beat,
    so a loaded machine that is merely slow does not fail it."""
    deadline = time.monotonic() + within
    while True:
        outcome = check()
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        await asyncio.sleep(0.01)
