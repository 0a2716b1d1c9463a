"""The signals that stop a client command (``call``, ``prompt``, ``read``, ``check``) as
Ctrl-C does: SIGTERM (``timeout``, a cancelled CI job, a supervisor) and SIGHUP (the
terminal closed, ``kill -HUP``).

Rules: while a client command runs (``stopping``), each becomes a SIGINT, so whoever takes
that one takes it (``asyncio.run``, which cancels the request; the terminal answerer's
prompt, through the event loop, which gives the terminal its settings back), else
``KeyboardInterrupt``; a stdio server is stopped either way. The command then exits 128 +
the signal (143, 129: ``exit_code``) instead of Ctrl-C's 130, and ``--json`` says which
(``said``). SIGHUP's default action ended the process where it stood: a prompt's terminal
was left raw, without echo. A SIGHUP that is ignored (``nohup``) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

__all__ = ["STOPPING", "exit_code", "interrupt", "said", "stopping", "terminated"]

#: The signals that stop a client command as Ctrl-C does, and what ``--json`` says of each.
STOPPING = {signal.SIGTERM: "terminated (SIGTERM)"}
if hasattr(signal, "SIGHUP"):  # not on Windows
    STOPPING[signal.SIGHUP] = "hung up (SIGHUP)"

#: The signals of ``STOPPING`` the running client command was stopped by, first first.
terminated: list[int] = []


def interrupt(signum: int, frame: FrameType | None) -> None:
    """A stop signal: noted, then raised as SIGINT (see the module docstring)."""
    terminated.append(signum)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # a background job of a script
        signal.default_int_handler(signal.SIGINT, frame)
    signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def stopping() -> Iterator[None]:
    """While the block runs, ``STOPPING``'s signals go to ``interrupt``; an ignored SIGHUP
    stays ignored, and every handler is given back after."""
    previous = {signum: signal.getsignal(signum) for signum in STOPPING}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN or signum == signal.SIGTERM:
            signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def exit_code() -> int:
    """The exit code of a command stopped by a signal: 128 + the first stop signal, else
    Ctrl-C's 130."""
    return 128 + terminated[0] if terminated else 130


def said() -> str:
    """What stopped the command, for ``--json``."""
    return STOPPING[signal.Signals(terminated[0])] if terminated else "interrupted (Ctrl-C)"
