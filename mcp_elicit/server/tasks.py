"""Tasks on the server (extension ``io.modelcontextprotocol/tasks``, 2026-07-28): a tool
call that goes on after its request was answered, and asks its questions through
``tasks/get`` and ``tasks/update``. This module is the registry of a process's tasks and
the extension's methods; how a handler becomes a task and asks in it is
``server.task_handler``.

Rules:

* The handler's result completes the task (a tool error, and any exception a tool raises,
  is a result with ``isError``); a protocol error fails it with that error, except
  ``URLElicitationRequired`` (2025-11-25's -32042: in a task, ``ctx.require_url`` asks),
  which fails it with -32603 as anything else does (a bad form schema, say); an error in a
  code 2026-07-28 forbids is said in its codes (``core.server.modern_error``). Progress and
  log notifications of a task are dropped: the extension gives them no stream.
* ``tasks/cancel`` cancels the handler; the task ends ``cancelled`` unless it had ended,
  or its handler had returned or raised (its end is recorded as it is: a finished
  handler's result is never thrown away).
* A task runs in this process: each is kept until its ttl has passed since it was created
  and since it ended; past ``max_tasks`` held, or ``max_tasks_per_owner`` held for its
  principal (unauthenticated callers count as one), a call goes on in place instead, and
  that is logged. The ttl (or None: for good), the poll interval and both limits are whole
  numbers above zero, ``max_tasks_per_owner`` at most ``max_tasks`` (a tenth if not set),
  or a ``ConfigError`` names it. A task is its creator's alone; one held by another
  instance sharing the store is answered through it (``server.relay``).
* When the server stops, every running task is cancelled, and its handler waited for
  ``stop_grace`` seconds at most: one that ignores its cancellation is logged and left.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcp_elicit.core.input_requests import MAX_INPUT_REQUESTS
from mcp_elicit.core.mrtr import Ask
from mcp_elicit.core.server import Call, modern_error
from mcp_elicit.core.tasks import TaskRecord, input_responses_of, require_tasks, task_id_of
from mcp_elicit.errors import (
    FormSchemaError,
    InternalError,
    InvalidParams,
    ProtocolError,
    ReplayMismatchError,
    URLElicitationRequired,
)
from mcp_elicit.server.left_loops import drop
from mcp_elicit.server.options import MOST_MS, share, whole

__all__ = ["Running", "Tasks", "answer_task_method"]

log = logging.getLogger("mcp_elicit.server")
_URL_RAISED = "Internal error: a task's handler raised URLElicitationRequired; ask with ctx.require_url"
#: A task whose handler was cancelled by no tasks/cancel: its own work was (its statusMessage).
_HANDLER_CANCELLED = "Cancelled on the server: its handler was cancelled"

#: How often, at most, a call that finds a task limit reached sweeps (seconds).
_SWEEP_AT_LIMIT = 0.1


def _whole(attribute: str, value: object, most: int | None = None, *, nullable: bool = False) -> int:
    """``value``, a whole number from 1 (to ``most``); ``ConfigError`` naming it otherwise."""
    return whole(f"Tasks.{attribute}", value, most=most, nullable=nullable)


def _share(per_owner: int | None, max_tasks: int) -> int:
    """``max_tasks_per_owner`` as it stands with ``max_tasks``; ``ConfigError`` naming both
    when it is above it."""
    return share("Tasks.max_tasks_per_owner", per_owner, "Tasks.max_tasks", max_tasks)


class Running:
    """A task and what runs it: the handler's asyncio task and the questions it waits on."""

    __slots__ = ("job", "record", "shown", "stopped", "waiting")

    def __init__(self, record: TaskRecord) -> None:
        self.record = record
        self.job: asyncio.Future[Any] | None = None
        #: Questions waiting, by key: the question and the future its answer resolves.
        self.waiting: dict[str, tuple[Ask, asyncio.Future[Any]]] = {}
        #: Room in ``inputRequests``: a question takes a place until it is over (what a
        #: client answers at once); the others wait for one, in the order they were asked.
        self.shown = asyncio.Semaphore(MAX_INPUT_REQUESTS)
        #: Whether the handler was cancelled already (it is cancelled once, so that the
        #: cleanup it runs then is not cut short by a second cancellation).
        self.stopped = False

    def stop(self) -> bool:
        """Cancel the handler, once; whether it still runs."""
        job = self.job
        if job is None or job.done():
            return False
        if not self.stopped:
            self.stopped = True
            job.cancel()
        return True


