"""A tool handler in a task (extension ``io.modelcontextprotocol/tasks``, 2026-07-28): how
it becomes one, and how it asks its questions once it is one. The registry of tasks and
the extension's methods are ``server.tasks``.

Rules:

* A tool registered with ``task="optional"`` or ``"required"`` decides when it becomes a
  task: ``await ctx.start_task()``. If the request declared the extension, the request is
  answered there with a ``CreateTaskResult`` and the handler goes on in the background;
  otherwise ``start_task()`` returns False and the handler goes on in place (a
  ``"required"`` tool was refused with -32021 before it ran). A tool that returns without
  calling it answers in place (the spec's immediate-result shortcut). Questions asked
  before it are ordinary multi round-trip rounds, so a tool can ask first, then work.
* After that, a question parks the task in ``input_required`` under a key never used
  before in the task; ``tasks/update`` answers some or all of them (other keys ignored).
  An answer that does not fit is asked again once, under a new key, with the reason; a
  second bad one, or none within ``ask_timeout``, is ``cancel`` for an elicitation and
  fails the handler for sampling or roots (as on 2025-11-25).
* ``inputRequests`` shows at most ``MAX_INPUT_REQUESTS`` questions (what a client answers
  at once); a handler asking more has the others shown as earlier ones are over, in the
  order asked, and the ``ask_timeout`` of each runs from when it is shown.
* The request that made the task, cancelled before it answered (no one knows the id),
  cancels it; a handler that catches its cancellation and then asks is cancelled again
  at that question. Once the handler has ended, a ``Context`` kept past it (a background
  task) asks nothing: ``ended``, and the ``Context`` says the request is over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_elicit.core.mrtr import Ask
from mcp_elicit.server.asking import InPlaceAsker, answer_within
from mcp_elicit.server.tasks import Running, Tasks

__all__ = ["Detach", "TaskAsker", "run_detachable"]


class TaskAsker(InPlaceAsker):
    """Asks a task's questions through its ``inputRequests``; answers come by ``tasks/update``."""

    def __init__(self, tasks: Tasks, running: Running, memo: dict[str, Any]) -> None:
        self.tasks = tasks
        self.running = running
        self.timeout = tasks.ask_timeout
        #: Values kept for the rest of the request (from its multi round-trip rounds).
        self.memo = memo

    def where(self) -> str:
        return f"task {self.running.record.task_id}"

    async def require_url(self, ask: Ask) -> Any:
        (answer,) = await self.ask([ask])
        return answer

    @property
    def ended(self) -> bool:
        """Whether the task's handler has returned (or failed): a Context kept past it
        asks nothing. (Cancelled and still running, it is cancelled again when it asks.)"""
        job = self.running.job
        return job is not None and job.done()

    async def _answer(self, ask: Ask, prepared: Any) -> Any:
        # a place in inputRequests for both tries: the rest wait, their time not yet running
        async with self.running.shown:
            return await super()._answer(ask, prepared)

    async def _exchange(self, ask: Ask, prepared: Any, note: str | None) -> Any:
        """Park the task on ``ask`` under a fresh key until its answer comes."""
        running, record = self.running, self.running.record
        if running.stopped or record.terminal:
            # cancelled (or ended) already, and the handler caught that and asks anyway:
            # no client will answer a cancelled task, so it is cancelled again at once
            raise asyncio.CancelledError(f"task {record.task_id} was cancelled; it asks nobody")
        key = _fresh(ask.key, record.issued)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        running.waiting[key] = (ask, future)
        record.ask({key: ask.wire(note)}, self.tasks.clock())
        try:
            return await answer_within(future, self.timeout)
        finally:
            running.waiting.pop(key, None)
            record.answered([key], self.tasks.clock())


def _fresh(key: str, issued: set[str]) -> str:
    if key not in issued:
        return key
    n = 2
    while f"{key}.{n}" in issued:
        n += 1
    return f"{key}.{n}"


class Detach:
    """How a handler becomes a task: the request waits for either the handler's end or
    ``start``, whichever comes first (see :func:`run_detachable`)."""

    def __init__(self, tasks: Tasks, owner: str | None) -> None:
        self.tasks = tasks
        self.owner = owner
        #: The handler's own asyncio task (``run_detachable`` sets it before it runs).
        self.job: asyncio.Future[dict[str, Any]] | None = None
        self.started: asyncio.Future[Running] = asyncio.get_running_loop().create_future()
        #: The task as it was created: what the request answers (the handler goes on).
        self.created: dict[str, Any] = {}

    def start(self, message: str | None) -> Running | None:
        running = self.tasks.create(self.owner)
        if running is None:
            return None
        # The task owns the handler from now on: tasks/cancel, or the server stopping,
        # can reach it before the request has been answered.
        running.job = self.job
        if message is not None:
            running.record.set_message(message, self.tasks.clock())
        self.created = running.record.created_result()
        self.started.set_result(running)
        return running


async def run_detachable(
    detach: Detach,
    body: Callable[[], Awaitable[dict[str, Any]]],
    finish: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Run ``body`` (the handler's round) in a task of its own; its result, or a
    ``CreateTaskResult`` when the handler called ``start_task`` first (it goes on, and
    ``finish`` stamps its result for the task)."""
    job = detach.job = asyncio.ensure_future(body())
    either: list[asyncio.Future[Any]] = [job, detach.started]
    running: Running | None = None
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not detach.started.done():
            detach.started.cancel()
            return job.result()
        running = detach.started.result()
        detach.tasks.adopt(running, job, finish)
        if detach.tasks.announce is not None:
            await detach.tasks.announce()  # its id works on any instance once answered
        return detach.created
    except asyncio.CancelledError:
        # The request was cancelled before it answered: no client knows the task's id,
        # so nobody could follow it. The handler stops, and a task it became ends.
        if running is None and detach.started.done() and not detach.started.cancelled():
            running = detach.started.result()
            detach.tasks.adopt(running, job, finish)
        if running is not None and not running.record.terminal:
            running.record.cancel(detach.tasks.clock(), "The request that created it was cancelled")
        if running is not None:
            running.stop()
        else:
            job.cancel()
        raise
