"""The terminal answerer in a real terminal: ``mcp-elicit call ... --ui terminal`` runs on a
pseudo-terminal, the demo server over stdio behind it, and the test types the keys."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import pytest

from cli.helpers import TOMORROW, demo_stdio, url_server
from cli.pty_session import CTRL_C, CTRL_U, ENTER, ESC, PtySession

from support.procs import ROOT, cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

BACKSPACE = "\x7f"
CTRL_D = "\x04"
CTRL_N = "\x0e"


@contextlib.contextmanager
def terminal_call(*arguments: str, server: list[str]) -> Iterator[PtySession]:
    """``mcp-elicit call <arguments> --ui terminal -- <server>`` on a pseudo-terminal, closed after."""
    pty = PtySession([*cli(), "call", *arguments, "--ui", "terminal", "--", *server], cwd=ROOT)
    try:
        yield pty
    finally:
        pty.close()


@pytest.fixture
def session() -> Iterator[PtySession]:
    with terminal_call("book_table", "restaurant=noma", server=demo_stdio()) as pty:
        yield pty


def fill_the_form(pty: PtySession) -> None:
    pty.expect("Table bookings 1.0.0 asks")
    pty.expect("Booking a table at Noma, Copenhagen: how many, and when?")
    pty.expect("a whole number from 1 to 20")
    pty.expect("3. At the bar (bar)")
    pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
    pty.send(ENTER)
    pty.expect("Party size >")
    pty.send("25")
    pty.expect("Party size must be at most 20")  # checked as it is typed
    pty.send(ENTER + BACKSPACE + BACKSPACE + "2" + ENTER)
    pty.expect("Date >")
    pty.send("tomorrow")
    pty.expect("Date must be a date like")
    pty.send(CTRL_U + TOMORROW + ENTER)
    pty.expect("Seating (optional) >")
    pty.send(ENTER)  # the default, inside
    pty.expect("Dietary needs (optional) >")
    pty.send("vegan, 3" + ENTER)
    pty.expect("Your answers")
    pty.expect("Enter: send · 1-4: change an answer · d: decline · Esc: cancel >")


def test_fill_review_change_send_and_confirm(session: PtySession) -> None:
    fill_the_form(session)
    session.send("3" + ENTER)  # change the seating
    session.expect("Seating (optional) >")
    session.send(CTRL_U + "On the terrace" + ENTER)
    session.expect("On the terrace")
    session.expect("Enter: send")
    session.send(ENTER)
    session.expect("Answered.")  # 2026-07-28, call's default: the answer goes with the retry
    session.expect(f"Please confirm: Noma, Copenhagen, 2 people on {TOMORROW}, terrace, vegan, gluten-free")
    session.expect("Enter: fill in the form")
    session.send(ENTER)
    session.expect("Confirm >")
    session.send(ENTER)  # the default, yes
    session.expect("Enter: send · 1: change an answer")
    session.send(ENTER)
    session.expect(f"Booked #1: Noma, Copenhagen, 2 people on {TOMORROW}, terrace, vegan, gluten-free.")
    assert session.wait() == 0


def test_decline(session: PtySession) -> None:
    session.expect("Enter: fill in the form · d: decline")
    session.send("d" + ENTER)
    session.expect("Declined.")
    session.expect("No booking made at Noma, Copenhagen. Would another restaurant or another day suit you?")
    assert session.wait() == 0


def test_decline_after_review(session: PtySession) -> None:
    fill_the_form(session)
    session.send("d" + ENTER)
    session.expect("No booking made at Noma, Copenhagen.")
    assert session.wait() == 0


def test_ctrl_n_declines_at_a_field_whose_answer_is_refused(session: PtySession) -> None:
    session.expect("Enter: fill in the form")
    session.send(ENTER)
    session.expect("Party size >")
    session.send("x")
    session.expect("must be a whole number")
    session.send(CTRL_N)
    session.expect("Declined.")
    session.expect("No booking made at Noma, Copenhagen.")
    assert session.wait() == 0


def test_esc_cancels(session: PtySession) -> None:
    session.expect("Enter: fill in the form")
    session.send(ENTER)
    session.expect("Party size >")
    session.send("4")
    session.send(ESC, pause=0.8)
    session.expect("Cancelled.")
    session.expect("Booking not finished; ask me again when you are ready.")
    assert session.wait() == 0


def test_ctrl_c_cancels(session: PtySession) -> None:
    fill_the_form(session)
    session.send(CTRL_C)
    session.expect("Cancelled.")
    session.expect("Booking not finished; ask me again when you are ready.")
    assert session.wait() == 0


def test_ctrl_d_cancels(session: PtySession) -> None:
    session.expect("Enter: fill in the form")
    session.send(CTRL_D)
    session.expect("Cancelled.")
    session.expect("Booking not finished; ask me again when you are ready.")
    assert session.wait() == 0


def test_url_consent_in_a_real_terminal() -> None:
    with terminal_call("sign_in", "where=plain", server=url_server()) as pty:
        pty.expect("Sign-in demo 1.0.0 asks you to open a web page")
        pty.expect("https://accounts.example.com/signin?state=abc")
        pty.expect("Site: example.com")
        pty.expect("o: open it in your browser · d: decline · Esc: cancel >")
        pty.send("o" + ENTER)
        pty.expect("Could not start a browser here; open the address above yourself.")  # no display here
        pty.expect("Enter: I am done on the page · r: open it again · Esc: cancel >")
        pty.send(ENTER)
        pty.expect("sign-in: accept")
        assert pty.wait() == 0


def test_a_url_with_a_user_name_is_refused_in_a_real_terminal() -> None:
    with terminal_call("sign_in", "where=tricky", server=url_server()) as pty:
        pty.expect("https://bank.com@evil.example/login")
        pty.expect("(bank.com), which is not the site")
        pty.expect("This address will not be opened.")
        pty.expect("Enter or d: decline · Esc: cancel >")
        pty.send("o" + ENTER)  # no way to open it
        pty.expect("type Enter or 'd'")
        pty.send(CTRL_U + ENTER)
        pty.expect("sign-in: decline")
        assert pty.wait() == 0


def test_the_url_prompt_goes_away_when_the_server_says_the_step_is_finished() -> None:
    """2025-11-25: notifications/elicitation/complete ends the "I am done" prompt; nobody
    presses Enter."""
    with terminal_call("sign_in_elsewhere", "--protocol", "2025-11-25", server=url_server()) as pty:
        pty.expect("o: open it in your browser · d: decline · Esc: cancel >")
        pty.send("o" + ENTER)
        pty.expect("The server says the step on the page is finished.")
        pty.expect("sign-in: accept")
        assert pty.wait() == 0


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_two_questions_asked_at_once_come_one_after_the_other(revision: str) -> None:
    """At 2025-11-25 the server sends both requests together; the terminal shows one prompt
    at a time (two at once used to fail the second: "Application is already running")."""
    with terminal_call("two_questions", "--protocol", revision, server=url_server()) as pty:
        for field, value in (("First", "Ada"), ("Last", "Lovelace")):
            pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
            pty.send(ENTER)
            pty.expect(f"{field} >")
            pty.send(value + ENTER)
            pty.expect("Enter: send")
            pty.send(ENTER)
            pty.expect("Sent." if revision == "2025-11-25" else "Answered.")
        pty.expect("names: Ada Lovelace")
        assert pty.wait() == 0


def test_alt_keys_edit_the_line_and_only_esc_alone_cancels() -> None:
    """A terminal sends Alt+b as Esc then b: it moves back a word (it used to cancel the
    question, Esc being bound eagerly); Esc alone still cancels."""
    with terminal_call("two_questions", server=url_server()) as pty:
        pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
        pty.send(ENTER)
        pty.expect("First >")
        pty.send("da")
        pty.send(ESC + "b")  # Alt+b: to the start of the word
        pty.send("A" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect("Answered.")
        pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
        pty.send(ENTER)
        pty.expect("Last >")
        pty.send("Lovelace")
        pty.send(ESC, pause=0.8)
        pty.expect("Cancelled.")
        pty.expect("names: Ada")
        assert pty.wait() == 0


def test_a_byte_that_is_not_utf8_is_refused_at_the_prompt_not_a_crash() -> None:
    """A paste in another encoding (Latin-1 "é") reaches the prompt as a lone surrogate; it
    used to be sent and end the run with "TypeError: str is not valid UTF-8"."""
    with terminal_call("two_questions", server=url_server()) as pty:
        for field, value in (("First", "Ada"), ("Last", "Lovelace")):
            pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
            pty.send(ENTER)
            pty.expect(f"{field} >")
            if field == "First":
                os.write(pty.master, b"Ad\xe9" + ENTER.encode())
                pty.expect("has a character that is not text (<U+DCE9>); type it again")
                pty.send(CTRL_U)
            pty.send(value + ENTER)
            pty.expect("Enter: send")
            pty.send(ENTER)
            pty.expect("Answered.")
        pty.expect("names: Ada Lovelace")
        assert pty.wait() == 0


def test_sigterm_while_a_form_is_shown_stops_the_call_and_its_server(session: PtySession) -> None:
    """SIGTERM reaches the command while the terminal answerer waits for keys: it ends as an
    interrupted call (143), the terminal given back, the stdio server stopped."""
    import signal
    import subprocess
    import time

    session.expect("Enter: fill in the form")
    session.send(ENTER)
    session.expect("Party size >")
    children = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(session.proc.pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    assert children, "the stdio server is a child of the command"
    session.proc.send_signal(signal.SIGTERM)
    assert session.wait(timeout=20) == 143, session.screen
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in children), "the server outlived the call"


def test_a_call_timed_out_after_a_person_left_a_page_unfinished_says_to_finish_it() -> None:
    """2025-11-25: the person opens the page and says it is done without finishing it, so
    the server's request still waits for the page and the call runs out of --timeout. The
    note speaks to that person (finish the page, or decline it), not of a script's --answers."""
    server = [*cli(), "serve", str(ROOT / "tests" / "cli" / "slow_page_server.py")]
    argv = ["use_key", "--protocol", "2025-11-25", "--timeout", "3"]
    with terminal_call(*argv, server=server) as pty:
        pty.expect("o: open it in your browser · d: decline · Esc: cancel >")
        pty.send("o" + ENTER)
        pty.expect("Enter: I am done on the page")
        pty.send(ENTER)
        assert pty.wait(timeout=30) == 3, pty.screen
        said = " ".join(pty.screen.split())
        assert (
            "The server may be waiting for the page at 127.0.0.1 that was accepted to be finished: "
            "accepting a page does not finish it. Finish the page, or decline it." in said
        ), pty.screen[-3000:]
        assert "--answers" not in said, pty.screen[-3000:]


def test_serve_over_stdio_started_by_hand_says_what_it_is_and_how_to_try_it() -> None:
    """In a terminal, ``serve`` over stdio shows nothing of its own otherwise: a person who
    ran it to see it work is told what talks to it; Ctrl-C stops it (130)."""
    pty = PtySession(
        [*cli(), "serve", "examples/demo_server.py", "--store", "memory://"], cwd=ROOT, controlling=True
    )
    try:
        pty.expect("mcp-elicit: serving 'bookings' over stdio: an MCP client starts this command")
        pty.expect("Try it with: mcp-elicit check -- mcp-elicit serve examples/demo_server.py")
        pty.expect("Ctrl-C stops it.")
        pty.send(CTRL_C)
        assert pty.wait() == 130
    finally:
        pty.close()
