"""The terminal answerer, driven through prompt_toolkit's pipe input (keys as a terminal
sends them) with its screen captured: the form, its answers checked as they are typed, the
review, declining and cancelling, server text kept inert, and the plumbing (the CLI extra,
modes, a client in memory). The real-terminal tests are tests/cli/test_pty.py and
test_terminal_pty.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import io

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from mcp_elicit.cli.loader import load_server
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.answerers import SERVER_STOPPED
from mcp_elicit.errors import UsageError, ValidationProblem
from mcp_elicit.forms import Form, Integer, MultiChoice, Number, String
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.ui import terminal
from mcp_elicit.ui.form_text import OPTION_ABOUT_MAX
from mcp_elicit.ui.terminal import TerminalAnswerer, system_browser
from ui.web_rounds import SDK_BOUNDS, SDK_DESCRIBED

from support.terminal_answerer import (
    BACKSPACE,
    CTRL_C,
    CTRL_D,
    CTRL_N,
    CTRL_U,
    ENTER,
    ESC,
    Browser,
    Screen,
    answerer,
    elicit,
    elicit_typing,
    form_request,
    once_drawn,
    until_drawn,
)

pytestmark = pytest.mark.anyio
TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()
FILL = ENTER + "7" + ENTER + TOMORROW + ENTER + CTRL_U + "2" + ENTER + "vegan" + ENTER + ENTER


async def test_the_question_shows_who_asks_why_and_every_field() -> None:
    async with answerer(FILL + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.accept(size=7, date=TOMORROW, seat="out", diet=["vegan"], ok=True)
    text = screen.text
    for fragment in (
        "Table bookings 1.0.0 asks",
        "during tools/call book · memory:bookings",
        "How many, and when?",
        "Party size",
        "How many people, you included",
        "required · a whole number from 1 to 20",
        "a date, YYYY-MM-DD",
        "default: Inside",
        "1. Inside (in)",
        "2. On the terrace (out)",
        "1. vegan",
        "optional · pick any number",
        "required · yes or no · default: yes",
        "Your answers",
        "Sent.",
    ):
        assert fragment in text, fragment


async def test_exclusive_bounds_and_a_step_are_shown_with_the_field() -> None:
    # pydantic's Field(gt=0, lt=1) and Field(ge=0, multiple_of=2), as the SDKs send them.
    keys = ENTER + "0" + ENTER + CTRL_U + "0.5" + ENTER + "3" + ENTER + CTRL_U + "4" + ENTER + ENTER
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request(SDK_BOUNDS))
    assert answer == ElicitAnswer.accept(share=0.5, pair=4)
    assert "required · a number, more than 0 and less than 1" in screen.text
    assert "required · a whole number, at least 0 · a multiple of 2" in screen.text
    assert "must be" not in screen.text  # no warning about them: the fields say them


async def test_option_descriptions_are_shown_under_their_options_made_inert() -> None:
    keys = ENTER + "1" + ENTER + "breakfast" + ENTER + ENTER
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request(SDK_DESCRIBED))
    assert answer == ElicitAnswer.accept(room="s", extras=["b"])
    text = screen.text
    assert "\u202e" not in text
    # in the question and again above the field's prompt, each under its option
    assert text.count("One bed, no<U+202E> view") == 2
    assert text.count("Served 7 to 10") == 2
    assert "w" * OPTION_ABOUT_MAX not in text.replace("\n", "").replace(" ", "").replace("│", "")
    assert "w…" in text


async def test_an_answer_is_checked_as_it_is_typed_and_cannot_be_sent_until_it_fits() -> None:
    # "25" is over the maximum and "x" is not a number: Enter does nothing until fixed.
    keys = ENTER + "25" + ENTER + BACKSPACE * 2 + "x" + ENTER + BACKSPACE + "3" + ENTER
    keys += "31-12-2026" + ENTER + CTRL_U + TOMORROW + ENTER + ENTER + ENTER + ENTER + ENTER
    async with answerer(keys) as (ans, _, _):
        answer = await elicit(ans, form_request())
    assert answer.content == {"size": 3, "date": TOMORROW, "seat": "in", "ok": True}


async def test_a_reason_an_answer_cannot_be_read_names_its_field() -> None:
    # The form's own reasons named the field ("Party size must be at most 20"), but one from
    # reading the text did not: "must be a whole number", "'x' is not one of the choices".
    async with answerer(ENTER + "x") as (ans, screen, pipe):

        async def typing() -> None:
            await once_drawn(screen, "Party size must be a whole number", pipe, BACKSPACE + "7" + ENTER)
            await once_drawn(screen, "Date >", pipe, TOMORROW + ENTER + CTRL_U + "x")
            await once_drawn(screen, "Seating 'x' is not one of the choices", pipe, BACKSPACE + "2" + ENTER)
            pipe.send_text(ENTER + ENTER + ENTER)

        answer = await elicit_typing(ans, form_request(), typing())
    assert answer == ElicitAnswer.accept(size=7, date=TOMORROW, seat="out", ok=True)


@pytest.mark.parametrize(
    ("field", "typed", "how"),
    [
        (Integer(title="Guests"), "1 000", "Guests must be a whole number: type it like 1000, with no"),
        (Number(title="Tip"), "1,5", "Tip must be a number: type it like 1000 or 1.5, with a point"),
    ],
)
async def test_a_number_written_with_a_comma_or_spaces_is_refused_saying_how_to_write_it(
    field: Integer | Number, typed: str, how: str
) -> None:
    # It said only "Guests must be a whole number": nothing about how a number is written.
    async with answerer(ENTER + typed) as (ans, screen, pipe):
        typing = once_drawn(screen, how, pipe, CTRL_U + "7" + ENTER + ENTER)
        answer = await elicit_typing(ans, form_request(Form(n=field)), typing)
    assert answer == ElicitAnswer.accept(n=7)


async def test_text_over_its_length_says_how_long_it_is() -> None:
    # It said only "Name must be at most 5 characters long": not how much to take away.
    field = String(title="Name", max_length=5)
    async with answerer(ENTER + "Adalinda") as (ans, screen, pipe):
        typing = once_drawn(
            screen, "Name must be at most 5 characters long, not 8", pipe, CTRL_U + "Ada" + ENTER + ENTER
        )
        answer = await elicit_typing(ans, form_request(Form(n=field)), typing)
    assert answer == ElicitAnswer.accept(n="Ada")


async def test_a_multi_choice_cleared_is_none_of_them_as_on_the_page() -> None:
    # Its default cleared, Enter took the default back unsaid, where the page, whose boxes
    # were unticked, sent [] or refused it (minItems): the terminal now reads it as the page.
    field = MultiChoice({"a": "Apples", "b": "Pears"}, title="Fruit", default=["a", "b"])
    async with answerer(ENTER + CTRL_U + ENTER + ENTER) as (ans, _, _):
        answer = await elicit(ans, form_request(Form(m=field)))
    assert answer == ElicitAnswer.accept(m=[])
    at_least = MultiChoice({"a": "Apples", "b": "Pears"}, title="Fruit", default=["a", "b"], min_items=1)
    async with answerer(ENTER + CTRL_U + ENTER) as (ans, screen, pipe):
        typing = once_drawn(screen, "Fruit must have at least 1 choice", pipe, "Pears" + ENTER + ENTER)
        answer = await elicit_typing(ans, form_request(Form(m=at_least)), typing)
    assert answer == ElicitAnswer.accept(m=["b"])


async def test_the_review_changes_an_answer_before_sending() -> None:
    async with answerer(
        FILL + "1" + ENTER + CTRL_U + "12" + ENTER + "5" + ENTER + CTRL_U + "no" + ENTER + ENTER
    ) as (
        ans,
        screen,
        _,
    ):
        answer = await elicit(ans, form_request())
    assert answer.content == {"size": 12, "date": TOMORROW, "seat": "out", "diet": ["vegan"], "ok": False}
    assert screen.text.count("Your answers") == 3


async def test_none_of_a_multi_choice_can_be_answered() -> None:
    # Required without a minimum, "none" is a valid answer; with a default, "none" is not
    # the default. An empty line would be no answer (required) or the default.
    form = Form(
        diet=MultiChoice(["vegan", "gluten-free"], title="Dietary needs"),
        extras=MultiChoice(["wine", "cake"], title="Extras", default=["wine"], required=False),
    )
    keys = ENTER + ENTER + "-" + ENTER + CTRL_U + "-" + ENTER + "2" + ENTER + ENTER + ENTER
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request(form))
    assert answer == ElicitAnswer.accept(diet=[], extras=[])
    assert "- for none" in screen.text


async def test_a_digit_that_is_no_number_is_refused_not_fatal() -> None:
    # "²" passes str.isdigit but int() cannot read it: once in a choice, once at the review.
    keys = ENTER + "7" + ENTER + TOMORROW + ENTER + CTRL_U + "²" + ENTER + BACKSPACE + "2" + ENTER
    keys += ENTER + ENTER + "²" + ENTER + BACKSPACE + "9" * 5000 + ENTER + CTRL_U + ENTER
    async with answerer(keys) as (ans, _, _):
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.accept(size=7, date=TOMORROW, seat="out", ok=True)


async def test_text_is_sent_as_typed_and_only_spaces_is_no_answer() -> None:
    form = Form(note=String(title="Note"), code=String(title="Code", required=False))
    keys = ENTER + "   " + ENTER + CTRL_U + "  by the window " + ENTER + "   " + ENTER + ENTER
    async with answerer(keys) as (ans, _, _):
        answer = await elicit(ans, form_request(form))
    # Only spaces is no answer: Enter did nothing at the required Note (else the text
    # would have gone to Code), and Code was left unanswered.
    assert answer == ElicitAnswer.accept(note="  by the window ")


@pytest.mark.parametrize("keys", ["d" + ENTER, "decline" + ENTER, FILL + "d" + ENTER])
async def test_declining_is_an_explicit_choice(keys: str) -> None:
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.decline()
    assert "Declined." in screen.text


@pytest.mark.parametrize("keys", [ENTER + CTRL_N, ENTER + "4" + ENTER + CTRL_N, ENTER + "x" + CTRL_N])
async def test_a_field_prompt_can_be_declined_without_answering_it(keys: str) -> None:
    # At a field's prompt "d" is an answer: Ctrl-N declines there, even while what is
    # typed is refused ("x" for a party size), so no field must be answered first.
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.decline()
    assert "Declined." in screen.text


@pytest.mark.parametrize("keys", [CTRL_C, ENTER + CTRL_C, ENTER + "4" + ENTER + CTRL_C, FILL + CTRL_C])
async def test_ctrl_c_cancels_wherever_the_person_is(keys: str) -> None:
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.cancel()
    assert "Cancelled." in screen.text


@pytest.mark.parametrize("keys", [CTRL_D, ENTER + CTRL_D, FILL + CTRL_D])
async def test_ctrl_d_on_an_empty_line_cancels(keys: str) -> None:
    async with answerer(keys) as (ans, screen, _):
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.cancel()
    assert "Cancelled." in screen.text


async def test_input_that_ends_cancels() -> None:
    async with answerer(ENTER + "4") as (ans, _, pipe):
        pipe.close()
        answer = await elicit(ans, form_request())
    assert answer == ElicitAnswer.cancel()


@pytest.mark.parametrize(
    ("typed", "prompt"),
    [("", "Enter: fill in the form"), (ENTER, "Party size >"), (ENTER + "4" + ENTER, "Date >")],
)
async def test_esc_cancels_wherever_the_person_is(typed: str, prompt: str) -> None:
    async with answerer(typed) as (ans, screen, pipe):
        answer = await elicit_typing(ans, form_request(), once_drawn(screen, prompt, pipe, ESC))
    assert answer == ElicitAnswer.cancel()
    assert "Cancelled." in screen.text


@pytest.mark.parametrize(
    ("why", "said"),
    [
        (None, "This question was withdrawn; nothing was sent."),
        # the server's process ended while it was asked: it said "withdrawn", as if taken back
        (SERVER_STOPPED, "The server stopped; nothing was sent."),
    ],
)
async def test_a_withdrawn_question_is_taken_down_and_says_why(why: str | None, said: str) -> None:
    async with answerer() as (ans, screen, _):
        task = asyncio.ensure_future(ans.elicit(form_request()))
        await until_drawn(screen, "Enter: fill in the form")  # the person is on the first prompt
        task.cancel(why)
        with pytest.raises(asyncio.CancelledError):
            await task
    assert said in screen.text
    assert "withdrawn" not in screen.text or why is None


async def test_an_answer_the_client_refused_is_asked_again_with_the_reason() -> None:
    request = form_request().again((ValidationProblem("size", "must be at most 20"),))
    async with answerer(FILL + ENTER) as (ans, screen, _):
        await elicit(ans, request)
    assert "The last answer was not accepted" in screen.text
    assert "Party size: must be at most 20" in screen.text


async def test_a_field_that_asks_for_a_secret_is_flagged() -> None:
    schema = {"type": "object", "properties": {"password": {"type": "string"}}, "required": ["password"]}
    async with answerer(ENTER + "hunter2" + ENTER + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request(schema))
    assert answer.content == {"password": "hunter2"}
    assert "⚠" in screen.text and "password" in screen.text.lower()


async def test_server_text_cannot_drive_the_terminal() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "string", "title": "Name\x1b[31m"}}}
    async with answerer("d" + ENTER) as (ans, screen, _):
        await elicit(ans, form_request(schema, message="Hello\x1b[2J\x1b]0;pwned\x07 there\u202e"))
    assert "\x1b" not in screen.text and "\x07" not in screen.text and "\u202e" not in screen.text
    assert "Hello\\x1b[2J" in screen.text and "Name\\x1b[31m" in screen.text and "<U+202E>" in screen.text


#: Persian with its ZWNJ, a Devanagari half form, a family and a rainbow flag (ZWJ), Scotland's flag (tags).
JOINED = (
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u0915\u094d\u200d\u0937 "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f3f3\ufe0f\u200d\U0001f308 "
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
)


async def test_joiners_a_script_needs_reach_the_terminal_and_no_others() -> None:
    # The message was shown as "\u0645\u06cc<U+200C>..." and the family in pieces.
    schema = {"type": "object", "properties": {"ok": {"type": "string", "enum": ["yes", "y\u200des"]}}}
    async with answerer("d" + ENTER) as (ans, screen, _):
        await elicit(ans, form_request(schema, message=JOINED))
    assert JOINED in screen.text
    assert "y<U+200D>es" in screen.text and "y\u200des" not in screen.text


async def test_a_default_reaches_the_terminal_only_made_inert() -> None:
    # The default goes in the prompt as typed text, and into the review once erased.
    evil = "ok\x1b]0;pwned\x07\x1b[2J\u202eevil"
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": "string", "default": evil},
            "pick": {"type": "string", "enum": ["x\u202ey", "z"], "default": "x\u202ey"},
        },
    }
    drawn = io.StringIO()
    output = Vt100_Output(drawn, lambda: Size(rows=40, columns=100), term="xterm")
    keys = ENTER + ENTER + ENTER + "1" + ENTER + CTRL_U + ENTER + ENTER  # erased: the review shows it
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        screen = Screen()
        ans = TerminalAnswerer(console=screen.console, input=pipe, output=output, open_url=Browser())
        answer = await elicit(ans, form_request(schema))
    assert answer == ElicitAnswer.accept(pick="x\u202ey")  # the note's default is the client's to add
    assert "\u202e" not in drawn.getvalue() and "pwned" not in drawn.getvalue()
    assert "\x1b" not in screen.text and "\u202e" not in screen.text
    assert "(default: ok\\x1b]0;pwned\\x07\\x1b[2J<U+202E>evil)" in screen.text


async def test_server_text_is_no_markup_even_on_a_console_that_reads_markup() -> None:
    title = "[/bold] :warning: [red]x"
    schema = {
        "type": "object",
        "properties": {"c": {"oneOf": [{"const": "a", "title": title}], "type": "string"}},
    }
    drawn = io.StringIO()
    console = Console(file=drawn, width=100, color_system=None)  # markup and emoji codes on
    with create_pipe_input() as pipe:
        pipe.send_text(ENTER + "1" + ENTER + ENTER)
        ans = TerminalAnswerer(console=console, input=pipe, output=DummyOutput(), open_url=Browser())
        answer = await elicit(ans, form_request(schema))
    assert answer == ElicitAnswer.accept(c="a")
    assert drawn.getvalue().count(f"1. {title} (a)") == 2  # in the question, then at the prompt


async def test_a_form_without_fields_is_just_sent() -> None:
    async with answerer(ENTER + ENTER) as (ans, _, _):
        answer = await elicit(ans, form_request({"type": "object", "properties": {}}))
    assert answer == ElicitAnswer.accept({})


@pytest.mark.parametrize(
    ("fields", "hint"),
    [
        (0, "type d to decline, or Enter to send"),
        (1, "type 1 to change the answer, d to decline, or Enter to send"),
        (2, "type a number from 1 to 2 to change an answer, d to decline, or Enter to send"),
    ],
)
async def test_the_review_says_what_may_be_typed(fields: int, hint: str) -> None:
    schema = Form(**{f"f{n}": String(required=False) for n in range(fields)})
    async with answerer(ENTER + ENTER * fields + "9") as (ans, screen, pipe):
        # the "9" is refused as typed: take it back once the refusal is drawn
        taking_back = once_drawn(screen, hint, pipe, BACKSPACE + ENTER)
        answer = await elicit_typing(ans, form_request(schema), taking_back)
    assert answer == ElicitAnswer.accept({})
    assert hint in screen.drawn


async def test_a_booking_through_a_client_in_memory() -> None:
    app = load_server("examples/demo_server.py")
    app._tools["list_bookings"].fn.__globals__["BOOKINGS"].clear()
    keys = ENTER + "2" + ENTER + TOMORROW + ENTER + ENTER + "2" + ENTER + ENTER
    keys += ENTER + ENTER + ENTER
    async with answerer(keys) as (ans, _, _):
        async with connect_memory(app, answerer=ans) as client, asyncio.timeout(10):
            result = await client.call_tool("book_table", {"restaurant": "noma"})
    assert (
        result["content"][0]["text"] == f"Booked #1: Noma, Copenhagen, 2 people on {TOMORROW}, inside, vegan."
    )


def test_without_the_cli_extra_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        terminal.importlib.util, "find_spec", lambda name: None if name == "rich" else real(name)
    )
    with pytest.raises(UsageError, match=r"needs rich: pip install 'mcp-elicit\[cli\]'"):
        TerminalAnswerer()


def test_modes_are_checked() -> None:
    assert TerminalAnswerer(modes=["form"]).modes == frozenset({"form"})
    with pytest.raises(UsageError, match="unknown elicitation modes"):
        TerminalAnswerer(modes=["form", "sms"])


def test_no_text_browser_takes_over_a_headless_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(terminal.sys, "platform", "linux")

    def refuse(url: str, new: int = 0) -> bool:
        raise AssertionError("webbrowser.open must not run here")

    monkeypatch.setattr(terminal.webbrowser, "open", refuse)
    assert system_browser("https://example.com/") is False


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("a" * 58 + "e\u0301" + " and more", "a" * 58 + "…"),  # the accent is not parted from its e
        ("a" * 58 + "\U0001f469\u200d\U0001f4bb" + " coders", "a" * 58 + "…"),  # nor an emoji from its joiner
        ("a" * 57 + "e\u0301" + " and more", "a" * 57 + "e\u0301" + "…"),  # a whole letter fits
        ("short", "short"),
    ],
    ids=["mark", "joiner", "whole", "short"],
)
def test_a_long_label_is_cut_short_between_whole_letters(title: str, shown: str) -> None:
    """The prompt's label is cut at 60 characters; cut after an "e" whose accent follows
    it as a combining mark, it showed a plain "e" where the label said "é"."""
    from mcp_elicit.ui.field_prompt import short_label

    assert short_label(String(title=title, name="f")) == shown
