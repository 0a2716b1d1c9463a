"""The browser answerer in a real browser: headless Chromium, driven by Playwright, fills
every kind of field, meets the validation messages, reviews, declines, cancels, closes the
tab, waits too long, answers several questions on one page, consents to URLs, and does it
all from the keyboard; then ``mcp-elicit call --ui web`` end to end, and the library with a
real server in memory. The HTTP-level refusals are in test_web_server.py (no browser)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli.helpers import TOMORROW, demo_stdio

from mcp_elicit import Choice, Context, Form, Integer, Server
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.forms import Boolean, MultiChoice, String
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.ui import web_round
from mcp_elicit.ui.form_text import OPTION_ABOUT_MAX
from mcp_elicit.ui.web import WebAnswerer
from ui.web_rounds import (
    DEFAULTS,
    LEGACY,
    SDK_BOUNDS,
    SDK_DESCRIBED,
    SERVER,
    Opened,
    form_request,
    open_round,
    url_request,
)

from support import browser as browser_support
from support.browser import PHONE, NewPage
from support.procs import ROOT

# The browser fixtures (one Chromium for the module).
anyio_backend = browser_support.anyio_backend
browser = browser_support.browser
new_page = browser_support.new_page

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.anyio]
expect = pytest.importorskip(
    "playwright.async_api", reason="playwright is not installed (make install)"
).expect

SMALL = Form(guests=Integer(title="Guests", minimum=1, maximum=20), note=String(title="Note", required=False))
SMALL_MESSAGE = "How many guests, and a note?"
OSLO = {"timezone_id": "Europe/Oslo", "locale": "en-GB"}


async def show(new_page: NewPage, opened: Opened, **options: Any) -> Page:
    page = await new_page(**{**OSLO, **options})
    await page.goto(opened.url, wait_until="domcontentloaded")
    await expect(page.locator("#answers")).to_be_visible()
    await expect(page.locator("#app")).to_have_attribute("data-live", "1")  # its event stream is up
    return page


async def review_and_send(page: Page) -> None:
    await page.click("#review")
    await expect(page.locator("#review-step")).to_be_visible()
    await page.click("#send")
    await expect(page.locator("#finished-title")).to_have_text("Sent")


# ---- every kind of field ------------------------------------------------------------------


async def test_every_kind_of_field_is_filled_and_answered(new_page: NewPage) -> None:
    async with open_round([form_request(), form_request(LEGACY, key="legacy")]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "Ada")
        await page.fill("#q0-f1-input", "ada@example.com")
        await page.fill("#q0-f2-input", "https://ada.example/")
        await page.fill("#q0-f3-input", "2026-12-24")
        await page.fill("#q0-f4-input", "2026-12-24T18:30")
        await page.fill("#q0-f5-input", "4")
        await page.fill("#q0-f6-input", "42.5")
        await page.check("#q0-f7-input")
        await page.check("#q0-f8-o1")  # untitled radio: mains
        await page.get_by_label("On the terrace").check()  # titled radio
        await page.select_option("#q0-f10-input", "t6")  # six options: a select
        await page.check("#q0-f11-o0")
        await page.check("#q0-f11-o2")
        await page.get_by_label("Wine pairing").check()
        await page.get_by_label("Birthday cake").check()
        await page.get_by_label("Medium").check()  # legacy enumNames
        await page.click("#review")
        review = page.locator("#review-list")
        await expect(review).to_contain_text("On the terrace")
        await expect(review).to_contain_text("Wine pairing, Birthday cake")
        await expect(review).to_contain_text("Medium")
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(
            name="Ada",
            email="ada@example.com",
            site="https://ada.example/",
            day="2026-12-24",
            arrival="2026-12-24T18:30:00+01:00",  # the browser's zone, said
            guests=4,
            budget=42.5,
            terrace=True,
            course="mains",
            seating="out",
            table="t6",
            diet=["vegan", "nut allergy"],
            extras=["wine", "cake"],
        ),
        ElicitAnswer.accept(size="m"),
    ]


async def test_defaults_are_prefilled_and_required_fields_marked(new_page: NewPage) -> None:
    async with open_round([form_request(DEFAULTS)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("2")
        await expect(page.locator("#q0-f1-input")).to_have_value("window seat")
        await expect(page.locator("#q0-f2-input")).to_have_value("2026-12-24T19:30")  # 18:30Z in Oslo
        await expect(page.get_by_label("On the terrace")).to_be_checked()
        await expect(page.locator("#q0-f4-input")).to_have_value("c")
        await expect(page.locator("#q0-f5-o0")).to_be_checked()
        await expect(page.locator("#q0-f6-input")).to_be_checked()
        # required: the attribute and a visible mark; optional: neither
        await expect(page.locator("#q0-f0-input")).to_have_attribute("required", "")
        await expect(page.locator("#q0 label[for=q0-f0-input] .req")).to_have_text(" *")
        assert await page.locator("#q0 label[for=q0-f1-input] .req").count() == 0
        await expect(page.locator("#q0-f3-group")).to_have_attribute("aria-required", "true")
        # the description and the hint are tied to the control
        await expect(page.locator("#q0-f0-desc")).to_have_text("You included")
        await expect(page.locator("#q0-f0-hint")).to_have_text("a whole number from 1 to 20")
        described = await page.get_attribute("#q0-f0-input", "aria-describedby")
        assert described == "q0-f0-desc q0-f0-hint q0-f0-error"
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(
            guests=2,
            note="window seat",
            arrival="2026-12-24T18:30:00Z",  # shown in Oslo time, sent back as the server wrote it
            seating="out",
            course="c",
            diet=["vegan"],
            ok=True,
        )
    ]


async def test_exclusive_bounds_and_a_step_are_in_the_fields_hint(new_page: NewPage) -> None:
    async with open_round([form_request(SDK_BOUNDS)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-hint")).to_have_text("a number, more than 0 and less than 1")
        await expect(page.locator("#q0-f1-hint")).to_have_text("a whole number, at least 0, a multiple of 2")
        assert await page.locator("#q0 .warning").count() == 0  # the fields say them
        await page.fill("#q0-f0-input", "1")
        await page.fill("#q0-f1-input", "3")
        await expect(page.locator("#q0-f0-error")).to_have_text("Share must be less than 1")
        await expect(page.locator("#q0-f1-error")).to_have_text("Pair must be a multiple of 2")
        await page.fill("#q0-f0-input", "0.5")
        await page.fill("#q0-f1-input", "4")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(share=0.5, pair=4)]


async def test_option_descriptions_are_shown_under_their_options(new_page: NewPage) -> None:
    async with open_round([form_request(SDK_DESCRIBED)]) as opened:
        page = await show(new_page, opened)
        # radio buttons, not a select, though there are six: a select cannot show them
        await expect(page.locator("#q0-f0-o0")).to_have_attribute("aria-describedby", "q0-f0-o0-desc")
        await expect(page.locator("#q0-f0-o0-desc")).to_have_text("One bed, no<U+202E> view")
        long = await page.locator("#q0-f0-o1-desc").text_content()
        assert long is not None and len(long) == OPTION_ABOUT_MAX and long.endswith("…")
        assert await page.locator("#q0-f0-o2").get_attribute("aria-describedby") is None
        await expect(page.locator("#q0-f1-o0-desc")).to_have_text("Served 7 to 10")
        await page.get_by_label("Single").check()
        await page.get_by_label("Breakfast").check()
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(room="s", extras=["b"])]


async def test_values_with_invisible_characters_come_back_unchanged(new_page: NewPage) -> None:
    # A Persian word with a zero-width non-joiner, an emoji with zero-width joiners: shown
    # made visible in labels, but sent back as they are (else no choice could be picked).
    word, family, many = "می\u200cخواهم", "👨\u200d👩\u200d👧", [f"n{n}\u200c" for n in range(6)]
    form = Form(
        want=Choice([word, "نه"], title="Want"),
        who=MultiChoice([family, "solo", "two\rlines"], title="Who"),
        size=Choice(many, title="Size"),
        note=String(title="Note", default="نامه\u200cها", required=False),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.check("#q0-f0-o0")
        await page.check("#q0-f1-o0")
        await page.check("#q0-f1-o2")
        await page.select_option("#q0-f2-input", index=3)  # after "Choose one"
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(want=word, who=[family, "two\rlines"], size=many[2], note="نامه\u200cها")
    ]


async def test_a_default_with_line_breaks_is_shown_in_lines_and_sent_exactly(new_page: NewPage) -> None:
    # A text box drops line breaks: "a\nb" left untouched came back as "ab".
    form = Form(
        note=String(title="Note", default="\nfirst\nsecond", required=False),
        lines=String(title="Lines", default="one\r\ntwo\rthree", required=False),
        edited=String(title="Edited", default="x\ny", required=False),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("\nfirst\nsecond")
        await page.fill("#q0-f2-input", "x\ny\nz")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(note="\nfirst\nsecond", lines="one\r\ntwo\rthree", edited="x\ny\nz")
    ]


async def test_date_time_defaults_are_shown_in_local_time_and_sent_back_as_given(new_page: NewPage) -> None:
    """A date-time default is shown as wall time in the browser's zone; left alone it goes
    back exactly as the server wrote it (its zone, its fraction, a leap second, an hour
    that happens twice on the clock), not re-written from the control's local time."""
    when = String(format="date-time", required=False)
    defaults = {
        "utc": ("2026-12-24T18:30:00Z", "2026-12-24T19:30"),
        "zone": ("2026-12-24T18:30:00+05:45", "2026-12-24T13:45"),
        "leap": ("2016-12-31T23:59:60Z", "2017-01-01T00:59:59"),  # the control stops at :59
        "leap_zone": ("2016-12-31T18:59:60-05:00", "2017-01-01T00:59:59"),
        "twice": ("2026-10-25T01:30:00Z", "2026-10-25T02:30"),  # the second 02:30 in Oslo
        "fraction": ("2026-12-24T18:30:00.250Z", "2026-12-24T19:30"),
        "lower": ("2026-12-24t18:30:00z", "2026-12-24T19:30"),
        "edited": ("2026-12-24T18:30:00Z", "2026-12-24T19:30"),
    }
    form = Form(**{name: dataclasses.replace(when, default=d) for name, (d, _) in defaults.items()})
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        for n, (_, shown) in enumerate(defaults.values()):
            await expect(page.locator(f"#q0-f{n}-input")).to_have_value(shown)
        await page.fill("#q0-f7-input", "2026-12-25T10:00")
        await review_and_send(page)
        answers = await opened.answers()
    expected = {name: d for name, (d, _) in defaults.items()}
    assert answers == [ElicitAnswer.accept(**{**expected, "edited": "2026-12-25T10:00:00+01:00"})]


