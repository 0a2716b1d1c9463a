"""A line about another request (it waits for a page) comes while the person is typing
an answer, in a real terminal (``cli.pty_session``): it goes above the prompt, which is
shown again below it with what was typed so far, and the answer is what the person
typed, on a drawn terminal and on a dumb one alike (``two_requests.py``)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from cli.pty_session import ENTER, PtySession

from support.procs import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

TWO_REQUESTS = Path(__file__).resolve().parent / "two_requests.py"
WAITING = "… waiting for the page at pay.example.com to be finished"


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_what_was_typed_is_shown_again_below_the_line_and_kept(term: str) -> None:
    pty = PtySession(["env", f"TERM={term}", sys.executable, str(TWO_REQUESTS)], cwd=ROOT)
    try:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Name >")
        pty.send("ali")
        pty.expect("ali")  # echoed: the terminal holds it
        os.kill(pty.proc.pid, signal.SIGUSR1)
        pty.expect(WAITING)
        pty.expect("Name > ali", timeout=10)  # below the line, with what was typed
        pty.send("ce" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"name": "alice"}}')
        assert pty.wait() == 0
    finally:
        pty.close()
