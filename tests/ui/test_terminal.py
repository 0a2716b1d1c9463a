"""The terminal answerer, driven through prompt_toolkit's pipe input (keys as a terminal
sends them) with its screen captured; the real-terminal tests are tests/cli/test_pty.py and
test_terminal_pty.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import io
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from mcp_elicit.cli.loader import load_server
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo, parse_elicitation
from mcp_elicit.errors import UsageError, ValidationProblem
from mcp_elicit.forms import Boolean, Choice, Form, Integer, MultiChoice, String
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.ui import terminal
from mcp_elicit.ui.form_text import OPTION_ABOUT_MAX
from mcp_elicit.ui.terminal import TerminalAnswerer, system_browser
from ui.web_rounds import SDK_BOUNDS, SDK_DESCRIBED

pytestmark = pytest.mark.anyio

TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()
SERVER = ServerInfo(name="bookings", version="1.0.0", title="Table bookings", where="memory:bookings")
ORIGIN = Origin("tools/call", "book")
FORM = Form(
    size=Integer(title="Party size", description="How many people, you included", minimum=1, maximum=20),
    date=String(title="Date", format="date"),
    seat=Choice({"in": "Inside", "out": "On the terrace"}, title="Seating", default="in"),
    diet=MultiChoice(["vegan", "gluten-free"], title="Dietary needs", required=False),
    ok=Boolean(title="Confirm", default=True),
)
ENTER, ESC, CTRL_C, CTRL_D, CTRL_N, CTRL_U, BACKSPACE = "\r", "\x1b", "\x03", "\x04", "\x0e", "\x15", "\x7f"


def form_request(
    schema: Any = FORM, message: str = "How many, and when?", **extra: Any
) -> ElicitationRequest:
    params = {
        "mode": "form",
        "message": message,
        "requestedSchema": schema.to_json() if hasattr(schema, "to_json") else schema,
    }
    return parse_elicitation(params, server=SERVER, key="details", origin=ORIGIN)


def url_request(url: str, message: str = "Sign in to your mail") -> ElicitationRequest:
    return parse_elicitation(
        {"mode": "url", "message": message, "url": url, "elicitationId": "e1"},
        server=SERVER,
        key="signin",
        origin=ORIGIN,
    )


class Browser:
    def __init__(self, works: bool = True) -> None:
        self.opened: list[str] = []
        self.works = works

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        return self.works


class Screen:
    """What the person sees: rich's console output (``text``) and, as prompt_toolkit draws
    them on an xterm, the prompts (``drawn``)."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.console = Console(
            file=self.buffer, width=100, markup=False, emoji=False, highlight=False, color_system=None
        )
        self.prompts = io.StringIO()
        self.output = Vt100_Output(self.prompts, lambda: Size(rows=40, columns=120), term="xterm")

    @property
    def text(self) -> str:
        return self.buffer.getvalue()

    @property
    def drawn(self) -> str:
        return self.prompts.getvalue()


@asynccontextmanager
async def answerer(
    keys: str = "", *, browser: Callable[[str], bool] | None = None
) -> AsyncIterator[tuple[TerminalAnswerer, Screen, PipeInput]]:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        screen = Screen()
        yield (
            TerminalAnswerer(
                console=screen.console, input=pipe, output=screen.output, open_url=browser or Browser()
            ),
            screen,
            pipe,
        )


async def elicit(ans: TerminalAnswerer, request: ElicitationRequest) -> ElicitAnswer:
    async with asyncio.timeout(10):
        return await ans.elicit(request)


