"""This process's stdout while it serves stdio: the protocol's alone.

Rules:

* The protocol writes to a duplicate of fd 1; fd 1 itself, until the server stops, is
  the write end of a pipe whose bytes a thread copies to the log (stderr), so ``print()``
  in a tool, a write to fd 1 or a child process's output goes to the log, not into the
  stream. With no stderr (started with fd 2 closed), fd 1 is /dev/null instead.
* Writing there never fails tool code: once the log's reader has gone away (EPIPE), what
  comes is read and dropped (said once, to a log that may still be heard elsewhere),
  rather than fd 1 pointing at a dead pipe that fails every ``print()`` with "Broken pipe".
* When the server stops, fd 1 is itself again and what was written before is copied out
  first (for at most ``DRAIN`` seconds: a child process still holding fd 1 is not waited
  for).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO

__all__ = ["DRAIN", "own_stdout", "relay", "start_relay"]

log = logging.getLogger("mcp_elicit.stdio")

#: How long the server's stop waits for what tool code wrote to reach the log (s).
DRAIN = 1.0


@contextlib.contextmanager
def own_stdout() -> Iterator[BinaryIO]:
    """fd 1 for the protocol alone, as the module's rules say; yields the protocol's stream."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    saved = os.dup(1)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    try:  # the log, as this process has it: started with fd 2 closed, sys.stderr is None
        log_fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        log_fd = -1
    copier: threading.Thread | None = None
    if log_fd >= 0:
        copier = start_relay(1, log_fd, _dropping, "mcp-elicit stdout")
    else:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    try:
        yield out
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, 1)  # the pipe's last writer here: the relay reads to its end
        os.close(saved)
        out.close()  # a no-op when the pipe transport closed it already
        if copier is not None:
            copier.join(DRAIN)


def start_relay(fd: int, target: int, dropping: Callable[[OSError], None], name: str) -> threading.Thread:
    """Make ``fd`` the write end of a new pipe and start the thread (``name``) that relays
    what comes on it to ``target`` (see :func:`relay`)."""
    source, sink = os.pipe()  # neither inherited; fd, its copy, is
    os.dup2(sink, fd)
    os.close(sink)
    copier = threading.Thread(target=relay, args=(source, target, dropping), name=name, daemon=True)
    copier.start()
    return copier


def relay(source: int, target: int, dropping: Callable[[OSError], None]) -> None:
    """Copy what comes on ``source`` to ``target`` until every writer has closed it; once
    ``target`` cannot be written (its reader went away), call ``dropping`` and read on,
    dropping what comes."""
    heard = True
    try:
        while data := os.read(source, 65536):
            while heard and data:
                try:
                    data = data[os.write(target, data) :]
                except OSError as exc:
                    heard = False
                    dropping(exc)
    except OSError:  # the pipe itself failed: nothing more can be copied
        pass
    finally:
        os.close(source)


def _dropping(exc: OSError) -> None:
    log.warning(
        "stderr can no longer be written (%s); what tool code writes to stdout is dropped from now on",
        exc.strerror or exc,
    )
