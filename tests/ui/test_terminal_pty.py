"""The terminal answerer as a person uses it: ``mcp-elicit call ... --ui terminal`` on a
pseudo-terminal, ``form_server.py`` served over stdio behind it, the test typing the keys
and reading what is drawn (``cli.pty_session``)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli.pty_session import CTRL_U, ENTER, PtySession

from support.procs import ROOT, cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

BACKSPACE, CTRL_D, CTRL_N = "\x7f", "\x04", "\x0e"

FORM_SERVER = Path(__file__).resolve().parent / "form_server.py"


class AnsweringPtySession(PtySession):
    """A terminal that answers a request for the cursor's position (CPR), as terminals do:
    prompt_toolkit shows a prompt's bottom toolbar only once it knows the rows below."""

    def _read(self, timeout: float) -> bool:
        before = len(self.raw)
        more = super()._read(timeout)
        for _ in range(self.raw.count("\x1b[6n", max(before - 3, 0))):
            os.write(self.master, b"\x1b[20;1R")
        return more


@contextmanager
def in_a_terminal(
    tool: str,
    *arguments: str,
    columns: int = 120,
    positions: bool = False,
    term: str = "xterm-256color",
    terminfo: Path | None = None,
    environment: tuple[str, ...] = (),
    controlling: bool = False,
) -> Iterator[PtySession]:
    """``mcp-elicit call TOOL ARGUMENTS --ui terminal`` on a pseudo-terminal ``columns`` wide
    of type ``term`` (``$TERM``), ``form_server.py`` served over stdio behind it; one that
    answers requests for the cursor's position when ``positions``; terminal types are
    looked up in ``terminfo`` too when given; ``environment`` is more of ``env``'s
    arguments (``NAME=VALUE`` sets one, ``-u NAME`` unsets one); the terminal is the
    program's controlling terminal when ``controlling`` (its Ctrl-C may then be SIGINT)."""
    server = [*cli(), "serve", str(FORM_SERVER)]
    command = [
        "env",
        *environment,
        f"TERM={term}",
        *([f"TERMINFO={terminfo}"] if terminfo is not None else []),
        f"COLUMNS={columns}",
        *cli(),
        "call",
        tool,
        *arguments,
        "--ui",
        "terminal",
        "--",
        *server,
    ]
    if positions:  # PtySession tells prompt_toolkit not to ask
        pty: PtySession = AnsweringPtySession(["env", "-u", "PROMPT_TOOLKIT_NO_CPR", *command], cwd=ROOT)
    else:
        pty = PtySession(command, cwd=ROOT, controlling=controlling)
    try:
        # what prompt_toolkit draws follows the terminal's size, read at each drawing
        fcntl.ioctl(pty.master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        yield pty
    finally:
        pty.close()


def asking(message: str, schema: dict[str, Any]) -> tuple[str, str, str]:
    """The arguments of the ``form`` tool."""
    return ("form", f"message={message}", f"schema={json.dumps(schema)}")


def test_a_refusal_is_shown_whole_on_a_narrow_terminal() -> None:
    # The line under the prompt that says why an answer is refused was one row: on a
    # terminal 40 columns wide a long label left only "Number of guests at the party tonight
    # pl", never why.
    label = "Number of guests at the party tonight please"
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "title": label, "minimum": 1, "maximum": 5}},
        "required": ["n"],
    }
    with in_a_terminal(*asking("How many?", schema), columns=40) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Enter: fill in the form")  # drawn again as the prompt ends
        pty.expect("Number of guests")
        pty.expect(">")
        pty.send("9")
        pty.expect("must be at most 5", timeout=5)
        pty.send(BACKSPACE + "3" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3}}')
        assert pty.wait() == 0


