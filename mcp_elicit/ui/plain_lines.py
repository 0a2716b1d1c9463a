"""Plain lines: how a ``Prompter`` asks on a terminal it cannot draw on, and how any prompt
ends other than with an answer (``Cancelled``, ``Declined``, ``Back``).

Rules: no escape sequence is written and no cursor moved. The toolbar is printed, then the
prompt with its default in brackets (``Size (optional) [s] >``; an empty line takes it),
and a whole line is read in the terminal's own line editing (cooked mode); a line the
check refuses is answered with the reason on the next line and the prompt again. Keys a
person may not be able to send there are typed words: ``!c`` (or ``!cancel``) cancels,
``!d`` (or ``!decline``) declines where Ctrl-N would, ``!b`` (or ``!back``) goes back
where Shift-Tab would (``CANCEL_WORDS``, ``DECLINE_WORDS``, ``BACK_WORDS``). A word typed
where it does nothing (``!b`` at a form's first field or the review, ``!d`` where declining is a choice
of the prompt's own) is refused, saying why, and the prompt asked again, never taken for an
answer; an extra "!" before a word gives the word itself as the answer (``!!b`` answers
``!b``; ``LITERAL_HINT`` says so in a field's hints). End of input
still cancels, and so does Ctrl-C (the terminal's interrupt key, whichever ``stty intr``
names), as at a drawn prompt: while a plain prompt asks, the terminal is held
(``ui.interrupt_key``: the key ends the line instead of sending SIGINT), so the key cancels
the question and a ``kill -INT`` still stops the program. From an input that is no
terminal (a pipe), Ctrl-C's byte (``\\x03``) in a line cancels the same.

Output written while a plain prompt reads (``above``): its line is ended first and written
again after, with what was typed so far, taken from the terminal, which holds a line until
Enter (it hands it over out of cooked mode), so the person does not type again what they
see gone; the terminal's line editing no longer reaches that part (the answer can be
changed at the form's review).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterator

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from mcp_elicit.ui.interrupt_key import held, waiting

__all__ = [
    "BACK_WORDS",
    "CANCEL_WORDS",
    "DECLINE_WORDS",
    "LITERAL_HINT",
    "Back",
    "Cancelled",
    "Declined",
    "PlainLines",
]

#: What a plain prompt takes, alone on its line, for Esc (cancel), Ctrl-N (decline) and
#: Shift-Tab (back).
CANCEL_WORDS = ("!c", "!cancel")
DECLINE_WORDS = ("!d", "!decline")
BACK_WORDS = ("!b", "!back")
_WORDS = frozenset((*CANCEL_WORDS, *DECLINE_WORDS, *BACK_WORDS))
#: What a plain prompt's line ends with for Ctrl-C, unless the terminal names another key.
_INTERRUPT = "\x03"
_LINE_END = re.compile(r"\r\n?")


#: What a plain field prompt's hints say of a typed word given as an answer (``_literal``).
LITERAL_HINT = "!!b, !!d, !!c: answer !b, !d, !c"


def _literal(line: str) -> str:
    """The answer a line gives: one with an extra "!" before a typed word (``!!b``,
    ``!!!b``, ``!!decline``) gives the line without its first "!" (``!b``, ``!!b``,
    ``!decline``), so that every word can still be given as an answer; any other line is
    itself ("!!x" too)."""
    word = line.strip().lower()
    if word.startswith("!!") and "!" + word.lstrip("!") in _WORDS:
        return line.replace("!", "", 1)
    return line


def _not_here(word: str, check: Callable[[str], str | None] | None) -> str:
    """Why ``word`` (a typed word for decline or back) does nothing at a prompt that does
    not offer it; and, where it would be a good answer, how to give it as one."""
    if word in BACK_WORDS:
        said = f"{word} goes back a field, and there is none to go back to from here"
    else:
        said = f"{word} does not decline here: this prompt takes the choices it names"
    if check is None or check(word) is None:
        said += f"; to answer {word} itself, type !{word}"
    return said


class Cancelled(Exception):
    """The person pressed Esc, Ctrl-C, or Ctrl-D on an empty line (end of input)."""


class Declined(Exception):
    """The person pressed Ctrl-N at a prompt that may be declined."""


class Back(Exception):
    """The person pressed Shift-Tab at a prompt that may go back; ``text`` is what the line
    held then (a draft to show again when the prompt is asked again), None for a typed
    word (``BACK_WORDS``: the word is all the line held)."""

    def __init__(self, text: str | None = None) -> None:
        super().__init__(text)
        self.text = text


class PlainLines:
    """Asks for one line at a time in plain lines on ``input`` and ``output``; ``shown`` is
    a text as the output's encoding can show it."""

    def __init__(self, input: Input, output: Output, shown: Callable[[str], str]) -> None:
        self.input = input
        self.output = output
        self._shown = shown
        self._typed = ""  # input read past the line asked for
        self._interrupt = _INTERRUPT  # the key that ends a line, cancelling
        self._ended = False  # the input is at its end
        self._showing: str | None = None  # the prompt waiting for its line
        self._arrived: asyncio.Future[None] | None = None  # what a read waits on

    async def ask(
        self,
        said: str,
        default: str,
        check: Callable[[str], str | None] | None,
        toolbar: str | None,
        *,
        declinable: bool,
        back: bool,
    ) -> str:
        """``Prompter.ask`` in plain lines: ``said`` and ``toolbar`` as written."""
        # Held before the prompt shows: a Ctrl-C typed as soon as it shows cancels too
        with held(self.input) as key:
            self._interrupt = key or _INTERRUPT
            return await self._ask(said, default, check, toolbar, declinable=declinable, back=back)

    @contextlib.contextmanager
    def above(self) -> Iterator[None]:
        """Around output written while a prompt may be reading: the prompt's line is ended
        first, and it is written again after, with what was typed so far."""
        shown = self._showing
        if shown is not None:
            self._held()
            self._say("")
        try:
            yield
        finally:
            if shown is not None and self._showing is shown:
                typed, newline, _ = self._typed.partition("\n")
                self.output.write(shown + typed + newline)
                self.output.flush()

    def interrupted(self, key: str) -> bool:
        """After a question's last prompt: whether the interrupt key (``key``) was typed
        since. What waits in the input is taken; when the key is in it, all of it is dropped
        (as a terminal drops what waits when it sends SIGINT), else it is kept for the next
        prompt."""
        while waiting(self.input) and self._take() and not self._ended:
            pass
        if key not in self._typed:
            return False
        self._typed = ""
        return True

    def _say(self, text: str) -> None:
        self.output.write(self._shown(text) + "\n")
        self.output.flush()

    async def _ask(
        self,
        said: str,
        default: str,
        check: Callable[[str], str | None] | None,
        toolbar: str | None,
        *,
        declinable: bool,
        back: bool,
    ) -> str:
        if toolbar is not None:
            self._say(toolbar)
        head, mark, tail = said.rpartition(">")
        shown = self._shown(f"{head}[{default}] {mark}{tail}" if default and mark else said)
        while True:
            self.output.write(shown)
            self.output.flush()
            self._showing = shown
            try:
                line = await self._line()
            except (EOFError, Cancelled):  # after what the terminal echoed ("^C")
                self._say("")
                raise Cancelled() from None
            except asyncio.CancelledError:  # the line being typed ends before what is said next
                self._say("")
                raise
            finally:
                self._showing = None
            word = line.strip().lower()
            if word in CANCEL_WORDS:
                raise Cancelled()
            if word in DECLINE_WORDS and declinable:
                raise Declined()
            if word in BACK_WORDS and back:
                raise Back()
            if word in DECLINE_WORDS or word in BACK_WORDS:  # not here: said why, asked again
                self._say(_not_here(word, check))
                continue
            text = _literal(line) if word else default
            problem = check(text) if check is not None else None
            if problem is None:
                return text
            self._say(problem)

    async def _line(self) -> str:
        """The next line typed (the terminal's own line editing); ``EOFError`` at the end,
        ``Cancelled`` for a line ended by the interrupt key (Ctrl-C)."""
        while (end := self._line_end()) is None:
            if self._ended:
                raise EOFError
            await self._read()
        line, ending, self._typed = self._typed[:end], self._typed[end], self._typed[end + 1 :]
        if ending != "\n":
            raise Cancelled()
        return line

    def _line_end(self) -> int | None:
        """Where the first line in ``_typed`` ends (a newline, or the interrupt key), if it does."""
        ends = [at for at in (self._typed.find("\n"), self._typed.find(self._interrupt)) if at >= 0]
        return min(ends) if ends else None

    async def _read(self) -> None:
        source = self.input
        arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def ready() -> None:
            if self._take() and not arrived.done():
                arrived.set_result(None)

        self._arrived = arrived
        try:
            with source.attach(ready):  # held (``ask``)
                await arrived
        finally:
            self._arrived = None

    def _take(self) -> bool:
        """Add what the input holds now to ``_typed``: whether anything came (or its end)."""
        source = self.input
        keys = [*source.read_keys(), *source.flush_keys()]
        self._typed += _LINE_END.sub("\n", "".join(key.data for key in keys))
        self._ended = source.closed
        return bool(keys) or self._ended

    def _held(self) -> None:
        """Take the part of a line typed so far at a plain prompt, which a terminal in cooked
        mode keeps to itself until Enter: out of that mode for a moment, it hands it over.
        A whole line (or the end) taken with it wakes the prompt's read."""
        with self.input.raw_mode():
            while self._take() and not self._ended:
                pass
        arrived = self._arrived
        if arrived is not None and not arrived.done() and (self._line_end() is not None or self._ended):
            arrived.set_result(None)
