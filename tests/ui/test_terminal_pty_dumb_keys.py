"""Ctrl-C on a dumb terminal (``TERM=dumb``: plain lines in the terminal's own line editing), in
a real terminal (``in_a_terminal``): the key cancels the question wherever it is asked, as it does
on a terminal drawn on, while a SIGINT from outside still stops the program (in
test_terminal_pty.py)."""

from __future__ import annotations

import json
import sys
import termios

import pytest
from cli.pty_session import CTRL_C, ENTER

from ui.test_terminal_pty import DUMB_FORM, asking, in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

PAGE = {"mode": "url", "message": "Sign in", "url": "https://example.com/", "elicitationId": "e1"}


@pytest.mark.parametrize(
    "before",
    [
        [("!c: cancel >", "")],  # at the question: fill in, decline or cancel
        [("!c: cancel >", ENTER), ("Guests >", "Ad")],  # at a field, half an answer typed
        [("!c: cancel >", ENTER), ("Guests >", "3" + ENTER), ("[Small] >", ENTER), ("!c: cancel >", "")],
    ],
    ids=["question", "field", "review"],
)
def test_ctrl_c_at_a_dumb_terminals_form_cancels_the_question(before: list[tuple[str, str]]) -> None:
    # The terminal's Ctrl-C was its SIGINT: the call stopped (exit 130, "Interrupted"), where
    # a terminal drawn on sends the server "cancel" and the call goes on.
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="dumb") as pty:
        for shown, keys in before:
            pty.expect(shown)
            pty.send(keys)
        pty.send(CTRL_C)
        pty.expect("Cancelled.")
        pty.expect('{"action": "cancel", "content": null}')
        assert pty.wait() == 0
        shown = pty.screen
    assert "Interrupted" not in shown and "Traceback" not in shown
    assert "\nCancelled." in shown  # on a line of its own, after the "^C" the terminal echoed


def test_ctrl_c_at_a_dumb_terminals_page_prompt_cancels_it() -> None:
    with in_a_terminal("ask", f"params={json.dumps(PAGE)}", term="dumb") as pty:
        pty.expect("!c: cancel >")
        pty.send(CTRL_C)
        pty.expect("Cancelled.")
        pty.expect('{"action": "cancel"}')
        assert pty.wait() == 0


def test_the_terminal_is_left_as_it_was_after_a_plain_prompt() -> None:
    # The prompt turns the terminal's interrupt key into an end of line while it reads; the
    # terminal gets its own settings back: Ctrl-C after the question is SIGINT again.
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="dumb") as pty:
        pty.expect("!c: cancel >")
        pty.send("d" + ENTER)
        pty.expect('{"action": "decline", "content": null}')
        assert pty.wait() == 0
        attributes = termios.tcgetattr(pty.master)
    assert attributes[3] & termios.ISIG
    assert attributes[6][termios.VEOL] != attributes[6][termios.VINTR]