async def test_an_untitled_option_of_empty_text_has_a_label(new_page: NewPage) -> None:
    """An untitled option "" is named "(empty text)" in the form and in the review, not
    shown as a nameless button."""
    form = Form(who=Choice(["", "a"], title="Who"), host=Choice(["", *"abcde"], title="Host"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.locator("#q0-f0").get_by_label("(empty text)").check()
        await page.select_option("#q0-f1-input", label="(empty text)")
        await page.click("#review")
        await expect(page.locator("#review-list")).to_contain_text("Who(empty text)Host(empty text)")
        await page.click("#send")
        assert await opened.answers() == [ElicitAnswer.accept(who="", host="")]


@pytest.mark.parametrize("pick", ["Nobody", "(no answer)"])
async def test_an_option_whose_value_is_empty_text_can_be_chosen(new_page: NewPage, pick: str) -> None:
    """An option may be "" (JSON Schema allows it): choosing it is an answer, not "no answer"."""
    six = {"": "Nobody", "a": "Ann", "b": "Bo", "c": "Cy", "d": "Di", "e": "Ed"}
    form = Form(
        who=Choice({"": "Nobody", "a": "Ann"}, title="Who"),
        host=Choice(six, title="Host", required=False),
        guest=Choice({"": "Nobody", "a": "Ann"}, title="Guest", required=False),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.locator("#q0-f0").get_by_label("Nobody").check()
        await page.select_option("#q0-f1-input", label=pick)
        await page.locator("#q0-f2").get_by_label(pick).check()
        await review_and_send(page)
        answers = await opened.answers()
    chosen = {"host": "", "guest": ""} if pick == "Nobody" else {}
    assert answers == [ElicitAnswer.accept(who="", **chosen)]


async def test_a_date_time_in_a_zone_whose_offset_had_seconds_gets_whole_minutes(new_page: NewPage) -> None:
    """Before 1906 Kolkata was 5:21:10 ahead of UTC; RFC 3339 offsets are whole minutes, so
    the time typed is sent with the nearest one (it was sent as "+05:21.166...", refused)."""
    form = Form(when=String(title="When", format="date-time"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened, timezone_id="Asia/Kolkata")
        await page.fill("#q0-f0-input", "1900-06-01T12:00")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(when="1900-06-01T12:00:00+05:21")]


async def test_markup_in_server_text_and_values_stays_text_in_the_browser(new_page: NewPage) -> None:
    """Markup in every place a server writes (titles, descriptions, option titles and
    values, defaults, the message) is shown as text, runs nothing, and values go back as
    they were given."""
    evil = '"><img src=x onerror="document.title=1"><script>document.title=2</script>'
    area = "</textarea><script>document.title=3</script>\n" + evil
    form = Form(
        text=String(title=evil, description=evil, default=evil),
        area=String(title=evil, default=area),
        pick=Choice({evil: evil, "b": evil + "b"}, title=evil, default=evil),
        many=Choice({f"{evil}{n}": f"{evil} {n}" for n in range(6)}, title=evil, default=f"{evil}3"),
        tick=MultiChoice({evil: evil, "b": "B"}, title=evil, default=[evil]),
    )
    async with open_round([form_request(form, message=evil)]) as opened:
        page = await show(new_page, opened)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        assert await page.locator("#answers img, #answers script").count() == 0
        await expect(page.locator("#q0-message")).to_have_text(evil)
        title = await page.title()
        await review_and_send(page)
        answers = await opened.answers()
    assert not dialogs and title == "Table bookings asks · mcp-elicit"  # no script set it
    assert answers == [ElicitAnswer.accept(text=evil, area=area, pick=evil, many=f"{evil}3", tick=[evil])]


async def test_a_long_text_is_sent(new_page: NewPage) -> None:
    """A field without a length limit takes a long text, as the terminal does: a 300,000
    character default left as it is, and as much pasted into another field."""
    long = "word " * 60_000
    form = Form(
        kept=String(title="Kept", default=long), pasted=String(title="Pasted", format="uri", required=False)
    )
    pasted = "https://example.com/?" + "q" * 300_000
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f1-input", pasted)
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(kept=long, pasted=pasted)]


@pytest.mark.parametrize(("pick", "expected"), [(None, {}), ("No", {"news": False}), ("Yes", {"news": True})])
async def test_an_optional_yes_or_no_can_be_left_unanswered(
    new_page: NewPage, pick: str | None, expected: dict[str, bool]
) -> None:
    """A checkbox left unticked would answer "no" for the person: an optional boolean
    without a default offers "(no answer)", "Yes" and "No", and starts unanswered."""
    form = Form(news=Boolean(title="Newsletter", required=False), name=String(title="Name"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.get_by_label("(no answer)")).to_be_checked()
        if pick is not None:
            await page.get_by_label(pick, exact=True).check()
        await page.fill("#q0-f1-input", "Ada")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(name="Ada", **expected)]


# ---- validation, review, decline, cancel ------------------------------------------------


async def test_problems_show_next_to_their_field_and_are_announced(new_page: NewPage) -> None:
    async with open_round([form_request()]) as opened:
        page = await show(new_page, opened)
        guests = page.locator("#q0-f5-input")
        await guests.fill("25")  # checked as it is typed, by the form's own rules
        await expect(page.locator("#q0-f5-error")).to_have_text("Guests must be at most 20")
        await expect(guests).to_have_attribute("aria-invalid", "true")
        assert "q0-f5-error" in (await guests.get_attribute("aria-describedby") or "")
        await expect(page.locator("#status")).to_have_text("Guests must be at most 20")
        await expect(page.locator("#q0-f1-error")).to_have_text("")  # untouched: nothing yet
        await guests.fill("4")
        await expect(page.locator("#q0-f5-error")).to_have_text("")
        await expect(guests).not_to_have_attribute("aria-invalid", "true")
        await page.fill("#q0-f1-input", "ada@localhost")
        await page.click("#review")
        alert = page.locator("#alert")
        await expect(alert).to_contain_text("answers need fixing: Your name, Email, Day, Arrival")
        await expect(page.locator("#q0-f1-error")).to_have_text(
            "Email has a domain without a dot after the @ (localhost), where an email address here "
            "needs a domain name like example.com; it must be an email address like name@example.com"
        )
        await expect(page.locator("#q0-f0-error")).to_have_text("Your name is required")
        await expect(page.locator("#q0-f12-error")).to_have_text("Extras must have at least 1 choice")
        await expect(page.locator("#q0-f12-group")).to_have_attribute("aria-invalid", "true")
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await expect(page.locator("#review-step")).to_be_hidden()
        assert not opened.task.done()


async def test_the_same_problems_twice_are_announced_twice(new_page: NewPage) -> None:
    """The alert's text changes however often the same answers are refused: a screen reader
    announces an alert when its text changes, so the same text written again is silent, and
    a person pressing Review again would hear nothing and think it worked."""
    form = Form(guests=Integer(title="Guests", minimum=1, maximum=20))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        alert = page.locator("#alert")
        await page.fill("#q0-f0-input", "30")
        said: list[str] = []
        for _ in range(3):
            before = await alert.text_content()
            await page.keyboard.press("Enter")
            await expect(alert).not_to_have_text(before or "")
            said.append(await alert.text_content() or "")
        assert all(text.endswith("1 answer needs fixing: Guests.") for text in said), said
        assert said[0] != said[1] != said[2], said


async def test_the_review_can_go_back_and_change_an_answer(new_page: NewPage) -> None:
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await page.click("#review")
        await expect(page.locator("#review-title")).to_be_focused()
        await expect(page.locator("#review-list")).to_contain_text("Guests3Note(no answer)")
        await page.click("#change")
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await page.fill("#q0-f0-input", "5")
        await page.fill("#q0-f1-input", "by the window")
        await page.click("#review")
        await expect(page.locator("#review-list")).to_contain_text("Guests5Noteby the window")
        await page.click("#send")
        await expect(page.locator("#finished-text")).to_contain_text("Your answers went to Table bookings")
        assert await opened.answers() == [ElicitAnswer.accept(guests=5, note="by the window")]


@pytest.mark.parametrize(
    ("button", "action", "title"),
    [("#decline", "decline", "Declined"), ("#cancel-review", "cancel", "Cancelled")],
)
async def test_decline_and_cancel(new_page: NewPage, button: str, action: str, title: str) -> None:
    async with open_round([form_request(DEFAULTS)]) as opened:
        page = await show(new_page, opened)
        if button.endswith("-review"):
            await page.click("#review")
        await page.click(button)
        await expect(page.locator("#finished-title")).to_have_text(title)
        assert await opened.answers() == [ElicitAnswer(action)]  # type: ignore[arg-type]


async def test_closing_the_tab_cancels(new_page: NewPage) -> None:
    async with open_round([form_request(SMALL)], grace=0.3) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await page.close()
        assert await opened.answers(3) == [ElicitAnswer.cancel()]


async def test_a_reload_is_not_a_close(new_page: NewPage) -> None:
    async with open_round([form_request(SMALL)], grace=0.5) as opened:
        page = await show(new_page, opened)
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await asyncio.sleep(0.8)
        assert not opened.task.done()
        await page.fill("#q0-f0-input", "7")
        await review_and_send(page)
        assert await opened.answers() == [ElicitAnswer.accept(guests=7)]


@pytest.mark.parametrize("where", ["https://notebook.example/", "http://localhost:8888/tree"])
async def test_the_link_clicked_on_another_site_opens_the_form(new_page: NewPage, where: str) -> None:
    """The link shown in a web page (a notebook's output, a web terminal) is a navigation
    from another site: it opens the form, in that browser, as the link typed in does."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await new_page(**OSLO)
        link = f'<!doctype html><title>Notebook</title><a id="go" href="{opened.url}">answer</a>'
        await page.route(where, lambda route: route.fulfill(content_type="text/html", body=link))
        await page.goto(where)
        await page.click("#go")
        await expect(page.locator("#answers")).to_be_visible()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await page.fill("#q0-f0-input", "3")
        await review_and_send(page)
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_without_javascript_the_page_says_so_and_shows_no_dead_form(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With JavaScript off nothing on the page could send anything, and the round is
    cancelled when no event stream comes: the page says exactly that, and shows no form
    whose buttons would do nothing."""
    monkeypatch.setattr(web_round, "FIRST_STREAM_SECONDS", 0.5)
    both = [form_request(SMALL, message=SMALL_MESSAGE), url_request("https://pay.example.com/")]
    async with open_round(both, grace=0.1) as opened:
        page = await new_page(java_script_enabled=False)
        await page.goto(opened.url)
        said = page.locator("noscript .alert")  # Playwright's text and role queries skip <noscript>
        await expect(said).to_be_visible()
        await expect(said).to_contain_text("This page needs JavaScript")
        await expect(said).to_contain_text("cancelled")
        await expect(page.locator("#q0-message")).to_have_text(SMALL_MESSAGE)  # what was asked
        for role in ("button", "link", "textbox", "spinbutton"):
            await expect(page.get_by_role(role)).to_have_count(0)  # nothing that does nothing
        assert await opened.answers() == [ElicitAnswer.cancel()] * 2


async def test_waiting_too_long_cancels_and_the_page_says_so(new_page: NewPage) -> None:
    async with open_round([form_request(SMALL)], timeout=2.5) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#finished-title")).to_have_text("Timed out", timeout=5_000)
        assert await opened.answers() == [ElicitAnswer.cancel()]


async def test_before_the_time_runs_out_the_page_warns_and_more_time_can_be_had(
    new_page: NewPage,
) -> None:
    """WCAG 2.2.1: someone slow to answer (a screen reader, a switch, a long form) is
    warned before mcp-elicit stops waiting, and one key press on "More time" gives them the
    whole wait again, as often as needed; what they typed stays."""
    wait = 6.0
    async with open_round([form_request(SMALL)], timeout=wait) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        warning = page.locator("#time")
        await expect(warning).to_be_hidden()
        await expect(warning).to_be_visible(timeout=wait * 1000)  # half the wait before the end
        await expect(warning).to_have_attribute("role", "alert")
        await expect(warning).to_contain_text("stops waiting")
        started = time.monotonic()  # the first end is at most wait / 2 from here
        await page.get_by_role("button", name="More time").focus()
        await page.keyboard.press("Enter")
        await expect(warning).to_be_hidden()
        await expect(page.locator("#status")).to_contain_text("more time")
        # 1 s past the first end, 2 s before the new one (a whole wait from the press)
        await asyncio.sleep(max(0.0, wait / 2 + 1.0 - (time.monotonic() - started)))
        assert not opened.task.done()
        await expect(warning).to_be_visible(timeout=wait * 1000)  # and warned again
        await page.get_by_role("button", name="More time").click()
        await review_and_send(page)
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_a_request_abandoned_by_the_client_ends_the_page(new_page: NewPage) -> None:
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        opened.task.cancel()
        await expect(page.locator("#finished-title")).to_have_text("Cancelled")
        await expect(page.locator("#finished-text")).to_have_text("Nothing was sent. You can close this tab.")


# ---- several questions, URL consent ------------------------------------------------------


async def test_several_questions_of_a_round_on_one_page(new_page: NewPage) -> None:
    url = "https://pay.example.com/deposit?id=42"
    requests = [
        form_request(SMALL, message="How many?", key="size"),
        form_request(Form(ok=Boolean(title="Newsletter")), message="Newsletter?", key="news"),
        url_request(url),
    ]
    async with open_round(requests) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("h1")).to_have_text("Table bookings 1.0.0 asks you")
        await expect(page.locator("#q0-title")).to_have_text("Question 1")
        await page.fill("#q0-f0-input", "2")
        await page.click("#q1 button.decline-one")
        await expect(page.locator("#q1-declined")).to_be_visible()
        await expect(page.locator("#q1 button.undecline")).to_be_focused()
        await page.click("#review")  # the page is not opened yet
        await expect(page.locator("#q2-error")).to_have_text(
            "Open the page and say when you are done, or decline this question."
        )
        async with page.expect_popup() as popup_info:
            await page.click("#q2-open")
        popup = await popup_info.value
        assert popup.url == url
        await page.click("#q2-done")
        await expect(page.locator("#q2-state")).to_have_text("Done.")
        await page.click("#review")
        review = page.locator("#review-list")
        await expect(review).to_contain_text("Declined")
        await expect(review).to_contain_text("Web page on example.comDone")
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(guests=2), ElicitAnswer.decline(), ElicitAnswer.accept()]


