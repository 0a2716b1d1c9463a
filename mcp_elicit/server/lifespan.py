"""A server's ``lifespan=``: what it opens once when it starts serving (a database pool,
an HTTP client) and closes once it stops, the value it yields reachable from every
handler (``ctx.lifespan_context``) and from the server (``server.lifespan_context``).

Rules:

* ``lifespan`` takes the ``Server`` and returns an async context manager (an
  ``@contextlib.asynccontextmanager`` function, as in the official SDK and FastMCP); an
  async generator function is taken as if it were so decorated.
* It is entered by its first holder and exited when its last holder lets go, never
  entered twice at once: ``Server.start`` holds it (what stdio, the Streamable HTTP
  lifespan start-up and ``StreamableHTTP.lifespan`` await before serving),
  ``Server.stop`` lets go of one start's share (after the server's own stop: requests
  ended, tasks cancelled; a stop without a start of its own lets go of nothing),
  ``connect_memory`` starts and stops the server as the other transports do, and
  ``Server.hold_lifespan`` holds it around anything else (a test calling handlers). A
  second transport serving the same ``Server`` shares the running one. A holder that
  comes while it is being entered or exited waits for that to end.
* It is entered and exited in a task of its own (an anyio task group or a contextvar
  reset in it needs both in one task; its holders are often different tasks): what it
  sets in contextvars stays its own.
* A failure on entry is a ``ConfigError`` naming the server and what failed (the
  original chained), and nothing is held: a transport does not start. A failure on exit
  is logged with its traceback, and the stop goes on.
* Its value, while nobody holds it, is a ``RuntimeError`` saying how it is entered;
  without ``lifespan=`` it is always None.
* It is this process's alone: another instance behind the same URL (where a 2026-07-28
  retry or a task's ``tasks/get`` may land) runs its own.
* It belongs to the event loop it was entered on. Held there when that loop ended (a test
  that failed, an ``asyncio.run`` that ended without the server's stop), a holder on
  another loop lets go of it quietly and enters it anew (``server/left_loops.py``); one
  coming while that loop still runs, on another thread, is a ``RuntimeError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeAlias, cast

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.left_loops import drop, ended

__all__ = ["HasLifespan", "Lifespan", "LifespanFunction"]

log = logging.getLogger("mcp_elicit.server")

#: ``lifespan=``: the server in, an async context manager whose value handlers read out
#: (or an async generator function, taken as if decorated with ``asynccontextmanager``).
LifespanFunction: TypeAlias = (
    Callable[[Any], AbstractAsyncContextManager[Any]] | Callable[[Any], AsyncIterator[Any]]
)


class Lifespan:
    """The ``lifespan=`` of the server ``owner`` (None: none), entered by its holders."""

    def __init__(self, owner: object, function: LifespanFunction | None, name: str) -> None:
        if function is not None and not callable(function):
            raise ConfigError(
                f"lifespan {function!r}: expected None or a function taking the server and returning an "
                "async context manager (decorate it with @contextlib.asynccontextmanager)"
            )
        if inspect.isasyncgenfunction(function):  # the decorator left out: what it would do
            function = contextlib.asynccontextmanager(function)
        self.function = cast("Callable[[Any], AbstractAsyncContextManager[Any]] | None", function)
        self._owner = owner
        self._name = name
        self._holders = 0
        self._value: Any = None
        self._manager: _Runner | None = None
        #: Serialises entering and exiting; one per event loop (a lock binds to its loop).
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        #: The event loop its holders hold it on.
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        """Whether it is entered (or there is none and something holds the server)."""
        return self._holders > 0

    @property
    def value(self) -> Any:
        """What it yielded; None without ``lifespan=``. ``RuntimeError`` while not entered."""
        if self.function is None:
            return None
        if self._manager is None:
            raise RuntimeError(
                f"the lifespan of server {self._name!r} is not running: it is entered when the server "
                "starts serving (mcp-elicit serve, StreamableHTTP's lifespan start-up, connect_memory), "
                "or with 'async with server.hold_lifespan():'"
            )
        return self._value

    def _guard(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    async def enter(self) -> Any:
        """Hold it: entered now unless it already runs. Its value."""
        if self._holders > 0 and ended(self._loop, self._name):  # held on a loop that ended
            self.abandon()
        async with self._guard():
            if self._holders == 0:
                if self.function is not None:
                    await self._open(self.function)
                self._loop = asyncio.get_running_loop()
            self._holders += 1
            return self._value

    def abandon(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """The event loop its holders held it on (``loop``, if given) ended: nobody holds it
        now, and what it yielded is gone; its task, if that loop left it pending, is let go
        of (see ``server/left_loops.py``). The next holder enters it anew."""
        if loop is not None and self._loop is not loop:  # entered again since, elsewhere
            return
        runner, self._manager, self._value = self._manager, None, None
        self._holders, self._lock, self._loop = 0, None, None
        if runner is not None:
            drop(runner.task)

    async def exit(self) -> None:
        """Let go: exited now when this was its last holder (nothing when none holds it)."""
        async with self._guard():
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders == 0 and self._manager is not None:
                runner, self._manager, self._value = self._manager, None, None
                runner.leave.set()
                try:  # shielded: a holder cancelled here leaves the exit running to its end
                    await asyncio.shield(runner.task)
                except asyncio.CancelledError:
                    if not runner.task.done():  # this holder was cancelled: the exit goes on
                        runner.keep(lambda exc: self._failed_on_exit(exc))
                        raise
                except Exception as exc:
                    self._failed_on_exit(exc)

    def _failed_on_exit(self, exc: BaseException) -> None:
        log.error("the lifespan of server %r failed on exit", self._name, exc_info=exc)

    async def _open(self, function: Callable[[Any], AbstractAsyncContextManager[Any]]) -> None:
        try:
            manager = function(self._owner)
            if not hasattr(manager, "__aenter__") or not hasattr(manager, "__aexit__"):
                if inspect.iscoroutine(manager):
                    manager.close()  # never awaited: no warning about it
                raise TypeError(
                    f"lifespan= returned {type(manager).__name__}, not an async context manager: "
                    "decorate the function with @contextlib.asynccontextmanager and yield the value"
                )
            runner = _Runner(manager)
            value = await runner.entered()
        except Exception as exc:
            raise ConfigError(
                f"the lifespan of server {self._name!r} failed on entry: {type(exc).__name__}: {exc}"
            ) from exc
        self._manager, self._value = runner, value

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[Any]:
        """Hold it for the ``async with`` block, which gets its value."""
        value = await self.enter()
        try:
            yield value
        finally:
            await self.exit()


class _Runner:
    """The task a lifespan runs in, from its entry to its exit: whichever holder enters it
    and whichever lets go last (another transport's task, a cancelled stop's release), its
    ``__aenter__`` and ``__aexit__`` run in one task, as an anyio task group or cancel
    scope in it, or a ``ContextVar.reset`` of what it set, requires. It runs in a copy of
    the entering task's context: what it sets in contextvars is its own."""

    def __init__(self, manager: AbstractAsyncContextManager[Any]) -> None:
        self.leave = asyncio.Event()
        self._value: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.task = asyncio.ensure_future(self._run(manager))

    async def entered(self) -> Any:
        """What ``__aenter__`` returned (or raised). A holder cancelled meanwhile cancels
        the entry and waits for it to unwind (a pool that never connects is told); one
        cancelled just as it entered lets it exit on its own."""
        try:
            return await asyncio.shield(self._value)
        except asyncio.CancelledError:
            self.leave.set()
            self.keep(lambda exc: None)  # nobody held it: what it raises is the cancellation's
            if not self._value.done():
                self.task.cancel()
                await asyncio.wait([self.task])
            raise

    def keep(self, failed: Callable[[BaseException], None]) -> None:
        """Keep the task, which nobody awaits any more, until it ends; ``failed`` is told
        of what it raised."""
        _LEFT.add(self.task)

        def ended(task: asyncio.Task[None]) -> None:
            _LEFT.discard(task)
            if not task.cancelled() and (exc := task.exception()) is not None:
                failed(exc)

        self.task.add_done_callback(ended)

    async def _run(self, manager: AbstractAsyncContextManager[Any]) -> None:
        try:
            value = await manager.__aenter__()
        except Exception as exc:
            self._value.set_exception(exc)  # raised by entered(), to the holder
            return
        except BaseException:
            self._value.cancel()
            raise
        self._value.set_result(value)
        try:
            await self.leave.wait()
        except BaseException as exc:  # cancelled before any holder let go (the loop closing)
            if not await manager.__aexit__(type(exc), exc, exc.__traceback__):
                raise
            return
        await manager.__aexit__(None, None, None)


#: Runners whose holder was cancelled while they entered: kept until they have exited.
_LEFT: set[asyncio.Task[None]] = set()


class HasLifespan:
    """A ``Server``'s lifespan as code outside its handlers sees it (a mixin: the server
    sets ``_lifespan``)."""

    _lifespan: Lifespan

    @property
    def lifespan_context(self) -> Any:
        """What the ``lifespan`` yielded, while it runs (a handler's ``ctx.lifespan_context``);
        None without one. ``RuntimeError`` saying how to enter it, while it does not run."""
        return self._lifespan.value

    def hold_lifespan(self) -> AbstractAsyncContextManager[Any]:
        """``async with server.hold_lifespan() as value:`` keeps the ``lifespan`` entered for
        the block (entered now unless a transport already did; exited after it unless one
        still holds it), for calling handlers without a transport. A transport of your own
        awaits ``start(transport=itself)`` and ``stop(transport=itself)`` instead, as
        ``connect_memory`` does: they hold the lifespan, and the tasks, relay and stores
        too (``server.lifecycle``)."""
        return self._lifespan.held()
