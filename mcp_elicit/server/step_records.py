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
  completions under way at once share one store per URL, opened by the first, so that a
  burst of webhook calls uses one connection rather than one each (a process's file
  handles are few), and closed when the last of them is written. Between bursts such a
  process holds no connection, thread or lock on the store. A ``memory://`` store so
  opened is a fresh one, which nobody reads: that is right, as only a step asked in this
  process (whose ask opened the server's own store) could be released by it.
* A store object the server was given is the server's store whatever happens, never
  closed here.
* A failure is logged (naming the step), never raised into the caller: opening the store
  (a URL that cannot be used, in a process that never started the server) included, so
  nothing is opened until the write, on the event loop. ``settle`` (the server stopping)
  waits for the writes under way; a write cancelled on its way still closes the store it
  opened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeAlias

from mcp_elicit.server.url_steps import StepCompletions

__all__ = ["StepRecords"]

log = logging.getLogger("mcp_elicit.server")

#: What to publish once a completion is written: a channel and a message (the relay's).
Told: TypeAlias = tuple[str, bytes] | None


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
        self._writing: set[asyncio.Task[None]] = set()
        self._shared: dict[
            str, tuple[StepCompletions, int]
        ] = {}  # by URL: opened for a burst, writes using it

    def record(self, elicitation_id: str, principal: str | None, told: Told = None) -> None:
        """Write, without waiting, that ``principal``'s step ``elicitation_id`` is done; then
        publish ``told`` (a channel and a message) through the same store."""
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
        task = loop.create_task(self._write(steps, url, elicitation_id, principal, told))
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def settle(self) -> None:
        """Wait for the writes under way (each closes what it opened)."""
        while self._writing:
            await asyncio.wait(set(self._writing))

    async def _write(
        self,
        steps: StepCompletions | None,
        url: str | None,
        elicitation_id: str,
        principal: str | None,
        told: Told,
    ) -> None:
        try:
            if steps is not None:
                await steps.complete(elicitation_id, principal, told)
            elif url is not None:
                await self._write_for_burst(url, elicitation_id, principal, told)
        except Exception as exc:  # any backend's failure, StoreUnavailable included
            log.warning(
                "the completion of URL step %r could not be recorded in the store (%s): 2026-07-28 "
                "requests waiting on it go on waiting until their bound",
                elicitation_id[:64],
                exc,
            )

    async def _write_for_burst(
        self, url: str, elicitation_id: str, principal: str | None, told: Told
    ) -> None:
        shared = self._shared.get(url)
        if shared is None:
            from mcp_elicit.stores import open_store

            steps = StepCompletions(open_store(url), ttl=self.ttl)
        else:
            steps = shared[0]
        self._shared[url] = (steps, (shared[1] if shared else 0) + 1)
        try:
            await steps.complete(elicitation_id, principal, told)
        finally:
            now = self._shared.get(url)
            if now is not None and now[0] is steps:
                if now[1] > 1:
                    self._shared[url] = (steps, now[1] - 1)
                else:  # the last write of the burst
                    del self._shared[url]
                    try:
                        await steps.store.close()
                    except Exception:
                        from mcp_elicit.stores.redis import redact_url

                        log.warning("the store %r could not be closed", redact_url(url), exc_info=True)
