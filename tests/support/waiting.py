"""Waiting, in tests, for something that happens in another task or process."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable


async def eventually(check: Callable[[], object], what: str, *, within: float = 5.0) -> None:
    """Return once ``check()`` (plain or async) is true; fail naming ``what`` after
    ``within`` seconds."""
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
