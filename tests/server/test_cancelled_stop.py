"""A ``Server``'s last stop cancelled part way (a second Ctrl-C, a host's cancel scope, a
timeout around it) still releases what it must: it raises at once, its release runs on to
its end on its own (the tasks waited for, then the relay, the stores and the
``lifespan``), and a start coming meanwhile waits for that release. Through
``Server.start``/``stop`` as transports await them, on this event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import anyio
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.memory import MemoryStore

from support.memory import MemoryClient
from support.tasks import WITH_TASKS
from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Lifespan:
    """A lifespan whose exit awaits (closing a pool), saying when it entered and exited."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.exited = asyncio.Event()

    @contextlib.asynccontextmanager
    async def __call__(self, server: Server) -> AsyncIterator[str]:
        self.events.append("enter")
        yield "pool"
        await asyncio.sleep(0)  # the pool's close awaits
        self.events.append("exit")
        self.exited.set()


def slow_to_cancel(lifespan: Lifespan) -> tuple[Server, asyncio.Event, asyncio.Event, asyncio.Event]:
    """A server on a ``memory://`` store whose ``slow`` task takes its cancellation until
    released: (server, running, cancelled, release)."""
    app = Server("cancelled", store="memory://", lifespan=lifespan, task_poll=0.02)
    running, cancelled, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @app.tool(task="required")
    async def slow(ctx: Context) -> str:
        """Its cancellation takes until the test releases it."""
        await ctx.start_task("working")
        running.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
            await release.wait()
            lifespan.events.append("handler ended")
        return "never"

    return app, running, cancelled, release


async def stop_under_way(
    app: Server, transport: object, running: asyncio.Event, cancelled: asyncio.Event
) -> asyncio.Task[None]:
    """The last stop of ``transport``, begun and waiting for the slow task's cancellation."""
    client = MemoryClient(app, capabilities=WITH_TASKS)
    await client.result("tools/call", {"name": "slow"})
    async with hang_guard("the task running"):
        await running.wait()
    stopping = asyncio.ensure_future(app.stop(transport=transport))
    async with hang_guard("the stop cancelling the task"):
        await cancelled.wait()
    return stopping


async def test_a_cancelled_last_stop_releases_everything_after_the_tasks_end() -> None:
    lifespan = Lifespan()
    app, running, cancelled, release = slow_to_cancel(lifespan)
    transport = object()
    await app.start(transport=transport)
    stopping = await stop_under_way(app, transport, running, cancelled)
    stopping.cancel()  # a second Ctrl-C while the stop waits for the tasks
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert lifespan.events == ["enter"], "the lifespan stays while a task's handler still runs"
    release.set()
    async with hang_guard("the release the cancelled stop left running"):
        await lifespan.exited.wait()
    assert lifespan.events == ["enter", "handler ended", "exit"]
    assert app.relay.listening is None and not app.url_mode.serving


async def test_a_start_after_a_cancelled_last_stop_waits_for_its_release() -> None:
    lifespan = Lifespan()
    app, running, cancelled, release = slow_to_cancel(lifespan)
    first, second = object(), object()
    await app.start(transport=first)
    stopping = await stop_under_way(app, first, running, cancelled)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    starting = asyncio.ensure_future(app.start(transport=second))
    await asyncio.sleep(0)  # let the start run as far as it can before the release ends
    assert not starting.done(), "the start waits for the release"
    release.set()
    async with hang_guard("the start after the release"):
        await starting
    try:
        assert app.relay.listening is not None, "the start's relay listens"
        assert app.url_mode.serving and app.lifespan_context == "pool"
    finally:
        await app.stop(transport=second)
    assert app.relay.listening is None
    assert lifespan.events == ["enter", "handler ended", "exit", "enter", "exit"]


async def test_a_last_stop_in_a_cancelled_scope_releases_everything() -> None:
    """A host's anyio cancel scope cancels every await of the stop, not only the first:
    the lifespan's own exit, which awaits, is run to its end all the same."""
    lifespan = Lifespan()
    app, running, cancelled, release = slow_to_cancel(lifespan)
    transport = object()
    await app.start(transport=transport)
    client = MemoryClient(app, capabilities=WITH_TASKS)
    await client.result("tools/call", {"name": "slow"})
    async with hang_guard("the task running"):
        await running.wait()
    scope = anyio.CancelScope()

    async def stop_in_scope() -> None:
        with scope:
            await app.stop(transport=transport)

    stopping = asyncio.ensure_future(stop_in_scope())
    async with hang_guard("the stop cancelling the task"):
        await cancelled.wait()
    scope.cancel()  # the host gives up on the stop
    async with hang_guard("the stop in the cancelled scope"):
        await stopping
    assert scope.cancelled_caught
    release.set()
    async with hang_guard("the lifespan's exit, to its end"):
        await lifespan.exited.wait()
    assert lifespan.events == ["enter", "handler ended", "exit"]
    assert app.relay.listening is None and not app.url_mode.serving


class Gated(MemoryStore):
    """A store whose write waits for ``gate`` and then fails (a Redis that hangs, then refuses)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: asyncio.Event | None = None
        self.writing = asyncio.Event()

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if self.gate is not None:
            self.writing.set()
            await self.gate.wait()
            raise OSError("read-only")
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_last_stop_cancelled_while_a_start_is_under_way_releases_once_that_start_fails() -> None:
    lifespan = Lifespan()
    store = Gated()
    app = Server("gated", store=store, lifespan=lifespan)
    serving, failing = object(), object()
    await app.start(transport=serving)
    assert app.relay.listening is not None
    store.gate = gate = asyncio.Event()
    starting = asyncio.ensure_future(app.start(transport=failing))
    async with hang_guard("the start checking the store"):
        await store.writing.wait()
    stopping = asyncio.ensure_future(app.stop(transport=serving))  # the last: it waits for the start
    await asyncio.sleep(0)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    gate.set()  # the start fails: no start is held now
    with pytest.raises(ConfigError, match="read-only"):
        await starting
    async with hang_guard("the release the cancelled stop left to do"):
        await lifespan.exited.wait()
    assert app.relay.listening is None, "the relay no longer listens"
    assert not app.url_mode.serving


async def test_a_failure_of_the_release_a_cancelled_stop_left_running_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    lifespan = Lifespan()
    app, running, cancelled, release = slow_to_cancel(lifespan)
    transport = object()
    await app.start(transport=transport)
    stop_relay = app.relay.stop

    async def breaks() -> None:
        await stop_relay()
        raise RuntimeError("the relay's store broke")

    monkeypatch.setattr(app.relay, "stop", breaks)
    stopping = await stop_under_way(app, transport, running, cancelled)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    release.set()
    async with hang_guard("the release"):
        await lifespan.exited.wait()
    await eventually(lambda: failed(caplog), "the release's failure logged")
    (record,) = failed(caplog)
    assert record.exc_info is not None and "the relay's store broke" in str(record.exc_info[1])
    assert not app.url_mode.serving


def failed(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "failed to release" in r.getMessage()]