def test_the_keys_under_a_field_are_shown_whole_on_a_narrow_terminal() -> None:
    # The toolbar under a field's prompt is the only place Ctrl-N (decline there) is
    # named; it was one row, cut at 40 columns after "required · a whole number from 1 to 5 ·".
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 5}},
        "required": ["n"],
    }
    with in_a_terminal(*asking("How many?", schema), columns=40, positions=True) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        # a terminal that reports its cursor gets the keys under the prompt only, not above
        assert "Ctrl-N" not in pty.expect("Guests >")
        pty.expect("required · a whole number from 1 to 5")
        pty.expect("Ctrl-N: decline", timeout=5)
        pty.expect("Esc: cancel")
        pty.send(CTRL_N)
        pty.expect("Declined.")
        pty.expect('{"action": "decline", "content": null}')
        assert pty.wait() == 0


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_an_interrupt_signal_at_a_prompt_stops_the_call_without_a_traceback(revision: str) -> None:
    # SIGINT from outside the terminal's keys (kill -INT, a stop button, Ctrl-C reaching the
    # process group while the terminal is not in raw mode) while a field's prompt reads:
    # prompt_toolkit raised KeyboardInterrupt inside the task answering the round, and
    # asyncio printed "Task exception was never retrieved" with its traceback. It stops
    # the call as SIGINT does anywhere else: exit 130, nothing printed but the prompt's end.
    schema = {"type": "object", "properties": {"n": {"type": "string", "title": "Name"}}}
    with in_a_terminal(*asking("Who?", schema), "--protocol", revision) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Name (optional) >")
        pty.send("Ad")
        os.killpg(pty.proc.pid, signal.SIGINT)
        assert pty.wait() == 130
        shown = pty.screen
    assert "Traceback" not in shown and "never retrieved" not in shown and "Error" not in shown
    # the person stopped it: the server withdrew nothing
    assert "withdrawn" not in shown
    # at 2025-11-25 over stdio the question came with no request of its own: the client
    # answers it cancel as it abandons the call (nothing else tells the server)
    sent = "the server is told it was cancelled" if revision == "2025-11-25" else "nothing was sent"
    assert f"Interrupted; {sent}." in shown


def test_an_interrupt_at_a_dumb_terminals_prompt_says_so_on_a_line_of_its_own() -> None:
    # The terminal's Ctrl-C (SIGINT) while a line is half typed: "Interrupted; nothing was
    # sent." was written straight after it, "Name (optional) > AdInterrupted; ...".
    schema = {"type": "object", "properties": {"n": {"type": "string", "title": "Name"}}}
    with in_a_terminal(*asking("Who?", schema), term="dumb") as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Name (optional) >")
        pty.send("Ad")
        pty.expect("Ad")
        os.killpg(pty.proc.pid, signal.SIGINT)
        assert pty.wait() == 130
        shown = pty.screen
    assert "Name (optional) > Ad\nInterrupted; nothing was sent.\n" in shown, shown


def test_the_keys_under_a_field_are_shown_on_a_terminal_that_does_not_say_where_its_cursor_is() -> None:
    # prompt_toolkit draws a prompt's bottom toolbar only once the terminal has said where
    # its cursor is (a cursor-position report): on one that does not, the only place
    # Ctrl-N (decline at a field) is named never showed. It is printed above the prompt.
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 5}},
        "required": ["n"],
    }
    with in_a_terminal(*asking("How many?", schema)) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("required · a whole number from 1 to 5 · Enter: next · Ctrl-N: decline · Esc: cancel")
        pty.expect("Guests >")
        pty.send(CTRL_N)
        pty.expect("Declined.")
        pty.expect('{"action": "decline", "content": null}')
        assert pty.wait() == 0


DUMB_FORM = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 5},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
    },
    "required": ["n"],
}


def test_a_dumb_terminal_is_asked_in_plain_lines() -> None:
    # TERM=dumb (an Emacs shell, a CI log, script): no colour, no cursor movement, one
    # question per line, the keys a person can type there named, every answer checked.
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="dumb") as pty:
        pty.expect("Enter: fill in the form · d: decline · !c: cancel >")
        pty.send(ENTER)
        pty.expect("required · a whole number from 1 to 5 · Enter: next · !d: decline · !c: cancel")
        pty.expect("Guests >")
        pty.send("9" + ENTER)
        pty.expect("Guests must be at most 5")
        pty.expect("Guests >")  # asked again
        pty.send("x" + BACKSPACE + "3" + ENTER)  # the terminal's own line editing
        pty.expect("Size (optional) [Small] >")  # the default, taken by an empty line
        pty.send(ENTER)
        pty.expect("Enter: send · 1-2: change an answer · d: decline · !c: cancel >")
        pty.send("2" + ENTER)
        pty.expect("Size (optional) [Small] >")
        pty.send("Large" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3, "size": "l"}}')
        assert pty.wait() == 0
        raw = pty.raw
    assert "\x1b" not in raw, raw


