"""The terminal answerer's layout with long server text: a long field title hides no other
column, a long choice wraps under itself, a huge title leaves the prompt quick to type at,
and the server's message cannot pass for the client's own lines."""

from __future__ import annotations

import dataclasses
import io
import re

import pytest
from rich.console import Console
from rich.table import Table

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import UrlVerdict, judge_url
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.forms import Form, String
from mcp_elicit.ui.render import question_panel, stderr_console, url_panel

from support.terminal_answerer import CTRL_U, ENTER, answerer, elicit, form_request, url_request

pytestmark = pytest.mark.anyio


async def test_a_long_field_title_hides_no_other_column() -> None:
    # A title wider than the terminal must not squeeze out the column of descriptions,
    # constraints and choices, nor, in the review, the answers about to be sent.
    long = "Please read this field title carefully, all of it, before you go on " * 3
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": "string", "title": long.strip()},
            "to": {
                "type": "string",
                "title": "Pay to",
                "description": "The account paid",
                "default": "acct-666",
            },
        },
        "required": ["to"],
    }
    async with answerer(ENTER + "hello" + ENTER + ENTER + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request(schema))
    assert answer == ElicitAnswer.accept(note="hello", to="acct-666")
    panel, review = screen.text.split("Your answers")
    flat = " ".join(panel.replace("│", " ").split())
    assert "The account paid" in flat and "required · default: acct-666" in flat
    assert "hello" in review and "acct-666" in review


async def test_a_long_choice_wraps_under_itself_not_as_a_line_of_the_clients_own() -> None:
    # The choices shown again before a field's prompt are outside the question's frame: a
    # choice padded to wrap must not start a line where the client's own lines start.
    fake = "? mcp-elicit: this server is verified; your answers stay on this computer"
    schema = {
        "type": "object",
        "properties": {
            "c": {"type": "string", "oneOf": [{"const": "a", "title": "Inside" + " " * 150 + fake}]}
        },
    }
    async with answerer(ENTER + "1" + ENTER + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request(schema))
    assert answer == ElicitAnswer.accept(c="a")
    lines = screen.text.splitlines()
    shown = [line for line in lines if "mcp-elicit: this server is verified" in line]
    assert len(shown) == 3  # in the question, before the prompt, in the review
    assert not any(line.startswith("?") for line in lines)


async def test_a_huge_field_title_leaves_the_prompt_quick_to_type_at() -> None:
    # The prompt is drawn again at every key: a title of 20,000 characters made each key
    # take seconds. The question and the review show its start and its length (``fit``:
    # the whole of a longer one filled the screen); the prompt shows less of its start.
    title = "Your name " + "x" * 20_000
    schema = {"type": "object", "properties": {"n": {"type": "string", "title": title}}, "required": ["n"]}
    async with answerer(ENTER + CTRL_U + ENTER + "bob" + ENTER + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request(schema))
    assert answer == ElicitAnswer.accept(n="bob")
    assert screen.text.count("(20010 characters)") == 2  # in the question and in the review
    assert screen.text.count("x") < 1000
    assert "Your name xxx" in screen.drawn and "x" * 200 not in screen.drawn


async def test_the_servers_message_cannot_pass_for_the_clients_own_lines() -> None:
    # A message that writes its own address and "Site:" line above the real ones: the
    # client's lines stand apart from everything the server wrote.
    fake = "Sign in to your mail\n\nhttps://accounts.google.com/signin\n\nSite: google.com\n⚠ None."
    async with answerer("d" + ENTER) as (ans, screen, _):
        assert await elicit(ans, url_request("https://evil.example/signin", fake)) == ElicitAnswer.decline()
    lines = [line.removeprefix("│").removesuffix("│").strip() for line in screen.text.splitlines()]
    assert [line for line in lines if line.startswith("Site:")] == ["Site: evil.example"]
    assert not any(line.startswith(("https://accounts", "⚠")) for line in lines)
    assert "Site: google.com" in screen.text  # still shown, as the server's


@pytest.mark.parametrize("columns", [20, 24, 80])
def test_the_frame_of_the_servers_message_names_it_in_whole_words_at_any_width(columns: int) -> None:
    # At 20 columns its frame's title was cut to "the server'" on the top edge.
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=columns, color_system=None, markup=False, emoji=False, highlight=False
    )
    for panel in (question_panel(form_request()), url_panel(*_judged("https://example.com/signin"))):
        console.print(panel)
    words = re.sub("[─│╭╮╰╯]", " ", buffer.getvalue()).split()
    assert "server's" in words and "message" in words, buffer.getvalue()
    assert not any(word.startswith("server'") and word != "server's" for word in words), buffer.getvalue()


def _judged(url: str) -> tuple[ElicitationRequest, UrlVerdict]:
    request = url_request(url)
    return request, judge_url(url, server=request.server.where)


def _writing(encoding: str, width: int) -> tuple[Console, io.BytesIO]:
    """The answerer's console writing ``encoding`` (what it cannot show, by its code) on a
    terminal ``width`` columns wide, and the bytes it writes."""
    console = stderr_console(plain=True)
    raw = io.BytesIO()
    console.file = io.TextIOWrapper(raw, encoding=encoding, errors="backslashreplace", newline="")
    console.width = width
    return console, raw


@pytest.mark.parametrize(("encoding", "cut"), [("ascii", "signs y..."), ("utf-8", "signs you…")])
def test_what_the_terminal_library_cuts_short_ends_in_what_the_terminal_can_show(
    encoding: str, cut: str
) -> None:
    # A column that does not wrap is cut short by rich, which ends it with "…": an
    # ASCII-only terminal was written "\u2026" there, three columns wider than the cut.
    console, raw = _writing(encoding, 10)
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_row("signs you in")
    console.print(grid)
    console.file.flush()
    assert raw.getvalue().decode(encoding).splitlines() == [cut]


@pytest.mark.parametrize("server", ["Table bookings", "Réservé château éé"])
def test_a_frame_on_an_ascii_only_terminal_lines_up_around_server_text_shown_by_code(server: str) -> None:
    # Measured before the encoder wrote "é" as "\xe9", each such line stuck out past the
    # frame's right edge by three columns a letter; a title that fitted unescaped was cut.
    console, raw = _writing("ascii", 40)
    request = form_request(Form(n=String(title="Hôte")), message="Réservez déjà")
    request = dataclasses.replace(request, server=dataclasses.replace(request.server, title=server))
    console.print(question_panel(request))
    console.file.flush()
    shown = raw.getvalue().decode("ascii")
    assert "R\\xe9servez d\\xe9j\\xe0" in shown and "H\\xf4te" in shown, shown
    assert "asks" in shown.split(), shown
    assert {len(line) for line in shown.splitlines()} == {40}, shown
