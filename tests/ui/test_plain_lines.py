"""Plain lines (``ui.plain_lines``) on a real pseudo-terminal: the terminal's settings while
a plain prompt reads, and after."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

if sys.platform != "win32":
    import termios

    from prompt_toolkit.input.vt100 import Vt100Input
    from prompt_toolkit.output import DummyOutput

    from mcp_elicit.ui.plain_lines import Cancelled, PlainLines


class _Written(DummyOutput):
    """An output that keeps what is written, and says when it is."""

    def __init__(self) -> None:
        self.text = ""
        self.changed = asyncio.Event()

    def write(self, data: str) -> None:
        self.text += data
        self.changed.set()

    async def shows(self, text: str) -> None:
        while text not in self.text:
            self.changed.clear()
            await self.changed.wait()


@contextmanager
def _terminal() -> Iterator[tuple[int, int]]:
    """A new pseudo-terminal: its master and slave sides, open while the block runs."""
    master, slave = os.openpty()
    try:
        yield master, slave
    finally:
        os.close(slave)
        os.close(master)


@contextmanager
def _asking(slave: int) -> Iterator[tuple[PlainLines, _Written]]:
    """Plain lines reading the terminal through an input of their own."""
    output = _Written()
    with os.fdopen(os.dup(slave), "r") as reading:
        yield PlainLines(Vt100Input(reading), output, str), output


async def _ask(lines: PlainLines) -> str:
    return await lines.ask("> ", "", None, None, declinable=False, back=False)


def test_two_prompts_reading_at_once_give_the_terminal_back_as_it_was() -> None:
    # Each prompt took the settings it found and gave them back as it ended: the second,
    # asked while the first read, found the first's (no SIGINT from Ctrl-C) and, ending
    # last, left the terminal so, its Ctrl-C a character for good.
    async def run(slave: int) -> None:
        with _asking(slave) as (first, first_shown), _asking(slave) as (second, second_shown):
            asking_first = asyncio.ensure_future(_ask(first))
            await first_shown.shows("> ")
            asking_second = asyncio.ensure_future(_ask(second))
            await second_shown.shows("> ")
            asking_first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asking_first
            # the second still reads: its Ctrl-C still cancels it, not stops the program
            assert not termios.tcgetattr(slave)[3] & termios.ISIG
            asking_second.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asking_second

    with _terminal() as (_, slave):
        before = termios.tcgetattr(slave)
        asyncio.run(run(slave))
        after = termios.tcgetattr(slave)
    assert after == before
    assert after[3] & termios.ISIG


def test_ctrl_c_cancels_a_plain_prompt_and_the_terminal_is_given_back() -> None:
    async def run(master: int, slave: int) -> None:
        with _asking(slave) as (lines, shown):
            asking = asyncio.ensure_future(_ask(lines))
            await shown.shows("> ")
            os.write(master, b"half\x03")
            with pytest.raises(Cancelled):
                await asking

    with _terminal() as (master, slave):
        before = termios.tcgetattr(slave)
        asyncio.run(run(master, slave))
        assert termios.tcgetattr(slave) == before