WARNED = {
    "https://p\u0430ypal.com/login": {"idn", "mixed-script"},
    "https://xn--pypal-4ve.com/login": {"punycode", "mixed-script"},
    "http://198.51.100.7/login": {"ip-host", "not-https"},
    "http://shop.example.com/login": {"not-https"},
    "https://0x7f.1/x": {"ip-host-form"},  # on this computer, as the (stdio) server is: not said
    "http://192.168.1.1/admin": {"ip-host", "not-https"},
    "http://localhost:8888/api/kernels": set(),
}


async def test_url_consent_shows_the_whole_url_its_site_and_every_warning(new_page: NewPage) -> None:
    requests = [url_request(url, key=f"u{i}") for i, url in enumerate(WARNED)]
    async with open_round(requests) as opened:
        page = await show(new_page, opened)
        for i, (url, codes) in enumerate(WARNED.items()):
            verdict = judge_url(url, server=SERVER.where)
            section = page.locator(f"#q{i}")
            await expect(section.locator(".url")).to_have_text(url)
            shown = await section.locator(".warnings li").evaluate_all(
                "items => items.map(i => i.dataset.code)"
            )
            assert codes <= set(shown)
            assert tuple(shown) == verdict.codes  # the terminal's verdict, word for word
            await expect(section.locator(".warnings li")).to_have_text([w.text for w in verdict.warnings])
            await expect(section.locator(".site-name")).to_have_text(verdict.site)
        await expect(page.locator("#q1 .p-domain")).to_have_text("xn--pypal-4ve.com")
        await page.click("#decline")
        assert await opened.answers() == [ElicitAnswer.decline()] * len(WARNED)


