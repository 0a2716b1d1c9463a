"""Completions of the handlers' own URL steps, written to the store without waiting:
``server.complete_elicitation`` is a plain call, often made from a webhook's code, so
the write is a task of its own (``server/url_steps.py`` reads what it wrote).

Rules:

* A completion goes into the configured store, or into the default file when the server
  opened it (it asked a step) or when the file exists (another process of this user on
  this machine asked one): a server that never asked one creates no file.
* A process that never opened the default file itself (a webhook's) does not open it as
  its store (that would make a key file for sealing nothing): the completions under way
  at once share one store on the file, opened by the first, so that a burst of webhook
  calls uses one connection rather than one each (a process's file handles are few), and
  closed when the last of them is written. Between bursts such a process holds no
  connection, thread or lock on the file.
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

from mcp_elicit.server.url_steps import StepCompletions, default_store_made

__all__ = ["StepRecords"]

log = logging.getLogger("mcp_elicit.server")

#: What to publish once a completion is written: a channel and a message (the relay's).
Told: TypeAlias = tuple[str, bytes] | None


class StepRecords:
    """Writes step completions; see the module docstring. ``configured`` says whether the
    server's own completions have a store to go to (configured, or the default file the
    server opened), and ``own`` gives them (opening that store if need be); ``ttl`` is how
    long one made in the default file by this process alone is kept."""

    def __init__(
        self, configured: Callable[[], bool], own: Callable[[], StepCompletions], *, ttl: float
    ) -> None:
        self._configured = configured
        self._own = own
        self.ttl = ttl
        self._writing: set[asyncio.Task[None]] = set()
        self._shared: StepCompletions | None = None  # on the default file, while writes are under way
        self._sharing = 0  # how many writes use it

    def record(self, elicitation_id: str, principal: str | None, told: Told = None) -> None:
        """Write, without waiting, that ``principal``'s step ``elicitation_id`` is done; then
        publish ``told`` (a channel and a message) through the same store."""
        in_own = self._configured()
        if not in_own and not default_store_made():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.warning(
                "complete_elicitation(%r) was called with no event loop running: 2026-07-28 requests "
                "waiting on that step are not told; call it from the server's event loop",
                elicitation_id[:64],
            )
            return
        task = loop.create_task(self._write(in_own, elicitation_id, principal, told))
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    async def settle(self) -> None:
        """Wait for the writes under way (each closes what it opened)."""
        while self._writing:
            await asyncio.wait(set(self._writing))

    async def _write(self, in_own: bool, elicitation_id: str, principal: str | None, told: Told) -> None:
        try:
            if in_own:
                await self._own().complete(elicitation_id, principal, told)
            else:
                await self._write_in_default(elicitation_id, principal, told)
        except Exception as exc:  # any backend's failure, StoreUnavailable included
            log.warning(
                "the completion of URL step %r could not be recorded in the store (%s): 2026-07-28 "
                "requests waiting on it go on waiting until their bound",
                elicitation_id[:64],
                exc,
            )

    async def _write_in_default(self, elicitation_id: str, principal: str | None, told: Told) -> None:
        if self._shared is None:
            from mcp_elicit.stores import default_store_url, open_store

            self._shared = StepCompletions(open_store(default_store_url()), ttl=self.ttl)
        steps = self._shared
        self._sharing += 1
        try:
            await steps.complete(elicitation_id, principal, told)
        finally:
            self._sharing -= 1
            if self._sharing == 0 and self._shared is steps:  # the last write of the burst
                self._shared = None
                try:
                    await steps.store.close()
                except Exception:
                    log.warning("the default store %r could not be closed", steps.store, exc_info=True)