class Tasks:
    """The tasks of one server process."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        ttl_ms: int | None = 3_600_000,
        poll_ms: int = 1000,
        ask_timeout: float = 600.0,
        max_tasks: int = 10_000,
        max_tasks_per_owner: int | None = None,
    ) -> None:
        self.clock = clock
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.ask_timeout = ask_timeout
        self._max_tasks_per_owner: int | None = None  # not set: a tenth of max_tasks
        self.max_tasks = max_tasks
        if max_tasks_per_owner is not None:
            self.max_tasks_per_owner = max_tasks_per_owner
        #: How long :meth:`close` waits for cancelled handlers to end (seconds); a handler
        #: that ignores its cancellation is left behind after it, and logged.
        self.stop_grace = 5.0
        #: Called after every visible change of any task (``notifications/tasks``).
        self.on_change: Callable[[TaskRecord], None] | None = None
        #: Awaited before a request answers with a new task (shared with other instances).
        self.announce: Callable[[], Awaitable[None]] | None = None
        self._tasks: dict[str, Running] = {}
        #: How many of those each principal holds.
        self._held: Counter[str | None] = Counter()
        self._swept = float("-inf")
        #: Set by ``stop``: no task starts until the server starts again (``reopen``).
        self._stopping = False

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def ttl_ms(self) -> int | None:
        """How long a task is kept after it was created and after it ended; None: for good."""
        return self._ttl_ms

    @ttl_ms.setter
    def ttl_ms(self, value: int | None) -> None:
        self._ttl_ms = None if value is None else _whole("ttl_ms", value, MOST_MS, nullable=True)

    @property
    def poll_ms(self) -> int:
        """The poll interval a task tells its client."""
        return self._poll_ms

    @poll_ms.setter
    def poll_ms(self, value: int) -> None:
        self._poll_ms = _whole("poll_ms", value, MOST_MS)

    @property
    def max_tasks(self) -> int:
        """How many tasks this process holds at most (running, or ended and kept)."""
        return self._max_tasks

    @max_tasks.setter
    def max_tasks(self, value: int) -> None:
        value = _whole("max_tasks", value)
        _share(self._max_tasks_per_owner, value)
        self._max_tasks = value

    @property
    def max_tasks_per_owner(self) -> int:
        """How many of them one principal holds at most (unauthenticated callers are one):
        at most ``max_tasks``; a tenth of it unless set."""
        return _share(self._max_tasks_per_owner, self._max_tasks)

    @max_tasks_per_owner.setter
    def max_tasks_per_owner(self, value: int) -> None:
        value = _whole("max_tasks_per_owner", value)
        _share(value, self._max_tasks)
        self._max_tasks_per_owner = value

    # ---- creating and running --------------------------------------------------------

    def create(self, owner: str | None) -> Running | None:
        """A new task, readable at once (``tasks/get`` resolves before its creation is told);
        None when this process already holds ``max_tasks``, or ``max_tasks_per_owner`` of
        ``owner``'s."""
        if self._stopping:  # the stop has passed by: a task begun now would be cut off unseen
            log.info("the server is stopping: a tool call goes on in place, not as a task")
            return None
        now = self.clock()
        self._sweep(now)
        if len(self._tasks) >= self.max_tasks or self._held[owner] >= self.max_tasks_per_owner:
            # a limit reached: what expired since the last sweep may free room (a sweep walks
            # every task, so one caller held at its limit cannot make it walk more often)
            self._sweep(now, every=_SWEEP_AT_LIMIT)
        if len(self._tasks) >= self.max_tasks:
            log.warning("%d tasks are held (the limit): a tool call goes on in place", len(self._tasks))
            return None
        if self._held[owner] >= self.max_tasks_per_owner:
            log.warning(
                "%s %d tasks (the limit for one principal): a tool call of theirs goes on in place",
                "unauthenticated callers hold" if owner is None else f"principal {owner!r} holds",
                self._held[owner],
            )
            return None
        record = TaskRecord(
            str(uuid.uuid4()), owner, now, self.ttl_ms, self.poll_ms, on_change=self.on_change
        )
        running = Running(record)
        self._tasks[record.task_id] = running
        self._held[owner] += 1
        if self.on_change is not None:  # its first state, for whoever mirrors tasks
            self.on_change(record)
        return running

    def adopt(
        self,
        running: Running,
        job: asyncio.Future[dict[str, Any]],
        finish: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        """``job`` (the handler, already running, the task's since ``Detach.start``) ends
        the task when it ends, with its result stamped by ``finish``."""
        job.add_done_callback(lambda done: self._ended(running, done, finish))

    def _ended(
        self,
        running: Running,
        job: asyncio.Future[dict[str, Any]],
        finish: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        record, now = running.record, self.clock()
        for _, future in running.waiting.values():
            future.cancel()
        running.waiting.clear()
        if record.terminal:  # cancelled before its handler ended: how it ended is moot
            if not job.cancelled() and job.exception() is not None:
                log.info(
                    "task %s: its handler ended with %r after it was cancelled",
                    record.task_id,
                    job.exception(),
                )
            return
        if job.cancelled():  # not by tasks/cancel (that ends the record first): its own work was
            record.cancel(now, _HANDLER_CANCELLED)
            return
        exc = job.exception()
        if exc is None:
            record.complete(finish(job.result()), now)
        elif isinstance(exc, URLElicitationRequired):  # -32042 is 2025-11-25's; a task asks in place
            log.error("task %s: %s", record.task_id, _URL_RAISED)
            record.fail(InternalError(_URL_RAISED).to_error(), now)
        elif isinstance(exc, ProtocolError):  # in the codes 2026-07-28 allows
            record.fail(modern_error(exc, handler=True).to_error(), now)
        else:  # as a request in place would answer
            log.error("task %s failed", record.task_id, exc_info=exc)
            known = isinstance(exc, (ReplayMismatchError, FormSchemaError))
            record.fail(
                InternalError(f"Internal error: {exc}" if known else "Internal error").to_error(), now
            )

    # ---- the extension's methods -------------------------------------------------------

    def get(self, task_id: str, owner: str | None) -> dict[str, Any]:
        """The ``tasks/get`` result (before ``finish``)."""
        return self._find(task_id, owner).record.wire()

    def running(self) -> list[TaskRecord]:
        """The tasks held here that have not ended."""
        return [r.record for r in self._tasks.values() if not r.record.terminal]

    def record(self, task_id: str) -> TaskRecord | None:
        """The task held here by that id, while it is kept; None otherwise."""
        running = self._tasks.get(task_id)
        return None if running is None or running.record.expired(self.clock()) else running.record

    def holds(self, task_id: str) -> bool:
        """Whether this process holds the task (its handler runs here)."""
        return task_id in self._tasks

    def visible(self, task_ids: frozenset[str], owner: str | None) -> dict[str, dict[str, Any]]:
        """The current state of those of ``task_ids`` that ``owner`` may see."""
        now = self.clock()
        self._sweep(now)
        found = {t: self._tasks.get(t) for t in task_ids}
        return {
            t: r.record.wire()
            for t, r in found.items()
            if r is not None and r.record.owner == owner and not r.record.expired(now)
        }

    def update(self, task_id: str, owner: str | None, responses: Mapping[str, Any]) -> dict[str, Any]:
        """Deliver ``tasks/update`` answers to the questions waiting under their keys."""
        running = self._find(task_id, owner)
        for key, raw in responses.items():
            waiting = running.waiting.get(key)
            if waiting is None or waiting[1].done():
                log.debug("task %s: ignoring an answer under %r (not waiting)", task_id, key)
                continue
            waiting[1].set_result(raw)
        return {}

    def cancel(self, task_id: str, owner: str | None) -> dict[str, Any]:
        """``tasks/cancel``: cancel the handler; an acknowledgement even when it had ended."""
        running = self._find(task_id, owner)
        job = running.job
        if job is not None and job.done():  # it ended already: its end, due now, is recorded
            return {}
        if not running.record.terminal:
            running.record.cancel(self.clock())
            running.stop()
        return {}

    def _find(self, task_id: str, owner: str | None) -> Running:
        now = self.clock()
        self._sweep(now)
        running = self._tasks.get(task_id)
        if running is not None and running.record.expired(now):  # between two sweeps
            self._forget(task_id)
            running = None
        if running is None or running.record.owner != owner:
            raise InvalidParams(f"Invalid params: no task {task_id!r} (unknown, expired, or not yours)")
        return running

    def _sweep(self, now: float, *, every: float = 1.0) -> None:
        """Forget the expired tasks, at most once per ``every`` seconds (it walks them all)."""
        if now - self._swept < every and now >= self._swept:
            return
        self._swept = now
        for task_id in [t for t, r in self._tasks.items() if r.record.expired(now)]:
            self._forget(task_id)

    def _forget(self, task_id: str) -> None:
        owner = self._tasks.pop(task_id).record.owner
        self._held[owner] -= 1
        if not self._held[owner]:
            del self._held[owner]

    def stop(self) -> list[asyncio.Future[Any]]:
        """Cancel every task still running (the server is stopping; no task starts after
        this); the handlers cancelled."""
        self._stopping = True
        now, jobs = self.clock(), []
        for running in self._tasks.values():
            if running.job is not None and not running.job.done():
                if not running.record.terminal:
                    running.record.cancel(now, "The server is shutting down")
                running.stop()  # once: a handler cancelled before is left to its cleanup
                jobs.append(running.job)
        return jobs

    def abandon(self) -> None:
        """The event loop the handlers ran on ended without the server's stop: each task
        still running ends cancelled, as at a stop, its handler let go of there
        (``server/left_loops.py``), never to run again."""
        now = self.clock()
        for running in self._tasks.values():
            job = running.job
            if job is not None and not job.done():
                running.job = None
                if not running.record.terminal:
                    running.record.cancel(now, "The server is shutting down")
                drop(job)

    def reopen(self) -> None:
        """Start tasks again (the server starts after a stop)."""
        self._stopping = False

    async def close(self) -> None:
        """``stop``, then wait for the handlers to end, ``stop_grace`` seconds at most (a
        handler that swallows its cancellation must not hold the server's stop for good)."""
        jobs = {job: running.record.task_id for running in self._tasks.values() if (job := running.job)}
        stopped = self.stop()
        if not stopped:
            return
        _, still = await asyncio.wait(stopped, timeout=self.stop_grace)
        for job in still:
            log.warning(
                "task %s is still running %g s after it was cancelled (its handler ignores "
                "cancellation); the server stops without it",
                jobs.get(job, "?"),
                self.stop_grace,
            )


async def answer_task_method(
    tasks: Tasks, call: Call, owner: str | None, relay: Elsewhere | None = None
) -> dict[str, Any]:
    """Answer ``tasks/get``, ``tasks/update`` or ``tasks/cancel`` (before ``finish``); -32021
    when the request did not declare the extension, whatever else it holds. A task this
    process does not hold is looked for on the instances sharing the store (``relay``)."""
    require_tasks(call.capabilities)
    try:
        task_id = task_id_of(call.params)
        if call.method == "tasks/get":
            return tasks.get(task_id, owner)
        if call.method == "tasks/update":
            return tasks.update(task_id, owner, input_responses_of(call.params))
        return tasks.cancel(task_id, owner)
    except InvalidParams:
        answer = None if relay is None else await relay.elsewhere(call.method, call.params, owner)
        if answer is None:
            raise
        return answer


class Elsewhere(Protocol):
    """Where tasks held by other instances are found (``server.relay.Relay``)."""

    async def elsewhere(
        self, method: str, params: Mapping[str, Any], owner: str | None
    ) -> dict[str, Any] | None: ...
