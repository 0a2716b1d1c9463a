"""Going back a field, and a field's description at its prompt, in a real terminal
(``in_a_terminal``): Shift-Tab on a terminal drawn on, the typed word ``!b`` on a dumb one."""

from __future__ import annotations

import sys

import pytest
from cli.pty_session import CTRL_U, ENTER

from ui.test_terminal_pty import DUMB_FORM, asking, in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

SHIFT_TAB = "\x1b[Z"
FORM = {
    "type": "object",
    "properties": {
        "n": {
            "type": "integer",
            "title": "Guests",
            "description": "You included",
            "minimum": 1,
            "maximum": 5,
        },
        "who": {"type": "string", "title": "Name", "description": "As on your card"},
    },
    "required": ["n", "who"],
}


def test_shift_tab_goes_back_a_field_in_a_real_terminal() -> None:
    with in_a_terminal(*asking("Who comes?", FORM)) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("You included")  # the field's description, again above its prompt
        pty.expect("Guests >")
        pty.send("2" + ENTER)
        pty.expect("As on your card")
        pty.expect("Shift-Tab: back")
        pty.expect("Name >")
        pty.send("Ada" + SHIFT_TAB)
        pty.expect("You included")
        pty.expect("Guests > 2")  # its answer, to change
        pty.send(CTRL_U + "3" + ENTER)
        pty.expect("Name > Ada")  # what was typed there before going back
        pty.send(" L" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3, "who": "Ada L"}}')
        assert pty.wait() == 0


def test_a_typed_word_goes_back_a_field_on_a_dumb_terminal() -> None:
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="dumb") as pty:
        pty.expect("!c: cancel >")
        pty.send(ENTER)
        pty.expect("Guests >")
        pty.send("3" + ENTER)
        pty.expect("Enter: next · !b: back · !d: decline · !c: cancel")
        pty.expect("Size (optional) [Small] >")
        pty.send("!b" + ENTER)
        pty.expect("Guests [3] >")
        pty.send("4" + ENTER)
        pty.expect("Size (optional) [Small] >")
        pty.send(ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 4, "size": "s"}}')
        assert pty.wait() == 0


def test_a_typed_word_at_the_first_field_says_why_and_an_extra_bang_answers_it() -> None:
    # "!b" at the first field went nowhere and was taken for the answer (shown so at the
    # review, sent so); it is refused, saying why, and "!!b" answers "!b".
    form = {
        "type": "object",
        "properties": {"nick": {"type": "string", "title": "Nick"}},
        "required": ["nick"],
    }
    with in_a_terminal(*asking("Who?", form), term="dumb") as pty:
        pty.expect("!c: cancel >")
        pty.send(ENTER)
        pty.expect("Enter: next · !d: decline · !c: cancel · !!b, !!d, !!c: answer !b, !d, !c")
        pty.expect("Nick >")
        pty.send("!b" + ENTER)
        pty.expect("!b goes back a field, and there is none to go back to from here;")
        pty.expect("to answer !b itself, type !!b")
        pty.expect("Nick >")  # asked again
        pty.send("!!b" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"nick": "!b"}}')
        assert pty.wait() == 0


def test_a_typed_word_at_a_field_changed_from_the_review_says_why_truly() -> None:
    # A field changed from the review does not go back; "!b" there said "there is none
    # before this one to go back to", at the second of two fields.
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="dumb") as pty:
        pty.expect("!c: cancel >")
        pty.send(ENTER)
        pty.expect("Guests >")
        pty.send("3" + ENTER)
        pty.expect("Size (optional) [Small] >")
        pty.send(ENTER)
        pty.expect("Enter: send")
        pty.send("2" + ENTER)
        pty.expect("Size (optional) [Small] >")
        pty.send("!b" + ENTER)
        said = pty.expect("Size (optional) [Small] >")  # asked again
        assert "!b goes back a field, and there is none to go back to from here" in said, said
        pty.send("2" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3, "size": "l"}}')
        assert pty.wait() == 0
