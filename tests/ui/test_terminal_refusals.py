"""What the terminal answerer says once the person declines or cancels is true of each
revision, as its line for a sent form is: a decline or a cancel is an answer too. At
2025-11-25 it is the response to the server's request, written at once (the server is
told); at 2026-07-28 it goes with the retried tools/call (or the task's next update) once
the round is answered, which has not happened yet when the person reads it. The line said
only "Declined." / "Cancelled." at both. In process through prompt_toolkit's pipe input,
then ``mcp-elicit call --ui terminal`` on a pseudo-terminal against a real stdio server."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Literal

import pytest
from cli.pty_session import ENTER

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from ui.test_terminal_pty import asking, in_a_terminal

from support.terminal_answerer import CTRL_C, CTRL_N, answerer, elicit, form_request, url_request

RETRY = "the retry of tools/call book"
SAID = {
    ("", "decline"): "Declined. The server was told.",
    ("", "cancel"): "Cancelled. The server was told.",
    ("retry", "decline"): f"Declined. That goes to the server with {RETRY}.",
    ("retry", "cancel"): f"Cancelled. That goes to the server with {RETRY}.",
    ("tasks/update", "decline"): "Declined. That goes to the server with the task's next update.",
    ("tasks/update", "cancel"): "Cancelled. That goes to the server with the task's next update.",
}
KEYS = {"decline": "d" + ENTER, "cancel": CTRL_C}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}, "required": ["name"]}


@pytest.mark.anyio
@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize("sent_with", ["", "retry", "tasks/update"])
async def test_a_refusal_says_how_it_travels(
    sent_with: Literal["", "retry", "tasks/update"], action: str
) -> None:
    request = dataclasses.replace(form_request(), sent_with=sent_with)
    async with answerer(KEYS[action]) as (ans, screen, _):
        answer = await elicit(ans, request)
    assert answer == (ElicitAnswer.decline() if action == "decline" else ElicitAnswer.cancel())
    assert SAID[(sent_with, action)] in screen.text, screen.text


@pytest.mark.anyio
@pytest.mark.parametrize("sent_with", ["", "retry"])
async def test_a_refusal_at_a_fields_prompt_and_of_a_refused_url_says_so_too(
    sent_with: Literal["", "retry"],
) -> None:
    form = dataclasses.replace(form_request(), sent_with=sent_with)
    async with answerer(ENTER + CTRL_N) as (ans, screen, _):
        assert await elicit(ans, form) == ElicitAnswer.decline()
    assert SAID[(sent_with, "decline")] in screen.text, screen.text
    url = dataclasses.replace(url_request("http://mail.example.com/signin"), sent_with=sent_with)
    async with answerer("d" + ENTER) as (ans, screen, _):
        assert await ans.refused(url, judge_url(url.url or "")) == ElicitAnswer.decline()
    assert SAID[(sent_with, "decline")] in screen.text, screen.text


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize(
    ("revision", "travels"),
    [
        ("2025-11-25", "The server was told."),
        ("2026-07-28", "That goes to the server with the retry of tools/call form."),
    ],
)
def test_the_command_says_how_a_refusal_travels(revision: str, travels: str, action: str) -> None:
    done = "Declined." if action == "decline" else "Cancelled."
    with in_a_terminal(*asking("Your name?", SCHEMA), "--protocol", revision) as pty:
        pty.expect("Enter: fill in the form")
        pty.send("d" + ENTER if action == "decline" else "\x1b")
        pty.expect(f"{done} {travels}")
        pty.expect(json.dumps({"action": action, "content": None}, sort_keys=True))
        assert pty.wait() == 0
