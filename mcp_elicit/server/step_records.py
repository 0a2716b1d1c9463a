"""Completions of the handlers' own URL steps, written to the store without waiting:
``server.complete_elicitation`` is a plain call, often made from a webhook's code, so
the write is a task of its own (``server/url_steps.py`` reads what it wrote).

Rules:

* A completion goes into the server's store while the server holds it open (it started,
  or a request used it): the store stays open, for the server's lifetime.
* Otherwise (a webhook's process that never starts the server, or a server stopped or
  stopping) it goes into a store opened for the write from the configured URL, or from
  the default file when that file exists (another process of this user on this machine
  asked a step): a server that never asked one creates no file, and does not open the
  default file as its store (that would make a key file for sealing nothing). The
  completions under way at once on one event loop share one store per URL, opened by the
  first, so that a burst of webhook calls uses one connection rather than one each (a
  process's file handles are few), and closed when the last of them is written. Between
  bursts such a process holds no connection, thread or lock on the store. A ``memory://``
  store so opened is a fresh one, which nobody reads: that is right, as only a step asked
  in this process (whose ask opened the server's own store) could be released by it.
* A webhook may call from several threads at once, each running an event loop of its own:
  the stores opened for them are counted under a lock, and each loop opens a store of its
  own (a store's connections belong to the loop that made them: a Redis pool waited on
  from another loop fails, "bound to a different event loop"). ``settle`` waits for the
  writes made on its own loop.
* ``record`` (``complete_elicitation``) takes no lock and never waits: it may run in a
  signal handler (``signal.signal``: on the main thread, between any two bytecodes of
  whatever runs there, this module's code holding its lock included) or in code that
  runs while that lock is held (a finalizer the collector calls). It starts a task and
  notes it, one dictionary item, which needs no lock; the write runs on the event loop.
* A loop closed while writes were still under way on it (neither awaited nor cancelled)
  never runs them on: the next completion, on any loop, lets go of them, closes the store
  they shared (it would otherwise stay open, or be handed to a later burst on a loop it
  does not belong to) and logs the steps they were writing, which may be lost. Each such
  store is closed by a task of its own, counted with the writes (``settle`` waits for
  it); one whose loop is closed early in turn is handed on to the next completion, never
  left half run for the garbage collector to finish wherever it comes.
* A store object the server was given is the server's store whatever happens, never
  closed here.
* A failure is logged (naming the step), never raised into the caller: opening the store
  (a URL that cannot be used, in a process that never started the server) included, so
  nothing is opened until the write, on the event loop. A store that is down (Redis
  restarting, say: a backend's error, not a URL that cannot be used) is tried again after
  1, 2, 4... up to 30 seconds, for 10 minutes, each failure a warning and the write that
  succeeds at last an info line: a completion made during an outage is recorded once the
  store is back, rather than lost, its person asked again. ``settle`` (the server
  stopping) waits for the writes under way; one waiting to try again tries once more at
  once, and a failure then is given up (logged); a write cancelled on its way still
  closes the store it opened, and one cancelled while the store was down is logged as
  not recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores.base import Store, backend_errors
from mcp_elicit.stores.closed_loops import let_go

__all__ = ["StepRecords"]

log = logging.getLogger("mcp_elicit.server")

#: Seconds before a completion the store did not take (it is down) is written again, doubled
#: each time up to ``RETRY_MOST``; tried for ``RETRY_FOR`` seconds, then given up.
RETRY_FIRST = 1.0
RETRY_MOST = 30.0
RETRY_FOR = 600.0

#: What to publish once a completion is written: made at each try, a channel and a message
#: (the relay's sealed notice, which lives for a minute: one made at the call would be
#: refused as late by the instances reading it once an outage of the store is over).
Told: TypeAlias = Callable[[], tuple[str, bytes]] | None
#: What a task under way does: write the completion of a step (its id), or close a store
#: (and its URL) that writes of a closed event loop left open.
_Doing: TypeAlias = str | tuple[Store, str]


@dataclass(eq=False, slots=True)
class _Burst:
    """A store opened for the completions under way on one event loop, and how many."""

    steps: StepCompletions
    writes: int = 1


class StepRecords:
    """Writes step completions; see the module docstring. ``own`` gives the server's
    completions while the server holds its store open, else None; ``url`` then names the
    store to open for the write (None: there is none to write to). ``ttl`` is how long a
    completion written in a store opened for it is kept."""

    def __init__(
        self,
        own: Callable[[], StepCompletions | None],
        url: Callable[[], str | None],
        *,
        ttl: float,
    ) -> None:
        self._own = own
        self._url = url
        self.ttl = ttl
        # The writes (and closes) under way. Changed one item at a time, never under a lock:
        # ``record`` runs wherever its caller is, a signal handler interrupting code that
        # holds ``_lock`` included, which would wait for it for ever.
        self._writing: dict[asyncio.Task[None], _Doing] = {}
        self._lock = threading.Lock()  # guards the one below: loops on several threads use it
        self._bursts: dict[tuple[str, asyncio.AbstractEventLoop], _Burst] = {}  # by URL and loop
        self._pauses: set[asyncio.Future[None]] = set()  # writes waiting to try again
        self._settling: set[asyncio.AbstractEventLoop] = set()  # loops whose writes give up
        #: A store that is down (not a URL that cannot be used): its write is tried again.
        self._down = tuple(kind for kind in backend_errors() if not issubclass(kind, ConfigError))

    def record(self, elicitation_id: str, principal: str | None, told: Told = None) -> None:
        """Write, without waiting, that ``principal``'s step ``elicitation_id`` is done; then
        publish what ``told`` makes (a channel and a message) through the same store."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        steps = self._own()
        url = None if steps is not None else self._url()
        if steps is None and url is None:
            return
        if loop is None:
            log.warning(
                "complete_elicitation(%r) was called with no event loop running: 2026-07-28 requests "
                "waiting on that step are not told; call it from the server's event loop",
                elicitation_id[:64],
            )
            return
        self._start(
            loop.create_task(self._write(steps, url, elicitation_id, principal, told)), elicitation_id
        )

    def _start(self, task: asyncio.Task[None], doing: _Doing) -> None:
        self._writing[task] = doing  # one step, no lock (see ``__init__``)
        task.add_done_callback(self._written)

    async def settle(self) -> None:
        """Wait for the writes under way on this event loop (each closes what it opened), and
        the closes of stores that closed loops left. A write waiting to try again (the
        store is down) tries once more at once, and gives up if it fails again."""
        loop = asyncio.get_running_loop()
        self._settling.add(loop)
        try:
            while True:
                for wake in list(self._pauses):  # a copy: other loops' threads change it
                    if wake.get_loop() is loop and not wake.done():
                        wake.set_result(None)
                mine = {task for task in list(self._writing) if task.get_loop() is loop and not task.done()}
                if not mine:
                    return
                await asyncio.wait(mine)
        finally:
            self._settling.discard(loop)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._writing.pop(task, None)

    async def _write(
        self,
        steps: StepCompletions | None,
        url: str | None,
        elicitation_id: str,
        principal: str | None,
        told: Told,
    ) -> None:
        # Each store a closed loop left is closed by a task of its own, started here (not in
        # ``record``, run by a loop that may never run it), all at once: a loop closed
        # early in turn hands on what it had not begun to close (``_abandoned``).
        loop = asyncio.get_running_loop()
        for store, where in self._abandoned():
            self._start(loop.create_task(_close(store, where)), (store, where))
        delay, given_up, down = RETRY_FIRST, loop.time() + RETRY_FOR, False
        while True:
            try:
                if down:  # the pause inside: a cancellation there is logged too
                    await self._pause(delay)
                    delay = min(delay * 2, RETRY_MOST)
                notice = None if told is None else told()  # made now: see ``Told``
                if steps is not None:
                    await steps.complete(elicitation_id, principal, notice)
                elif url is not None:
                    await self._write_for_burst(url, elicitation_id, principal, notice)
                if down:
                    log.info("the completion of URL step %r is recorded", elicitation_id[:64])
                return
            except asyncio.CancelledError:
                if down:  # cut short while the store was down
                    _lost(elicitation_id, "the write was cancelled while the store was down")
                raise
            except Exception as exc:  # any backend's failure, StoreUnavailable included
                if not isinstance(exc, self._down):
                    _lost(elicitation_id, str(exc))
                    return
                if loop in self._settling or loop.time() > given_up:
                    why = "the server is stopping" if loop in self._settling else f"tried for {RETRY_FOR:g} s"
                    _lost(elicitation_id, f"{exc}; given up: {why}")
                    return
                down = True
                log.warning(
                    "the completion of URL step %r could not be recorded in the store yet (%s); "
                    "trying again in %.0f s",
                    elicitation_id[:64],
                    exc,
                    delay,
                )

    async def _pause(self, delay: float) -> None:
        """Wait ``delay`` seconds, or until ``settle`` (the server stopping) wakes it."""
        wake = asyncio.get_running_loop().create_future()
        self._pauses.add(wake)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake, delay)
        finally:
            self._pauses.discard(wake)

    async def _write_for_burst(
        self, url: str, elicitation_id: str, principal: str | None, told: tuple[str, bytes] | None
    ) -> None:
        key = (url, asyncio.get_running_loop())
        with self._lock:
            burst = self._bursts.get(key)
            if burst is not None:
                burst.writes += 1
        if burst is None:  # the first of a burst on this loop, the only one to use this key
            from mcp_elicit.stores import open_store

            burst = _Burst(StepCompletions(open_store(url), ttl=self.ttl))
            with self._lock:
                self._bursts[key] = burst
        try:
            await burst.steps.complete(elicitation_id, principal, told)
        finally:
            if self._last(key, burst):
                await _close(burst.steps.store, url)

    def _last(self, key: tuple[str, asyncio.AbstractEventLoop], burst: _Burst) -> bool:
        """One write of ``burst`` ended: whether it was the last, its store now to close."""
        with self._lock:
            burst.writes -= 1
            if burst.writes > 0 or self._bursts.get(key) is not burst:  # else let go of, closed elsewhere
                return False
            del self._bursts[key]
            return True

    def _abandoned(self) -> list[tuple[Store, str]]:
        """Let go of the writes of event loops closed before those writes ended, and of the
        stores opened for them: those stores (and their URLs), to close, with those such a
        loop was closing (closing one again waits for the close begun, if any)."""
        dead: dict[asyncio.Task[None], _Doing] = {}
        for task in list(self._writing):
            doing = self._writing.pop(task, None) if task.get_loop().is_closed() else None
            if doing is not None:  # None: its own callback, or another loop, let go of it first
                dead[task] = doing
        with self._lock:
            gone = [key for key in self._bursts if key[1].is_closed()]
            stores = [(self._bursts.pop(key).steps.store, key[0]) for key in gone]
        stores += [doing for doing in dead.values() if not isinstance(doing, str)]
        for task in dead:  # never to run on: ended here, not wherever the collector comes
            let_go(task)
        steps = {repr(doing[:64]) for doing in dead.values() if isinstance(doing, str)}
        if not steps:
            return stores
        log.warning(
            "an event loop was closed while completions of URL steps were being written on it (%s): "
            "they may not be recorded. Await them before closing the loop (Server.stop(), or cancel "
            "its tasks, as asyncio.run does)",
            ", ".join(sorted(steps)),
        )
        return stores


def _lost(elicitation_id: str, why: str) -> None:
    log.warning(
        "the completion of URL step %r could not be recorded in the store (%s): 2026-07-28 "
        "requests waiting on it go on waiting until their bound",
        elicitation_id[:64],
        why,
    )


async def _close(store: Store, url: str) -> None:
    try:
        await store.close()
    except Exception:
        from mcp_elicit.stores.redis import redact_url

        log.warning("the store %r could not be closed", redact_url(url), exc_info=True)
