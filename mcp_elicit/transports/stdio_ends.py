"""The ends of the stdio server's pipes, as the event loop cannot see them by itself.

Rules: stdout's pipe protocol (``PipeOutput``) tells the server when the pipe closes (its
reader went away) even while nothing is being written, and says whether it has closed
(a closed pipe is not aborted again). Whether stdin's writer hung up is asked without
reading and without waiting (``hung_up``): what it wrote may still wait unread. A
character device that is not a terminal (``/dev/null``) cannot be watched by the event
loop (``unwatchable``): it is read in a thread instead.
"""

from __future__ import annotations

import asyncio
import os
import select
import stat
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["PipeOutput", "hung_up", "unwatchable"]


class PipeOutput(asyncio.streams.FlowControlMixin):
    """stdout's pipe protocol: tells the server when the pipe closes (its reader went
    away), even while nothing is being written."""

    def __init__(self, closed: Callable[[BaseException | None], None]) -> None:
        super().__init__()
        self._closed = closed
        self._done = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._done.done():
            self._done.set_result(None)
        self._closed(exc)

    @property
    def lost(self) -> bool:
        """The pipe is closed: its buffer written, or given up."""
        return self._done.done()

    def _get_close_waiter(self, stream: asyncio.StreamWriter) -> asyncio.Future[None]:
        """What ``StreamWriter.wait_closed`` waits for: the pipe closed, its buffer written
        (or given up)."""
        return self._done


def hung_up(fd: int | None) -> bool:
    """The writer of stdin (a pipe, a socket) closed its end; data it wrote may still be
    waiting unread. Asks without reading, and without waiting."""
    if fd is None or not hasattr(select, "poll"):
        return False
    hangup = select.POLLHUP | getattr(select, "POLLRDHUP", 0)
    poller = select.poll()
    try:
        poller.register(fd, getattr(select, "POLLRDHUP", 0))
        return any(events & hangup for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def unwatchable(stream: BinaryIO) -> bool:
    """A character device that is not a terminal (``/dev/null``, as ``docker run`` without
    ``-i`` and service managers give): the event loop takes it as a pipe, then fails to
    watch it (epoll refuses), and the read never ends."""
    try:
        return stat.S_ISCHR(os.fstat(stream.fileno()).st_mode) and not os.isatty(stream.fileno())
    except (OSError, ValueError):
        return False
