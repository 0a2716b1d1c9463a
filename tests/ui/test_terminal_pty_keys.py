"""Leaving a question, and the terminal it is asked on, in a real terminal
(``in_a_terminal``): Ctrl-C and Ctrl-D at every prompt of a URL step and at a form's
review cancel (the server gets ``cancel``, no traceback); colour follows ``NO_COLOR``; a
terminal made narrower while a prompt reads wraps what is said under it again."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import struct
import sys
import termios

import pytest
from cli.pty_session import CTRL_C, ENTER

from ui.test_terminal_pty import CTRL_D, asking, in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

PAGE = {"mode": "url", "message": "Sign in", "url": "https://example.com/", "elicitationId": "e1"}
REFUSED = {**PAGE, "url": "https://user@example.com/"}
GUESTS = {
    "type": "object",
    "properties": {"n": {"type": "integer", "title": "Number of guests", "minimum": 1, "maximum": 5}},
    "required": ["n"],
}
#: An SGR sequence that sets a colour (foreground, background; 16, 256 or true colours).
COLOUR = re.compile(r"\x1b\[[0-9;]*(?<![0-9])(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


@pytest.mark.parametrize("key", [CTRL_C, CTRL_D], ids=["ctrl-c", "ctrl-d"])
@pytest.mark.parametrize(
    ("params", "before"),
    [
        (PAGE, []),  # at the consent
        (PAGE, [("d: decline", "o" + ENTER), ("I am done on the page", "")]),  # once opened
        (REFUSED, []),  # a URL it refuses, shown with why
    ],
    ids=["consent", "opened", "refused"],
)
def test_a_key_that_cancels_at_a_url_prompt_sends_cancel(
    params: dict[str, str], before: list[tuple[str, str]], key: str
) -> None:
    with in_a_terminal("ask", f"params={json.dumps(params)}") as pty:
        for shown, keys in before:
            pty.expect(shown)
            pty.send(keys)
        pty.expect("Esc: cancel >")
        pty.send(key)
        pty.expect("Cancelled.")
        pty.expect('{"action": "cancel"}')
        assert pty.wait() == 0
        shown = pty.screen
    assert "Traceback" not in shown


@pytest.mark.parametrize("key", [CTRL_C, CTRL_D], ids=["ctrl-c", "ctrl-d"])
def test_a_key_that_cancels_at_the_review_sends_cancel_not_the_answers(key: str) -> None:
    with in_a_terminal(*asking("How many?", GUESTS)) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Number of guests >")
        pty.send("3" + ENTER)
        pty.expect("Enter: send")
        pty.send(key)
        pty.expect("Cancelled.")
        pty.expect('{"action": "cancel", "content": null}')
        assert pty.wait() == 0


@pytest.mark.parametrize(("environment", "coloured"), [(("-u", "NO_COLOR"), True), (("NO_COLOR=1",), False)])
def test_colour_is_left_out_when_no_color_is_set(environment: tuple[str, ...], coloured: bool) -> None:
    with in_a_terminal(*asking("How many?", GUESTS), environment=environment) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Number of guests >")
        pty.send("9")
        pty.expect("must be at most 5")
        pty.send("\x7f3" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect("Answered.")  # 2026-07-28: it goes with the retry
        assert pty.wait() == 0
        raw = pty.raw
    assert bool(COLOUR.search(raw)) is coloured


def test_a_terminal_made_narrower_at_a_prompt_wraps_the_refusal_to_its_new_width() -> None:
    with in_a_terminal(*asking("How many?", GUESTS), columns=80) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Number of guests >")
        fcntl.ioctl(pty.master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 24, 0, 0))
        os.killpg(pty.proc.pid, signal.SIGWINCH)
        pty.send("9")
        pty.expect("Number of guests must be\nat most 5")  # 24 columns: wrapped between words
        pty.send("\x7f3" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3}}')
        assert pty.wait() == 0


#: A C locale that Python leaves ASCII (no UTF-8 mode, no coercion to C.UTF-8).
ASCII_ONLY = ("LANG=C", "LC_ALL=C", "PYTHONUTF8=0", "PYTHONCOERCECLOCALE=0")


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_an_ascii_only_terminal_is_asked_in_ascii_and_sends_the_servers_letters_whole(term: str) -> None:
    # The keys a prompt names were written with "?" for the "·" between them, "Enter: fill
    # in the form ? d: decline ? Esc: cancel", and a label lost its letters to "?" too.
    params = {
        "mode": "form",
        "message": "Réservez 🎉 déjà",
        "requestedSchema": {
            "type": "object",
            "properties": {"n": {"type": "string", "title": "Hôte 🎉", "enum": ["crème", "brûlée 🍮"]}},
            "required": ["n"],
        },
    }
    cancel = "!c" if term == "dumb" else "Esc"
    with in_a_terminal("ask", f"params={json.dumps(params)}", term=term, environment=ASCII_ONLY) as pty:
        pty.expect(f"Enter: fill in the form | d: decline | {cancel}: cancel >")
        pty.send(ENTER)
        pty.expect("H\\xf4te \\U0001f389 >")  # its letters by their codes, as in the frame above
        pty.send("2" + ENTER)
        pty.expect(f"Enter: send | 1: change an answer | d: decline | {cancel}: cancel >")
        pty.send(ENTER)
        pty.expect("Answered.")  # 2026-07-28: it goes with the retry
        assert pty.wait() == 0
        raw = pty.raw
    assert raw.isascii()
    assert " ? " not in pty.screen, pty.screen


def test_the_question_and_the_review_on_a_terminal_20_columns_wide_break_no_word() -> None:
    # Their three columns, padded for a wide terminal, left four columns for a label at
    # 20: "Numb", "er", "of", "gues", "ts"; and "require", "d" beside it.
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "title": "Number of guests"},
            "s": {"type": "string", "title": "Seating", "enum": ["by-the-window", "terrace"]},
        },
        "required": ["n", "s"],
    }
    with in_a_terminal(*asking("How many?", schema), columns=20) as pty:
        question = pty.expect("cancel >")
        pty.send(ENTER)
        pty.expect("guests >")
        pty.send("3" + ENTER)
        pty.expect("Seating >")
        pty.send("1" + ENTER)
        review = pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3, "s": "by-the-window"}}')
        assert pty.wait() == 0
    words = question.replace("│", " ").split()
    for word in ("Number", "guests", "required", "Seating"):
        assert word in words, question
    rows = [row.strip() for row in review.splitlines()]
    assert "1  Number of guests" in rows, review  # the answer on the line below
    assert "by-the-window" in rows, review


def test_the_review_shows_no_keys_of_the_field_answered_before_it() -> None:
    # The field's keys under its prompt ("Enter: next · Ctrl-N: decline") stayed under the
    # review's prompt too, where Enter sends and Ctrl-N does nothing: a prompt asked with
    # no toolbar kept the one before it.
    with in_a_terminal(*asking("How many?", GUESTS), positions=True) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Number of guests >")
        pty.expect("Ctrl-N: decline", timeout=5)
        pty.send("3" + ENTER)
        pty.expect("Enter: send · 1: change an answer · d: decline · Esc: cancel >")
        pty.send("x")  # a refusal under the prompt, once the terminal said where its cursor is
        pty.expect("type 1 to change the answer")
        pty.send("\x7f" + ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3}}')
        assert pty.wait() == 0
        shown = pty.screen
    under_review = shown[shown.index("Enter: send · 1") : shown.index("Answered.")]
    assert "Enter: next" not in under_review and "Ctrl-N" not in under_review, under_review
