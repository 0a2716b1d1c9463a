"""What the terminal answerer says once a form is sent is true of each revision: at
2025-11-25 the answer is the response to the server's request and goes at once ("Sent.");
at 2026-07-28 it goes with the retried tools/call, after the person is told, and that
retry may still fail, so the line says it is going with the retry. ``mcp-elicit call --ui
terminal`` on a pseudo-terminal, the form server started over stdio behind it."""

from __future__ import annotations

import json
import sys

import pytest
from cli.pty_session import ENTER

from ui.test_terminal_pty import asking, in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}, "required": ["name"]}


@pytest.mark.parametrize(
    ("revision", "said"),
    [
        ("2025-11-25", "Sent."),
        ("2026-07-28", "Answered. It goes to the server with the retry of tools/call form."),
    ],
)
def test_sending_a_form_says_how_the_answer_travels(revision: str, said: str) -> None:
    with in_a_terminal(*asking("Your name?", SCHEMA), "--protocol", revision) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Name >")
        pty.send("Ada" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect(said)
        pty.expect(json.dumps({"action": "accept", "content": {"name": "Ada"}}, sort_keys=True))
        assert pty.wait() == 0
        screen = pty.screen
    after = screen[screen.index("Enter: send") :]
    if revision == "2026-07-28":  # nothing claims the answer arrived before the retry carried it
        assert "Sent." not in after, after
