"""The prompter's plain lines (a terminal it cannot draw on), driven through prompt_toolkit's
pipe input with what it writes captured; the same on a real pseudo-terminal is in
test_terminal_pty.py. And the SIGINT noting the terminal answerer asks under."""

from __future__ import annotations

import asyncio
import io
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from mcp_elicit.ui.prompts import Back, Cancelled, Declined, Prompter
from mcp_elicit.ui.terminal import interrupts_noted

pytestmark = pytest.mark.anyio


@contextmanager
def plain(typed: str = "") -> Iterator[tuple[Prompter, io.StringIO, PipeInput]]:
    """A prompter on a dumb terminal, ``typed`` already sent, and what it writes."""
    written = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(typed)
        prompter = Prompter(input=pipe, output=Vt100_Output(written, lambda: Size(40, 80), term="dumb"))
        yield prompter, written, pipe


def at_most_5(text: str) -> str | None:
    return None if text.isdigit() and int(text) <= 5 else "Guests must be at most 5"


async def test_a_dumb_terminal_makes_a_plain_prompter_naming_typed_keys() -> None:
    with plain() as (prompter, _, _):
        assert prompter.plain
        assert (prompter.cancel_key, prompter.decline_key) == ("!c", "!d")
    with create_pipe_input() as pipe:
        drawn = Prompter(input=pipe, output=Vt100_Output(io.StringIO(), lambda: Size(40, 80), term="xterm"))
        assert not drawn.plain
        assert (drawn.cancel_key, drawn.decline_key) == ("Esc", "Ctrl-N")


async def test_a_refused_line_says_why_and_asks_again_without_an_escape() -> None:
    with plain("9\r3\r") as (prompter, written, _):
        async with asyncio.timeout(5):
            text = await prompter.ask("Guests > ", check=at_most_5, toolbar="required · Enter: next")
    assert text == "3"
    assert written.getvalue() == ("required · Enter: next\nGuests > Guests must be at most 5\nGuests > ")
    assert "\x1b" not in written.getvalue()


async def test_lines_typed_ahead_answer_the_prompts_after() -> None:
    with plain("one\ntwo\r\nthree\r") as (prompter, _, _):
        async with asyncio.timeout(5):
            assert [await prompter.ask("> ") for _ in range(3)] == ["one", "two", "three"]


async def test_an_empty_line_takes_the_default_shown_in_brackets() -> None:
    with plain("\r") as (prompter, written, _):
        async with asyncio.timeout(5):
            assert await prompter.ask("Size (optional) > ", default="s") == "s"
    assert written.getvalue() == "Size (optional) [s] > "


async def test_typed_words_decline_where_declining_is_allowed_and_cancel_anywhere() -> None:
    with plain(" !D \r!d\r!!d\r!cancel\r") as (prompter, _, _):
        async with asyncio.timeout(5):
            with pytest.raises(Declined):
                await prompter.ask("> ", declinable=True)
            # where there is no declining, "!d" is refused (said why), "!!d" answers "!d"
            assert await prompter.ask("> ") == "!d"
            with pytest.raises(Cancelled):
                await prompter.ask("> ", declinable=True)


async def test_the_end_of_input_cancels() -> None:
    with plain("half a line") as (prompter, _, pipe):
        pipe.close()
        async with asyncio.timeout(5):
            with pytest.raises(Cancelled):
                await prompter.ask("> ")


async def test_an_interrupt_is_noted_while_asking_and_handled_as_before() -> None:
    handled: list[int] = []

    def before(signum: int, frame: FrameType | None) -> None:
        handled.append(signum)

    previous = signal.signal(signal.SIGINT, before)
    try:
        with interrupts_noted() as outer, interrupts_noted() as inner:
            signal.raise_signal(signal.SIGINT)
        with interrupts_noted() as later:
            pass
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (outer, inner, later, handled) == ([signal.SIGINT], [signal.SIGINT], [], [signal.SIGINT])


def test_a_question_asked_in_another_thread_leaves_the_main_threads_noting_alone() -> None:
    # Only the main thread may set a signal handler. A question asked in another thread
    # (its own event loop) while one is asked in the main thread, and ending after it, must
    # neither fail ("signal only works in main thread") nor note the main thread's SIGINT.
    def before(signum: int, frame: FrameType | None) -> None:
        pass

    entered, main_done = threading.Event(), threading.Event()
    outcome: list[object] = []

    def other_thread() -> None:
        try:
            with interrupts_noted() as seen:
                entered.set()
                main_done.wait()
            outcome.append(seen)
        except BaseException as exc:  # reported to the test's thread
            outcome.append(exc)
        finally:
            entered.set()

    previous = signal.signal(signal.SIGINT, before)
    worker = threading.Thread(target=other_thread)
    try:
        with interrupts_noted() as here:
            worker.start()
            entered.wait()
            signal.raise_signal(signal.SIGINT)
        main_done.set()
        worker.join()
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        main_done.set()
        worker.join()
        signal.signal(signal.SIGINT, previous)
    assert (here, outcome) == ([signal.SIGINT], [[]])


