"""stdio, client side: the server's process as the operating system sees it: how it is
signalled (its whole process group, on POSIX), how its end is said, and its pipes watched
for its exit.

Rules: a signal goes to the server's process group (``start_new_session``), so that no
helper it started outlives it; one that left the group is signalled alone. An end is said
as a person reads it: an exit code, or the signal that killed it, and a code of 128 + a
signal's number is said to be how a shell reports that signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Final

__all__ = ["POSIX", "Watched", "how_it_ended", "signal_group", "stop_started"]

POSIX: Final = os.name == "posix"


def signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    """Signal the server and, on POSIX, every process of its group (helpers it started,
    the real server behind a wrapper such as ``npx`` or ``sh -c``), so none outlives it."""
    if POSIX:
        try:
            os.killpg(proc.pid, sig)
            return
        except (ProcessLookupError, PermissionError):  # it left the group: signal it alone
            pass
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)


async def stop_started(
    proc: asyncio.subprocess.Process, transport: asyncio.SubprocessTransport, exited: asyncio.Event
) -> None:
    """A process started for a transport closed meanwhile: killed with its group, its exit
    waited for (SIGKILL is not refused), its pipes closed, even if the wait is cut short."""
    try:
        if proc.returncode is None and not exited.is_set():
            signal_group(proc, signal.SIGKILL if POSIX else signal.SIGTERM)
            await exited.wait()
    finally:
        transport.close()


def how_it_ended(code: int) -> str:
    """The process's end as a person reads it: its exit code, or (a negative return code,
    on POSIX) the signal that ended it, which the server did not choose. On POSIX, 128 + a
    signal's number is how a shell or a launcher in front of the server reports that
    signal ending the process it ran (the OOM killer's SIGKILL is 137): said so."""
    if code >= 0:
        shown = _signal_name(code - 128) if POSIX and code > 128 else None
        if shown is None:
            return f"exited with code {code}"
        return (
            f"exited with code {code} (128 + {code - 128}: how a shell or launcher reports {shown} "
            "ending the process it ran)"
        )
    shown = _signal_name(-code)
    return f"was killed by signal {-code}" + (f" ({shown})" if shown is not None else "")


def _signal_name(number: int) -> str | None:
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


class Watched(asyncio.subprocess.SubprocessStreamProtocol):
    """The process's pipes as streams, and an event set as soon as the process exits."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2**16, loop=loop)
        self.exit = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exit.set()