async def test_open_goes_to_a_new_top_level_tab_then_done_accepts(new_page: NewPage) -> None:
    url = "https://login.example.co.uk/signin?state=abc"
    async with open_round([url_request(url)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("h1")).to_have_text("Table bookings 1.0.0 asks you to open a web page")
        await expect(page.locator("#q0 .p-host")).to_have_text("login.")
        await expect(page.locator("#q0 .p-domain")).to_have_text("example.co.uk")
        await expect(page.locator("#review")).to_have_count(0)
        await expect(page.locator("#q0-done")).to_be_hidden()
        async with page.expect_popup() as popup_info:
            await page.click("#q0-open")
        popup = await popup_info.value
        assert popup.url == url
        assert await popup.evaluate("window.opener") is None  # noopener
        assert len(page.frames) == 1  # never in a frame
        assert await page.locator("iframe").count() == 0
        await expect(page.locator("#q0-state")).to_contain_text("Opened in a new tab")
        await page.bring_to_front()
        await page.click("#q0-done")
        await expect(page.locator("#finished-title")).to_have_text("Sent")
        assert await opened.answers() == [ElicitAnswer.accept()]


@pytest.mark.parametrize("first", ["server", "person"])
async def test_the_server_saying_the_step_is_finished_answers_once_the_page_was_opened(
    new_page: NewPage, first: str
) -> None:
    """2025-11-25: ``request.finished`` returns when notifications/elicitation/complete
    arrives. The round then ends with accept, but only after the person pressed Open."""
    said_done = asyncio.Event()
    request = dataclasses.replace(url_request("https://example.com/connect"), finished=said_done.wait)
    async with open_round([request]) as opened:
        page = await show(new_page, opened)
        if first == "server":
            said_done.set()
            await asyncio.sleep(0.3)
            assert not opened.task.done()  # not without the person's consent
            await expect(page.locator("#q0-open")).to_be_visible()
        async with page.expect_popup():
            await page.click("#q0-open")
        if first == "person":
            await expect(page.locator("#q0-done")).to_be_visible()
            assert not opened.task.done()
            said_done.set()
        await expect(page.locator("#finished-title")).to_have_text("Done")
        await expect(page.locator("#finished-text")).to_contain_text("says the step on that page is finished")
        assert await opened.answers() == [ElicitAnswer.accept()]


async def test_opened_then_cancelled(new_page: NewPage) -> None:
    async with open_round([url_request("https://example.com/pay")]) as opened:
        page = await show(new_page, opened)
        async with page.expect_popup():
            await page.click("#q0-open")
        await expect(page.locator("#q0-open")).to_have_text("Open it again")
        await page.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()]


