"""SIGHUP while a prompt reads, in a real terminal (``in_a_terminal``): its default action
ended the program where it stood, the terminal left as the prompt had set it (raw and
without echo on a terminal drawn on; Ctrl-C an end of line on a dumb one). It stops the
call as SIGTERM does: the prompt gives the terminal back, and the exit is 129."""

from __future__ import annotations

import signal
import sys
import termios

import pytest
from cli.pty_session import ENTER

from ui.test_terminal_pty import DUMB_FORM, asking, in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_sighup_at_a_prompt_gives_the_terminal_back_and_exits_129(term: str) -> None:
    with in_a_terminal(*asking("How many?", DUMB_FORM), term=term) as pty:
        pty.expect("cancel >")
        pty.send(ENTER)
        pty.expect("Guests")
        pty.send("2")
        pty.expect("2")
        changed = termios.tcgetattr(pty.master)  # as the prompt set it, while it reads
        if term == "dumb":
            assert not changed[3] & termios.ISIG
        else:
            assert not changed[3] & (termios.ICANON | termios.ECHO)
        pty.proc.send_signal(signal.SIGHUP)
        assert pty.wait() == 129, pty.screen
        shown = pty.screen
        attributes = termios.tcgetattr(pty.master)
    assert "Hung up (SIGHUP); nothing was sent." in shown, shown
    assert "Traceback" not in shown, shown
    lflag = attributes[3]
    assert lflag & termios.ICANON and lflag & termios.ECHO and lflag & termios.ISIG
    assert attributes[6][termios.VEOL] != attributes[6][termios.VINTR]
