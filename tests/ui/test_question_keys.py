"""Ctrl-C from one prompt of a question to the next (``Prompter.question``,
``ui.interrupt_key``) on a real pseudo-terminal, for a terminal drawn on and a dumb one:
typed between two prompts it cancels the question at the next, as at a prompt; typed after
the last, it is the program's SIGINT, once the terminal is given back."""

from __future__ import annotations

import asyncio
import io
import os
import select
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import pytest

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
]

if sys.platform != "win32":
    import termios

    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input.vt100 import Vt100Input
    from prompt_toolkit.output.vt100 import Vt100_Output

    from mcp_elicit.ui.prompts import Cancelled, Prompter


@contextmanager
def prompter_on_a_terminal(term: str) -> Iterator[tuple[Prompter, int, int]]:
    """A prompter reading a new pseudo-terminal (``term``: drawn on, or dumb), its master
    and slave sides."""
    master, slave = os.openpty()
    try:
        with os.fdopen(os.dup(slave), "r") as reading:
            output = Vt100_Output(io.StringIO(), lambda: Size(40, 80), term=term)
            yield Prompter(input=Vt100Input(reading), output=output), master, slave
    finally:
        os.close(slave)
        os.close(master)


def typed(master: int, slave: int, keys: bytes) -> None:
    """Type ``keys``, and wait until the terminal has a line of them to read."""
    os.write(master, keys)
    assert select.select([slave], [], [], 10)[0], "the terminal never had the line"


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_ctrl_c_between_two_prompts_cancels_the_question_at_the_next(term: str) -> None:
    with prompter_on_a_terminal(term) as (prompter, master, slave):
        before = termios.tcgetattr(slave)
        async with asyncio.timeout(10):
            with prompter.question():
                os.write(master, b"Ada\r")
                assert await prompter.ask("First > ") == "Ada"
                # between the prompts, the key is no signal (it was: the call stopped)
                assert not termios.tcgetattr(slave)[3] & termios.ISIG
                typed(master, slave, b"\x03")
                with pytest.raises(Cancelled):
                    await prompter.ask("Last > ")
        assert termios.tcgetattr(slave) == before


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_ctrl_c_after_a_questions_last_prompt_is_the_programs_interrupt(term: str) -> None:
    seen: list[bool] = []

    def interrupted(signum: int, frame: FrameType | None) -> None:
        seen.append(bool(termios.tcgetattr(slave)[3] & termios.ISIG))  # the terminal given back?

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        with prompter_on_a_terminal(term) as (prompter, master, slave):
            async with asyncio.timeout(10):
                with prompter.question():
                    os.write(master, b"Ada\r")
                    assert await prompter.ask("Name > ") == "Ada"
                    assert not seen
                    typed(master, slave, b"more\x03")  # once the question has its answer
                assert seen == [True]
                os.write(master, b"next\r")  # what waited with the key was dropped
                assert await prompter.ask("Then > ") == "next"
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_what_is_typed_after_a_question_is_kept_for_the_next_prompt(term: str) -> None:
    with prompter_on_a_terminal(term) as (prompter, master, slave):
        async with asyncio.timeout(10):
            with prompter.question():
                os.write(master, b"Ada\r")
                assert await prompter.ask("Name > ") == "Ada"
                typed(master, slave, b"next\r")
            assert await prompter.ask("Then > ") == "next"


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_ctrl_c_for_a_question_withdrawn_meanwhile_does_not_cancel_the_next(term: str) -> None:
    # A Ctrl-C typed between two prompts waits for the next; when the server takes the
    # question back first, it was left waiting, and cancelled the next question at once.
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with prompter_on_a_terminal(term) as (prompter, master, slave):
            async with asyncio.timeout(10):
                between = asyncio.Event()

                async def withdrawn() -> None:
                    with prompter.question():
                        os.write(master, b"Ada\r")
                        assert await prompter.ask("First > ") == "Ada"
                        typed(master, slave, b"\x03")
                        between.set()
                        await asyncio.Event().wait()  # until the server takes it back

                asking = asyncio.ensure_future(withdrawn())
                await between.wait()
                asking.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await asking
                with prompter.question():
                    os.write(master, b"Bob\r")
                    assert await prompter.ask("Next > ") == "Bob"
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not seen  # nor is it the program's interrupt: the question it was for is gone


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_what_is_typed_ahead_of_a_question_withdrawn_is_kept_for_the_next(term: str) -> None:
    with prompter_on_a_terminal(term) as (prompter, master, slave):
        async with asyncio.timeout(10):
            between = asyncio.Event()

            async def withdrawn() -> None:
                with prompter.question():
                    typed(master, slave, b"Bob\r")  # ahead of a prompt that never comes
                    between.set()
                    await asyncio.Event().wait()

            asking = asyncio.ensure_future(withdrawn())
            await between.wait()
            asking.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asking
            with prompter.question():
                assert await prompter.ask("Next > ") == "Bob"
