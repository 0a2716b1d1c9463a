"""Soak tests: the memory a process keeps after thousands of calls of something."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Awaitable, Callable

__all__ = ["growth"]


async def growth(run: Callable[[int], Awaitable[None]], warm: int, count: int) -> int:
    """Bytes the process holds after ``count`` more calls of ``run`` than after ``warm``
    (``run`` gets the call's number; both measured after a collection). The calls must
    leave no task running."""
    running = asyncio.all_tasks()
    tracemalloc.start()  # before the warm-up: what it made and the count replaces is traced
    try:
        for i in range(warm):
            await run(i)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(warm, warm + count):
            await run(i)
        await asyncio.sleep(0)
        gc.collect()
        grew = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    left = asyncio.all_tasks() - running
    assert not left, f"{len(left)} tasks left running, such as {next(iter(left))!r}"
    return grew