@pytest.mark.parametrize(
    ("typed", "said", "action"),
    [
        ("!d" + ENTER, "Declined.", "decline"),
        ("!c" + ENTER, "Cancelled.", "cancel"),
        (CTRL_D, "Cancelled.", "cancel"),  # end of input, on an empty line
    ],
)
def test_a_dumb_terminal_declines_or_cancels_at_a_field_by_typing(typed: str, said: str, action: str) -> None:
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="dumb") as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Guests >")
        pty.send(typed)
        pty.expect(said)
        pty.expect(f'{{"action": "{action}", "content": null}}')
        assert pty.wait() == 0
        raw = pty.raw
    assert "\x1b" not in raw, raw


def test_who_asks_and_what_is_shown_whole_on_a_narrow_terminal() -> None:
    # The frame's title says who asks and what for; it was cut at the frame's edge, so at
    # 40 columns a URL question said "Form tests 1.0.0 asks you to open a" (and a server
    # with a longer title lost "asks" too). A title too wide for the frame is now its
    # first line, wrapped.
    params = {"mode": "url", "message": "Sign in", "url": "https://example.com/", "elicitationId": "e1"}
    with in_a_terminal("ask", f"params={json.dumps(params)}", columns=40) as pty:
        pty.expect("Esc: cancel >")
        pty.send("d" + ENTER)
        pty.expect("Declined.")
        assert pty.wait() == 0
        shown = " ".join(pty.screen.replace("│", " ").split())
    assert "Form tests 1.0.0 asks you to open a web page" in shown


def test_the_keys_a_prompt_names_wrap_between_them_on_a_narrow_terminal() -> None:
    # At 30 columns the form's first prompt broke inside a word, "Enter: fill in the form
    # · d: d" then "ecline · Esc: cancel >": it now wraps between the keys it names.
    params = {"mode": "form", "message": "Who?", "requestedSchema": {"type": "object", "properties": {}}}
    with in_a_terminal("ask", f"params={json.dumps(params)}", columns=30) as pty:
        pty.expect("Esc: cancel >")
        pty.send("d" + ENTER)
        pty.expect("Declined.")
        assert pty.wait() == 0
        shown = pty.screen
    assert "Enter: fill in the form\nd: decline · Esc: cancel >" in shown, shown


EVERY_KIND = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "site": {"type": "string", "title": "Site", "format": "uri"},
        "day": {"type": "string", "title": "Day", "format": "date"},
        "when": {"type": "string", "title": "When", "format": "date-time"},
        "qty": {"type": "integer", "title": "Qty", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1},
        "ok": {"type": "boolean", "title": "Ok", "default": True},
        "color": {"type": "string", "title": "Color", "enum": ["red", "green"]},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
        },
    },
    "required": ["name", "email", "day", "qty", "color", "tags"],
}


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_every_kind_of_field_refuses_what_does_not_fit_beside_it_and_keeps_the_rest(revision: str) -> None:
    # (prompt, refused, why, then accepted): the refusal shows under the field's prompt,
    # the field is asked again, and what was answered before stays.
    steps = [
        ("Name >", "x", "Name must be at least 2 characters", "abcde"),
        ("Email >", "nope", "Email has no @ between a name and a domain", "a@b.co"),
        ("Site (optional) >", "not a uri", "Site has characters an address cannot hold", ""),
        ("Day >", "2026-13-01", "Day names a day that does not exist", "2026-12-01"),
        ("When (optional) >", "2026-12-01 10:00", "When must be a date and time", "2026-12-01T10:00:00Z"),
        ("Qty >", "0", "Qty must be at least 1", "3"),
        ("Ratio (optional) >", "1.5", "Ratio must be at most 1", "0.5"),
        ("Ok (optional) >", "maybe", "Ok must be yes or no: type y or n", "no"),
        ("Color >", "blue", "'blue' is not one of the choices", "Green"),
        ("Size (optional) >", "xl", "'xl' is not one of the choices", "Large"),
        ("Tags >", "a,b,c", "Tags must have at most 2 choices", "1, 3"),
    ]
    with in_a_terminal(*asking("Every kind", EVERY_KIND), "--protocol", revision) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        for prompt, refused, why, accepted in steps:
            pty.expect(prompt)
            pty.send(CTRL_U + refused)
            pty.expect(why)
            pty.send(ENTER + CTRL_U + accepted + ENTER)  # Enter does nothing while refused
        pty.expect("Your answers")
        pty.expect("Enter: send · 1-11: change an answer")
        pty.send(ENTER)
        pty.expect("Sent." if revision == "2025-11-25" else "Answered.")
        content = {
            "name": "abcde",
            "email": "a@b.co",
            "day": "2026-12-01",
            "when": "2026-12-01T10:00:00Z",
            "qty": 3,
            "ratio": 0.5,
            "ok": False,
            "color": "green",
            "size": "l",
            "tags": ["a", "c"],
        }
        pty.expect(json.dumps({"action": "accept", "content": content}, sort_keys=True))
        assert pty.wait() == 0