async def test_a_refused_url_gets_no_link_only_decline(new_page: NewPage) -> None:
    async with open_round([url_request("javascript:alert(1)")]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0 .refuse").first).to_contain_text("Only http and https addresses")
        await expect(page.locator("#q0 .refuse").last).to_have_text("This address will not be opened.")
        assert await page.locator("#q0 a").count() == 0
        await page.click("#decline")
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_a_url_with_a_user_name_is_refused_naming_where_it_really_goes(new_page: NewPage) -> None:
    url = "https://bank.example.com@evil.example/login"
    async with open_round([url_request(url)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0 .url")).to_have_text(url)
        await expect(page.locator("#q0 .refuse").first).to_contain_text(
            "(bank.example.com), which is not the site: the address really goes to evil.example"
        )
        await expect(page.locator("#q0 .refuse").last).to_have_text("This address will not be opened.")
        assert await page.locator("#q0 a").count() == 0
        assert await page.locator("#q0-open").count() == 0
        await page.click("#decline")
        assert await opened.answers() == [ElicitAnswer.decline()]


# ---- keyboard only, phone width ----------------------------------------------------------


async def test_keyboard_only(new_page: NewPage) -> None:
    form = Form(
        guests=Integer(title="Guests", minimum=1, maximum=20),
        seating=Choice({"in": "Inside", "out": "On the terrace"}, title="Seating", default="in"),
        ok=Boolean(title="Confirm"),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        keys = page.keyboard
        await keys.press("Tab")
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await keys.type("30")
        await keys.press("Enter")  # Enter in a field asks for the review: refused, focus back
        await expect(page.locator("#alert")).to_have_text("1 answer needs fixing: Guests.")
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await keys.press("Backspace")
        await keys.press("Backspace")
        await keys.type("3")
        await keys.press("Tab")
        await expect(page.locator("#q0-f1-o0")).to_be_focused()
        await keys.press("ArrowDown")
        await expect(page.locator("#q0-f1-o1")).to_be_checked()
        await keys.press("Tab")
        await expect(page.locator("#q0-f2-input")).to_be_focused()
        await keys.press("Space")
        await keys.press("Tab")
        await expect(page.locator("#review")).to_be_focused()
        await keys.press("Enter")
        await expect(page.locator("#review-title")).to_be_focused()
        await keys.press("Tab")
        await expect(page.locator("#send")).to_be_focused()
        await keys.press("Enter")
        await expect(page.locator("#finished-title")).to_be_focused()
        assert await opened.answers() == [ElicitAnswer.accept(guests=3, seating="out", ok=True)]


#: The contrast ratio (WCAG 2.x) of the focused control's outline against the colour behind
#: it: the nearest ancestor's opaque background (the outline sits outside the control).
FOCUS_CONTRAST = """() => {
  const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
  const lum = (c) => {
    const [r, g, b] = rgb(c).map((v) => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const focused = document.activeElement;
  let behind = focused.parentElement;
  while (behind && rgb(getComputedStyle(behind).backgroundColor)[3] === 0) behind = behind.parentElement;
  const [a, b] = [lum(getComputedStyle(focused).outlineColor), lum(getComputedStyle(behind).backgroundColor)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_the_focus_outline_stands_out_from_the_page(new_page: NewPage, scheme: str) -> None:
    """WCAG 1.4.11: the outline that shows where the keyboard is has at least 3:1 against
    the page around it, in both colour schemes, on a field, a button and a link."""
    async with open_round([form_request(SMALL), url_request("https://pay.example.com/")]) as opened:
        page = await show(new_page, opened, color_scheme=scheme)
        for target in ("#q0-f0-input", "#review", "#q1-open"):
            await page.locator(target).focus()
            await page.keyboard.press("Shift+Tab")  # the focus ring shows for the keyboard
            await page.keyboard.press("Tab")
            await expect(page.locator(target)).to_be_focused()
            ratio = await page.evaluate(FOCUS_CONTRAST)
            assert ratio >= 3, f"{target}: the focus outline has {ratio:.2f}:1 against the page"
        await page.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()] * 2


@pytest.mark.parametrize("which", ["form", "described", "url"])
async def test_phone_width_has_no_sideways_scrolling(new_page: NewPage, which: str) -> None:
    request = (
        form_request()
        if which == "form"
        else form_request(SDK_DESCRIBED)
        if which == "described"
        else url_request("https://bank.example.com@evil.example/" + "x" * 80)
    )
    async with open_round([request]) as opened:
        page = await show(new_page, opened, **PHONE)
        width = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1]
        box = await page.locator("#cancel").bounding_box()
        assert box is not None and box["width"] > 300  # buttons stack, full width
        await page.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()]


@pytest.mark.parametrize("size", ["phone", "desktop"])
async def test_long_unbroken_server_text_wraps_instead_of_widening_the_page(
    new_page: NewPage, size: str
) -> None:
    """A server's title, labels, descriptions and option titles of one 300-letter word stay
    inside the page's width, in the form and in the review: nothing is pushed off to the side."""
    word = "W" * 300
    server = dataclasses.replace(SERVER, title=word, version="v" * 100)
    form = Form(
        name=String(title=word, description=word, default="x"),
        pick=Choice({"a": word, "b": "B"}, title=word, default="a"),
        many=Choice({f"o{n}": f"{n}{word}" for n in range(6)}, title=word, default="o1"),
        extras=MultiChoice({"a": word}, title=word, default=["a"]),
        ok=Boolean(title=word, default=True),
    )
    request = dataclasses.replace(form_request(form, message=word), server=server)
    async with open_round([request]) as opened:
        page = await show(new_page, opened, **(PHONE if size == "phone" else {}))
        fits = "document.documentElement.scrollWidth <= window.innerWidth"
        assert await page.evaluate(fits)
        await page.click("#review")
        await expect(page.locator("#review-step")).to_be_visible()
        assert await page.evaluate(fits)
        box = await page.locator("#send").bounding_box()
        assert box is not None and box["x"] + box["width"] <= await page.evaluate("window.innerWidth")
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(name="x", pick="a", many="o1", extras=["a"], ok=True)]


# ---- end to end: a real client, a real server ----------------------------------------------


async def test_the_library_with_a_real_server_in_memory(new_page: NewPage) -> None:
    app = Server("survey", "2.0", title="Survey")

    @app.tool()
    async def survey(ctx: Context) -> str:
        """Asks two things at once."""
        mood, size = await ctx.gather(
            ctx.elicit("How are you?", Form(mood=Choice(["good", "bad"])), key="mood"),
            ctx.elicit("How many?", Form(n=Integer(minimum=1)), key="size"),
        )
        return json.dumps([mood.action, mood.content, size.action, size.content])

    sent: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    def trace(direction: str, message: Any) -> None:
        if direction == "send":
            sent.append(dict(message))

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    async with connect_memory(app, answerer=answerer, trace=trace) as client:
        call = asyncio.ensure_future(client.call_tool("survey", {}))
        page = await new_page()
        await page.goto(await asyncio.wait_for(links.get(), 10))
        await expect(page.locator("h1")).to_have_text("Survey 2.0 asks you")
        await page.check("#q0-f0-o0")
        await page.fill("#q1-f0-input", "0")
        await page.click("#review")
        await expect(page.locator("#q1-f0-error")).to_have_text("N must be at least 1")
        await page.fill("#q1-f0-input", "2")
        await review_and_send(page)
        result = await asyncio.wait_for(call, 10)
    assert json.loads(result["content"][0]["text"]) == ["accept", {"mood": "good"}, "accept", {"n": 2}]
    retries = [
        m["params"] for m in sent if m.get("method") == "tools/call" and "inputResponses" in m["params"]
    ]
    assert retries[0]["inputResponses"] == {
        "mood": {"action": "accept", "content": {"mood": "good"}},
        "size": {"action": "accept", "content": {"n": 2}},
    }


async def test_at_2025_11_25_a_server_request_gets_its_page(new_page: NewPage) -> None:
    app = Server("bookings", "1.0.0", title="Table bookings")

    @app.tool()
    async def confirm(ctx: Context) -> str:
        """Asks once."""
        answer = await ctx.elicit("Sure?", Form(sure=Boolean(title="Sure", default=False)))
        return f"{answer.action} {answer.content}"

    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    async with connect_memory(app, answerer=answerer, versions=["2025-11-25"]) as client:
        assert client.revision == "2025-11-25"
        call = asyncio.ensure_future(client.call_tool("confirm", {}))
        page = await new_page()
        await page.goto(await asyncio.wait_for(links.get(), 10))
        await page.check("#q0-f0-input")
        await review_and_send(page)
        result = await asyncio.wait_for(call, 10)
    assert result["content"][0]["text"] == "accept {'sure': True}"


@pytest.mark.slow
async def test_mcp_elicit_call_ui_web_end_to_end(new_page: NewPage, tmp_path: Path) -> None:
    """``mcp-elicit call --ui web`` against the demo server over stdio, in real processes;
    $BROWSER is a script that hands each link to this test."""
    links = tmp_path / "links"
    browser_script = tmp_path / "browser"
    browser_script.write_text(f'#!/bin/sh\necho "$1" >> {links}\n')
    browser_script.chmod(browser_script.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "BROWSER": str(browser_script)}
    env.pop("DISPLAY", None)
    command = [
        sys.executable, "-m", "mcp_elicit", "call", "book_table", "restaurant=noma", "--ui", "web",
        "--json", "--trace", "--", *demo_stdio(),
    ]  # fmt: skip
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, env=env, stdout=stdout, stderr=stderr
        )
        try:
            page = await new_page(**OSLO)
            await page.goto(await _link(links, 1, process))
            await expect(page.locator("h1")).to_have_text("Table bookings 1.0.0 asks")
            await expect(page.locator("#q0-message")).to_have_text(
                "Booking a table at Noma, Copenhagen: how many, and when?"
            )
            await page.fill("#q0-f0-input", "2")
            await page.fill("#q0-f1-input", TOMORROW)
            await page.get_by_label("On the terrace").check()
            await page.get_by_label("vegan", exact=True).check()
            await review_and_send(page)
            confirm = await new_page(**OSLO)
            await confirm.goto(await _link(links, 2, process))
            await expect(confirm.locator("#q0-message")).to_contain_text(
                "Please confirm: Noma, Copenhagen, 2 people"
            )
            await expect(confirm.locator("#q0-f0-input")).to_be_checked()  # the default
            await review_and_send(confirm)
            code = await asyncio.wait_for(process.wait(), 30)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert code == 0, err.read_text()
    outcome = json.loads(out.read_text())
    assert outcome["result"]["content"][0]["text"].startswith(
        f"Booked #1: Noma, Copenhagen, 2 people on {TOMORROW}"
    )
    sent = [json.loads(line[2:]) for line in err.read_text().splitlines() if line.startswith("→ ")]
    retries = [m["params"]["inputResponses"] for m in sent if "inputResponses" in m.get("params", {})]
    assert retries == [
        {
            "details": {
                "action": "accept",
                "content": {"party_size": 2, "date": TOMORROW, "seating": "terrace", "dietary": ["vegan"]},
            }
        },
        {"confirm": {"action": "accept", "content": {"confirm": True}}},
    ]
    assert [r["action"] for r in outcome["rounds"]] == ["accept", "accept"]


async def _link(links: Path, count: int, process: asyncio.subprocess.Process) -> str:
    """The ``count``-th link the $BROWSER script was given."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = (await asyncio.to_thread(_read, links)).split()
        if len(lines) >= count:
            return lines[count - 1]
        if process.returncode is not None:
            raise AssertionError(f"mcp-elicit call ended early with {process.returncode}")
        await asyncio.sleep(0.05)
    raise AssertionError("no link was opened")


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""
