"""This process's stderr while it serves stdio: written to freely, whoever reads it.

Rules:

* Until the server stops, fd 2 is the write end of a pipe whose bytes a thread copies to
  stderr as the process found it (a duplicate of fd 2). Everything that writes to fd 2
  (``sys.stderr``, the server's log handlers, tool code's ``print(file=sys.stderr)`` and
  ``logging``, a write to fd 2, a child process, what tool code writes to stdout, see
  ``stdio_stdout``) writes there as before, and what it writes reaches stderr as before,
  in the order written.
* Writing there never fails: once stderr cannot be written (its reader went away: the
  client closed its end or died), what comes is read and dropped, said once in the log
  (heard only by a handler that does not write to stderr, if any).
* When the server stops, fd 2 is stderr again and what was written before is copied out
  first (for at most ``DRAIN`` seconds: a child process still holding fd 2 is not waited
  for); unless stderr's reader went away (a write failed, or the pipe says so): then fd 2 is
  /dev/null for the rest of the process, so that the log lines of the server's stop and
  the interpreter's last flush of ``sys.stderr`` go nowhere instead of failing (a
  "Logging error", an exit status of 120).
* Without stderr (started with fd 2 closed, ``sys.stderr`` is None), /dev/null stands in
  for it (:func:`quiet_stderr`): as ``sys.stderr``, so ``sys.stderr.write()`` does not
  fail with "'NoneType' object has no attribute 'write'", and as fd 2 while that number is
  free, so that no other file (the event loop's own, once it runs) takes it and receives
  what is written to fd 2. The CLI does this before anything else is opened.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
import threading
from collections.abc import Iterator

from mcp_elicit.transports.stdio_stdout import DRAIN, start_relay

__all__ = ["own_stderr", "quiet_stderr"]

log = logging.getLogger("mcp_elicit.stdio")


@contextlib.contextmanager
def own_stderr() -> Iterator[None]:
    """fd 2 as the module's rules say, until the block ends."""
    if sys.stderr is None:  # started with fd 2 closed: the number may be another file's
        quiet_stderr()
        yield
        return
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    saved = os.dup(2)
    gone = threading.Event()

    def dropping(exc: OSError) -> None:
        gone.set()
        # said from another thread: the log writes to fd 2, the pipe only the copier reads
        with contextlib.suppress(RuntimeError):  # no new thread as the interpreter exits: unsaid
            threading.Thread(
                target=_say_dropped, args=(exc,), name="mcp-elicit stderr gone", daemon=True
            ).start()

    copier = start_relay(2, saved, dropping, "mcp-elicit stderr")
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        if _unread(saved):  # its reader went away, though nothing was written since
            gone.set()
        # this process's last writer of the pipe: the copier reads to its end
        if gone.is_set():
            _nowhere()
        else:
            os.dup2(saved, 2)
        copier.join(DRAIN)
        if gone.is_set():
            _nowhere()
        if not copier.is_alive():  # else a child process still holds the pipe: left to it
            os.close(saved)


def quiet_stderr() -> None:
    """Started with fd 2 closed, /dev/null in stderr's place, as the module's rules say;
    else nothing."""
    if sys.stderr is not None:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.fstat(2)
    except OSError:  # the number is still free: /dev/null takes it
        if devnull != 2:
            os.dup2(devnull, 2)
            os.close(devnull)
            devnull = 2
    sys.stderr = open(devnull, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115


def _nowhere() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _unread(fd: int) -> bool:
    """The reader of ``fd`` (a pipe, a socket) went away: asks without writing, and without
    waiting."""
    if not hasattr(select, "poll"):
        return False
    poller = select.poll()
    try:
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def _say_dropped(exc: OSError) -> None:
    log.warning(
        "stderr can no longer be written (%s); what is written to it is dropped from now on",
        exc.strerror or exc,
    )