def test_a_servers_escapes_reach_the_terminal_only_shown() -> None:
    # In the message, a title, a description, an option's title and value, a default, a
    # URL: none may clear the screen, set the window's title, hide text or move the cursor.
    esc = "\x1b"
    evil = [f"{esc}[2J", f"{esc}]0;pwned\x07", f"{esc}[8m", f"{esc}[1A", "\x9b2J", "\u202e"]
    params = {
        "mode": "form",
        "message": "Hi" + "".join(evil) + " שלום\r\nX\x08Y",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "n": {
                    "type": "string",
                    "title": "Name" + evil[2],
                    "description": evil[3],
                    "default": evil[0],
                },
                "c": {
                    "type": "string",
                    "title": "Pick" + evil[1],
                    "oneOf": [
                        {"const": "a" + evil[4], "title": "A" + evil[0]},
                        {"const": "b", "title": evil[5]},
                    ],
                },
            },
            "required": ["c"],
        },
    }
    with in_a_terminal("ask", f"params={json.dumps(params)}") as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("(optional) >")
        pty.send(ENTER)
        pty.expect("> ")
        pty.send("1" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect("Answered.")  # 2026-07-28: it goes with the retry
        assert pty.wait() == 0
        raw = pty.raw
    for sequence in evil:
        assert sequence not in raw, sequence
    for shown in ("Hi\\x1b[2J\\x1b]0;pwned\\x07\\x1b[8m\\x1b[1A\\x9b2J<U+202E>", "Name\\x1b[8m", "A\\x1b[2J"):
        assert shown in pty.screen, shown


@pytest.mark.skipif(shutil.which("tic") is None, reason="needs tic to describe a terminal type")
def test_a_terminal_without_cursor_addressing_is_asked_in_plain_lines(tmp_path: Path) -> None:
    # Not called dumb, but terminfo says it cannot move its cursor: drawn on, it showed
    # garbage as a dumb one did.
    source = tmp_path / "nocup.src"
    source.write_text("nocup|a terminal without cursor addressing,\n\tam,\n\tcols#80,\n\tcr=\\r, ind=\\n,\n")
    subprocess.run(["tic", "-o", str(tmp_path / "terminfo"), str(source)], check=True)
    with in_a_terminal(*asking("How many?", DUMB_FORM), term="nocup", terminfo=tmp_path / "terminfo") as pty:
        pty.expect("Enter: fill in the form · d: decline · !c: cancel >")
        pty.send(ENTER)
        pty.expect("Guests >")
        pty.send("3" + ENTER)
        pty.expect("Size (optional) [Small] >")
        pty.send(ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('{"action": "accept", "content": {"n": 3, "size": "s"}}')
        assert pty.wait() == 0
        raw = pty.raw
    assert "\x1b" not in raw, raw


def test_a_dumb_terminal_is_asked_to_open_a_page_in_plain_lines() -> None:
    params = {"mode": "url", "message": "Sign in", "url": "https://example.com/", "elicitationId": "e1"}
    with in_a_terminal("ask", f"params={json.dumps(params)}", term="dumb") as pty:
        pty.expect("o: open it in your browser · d: decline · !c: cancel >")
        pty.send("x" + ENTER)
        pty.expect("type 'o' or 'd'")  # refused, and asked again
        pty.expect("!c: cancel >")
        pty.send("o" + ENTER)
        pty.expect("open the address above yourself")  # no browser in the test's terminal
        pty.expect("Enter: I am done on the page · r: open it again · !c: cancel >")
        pty.send(ENTER)
        pty.expect('"action": "accept"')
        assert pty.wait() == 0
        raw = pty.raw
    assert "\x1b" not in raw, raw
