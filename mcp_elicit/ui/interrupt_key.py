"""The terminal's interrupt key (Ctrl-C, whichever ``stty intr`` names) read as a key, not
sent as SIGINT, while a question is asked, so that it cancels the question wherever the
person is: at a prompt, or between two (``held``).

Rules: held, the terminal is in its own line editing (cooked mode) with ``ISIG`` off and the
key made an end of line (``VEOL``): typed at a plain prompt, it ends the line, which the
prompt takes for a cancel (``ui.plain_lines``); typed between two prompts, it waits in the
terminal as such a line, which the next prompt reads and takes so (a drawn prompt, in raw
mode, reads it as the Ctrl-C key it binds to cancel). Ctrl-Z and Ctrl-\\ signal nothing
then either, as at a drawn prompt. A ``kill -INT`` still stops the program. Holders of one
terminal at once (the question, and each plain prompt in it; two inputs may read one
terminal) share its held mode: the last one done gives the terminal the settings it had
before the first (each giving back what it found would leave the terminal held when the
first is not the last done). An input that is no terminal (a pipe) is only put in cooked
mode (``Input.cooked_mode``), and so is a terminal without an interrupt key; ``held`` then
gives None.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

try:
    import termios
except ImportError:  # Windows: no terminal settings to change
    termios = None  # type: ignore[assignment]

from prompt_toolkit.input import Input

__all__ = ["held", "waiting"]


def _terminal_mode(source: Input) -> list[Any] | None:
    """The terminal settings of ``source`` (``termios``), or None when it is no terminal."""
    if termios is None:  # no terminal settings here (Windows)
        return None
    try:
        return termios.tcgetattr(source.fileno())
    except (termios.error, NotImplementedError, OSError, ValueError):
        return None


@dataclass
class _Held:
    """A terminal held (``held``): its settings before, its interrupt key and how many hold it."""

    before: list[Any]
    key: bytes
    count: int = 0


#: The terminals held, by device (``os.fstat``: two inputs may read one terminal).
_holding: dict[tuple[int, int], _Held] = {}
_holding_lock = threading.Lock()


@contextlib.contextmanager
def held(source: Input) -> Iterator[str | None]:
    """``source``'s terminal held while the block runs (see the module docstring); gives the
    character its interrupt key puts in the input, or None when ``source`` is no terminal
    (or has no interrupt key) and is only in cooked mode."""
    before = _terminal_mode(source)
    key = before[6][termios.VINTR] if before is not None else None
    if before is None or not isinstance(key, bytes) or key in (b"", b"\0"):  # b"\0": none set
        with source.cooked_mode():
            yield None
        return
    fileno = source.fileno()
    found = os.fstat(fileno)
    terminal = (found.st_dev, found.st_ino)
    with _holding_lock:
        holding = _holding.get(terminal)
        if holding is None:
            mode = [*before[:6], list(before[6])]
            mode[0] = int(before[0]) | termios.ICRNL  # as Input.cooked_mode: Enter is a newline
            mode[3] = (int(before[3]) | termios.ECHO | termios.ICANON | termios.IEXTEN) & ~termios.ISIG
            mode[6][termios.VEOL] = key
            termios.tcsetattr(fileno, termios.TCSANOW, mode)
            holding = _holding[terminal] = _Held(before, key)
        holding.count += 1
    try:
        yield holding.key.decode("latin-1")
    finally:
        with _holding_lock:
            holding.count -= 1
            if holding.count == 0:
                del _holding[terminal]
                with contextlib.suppress(termios.error):  # a terminal gone (hung up) has no settings
                    termios.tcsetattr(fileno, termios.TCSANOW, holding.before)


def waiting(source: Input) -> bool:
    """Whether ``source`` has input to read now: in cooked mode, a whole line (one its
    interrupt key ended, while ``held``, included), or its end."""
    try:
        return bool(select.select([source.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return False
