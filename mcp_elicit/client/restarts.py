"""Starting a stdio server again after it exited on its own (*stdio*, Unexpected
Termination: the client should restart it; the protocol is stateless, so what was in
flight is lost and later requests go to the fresh process).

Rules:

* From connecting on, the server is watched (``Transport.gone``). Once it has gone
  without the client closing it, the next call starts it again before that call is sent:
  the transport opened anew, the revision settled again (the era belongs to the process,
  so it is probed again, or ``initialize`` sent again).
* The calls in flight when it went have ended with the ``TransportError`` saying how; they
  are never sent again (a tool call may have acted before the end).
* One start per exit: calls that find the server gone together wait for the one start.
  A start that fails (the server exits again at once, its command is gone) fails the
  call that waited for it, saying which call, how the server had ended and why it could
  not be started again; the call after it tries again (once: a server that exits at
  every start is started once per call, never in a loop).
* A server that shut itself down (stdio lets it: its output closed, exit code 0) is
  started again the same way: only when a caller makes another call, which the ended
  process could not serve; an idle server that quit comes back when it is needed, and one
  that exits at once fails that call, saying so. The warning logged says how it ended.
* Subscriptions end with the process, as a dropped stream does (the caller listens
  again).
* Where the server cannot go (over HTTP each request connects anew; in memory it is in
  this process, and a transport without ``gone``) nothing is watched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from mcp_elicit.client.reaping import reap
from mcp_elicit.client.transport import Transport
from mcp_elicit.errors import TransportError

__all__ = ["Restarts"]

log = logging.getLogger("mcp_elicit.client")


class Restarts:
    """Watches one transport's server, and starts it again (``restart``) when a call
    finds it gone."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._watch: asyncio.Future[str] | None = None
        self._lock = asyncio.Lock()

    def watch(self) -> None:
        """Watch the server just opened."""
        gone = getattr(self._transport, "gone", None)
        if self._transport.http or gone is None:
            return
        self._watch = asyncio.ensure_future(gone())

    def ended(self) -> str | None:
        """How the server went, once it has; else None."""
        watch = self._watch
        if watch is None or not watch.done() or watch.cancelled() or watch.exception() is not None:
            return None
        return watch.result()

    async def stop(self) -> None:
        """Stop watching (the client closes the transport itself)."""
        watch, self._watch = self._watch, None
        if watch is not None:
            await reap(watch)

    async def revive(self, start: Callable[[], Awaitable[None]], server: object, call: str) -> None:
        """Before ``call`` (its method and server, as its errors name it): if the server has
        gone, ``start`` it again (once for all the calls that found it gone), and watch the
        new one."""
        if self._watch is not None and not self._watch.done():
            # The exit that just ended a call woke the watch, which has yet to run: let it
            # (tasks run in the order woken), so the next call does not meet the old end.
            await asyncio.sleep(0)
        if self.ended() is None and not self._lock.locked():
            return
        async with self._lock:  # a start under way is waited for
            how = self.ended()
            if how is None:  # another call started it meanwhile
                return
            log.warning("%s had ended (%s); starting it again", server, how)
            await self.stop()
            try:
                await start()
            except BaseException as exc:
                if self._watch is None:  # not even opened: the next call tries again
                    failed = asyncio.get_running_loop().create_future()
                    failed.set_result(f"it could not be started: {exc}")
                    self._watch = failed
                if isinstance(exc, TransportError):  # not only a probe the caller never made
                    raise TransportError(
                        f"{call}: the server had ended ({how}) and could not be started again: {exc}"
                    ) from exc
                raise
