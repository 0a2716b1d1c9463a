"""Ctrl-C between two prompts of one question, in a real terminal (``in_a_terminal``): while
the browser starts, after "o" at a page's question and before "I am done" is asked. It was
the terminal's SIGINT there and stopped the call (exit 130); at a prompt it cancels the
question. It now cancels the question there too, on a terminal drawn on and a dumb one."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest
from cli.pty_session import CTRL_C, ENTER

from ui.test_terminal_pty import in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

PAGE = {"mode": "url", "message": "Sign in", "url": "https://example.com/", "elicitationId": "e1"}

#: A browser that says it starts, then stays until the test lets it go (its ``release`` FIFO).
BROWSER = """#!/bin/sh
echo "a browser starts on $1"
read line < "$(dirname "$0")/release"
"""


def _release(fifo: Path) -> None:
    """Let the browser go, if it still waits."""
    with contextlib.suppress(OSError):  # ENXIO: nobody reads it any more
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_ctrl_c_while_the_browser_starts_cancels_the_question(tmp_path: Path, term: str) -> None:
    browser = tmp_path / "browser"
    browser.write_text(BROWSER, encoding="utf-8")
    browser.chmod(0o755)
    os.mkfifo(tmp_path / "release")
    try:
        with in_a_terminal(
            "ask",
            f"params={json.dumps(PAGE)}",
            term=term,
            environment=(f"BROWSER={browser}",),
            controlling=True,  # the terminal's Ctrl-C may be a SIGINT, as at a person's
        ) as pty:
            pty.expect("o: open it in your browser")
            pty.send("o" + ENTER)
            pty.expect("a browser starts on https://example.com/")
            pty.send(CTRL_C)  # no prompt reads: the next one takes it
            pty.expect("Enter: I am done on the page")
            pty.expect("Cancelled.")
            pty.expect('{"action": "cancel"}')
            assert pty.wait() == 0
            shown = pty.screen
    finally:
        _release(tmp_path / "release")
    assert "Interrupted" not in shown and "Traceback" not in shown, shown