@contextmanager
def drawn(typed: str = "") -> Iterator[Prompter]:
    """A prompter on a terminal it draws on (xterm), ``typed`` already sent."""
    with create_pipe_input() as pipe:
        pipe.send_text(typed)
        yield Prompter(input=pipe, output=Vt100_Output(io.StringIO(), lambda: Size(40, 80), term="xterm"))


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("1,2\r", "1,2"),  # the first key replaced the default: "cheese1,2" was refused
        ("\r", "cheese"),  # Enter alone keeps it
        ("\x7fy\r", "cheesy"),  # an edit first (Backspace) edits it
        ("\x1b[Ds\r", "cheesse"),  # and so does a move (Left)
        ("x\x7fab\r", "ab"),  # once replaced, the line is edited as any other
    ],
    ids=["typing replaces", "enter keeps", "backspace edits", "left edits", "then edits"],
)
async def test_a_first_key_replaces_the_default_and_an_edit_keeps_it(typed: str, answer: str) -> None:
    with drawn(typed) as prompter:
        assert await asyncio.wait_for(prompter.ask("Toppings > ", default="cheese"), 10) == answer


async def test_ctrl_c_in_a_line_cancels_and_what_follows_it_is_kept() -> None:
    # From an input that is no terminal, Ctrl-C's byte ends the line and cancels, as the key
    # does at a terminal in line mode (test_terminal_pty_dumb_keys.py); what came after it
    # answers the next prompt.
    with plain("Ad\x03next\r") as (prompter, written, _):
        async with asyncio.timeout(5):
            with pytest.raises(Cancelled):
                await prompter.ask("Name > ", declinable=True)
            assert await prompter.ask("Again > ") == "next"
    assert written.getvalue() == "Name > \nAgain > "


SHIFT_TAB = "\x1b[Z"


async def test_shift_tab_goes_back_with_what_the_line_held_where_going_back_is_allowed() -> None:
    with drawn("Ad" + SHIFT_TAB) as prompter:
        with pytest.raises(Back) as went:
            await asyncio.wait_for(prompter.ask("Name > ", back=True), 10)
    assert went.value.text == "Ad"
    with drawn("Ad" + SHIFT_TAB + "am\r") as prompter:  # where it is not, the key does nothing
        assert await asyncio.wait_for(prompter.ask("Name > "), 10) == "Adam"
    assert prompter.back_key == "Shift-Tab"


async def test_a_draft_shown_again_is_edited_not_replaced_by_the_first_key() -> None:
    with drawn("am\r") as prompter:
        assert await asyncio.wait_for(prompter.ask("Name > ", default="Ad", draft=True), 10) == "Adam"


async def test_a_typed_word_goes_back_on_a_dumb_terminal_where_going_back_is_allowed() -> None:
    with plain(" !B \r!back\r") as (prompter, _, _):
        assert prompter.back_key == "!b"
        async with asyncio.timeout(5):
            with pytest.raises(Back) as went:
                await prompter.ask("> ", back=True)
            assert went.value.text is None  # the word is all the line held
            with pytest.raises(Back):
                await prompter.ask("> ", back=True)


async def test_a_typed_word_where_it_does_nothing_says_why_and_asks_again() -> None:
    # "!b" at a form's first field (nothing to go back to), "!d" at a prompt that is not
    # declined so: both were taken for the answer, and shown so at the review.
    with plain("!b\r!D\rAda\r") as (prompter, written, _):
        async with asyncio.timeout(5):
            assert await prompter.ask("Name > ") == "Ada"
    assert written.getvalue() == (
        "Name > !b goes back a field, and there is none to go back to from here;"
        " to answer !b itself, type !!b\n"
        "Name > !d does not decline here: this prompt takes the choices it names;"
        " to answer !d itself, type !!d\n"
        "Name > "
    )


async def test_a_typed_word_where_it_does_nothing_and_is_no_answer_only_says_why() -> None:
    with plain("!b\r3\r") as (prompter, written, _):
        async with asyncio.timeout(5):
            assert await prompter.ask("Guests > ", check=at_most_5) == "3"
    assert "!b goes back a field, and there is none to go back to from here\n" in written.getvalue()
    assert "!!b" not in written.getvalue()  # "!b" is no number: no use saying how to answer it


@pytest.mark.parametrize(
    ("typed", "answer"),
    [("!!b", "!b"), (" !!B ", " !B "), ("!!back", "!back"), ("!!!d", "!!d"), ("!!c", "!c"), ("!!x", "!!x")],
)
async def test_an_extra_bang_gives_a_typed_word_as_the_answer(typed: str, answer: str) -> None:
    with plain(typed + "\r") as (prompter, _, _):
        assert prompter.literal_hint == "!!b, !!d, !!c: answer !b, !d, !c"
        async with asyncio.timeout(5):
            assert await prompter.ask("> ", declinable=True, back=True) == answer