async def until_drawn(screen: Screen, shown: str) -> None:
    """Return once prompt_toolkit has drawn ``shown``; fail after 5 s (before ``elicit``
    gives up) naming what never showed and what was drawn last."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while shown not in screen.drawn:
        if loop.time() > deadline:
            raise AssertionError(
                f"{shown!r} was not drawn within 5 s; the last drawn: {screen.drawn[-300:]!r}"
            )
        await asyncio.sleep(0.01)


async def once_drawn(screen: Screen, shown: str, pipe: PipeInput, keys: str) -> None:
    """Type ``keys`` once ``shown`` is drawn: the prompt they are meant for is then reading.

    Typed sooner, an Esc can reach an earlier prompt in one read with the Enter before it;
    that prompt ends on the Enter and leaves the Esc in the input parser, waiting for the
    rest of an Alt key, with no prompt left to read it.
    """
    await until_drawn(screen, shown)
    pipe.send_text(keys)


async def elicit_typing(
    ans: TerminalAnswerer, request: ElicitationRequest, typing: Coroutine[Any, Any, None]
) -> ElicitAnswer:
    """``elicit`` while ``typing`` runs; if ``typing`` fails, so does this, with its error."""
    async with asyncio.TaskGroup() as group:
        group.create_task(typing)
        answer = group.create_task(elicit(ans, request))
    return answer.result()


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


async def test_a_withdrawn_question_is_taken_down_and_says_so() -> None:
    async with answerer() as (ans, screen, _):
        task = asyncio.ensure_future(ans.elicit(form_request()))
        await until_drawn(screen, "Enter: fill in the form")  # the person is on the first prompt
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert "This question was withdrawn; nothing was sent." in screen.text


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


# ---- URL consent -------------------------------------------------------------------------


async def test_a_url_opens_only_after_consent_and_can_be_reopened() -> None:
    browser = Browser()
    url = "https://accounts.example.co.uk/signin?state=abc"
    async with answerer("o" + ENTER + "r" + ENTER + ENTER, browser=browser) as (ans, screen, _):
        request = url_request(url)
        answer = await elicit(ans, request)
        await asyncio.wait_for(ans.url_done(request), 1)
    assert answer == ElicitAnswer.accept()
    assert browser.opened == [url, url]
    text = screen.text
    assert "Table bookings 1.0.0 asks you to open a web page" in text
    assert url in text and "Site: example.co.uk" in text and "page on accounts.example.co.uk" in text
    assert "Nothing is opened or fetched unless you say so" in text


async def test_a_browser_command_that_waits_for_the_browser_to_close_holds_nothing_up() -> None:
    """``webbrowser`` runs a ``$BROWSER`` command it does not know and waits for it to
    exit, which may be when the person quits the browser: the person is asked whether
    they are done while it runs, and the answer goes out without waiting for it."""
    released = threading.Event()
    started: list[str] = []

    def browser_that_runs_until_closed(url: str) -> bool:
        started.append(url)
        released.wait(30)
        return True

    try:
        async with answerer(browser=browser_that_runs_until_closed) as (ans, screen, pipe):
            pipe.send_text("o" + ENTER)
            done = once_drawn(screen, "Enter: I am done on the page", pipe, ENTER)
            answer = await elicit_typing(ans, url_request("https://example.com/"), done)
    finally:
        released.set()
    assert answer == ElicitAnswer.accept()
    assert started == ["https://example.com/"]
    assert "Opened in your browser." in screen.text


@pytest.mark.parametrize("keys", ["d" + ENTER, "decline" + ENTER])
async def test_a_declined_url_is_never_opened(keys: str) -> None:
    browser = Browser()
    async with answerer(keys, browser=browser) as (ans, screen, _):
        answer = await elicit(ans, url_request("https://example.com/"))
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []
    assert "Declined." in screen.text


async def test_enter_alone_is_not_consent() -> None:
    browser = Browser()
    async with answerer(ENTER + ENTER + "d" + ENTER, browser=browser) as (ans, _, _):
        answer = await elicit(ans, url_request("https://example.com/"))
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []


async def test_esc_cancels_a_url_before_and_after_opening() -> None:
    browser = Browser()
    async with answerer(browser=browser) as (ans, screen, pipe):
        esc = once_drawn(screen, "o: open it in your browser", pipe, ESC)
        assert await elicit_typing(ans, url_request("https://example.com/"), esc) == ElicitAnswer.cancel()
        assert browser.opened == []
        pipe.send_text("o" + ENTER)
        esc = once_drawn(screen, "Enter: I am done on the page", pipe, ESC)
        assert await elicit_typing(ans, url_request("https://example.com/"), esc) == ElicitAnswer.cancel()
    assert browser.opened == ["https://example.com/"]
    assert screen.text.count("Cancelled.") == 2


async def refused(ans: TerminalAnswerer, url: str) -> ElicitAnswer:
    """What the client does with a URL it refuses: tells the answerer (``refused``)."""
    async with asyncio.timeout(10):
        return await ans.refused(url_request(url), judge_url(url))


async def test_a_url_with_a_user_name_is_refused_naming_where_it_really_goes() -> None:
    browser = Browser()
    async with answerer("o" + ENTER + BACKSPACE + ENTER, browser=browser) as (ans, screen, _):
        answer = await refused(ans, "https://bank.example.com@evil.example/login")
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []
    text = " ".join(screen.text.replace("│", " ").split())  # the panel wraps the warning
    assert "https://bank.example.com@evil.example/login" in text
    assert "(bank.example.com), which is not the site: the address really goes to evil.example" in text
    assert "This address will not be opened." in text


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://exa\u202emple.com",
        "https://evil.example\\@bank.com/",
    ],
)
async def test_a_refused_url_can_only_be_declined(url: str) -> None:
    browser = Browser()
    async with answerer("o" + ENTER + BACKSPACE + ENTER, browser=browser) as (ans, screen, _):
        answer = await refused(ans, url)
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []
    assert "This address will not be opened." in screen.text


async def test_a_refused_url_can_be_cancelled() -> None:
    async with answerer() as (ans, screen, pipe), asyncio.TaskGroup() as group:
        group.create_task(once_drawn(screen, "Enter or d: decline", pipe, ESC))
        answer = group.create_task(refused(ans, "javascript:alert(1)"))
    assert answer.result() == ElicitAnswer.cancel()
    assert "Cancelled." in screen.text


async def test_without_a_browser_the_person_opens_it_themselves() -> None:
    browser = Browser(works=False)
    async with answerer("o" + ENTER + ENTER, browser=browser) as (ans, screen, _):
        answer = await elicit(ans, url_request("https://example.com/"))
    assert answer == ElicitAnswer.accept()
    assert "Could not start a browser here; open the address above yourself." in screen.text


# ---- with a client and a server ------------------------------------------------------------


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


# ---- plumbing -------------------------------------------------------------------------------


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


@pytest.mark.parametrize("url", ["https://xn--80ak6aa92e.com/login", "https://аррӏе.com/login"])
async def test_a_name_of_letters_that_all_look_latin_is_shown_as_dns_has_it(url: str) -> None:
    # Every letter Cyrillic, each one the twin of a Latin one: read in Unicode it is
    # "apple.com"; the site a person is shown is the name as DNS has it.
    async with answerer("d" + ENTER) as (ans, screen, _):
        assert await elicit(ans, url_request(url)) == ElicitAnswer.decline()
    text = " ".join(screen.text.replace("│", " ").split())
    assert "Site: xn--80ak6aa92e.com" in text
    assert "Site: аррӏе.com" not in text
    assert "look like Latin ones: it reads as apple" in text


async def test_a_huge_field_title_leaves_the_prompt_quick_to_type_at() -> None:
    # The prompt is drawn again at every key: a title of 20,000 characters made each key
    # take seconds. The question shows the title whole; the prompt shows its start.
    title = "Your name " + "x" * 20_000
    schema = {"type": "object", "properties": {"n": {"type": "string", "title": title}}, "required": ["n"]}
    async with answerer(ENTER + CTRL_U + ENTER + "bob" + ENTER + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request(schema))
    assert answer == ElicitAnswer.accept(n="bob")
    assert screen.text.count("x") >= 20_000  # in the question and in the review
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
