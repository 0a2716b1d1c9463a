"""Completions of the handlers' own URL steps, written to the store without waiting:
``server.complete_elicitation`` is a plain call, often made from a webhook's code, so
the write runs later, on the event loop (``server/url_steps.py`` reads what it wrote).

Rules:

* The completions made on one event loop wait in one line, in the order they were made,
  and one task of that loop writes them (``Line``): up to ``BATCH`` of those waiting
  together (``StepCompletions.complete_many``: two round trips on Redis), or, while the
  store fails and for a batch that failed, one after another: while the store is down
  one write is tried at a time, however many people finish their steps meanwhile, and
  nothing is kept per completion but the completion itself. One that fails while the one
  behind it is written is the store's trouble alone (a user's store failing for one
  key): it is set aside and tried again on its own (``server/step_aside.py``). At most
  ``MAX_WAITING`` wait behind the one being written; past that the oldest are dropped, a
  warning naming them (the requests held on them are the nearest to their bound, the
  newest have the most time left to be of use), those dropped one at a time during an
  outage gathered into one warning per ``step_line.DROPS_SAID_EVERY`` seconds. Below it
  none is dropped unsaid.
* A completion goes into the server's store while the server holds it open (it started,
  or a request used it): the store stays open, for the server's lifetime. Which store is
  decided when the completion is written.
* Otherwise (a webhook's process that never starts the server, or a server stopped or
  stopping) it goes into a store opened for the writes from the configured URL, or from
  the default file when that file exists (another process of this user on this machine
  asked a step): a server that never asked one creates no file, and does not open the
  default file as its store (that would make a key file for sealing nothing). The writes
  of one line share one store per URL, opened by the first that needs it and closed once
  the line is empty, so that a burst of webhook calls uses one connection rather than
  one each (a process's file handles are few). Between bursts such a process holds no
  connection, thread or lock on the store. A ``memory://`` store so opened is a fresh
  one, which nobody reads: that is right, as only a step asked in this process (whose ask
  opened the server's own store) could be released by it.
* While the server serves, ``complete_elicitation`` called on any other thread (with or
  without an event loop of its own) is handed to the server's loop and recorded there
  (``server/announcements.py``): the server's store belongs to that loop. A process that
  does not start the server records on the loop it is called on; with none running
  there, the completion is not recorded (a warning says so). Such a webhook may call from
  several threads at once, each running an event loop of its own: each loop has a line
  of its own, so stores of its own (a store's connections belong to the loop that made
  them: a Redis pool waited on from another loop fails, "bound to a different event
  loop"). ``settle`` writes the line of its own loop.
* ``record`` (``complete_elicitation``) takes no lock and never waits: it may run in a
  signal handler (``signal.signal``: on the main thread, between any two bytecodes of
  whatever runs there, this module's code included) or in code the collector calls. It
  appends the completion to its loop's line (one ``deque.append``, which needs no lock)
  and has the loop make sure the line's task runs (``call_soon_threadsafe``, which also
  wakes a loop waiting for I/O); all else happens on the loop, one step at a time.
* A loop closed while its line was not empty (its task neither awaited nor cancelled)
  never writes it: the next completion, or ``settle`` (the server's next start or stop),
  on any loop, lets go of that task, closes the stores the line opened and logs the steps
  it held, which may be lost. Each such store
  is closed by a task of its own, counted with the lines' tasks (``settle`` waits for
  it); one whose loop is closed early in turn is handed on to the next completion, never
  left half run for the garbage collector to finish wherever it comes.
* A store object the server was given is the server's store whatever happens, never
  closed here.
* A failure is logged (naming the step), never raised into the caller: opening the store
  (a URL that cannot be used, in a process that never started the server) included. A
  store that is down (Redis restarting, say: a backend's error, not a URL that cannot be
  used) is tried again after 1, 2, 4... up to 30 seconds, each failure a warning and the
  write that succeeds at last an info line; the completions behind it wait their turn.
  Each is given up ``RETRY_FOR`` seconds (10 minutes) after it was made (logged), as the
  requests held on it have given up by then.
* A store that refuses the write for its configuration (a password missing or refused,
  an ACL user lacking a right, a database number the server lacks:
  ``stores.base.misconfigured``) is no outage: one error line says so, with what to fix
  (once until a write succeeds, however often the line empties and fills meanwhile),
  and the line is tried again every ``RETRY_MOST`` seconds without a word more, until the
  refusal ends (the old password added back on the Redis side, the ACL widened: the
  completions are then written) or the completions' time is up. A server whose own URL
  is wrong needs the right one and a restart; those it held are then lost (logged). A
  refusal met once the completion's marker is written (the user's channels taken away:
  only the wake-ups and the relay's notice are refused) leaves it recorded: that is said
  once while it lasts, and the line goes on, rather than writing that marker again and
  again while the completions behind it wait for nothing.
* ``settle`` (the server stopping) writes its loop's line; one waiting to try again tries
  once more at once, and a failure then gives up the whole line (logged): the store is
  still down, and nothing waits the backoff. A line whose task is cancelled (an
  ``asyncio.run`` ending) still closes the stores it opened, and logs each completion it
  held as not recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeAlias

from mcp_elicit.errors import ConfigError, StoreUnavailable
from mcp_elicit.server.step_aside import retry_due, set_aside, write_alone
from mcp_elicit.server.step_line import Completion, Line, Told, holds, lost, names, untold
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores.base import Store, backend_errors, failure_text, misconfigured
from mcp_elicit.stores.closed_loops import let_go
from mcp_elicit.url_redaction import redact_urls

__all__ = ["StepRecords"]

log = logging.getLogger("mcp_elicit.server")

#: Seconds before a completion the store did not take (it is down) is written again, doubled
#: each time up to ``RETRY_MOST``; each completion is given up ``RETRY_FOR`` seconds after
#: it was made.
RETRY_FIRST = 1.0
RETRY_MOST = 30.0
RETRY_FOR = 600.0
#: How many completions wait at most on one event loop behind the one being written.
MAX_WAITING = 10_000
#: How many completions are written together at most (a healthy Redis: two round trips).
BATCH = 100


@dataclass(slots=True)
class _Trouble:
    """How the writes of a line have been failing since the last one that succeeded."""

    delay: float = field(default_factory=lambda: RETRY_FIRST)  # read now, not at import
    failing: bool = False


#: What a task under way does: write a line, or close a store (and its URL) that a line
#: of a closed event loop left open.
_Doing: TypeAlias = Line | tuple[Store, str]


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
        # Changed one item at a time, never under a lock: ``record`` runs wherever its
        # caller is, a signal handler interrupting this module's own code included.
        self._writing: dict[asyncio.Task[None], _Doing] = {}  # the tasks under way
        self._lines: dict[asyncio.AbstractEventLoop, Line] = {}
        self._settling: set[asyncio.AbstractEventLoop] = set()  # loops whose lines give up
        #: A store that is down (not a URL that cannot be used): its write is tried again.
        self._down = tuple(kind for kind in backend_errors() if not issubclass(kind, ConfigError))

    def record(self, elicitation_id: str, principal: str | None, told: Told = None) -> None:
        """Write, without waiting, that ``principal``'s step ``elicitation_id`` is done; then
        publish what ``told`` makes (a channel and a message) through the same store."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self._own() is None and self._url() is None:
            return
        if loop is None:  # the server is not started (else ``complete_elicitation`` handed it on)
            log.warning(
                "complete_elicitation(%r) was called with no event loop running while the server is "
                "not started anywhere: the completion is not recorded, and 2026-07-28 requests "
                "waiting on that step are not told. Call it while the server serves (from any "
                "thread), or on an event loop that runs until it is written",
                elicitation_id[:64],
            )
            return
        line = self._lines.get(loop) or self._lines.setdefault(loop, Line(loop))
        line.waiting.append(Completion(elicitation_id, principal, told, loop.time() + RETRY_FOR))
        loop.call_soon_threadsafe(self._run, line)

    async def settle(self) -> None:
        """Write the line of this event loop (each store it opened closed after), and let go
        of the lines of closed loops (logging what they held), waiting for the closes of
        the stores they left. A line waiting to try again (the store
        is down) tries once more at once, and gives up if that fails too."""
        loop = asyncio.get_running_loop()
        self._settling.add(loop)
        try:
            self._close_abandoned(loop)  # a server started again on a new loop: its old line
            while True:
                line = self._lines.get(loop)
                if line is not None:
                    if line.wake is not None and not line.wake.done():
                        line.wake.set_result(None)
                    self._run(line)  # what ``record`` asked for, if the loop has not run it yet
                mine = {task for task in list(self._writing) if task.get_loop() is loop and not task.done()}
                if mine:
                    await asyncio.wait(mine)
                elif not holds(self._lines.get(loop)):  # else one made meanwhile: its turn
                    return
        finally:
            self._settling.discard(loop)
            line = self._lines.get(loop)
            if line is not None:
                line.settle_drops()

    def _run(self, line: Line) -> None:
        """On the line's loop: drop what waits past the bound, and make sure its task runs."""
        line.drop_over(MAX_WAITING)
        if line.idle and line.waiting and line.wake is not None and not line.wake.done():
            line.wake.set_result(None)  # it waited for those set aside only
        if holds(line) and (line.task is None or line.task.done()):
            line.task = line.loop.create_task(self._drain(line))
            self._start(line.task, line)

    def _start(self, task: asyncio.Task[None], doing: _Doing) -> None:
        self._writing[task] = doing  # one step, no lock (see ``__init__``)
        task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._writing.pop(task, None)

    async def _drain(self, line: Line) -> None:
        """Write ``line``'s completions in order until it is empty, then close what it opened."""
        # Each store a closed loop left is closed by a task of its own, started here (not in
        # ``record``, run by a loop that may never run it), all at once: a loop closed
        # early in turn hands on what it had not begun to close (``_abandoned``).
        self._close_abandoned(line.loop)
        trouble = _Trouble()
        singles = 0  # how many to write one by one: a batch of them failed
        try:
            while True:
                if line.aside:
                    await self._retry_aside(line)
                if line.writing is None and not line.waiting:
                    if line.aside:  # only those: wait for the first one's time, or a new one
                        first = min(done.retry_at for done in line.aside)
                        await self._pause(line, max(first - line.loop.time(), 0.0), idle=True)
                        continue
                    await self._close_opened(line)
                    if line.waiting or line.aside:  # made while the stores closed
                        continue
                    return
                calm = not (trouble.failing or line.untold or line.refused)
                if calm and line.writing is None and len(line.waiting) > 1 and singles <= 0:
                    singles = await self._write_batch(line)  # failed: one by one finds which
                    continue
                if line.writing is None:
                    line.writing = line.waiting.popleft()
                singles -= 1
                done = line.writing
                try:
                    await self._write(line, done)
                except Exception as exc:  # any backend's failure, StoreUnavailable included
                    behind = await self._alone(line, done, exc)
                    if behind is not None:  # written: the store answers, ``done`` is set aside
                        done = behind
                    else:
                        pause = self._failed(line, exc, trouble)
                        if pause is not None:
                            await self._pause(line, pause)
                        continue
                line.writing = None
                line.refused = False
                if trouble.failing:
                    log.info(
                        "the completion of URL step %r is recorded%s",
                        done.elicitation_id[:64],
                        f"; {len(line.waiting)} more follow" if line.waiting else "",
                    )
                    trouble = _Trouble()
        except asyncio.CancelledError:
            held = line.take_all()
            if held:
                how = "while the store was down" if trouble.failing else "before it was done"
                lost(held, f"the write was cancelled {how}")
            raise
        finally:
            if line.opened:  # cancelled, or failed: what it opened is closed all the same
                await self._close_opened(line)

    def _steps(self, line: Line) -> StepCompletions | None:
        """Where ``line``'s completions go now (a store opened for them, if need be)."""
        steps = self._own()
        if steps is None:
            url = self._url()
            if url is None:  # nowhere to write it any more: as when there was none
                return None
            steps = line.opened.get(url)
            if steps is None:
                from mcp_elicit.stores import open_store

                steps = line.opened[url] = StepCompletions(open_store(url), ttl=self.ttl)
        return steps

    async def _write(self, line: Line, done: Completion) -> None:
        notice = None if done.told is None else done.told()  # made now: see ``Told``
        steps = self._steps(line)
        if steps is None:
            return
        if not done.marked:
            await steps.mark(done.elicitation_id, done.principal)
            done.marked = True
        await steps.tell(done.elicitation_id, done.principal, notice)
        line.untold = False

    async def _write_batch(self, line: Line) -> int:
        """Write the next ``BATCH`` waiting together (two round trips on Redis); when that
        fails, put them back in front and say how many (to be written one by one)."""
        line.batch = [line.waiting.popleft() for _ in range(min(BATCH, len(line.waiting)))]
        try:
            steps = self._steps(line)
            if steps is not None:
                made = [
                    (done.elicitation_id, done.principal, done.told and done.told()) for done in line.batch
                ]
                await steps.complete_many(made)
        except Exception as exc:  # any backend's failure: one by one says what failed
            log.debug(
                "%d completions of URL steps could not be written together: %s", len(line.batch), _said(exc)
            )
            failed, line.batch = line.batch, []
            line.waiting.extendleft(reversed(failed))
            return len(failed)
        line.batch = []  # kept on a cancellation, for ``take_all`` to name
        return 0

    async def _alone(self, line: Line, done: Completion, exc: Exception) -> Completion | None:
        """``done`` failed for the store being down: write the next one at once; written,
        ``done`` is set aside (``step_aside``) and the one written is returned."""
        loop = line.loop
        if not line.waiting or not isinstance(exc, self._down) or misconfigured(exc):
            return None
        if loop in self._settling or done.until <= loop.time():
            return None
        probe = line.waiting.popleft()
        try:
            await self._write(line, probe)
        except Exception:  # the store is down: as it was
            line.waiting.appendleft(probe)
            return None
        except asyncio.CancelledError:
            line.waiting.appendleft(probe)
            raise
        set_aside(line, done, _said(exc), RETRY_FIRST, RETRY_MOST, RETRY_FOR)
        return probe

    async def _retry_aside(self, line: Line) -> None:
        def failure(exc: Exception) -> tuple[str, bool]:
            return _said(exc), isinstance(exc, self._down)

        def write(done: Completion) -> Awaitable[None]:
            return write_alone(self._steps(line), done)

        stopping = line.loop in self._settling
        await retry_due(line, write, failure, RETRY_MOST, RETRY_FOR, stopping=stopping)

    def _failed(self, line: Line, exc: Exception, trouble: _Trouble) -> float | None:
        """A write of ``line`` failed: give up what is due (logged), say what happened, and
        how long to wait before trying again (None: at once, the next one)."""
        said = _said(exc)
        if line.writing is not None and line.writing.marked and misconfigured(exc):
            untold(line, line.writing, said)  # recorded: nothing left to try again
            line.writing = None
            return None
        if not isinstance(exc, self._down):  # not the store being down: this one only
            assert line.writing is not None
            lost([line.writing], said)
            line.writing = None
            return None
        loop = line.loop
        if loop in self._settling:
            lost(line.take_all(), f"{said}; given up: the server is stopping")
            return None
        now, due = loop.time(), []
        if line.writing is not None and line.writing.until <= now:
            due.append(line.writing)
            line.writing = None
        while line.waiting and line.waiting[0].until <= now:  # made in order: the oldest first
            due.append(line.waiting.popleft())
        if due:
            lost(due, f"{said}; given up: tried for {RETRY_FOR:g} s")
        if line.writing is None and not line.waiting:
            return None
        trouble.failing = True
        head = line.writing or line.waiting[0]
        behind = len(line.waiting) - (line.writing is None)
        if misconfigured(exc):
            if not line.refused:  # once until a write succeeds, however often the line empties
                line.refused = True
                log.error(
                    "the store refuses the completions of URL steps for its configuration, not for "
                    "an outage: %s. Fix that (the password or user in the store's URL, the Redis "
                    "user's rights, the database number): until then the completion of %s tried "
                    "again every %g s, each given up %g s after it was made; a server whose own "
                    "store URL is wrong must be restarted with the right one",
                    said,
                    names([head]) + (f" and {behind} more are" if behind else " is"),
                    RETRY_MOST,
                    RETRY_FOR,
                )
            else:
                log.debug(
                    "the store still refuses the completion of URL step %r: %s",
                    head.elicitation_id[:64],
                    said,
                )
            return RETRY_MOST
        line.refused = False
        delay, trouble.delay = trouble.delay, min(trouble.delay * 2, RETRY_MOST)
        log.warning(
            "the completion of URL step %r could not be recorded in the store yet (%s); trying "
            "again in %.0f s%s",
            head.elicitation_id[:64],
            said,
            delay,
            f" ({behind} more wait behind it)" if behind else "",
        )
        return delay

    async def _pause(self, line: Line, delay: float, *, idle: bool = False) -> None:
        """Wait ``delay`` seconds, or until ``settle`` (the server stopping) wakes it, or (``idle``:
        it waits only for the completions set aside) a new completion."""
        wake = line.loop.create_future()
        line.wake, line.idle = wake, idle
        try:
            if line.loop not in self._settling:  # else woken already: try once more at once
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake, delay)
        finally:
            line.wake, line.idle = None, False

    async def _close_opened(self, line: Line) -> None:
        """Close every store ``line`` opened, whatever a close does (a cancellation is
        raised once they all are)."""
        cancelled = False
        while line.opened:
            url, steps = line.opened.popitem()
            try:
                await _close(steps.store, url)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    def _close_abandoned(self, loop: asyncio.AbstractEventLoop) -> None:
        """Let go of what closed event loops left (``_abandoned``), closing each store by a
        task of ``loop``'s own, all at once."""
        for store, where in self._abandoned():
            self._start(loop.create_task(_close(store, where)), (store, where))

    def _abandoned(self) -> list[tuple[Store, str]]:
        """Let go of the tasks of event loops closed before those tasks ended, and of the
        lines of those loops: the stores they opened (and their URLs), to close, with those
        such a loop was closing (closing one again waits for the close begun, if any)."""
        dead: dict[asyncio.Task[None], _Doing] = {}
        for task in list(self._writing):
            doing = self._writing.pop(task, None) if task.get_loop().is_closed() else None
            if doing is not None:  # None: its own callback, or another loop, let go of it first
                dead[task] = doing
        stores: list[tuple[Store, str]] = []
        held: list[Completion] = []
        for loop in [loop for loop in list(self._lines) if loop.is_closed()]:
            line = self._lines.pop(loop, None)
            if line is None:  # another loop let go of it first
                continue
            while line.opened:  # taken before its task is let go of: that closes nothing then
                url, steps = line.opened.popitem()
                stores.append((steps.store, url))
            held += line.take_all()
            line.settle_drops()
        stores += [doing for doing in dead.values() if isinstance(doing, tuple)]
        for task in dead:  # never to run on: ended here, not wherever the collector comes
            let_go(task)
        if held:
            log.warning(
                "an event loop was closed while completions of URL steps were being written on it "
                "(%s): they may not be recorded. Await them before closing the loop (Server.stop(), "
                "or cancel its tasks, as asyncio.run does)",
                names(held),
            )
        return stores


def _said(exc: BaseException) -> str:
    """What a write's failure says: the backend's own error behind the server's
    ``StoreUnavailable`` (whose message is the client's), any URL's secrets hidden (the
    Redis store's own name shows its user, never its password)."""
    cause = exc.__cause__ if isinstance(exc, StoreUnavailable) and exc.__cause__ is not None else exc
    text = str(cause) or type(cause).__name__
    told = failure_text(cause)  # without "Redis store URL: ", which the store showed redacted
    return text[: len(text) - len(told)] + redact_urls(told)


async def _close(store: Store, url: str) -> None:
    try:
        await store.close()
    except Exception:
        from mcp_elicit.stores.redis import redact_url

        log.warning("the store %r could not be closed", redact_url(url), exc_info=True)
