"""The terminal answerer shows a server's texts bounded: a message, title, description,
choice, default or URL of megabytes is cut short where it is drawn ("…" and how long the
whole is), keeping what a person needs (a URL's host whole), at both revisions, in a real
terminal (``test_terminal_pty.in_a_terminal``)."""

from __future__ import annotations

import json
import sys

import pytest
from cli.pty_session import ENTER

from ui.test_terminal_pty import in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

REVISIONS = ["2025-11-25", "2026-07-28"]
#: What a server sends: two megabytes in each text.
BIG = 2_000_000
#: The most a question of such texts may draw (the whole of them drew megabytes).
DRAWN_MAX = 100_000


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_url_steps_huge_texts_are_cut_short_keeping_the_host_whole(revision: str) -> None:
    params = {
        "mode": "url",
        "message": "Sign in first <big> last words",
        "url": "https://accounts.example.com/start/<path>/end-of-path",
        "elicitationId": "e-<big>",
    }
    with in_a_terminal(
        "ask_big", f"params={json.dumps(params)}", f"big={BIG}", "--protocol", revision
    ) as pty:
        pty.expect("Enter or d: decline")  # too long to be shown whole: refused
        drawn = len(pty.raw)
        pty.send("d" + ENTER)
        pty.expect("Declined.")
        pty.expect('"action": "decline"')
        assert pty.wait() == 0
        screen = pty.screen
    assert drawn < DRAWN_MAX, f"{drawn} characters drawn for one question"
    assert "Sign in first many words" in screen and "last words" not in screen
    assert f"({len(params['message']) - 5 + BIG} characters)" in screen
    assert "https://accounts.example.com/start/many/words/" in screen and "end-of-path" not in screen
    assert "more than the 2048 that can be shown in full" in screen
    assert "This address will not be opened." in screen


#: A title as long as this client reads (``forms.foreign.MAX_TITLE``: 100,000).
TITLE = 90_000


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_forms_huge_texts_are_cut_short(revision: str) -> None:
    params = {
        "mode": "form",
        "message": "Tell us " + "<big>" * (BIG // TITLE) + " last words",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "title": "Your name <big> title end",
                    "description": "About it <big> description end",
                    "default": "Ada <big> default end",
                },
                "pick": {
                    "type": "string",
                    "title": "Pick",
                    "oneOf": [
                        {"const": "a", "title": "First <big> choice end"},
                        {"const": "b", "title": "Second"},
                    ],
                },
            },
            "required": ["pick"],
        },
    }
    with in_a_terminal(
        "ask_big", f"params={json.dumps(params)}", f"big={TITLE}", "--protocol", revision
    ) as pty:
        pty.expect("Enter: fill in the form")
        drawn = len(pty.raw)
        pty.send(ENTER)
        pty.expect("(optional) >")
        pty.send(ENTER)  # the default, which the prompt does not start with
        pty.expect("Pick >")
        pty.send("2" + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect('"action": "accept"')
        assert pty.wait() == 0
        screen = pty.screen
    assert drawn < DRAWN_MAX, f"{drawn} characters drawn for one question"
    assert len(pty.raw) < 4 * DRAWN_MAX, f"{len(pty.raw)} characters drawn in all"
    for start, end in [
        ("Tell us many words", "last words"),
        ("Your name many", "title end"),
        ("About it many words", "description end"),
        ("Ada many words", "default end"),
        ("First many words", "choice end"),
    ]:
        assert start in screen and end not in screen, (start, end)
