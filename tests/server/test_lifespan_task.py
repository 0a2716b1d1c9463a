"""A server's ``lifespan`` is entered and exited in one task of its own, whichever task
holds it first and whichever lets go last: a lifespan holding an anyio task group (a
background worker) or resetting a contextvar it set exits cleanly when the task that
stopped the server is the one that started it (stdio), another one (a second transport),
or a cancelled stop's release; a holder cancelled while it exits leaves the exit running
to its end. Through ``Server.start``/``stop`` and ``hold_lifespan``, on this event loop."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator

import anyio
import pytest

from mcp_elicit import Server

from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio

POOL: contextvars.ContextVar[str | None] = contextvars.ContextVar("pool", default=None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def worker_and_contextvar(events: list[str]) -> Server:
    """A server whose lifespan runs a background worker in an anyio task group and sets a
    contextvar it resets on exit."""

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        token = POOL.set("pool")
        async with anyio.create_task_group() as group:

            async def worker() -> None:
                try:
                    await anyio.sleep_forever()
                finally:
                    events.append("worker ended")

            group.start_soon(worker)
            try:
                yield "pool"
            finally:
                group.cancel_scope.cancel()
        POOL.reset(token)
        events.append("exit")

    return Server("worker", lifespan=lifespan)


def failed_on_exit(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "failed on exit" in r.getMessage()]


@pytest.mark.parametrize("stopper", ["the starting task", "another task"])
async def test_a_lifespan_with_a_task_group_and_a_contextvar_exits_cleanly(
    stopper: str, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[str] = []
    app = worker_and_contextvar(events)
    transport = object()
    await asyncio.ensure_future(app.start(transport=transport))  # a task of its own, as an HTTP app's
    assert app.lifespan_context == "pool"
    if stopper == "the starting task":
        await app.stop(transport=transport)  # raises nothing: this task is not cancelled
    else:
        await asyncio.ensure_future(app.stop(transport=transport))
    assert events == ["worker ended", "exit"]
    assert not failed_on_exit(caplog)
    assert POOL.get() is None, "what the lifespan set stays its own"


async def test_one_task_starting_and_stopping_is_not_cancelled_by_the_exit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Over stdio one task starts and stops the server: the lifespan's task group, exited
    elsewhere, used to cancel that task."""
    events: list[str] = []
    app = worker_and_contextvar(events)
    transport = object()
    await app.start(transport=transport)
    await app.stop(transport=transport)
    await asyncio.sleep(0)  # a cancellation left pending on this task would land here
    assert events == ["worker ended", "exit"]
    assert not failed_on_exit(caplog)


async def test_a_holder_cancelled_while_the_lifespan_exits_leaves_the_exit_running(
    caplog: pytest.LogCaptureFixture,
) -> None:
    closing, close = asyncio.Event(), asyncio.Event()
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        yield "pool"
        closing.set()
        await close.wait()  # the pool's close takes a while
        events.append("closed")
        raise OSError("the pool's close failed")

    app = Server("slow-exit", lifespan=lifespan)

    async def hold() -> None:
        async with app.hold_lifespan():
            pass

    holding = asyncio.ensure_future(hold())
    async with hang_guard("the lifespan's exit beginning"):
        await closing.wait()
    holding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holding
    close.set()
    await eventually(lambda: failed_on_exit(caplog), "the exit, run on in its own task, failing")
    assert events == ["closed"], "the pool's close ran to its end"
    (record,) = failed_on_exit(caplog)
    assert record.exc_info is not None and "the pool's close failed" in str(record.exc_info[1])
