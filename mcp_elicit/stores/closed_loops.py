"""What an event loop closed before its work ended leaves behind, let go of quietly.

A loop can close with tasks still pending on it: a loop run on a thread of its own and
stopped from another (``loop.stop()``, then ``loop.close()``), or a close cut short when
its loop ended. Those tasks never run on. Left alone, the garbage collector finishes
them wherever it comes, and each says so on stderr: ``Task was destroyed but it is
pending!``, and ``Exception ignored in: <coroutine ...>`` with the ``Event loop is
closed`` that their clean-up met. A store that started them lets go of them itself when
it is closed (on another loop), so that nothing of this reaches stderr.

Rules:

* :func:`let_go` ends a pending task of a closed loop: its coroutine is closed until it
  has ended (a clean-up that awaits on its way out is closed again, a bounded number of
  times), whatever it raises on the way swallowed (it can only be the closed loop's
  complaint), and the task is marked as let go of, so it is not reported when collected.
  First the future its innermost ``await`` waits on is marked cancelled (its callbacks
  dropped, as the closed loop refuses to schedule them): the clean-up of the ``await``
  being closed (``asyncio.Queue.get``'s, ``asyncio.wait_for``'s) then finds it done, and
  does not meet "Event loop is closed" on its way out, for a handler's ``except
  Exception`` around it to log as the request's failure. A task that has ended, or whose
  loop still runs, is left alone. :func:`let_go_of_code`
  does so for every pending task of a closed loop whose coroutine is defined in one
  package: the tasks a library started for the work let go of (``asyncio.gather``'s,
  ``asyncio.wait_for``'s), which no caller holds. Any such task of that package is let
  go of, whoever began it: on a closed loop none can ever run again. What they wait on
  is marked cancelled for them all before the first is closed, so that one's clean-up
  cancelling another (a session's end cancelling its requests) meets no closed loop.
* :func:`shut_down` ends a connection whose transport belongs to a closed loop: closing
  it would go through that loop (and fail, "Event loop is closed"), so the socket is
  shut down (the peer sees the connection end at once: a command it had only in part is
  dropped, never run), and, on asyncio's own transports, closed as that loop would have
  closed it next; on another kind of transport (uvloop's, whose socket is out of reach
  once its loop is closed) the collector frees the descriptor. It never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import socket
from typing import Any

__all__ = ["let_go", "let_go_of_code", "shut_down"]

#: How many times a coroutine that awaits on its way out is closed again.
_CLOSE_AGAIN = 32


def let_go(task: asyncio.Future[Any]) -> None:
    """End ``task``, pending on a closed event loop, without a word (see the module rules)."""
    if task.done() or not task.get_loop().is_closed():
        return
    # What asyncio itself does for a task it gives up on (run_until_complete): never said.
    with contextlib.suppress(AttributeError):
        task._log_destroy_pending = False  # type: ignore[attr-defined]
    _drop_waiter(task)
    coro = task.get_coro() if isinstance(task, asyncio.Task) else None
    if not inspect.iscoroutine(coro):
        return
    for _ in range(_CLOSE_AGAIN):
        if inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED:
            return
        with contextlib.suppress(BaseException):  # "Event loop is closed", "ignored GeneratorExit"
            coro.close()


def let_go_of_code(loop: asyncio.AbstractEventLoop, package: str) -> None:
    """:func:`let_go` every task pending on ``loop`` (closed) whose coroutine's code is in
    the directory ``package``."""
    if not loop.is_closed():
        return
    where = os.path.join(os.path.abspath(package), "")
    tasks = []
    for task in asyncio.all_tasks(loop):
        code = getattr(task.get_coro(), "cr_code", None)
        if code is not None and os.path.abspath(code.co_filename).startswith(where):
            tasks.append(task)
    for task in tasks:  # all of them first: a clean-up may cancel another's
        _drop_waiter(task)
    for task in tasks:
        let_go(task)


def _drop_waiter(task: asyncio.Future[Any]) -> None:
    """Mark what ``task`` (pending on a closed loop) waits on as cancelled, its callbacks
    dropped: the closed loop refuses to schedule them, after the mark (never raises)."""
    waiter = getattr(task, "_fut_waiter", None)
    if isinstance(waiter, asyncio.Future) and not waiter.done():
        with contextlib.suppress(RuntimeError):  # "Event loop is closed": marked all the same
            waiter.cancel()


def shut_down(writer: asyncio.StreamWriter | None) -> None:
    """End the connection under ``writer``, whose loop is closed (see the module rules)."""
    if writer is None:
        return
    transport = writer.transport
    sock = writer.get_extra_info("socket")
    if sock is not None:  # uvloop's stand-in refuses shutdown: TypeError
        with contextlib.suppress(OSError, TypeError, AttributeError):
            sock.shutdown(socket.SHUT_RDWR)
    if not transport.is_closing():
        with contextlib.suppress(RuntimeError):  # marked closing; its closed loop refuses the rest
            transport.abort()
    # What that loop would have run next: the socket closed and let go of, so the collector
    # finds nothing open (no "unclosed transport"). asyncio's own selector transports only.
    lost = getattr(transport, "_call_connection_lost", None)
    if callable(lost) and getattr(transport, "_sock", None) is not None:
        with contextlib.suppress(Exception):  # what the protocol says of a closed loop
            lost(None)
