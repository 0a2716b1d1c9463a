"""Carrying what went wrong answering a handshake-era server's question (2025-11-25,
2025-06-18, 2025-03-26) to the client's request the question came during: the answerer's
or a callback's own exception (once the server is told -32603), or a person's Ctrl-C.

Rules:

* An answer that fails is held for that request at once, before its -32603 goes out
  (``failed``). The request raises it however it ends (``end``), whichever came first:
  its own response (the server, told -32603, may end its tool and answer the call before
  it answers the POST that told it), or that answer's end. A request that has its
  response waits for such an answer to be sent (``sent``) before it raises, so the
  server is told -32603 first, a question on the event stream too (which a request that
  completes does not otherwise wait for): for ``TELLING`` seconds at most, since its
  result is in (not for the send's own time limit, 30 s over HTTP, nor for ever over
  stdio to a server that has stopped reading its stdin); the -32603 goes on being sent.
* The answers still being made when the request's response comes (a person still typing)
  are waited for each on its own (``answered``): one that fails meanwhile leaves that wait
  at once, and its -32603 falls under the same ``TELLING`` bound (not the send's own time
  limit, which waiting for that answer whole would take). If the request's task is
  cancelled meanwhile (a Ctrl-C or failure carried to it, its caller's timeout), the
  answers still being made are cancelled and waited for (``reap``): none is left behind.
* Once the answer has been sent (or was withdrawn unsent), the request still in flight
  is cancelled to end it (``carry``, the answering task's done callback), as a Ctrl-C
  met answering ends it: it then raises what was carried, not a ``CancelledError``.
* A request raises one failure: the first met during it, unless a KeyboardInterrupt or
  SystemExit comes after an exception of the answerer's (its -32603 still being sent,
  say): a Ctrl-C is never swallowed, so that is raised, and the other logged. Another
  exception during the same request is logged too, once.
* What fails once its request has returned comes too late for it: an answerer's
  exception is logged; a KeyboardInterrupt or SystemExit is raised out of the event
  loop (``interrupts``). One the request already raised is neither.
* Nothing here depends on the order in which asyncio runs the answering task's done
  callbacks and wakes the request (since Python 3.12 ``asyncio.gather`` of a task already
  done returns before that task's callbacks have run).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from mcp_elicit.client.interrupts import Interrupt, reraise
from mcp_elicit.client.reaping import reap

__all__ = ["TELLING", "Failures", "settle"]

log = logging.getLogger("mcp_elicit.client")

#: How long a request that has its response waits for a failed answer's -32603 to be sent.
TELLING: Final = 5.0


class Failures:
    """The failures met answering questions during the client's requests in flight."""

    def __init__(self) -> None:
        #: The task of each of the client's requests in flight, by id.
        self._callers: dict[Any, asyncio.Task[Any]] = {}
        #: What each request will raise when it ends (the first failure met during it).
        self._held: dict[Any, Interrupt] = {}
        #: The answering tasks whose answer failed during each request (its -32603 being sent).
        self._failing: dict[Any, list[asyncio.Task[Any]]] = {}
        #: How often each request's task was cancelled to end it: undone when it raises
        #: what was carried, no more (a caller's own cancellation, a timeout, stays).
        self._cancels: dict[Any, int] = {}
        #: What a request waiting in ``answered`` wakes on: an answer during it failed.
        self._news: dict[Any, asyncio.Future[None]] = {}

    def begin(self, during: Any) -> None:
        """The client's request ``during`` (its id) is in flight, in the running task."""
        task = asyncio.current_task()
        if task is not None:
            self._callers[during] = task

    def failed(self, during: Any, carrier: Interrupt) -> None:
        """An answer during request ``during`` failed (its -32603 not sent yet), in the
        running task: held for that request if it is still in flight."""
        if during is None or during not in self._callers:
            return  # too late for it: ``carry`` logs it once the task ends
        self._keep(during, carrier)
        task = asyncio.current_task()
        if task is not None:
            self._failing.setdefault(during, []).append(task)
        news = self._news.get(during)
        if news is not None and not news.done():
            news.set_result(None)

    def hold(self, during: Any, carrier: Interrupt) -> None:
        """A failure the request ``during`` found waiting for its questions' answers."""
        self._keep(during, carrier)

    def _keep(self, during: Any, carrier: Interrupt) -> None:
        """Hold ``carrier`` for the request ``during`` unless it holds one already (a Ctrl-C
        takes the place of an exception); the one it will not raise is logged, once."""
        held = self._held.get(during)
        if held is carrier or carrier.taken:
            return
        if held is None or (_stops(carrier) and not _stops(held)):
            self._held[during] = carrier
            if held is None:
                return
            carrier = held
        carrier.taken = True  # not raised, and logged here only
        if not _stops(carrier):  # a second Ctrl-C is the first one's
            log.error("answering the server's question failed", exc_info=carrier.raised)

    def others(self, during: Any, tasks: list[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
        """Those of ``tasks`` (answers during ``during``) whose answer did not fail: a failed
        one's -32603 is waited for by ``sent``."""
        failing = self._failing.get(during, [])
        return [task for task in tasks if task not in failing]

    async def answered(self, during: Any, tasks: list[asyncio.Task[Any]]) -> list[Interrupt]:
        """Wait for the answers ``tasks`` to the questions of ``during``, which has its
        response, but those that fail (before or meanwhile: ``sent`` waits for their
        -32603); what the others carry to it (an answer that failed otherwise is logged).
        Cancelled meanwhile, the answers still being made are cancelled and waited for."""
        loop = asyncio.get_running_loop()
        carried: list[Interrupt] = []
        waiting = self.others(during, tasks)
        try:
            while waiting:
                news = self._news[during] = loop.create_future()
                await asyncio.wait([*waiting, news], return_when=asyncio.FIRST_COMPLETED)
                carried += _outcomes([task for task in waiting if task.done()])
                waiting = self.others(during, [task for task in waiting if not task.done()])
        except asyncio.CancelledError:
            await reap(*waiting)
            raise
        finally:
            self._news.pop(during, None)
        return carried

    async def sent(self, during: Any) -> bool:
        """Wait until the failed answers during ``during`` are sent, ``TELLING`` seconds at
        most (they go on being sent after); whether they were."""
        loop = asyncio.get_running_loop()
        until = loop.time() + TELLING
        while unsent := [task for task in self._failing.get(during, []) if not task.done()]:
            left = until - loop.time()
            if left <= 0:
                return False
            await asyncio.wait(unsent, timeout=left)
        return True

    def carry(self, during: Any, task: asyncio.Task[Any]) -> None:
        """The answering ``task`` ended (its done callback): what it carried ends the
        request it came during, which is cancelled for it; too late for that request, an
        answerer's exception is logged and a Ctrl-C raised out of the event loop."""
        carrier = None if task.cancelled() else task.exception()
        if not isinstance(carrier, Interrupt):
            return
        caller = self._callers.get(during) if during is not None else None
        if caller is None or caller.done():
            if carrier.taken:  # its request raised it, or it was logged
                return
            if not _stops(carrier):  # no call to raise it in
                log.error("answering the server's question failed", exc_info=carrier.raised)
                return
            reraise(carrier)
        self._keep(during, carrier)
        if caller.cancel():
            self._cancels[during] = self._cancels.get(during, 0) + 1

    def end(self, during: Any) -> None:
        """The request ``during`` is over, in its own task: the cancellations made to end
        it are taken back, and what was carried to it is raised."""
        self._callers.pop(during, None)
        self._failing.pop(during, None)
        carrier = self._held.pop(during, None)
        task = asyncio.current_task()
        for _ in range(self._cancels.pop(during, 0)):  # ``carry`` cancelled it to bring it here
            if task is not None and task.cancelling():
                task.uncancel()
        if carrier is not None:
            carrier.taken = True
            reraise(carrier)


async def settle(tasks: list[asyncio.Task[Any]], *, cancel: bool, why: str | None = None) -> list[Interrupt]:
    """Wait for the answers to a request's questions (cancelled first, with ``why``, when
    the request failed or was abandoned, but those cancelled already: a stray withdrawn,
    its answerer told ``CANCEL_SENT``); what they carry to it. An answer that failed
    otherwise is logged, not raised."""
    if cancel:
        for task in tasks:
            if not task.cancelling():
                task.cancel(why)
    await asyncio.gather(*tasks, return_exceptions=True)
    return _outcomes(tasks)


def _outcomes(tasks: list[asyncio.Task[Any]]) -> list[Interrupt]:
    """What the ended answering ``tasks`` carry to their request; another failure is logged."""
    carried: list[Interrupt] = []
    for task in tasks:
        outcome = None if task.cancelled() else task.exception()
        if isinstance(outcome, Interrupt):
            carried.append(outcome)
        elif isinstance(outcome, Exception):
            log.error("answering the server's question failed", exc_info=outcome)
    return carried


def _stops(carrier: Interrupt) -> bool:
    """Whether ``carrier`` holds a Ctrl-C (or a SystemExit), which is never swallowed."""
    return isinstance(carrier.raised, KeyboardInterrupt | SystemExit)
