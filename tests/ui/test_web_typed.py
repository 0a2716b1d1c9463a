"""The browser answerer in a real Chromium (Playwright): what the person typed is what is sent, in
any locale (a decimal comma, a thousands separator), kept across a reload of the tab (a draft in
the tab's session storage, with the questions declined one by one, never a secret-like field's
text), and a year no form takes is refused next to its field."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest

from mcp_elicit import Form, Integer
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Boolean, Number, String
from ui.web_rounds import form_request, open_round, url_request

from support.browser import NewPage
from support.web_page import SMALL, expect, review_and_send, show

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.anyio]

GERMAN = {"locale": "de-DE", "timezone_id": "Europe/Berlin"}
AMERICAN = {"locale": "en-US", "timezone_id": "America/New_York"}
PRICES = Form(
    budget=Number(title="Budget", minimum=0.5, maximum=5000),
    guests=Integer(title="Guests", minimum=1, maximum=2000),
    tip=Number(title="Tip", default=0.5, required=False),
)
#: A form as another server may send it: a client reads a field that looks like a password.
WITH_PASSWORD = {
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "title": "Guests"},
        "note": {"type": "string", "title": "Note"},
        "seating": {"type": "string", "title": "Seating", "enum": ["in", "out"]},
        "diet": {"type": "array", "title": "Diet", "items": {"enum": ["vegan", "halal"]}},
        "ok": {"type": "boolean", "title": "Confirm", "default": True},
        "password": {"type": "string", "title": "Password"},
    },
    "required": ["guests"],
}


async def _draft(page: Page) -> dict[str, Any]:
    """Everything this tab's session storage holds."""
    stored = await page.evaluate("JSON.stringify(Object.assign({}, sessionStorage))")
    return dict(json.loads(stored))


def _leave_without_asking(page: Page) -> None:
    """Accept the "leave this page?" prompt a page with unsent answers shows on reload."""
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))


async def test_a_decimal_comma_typed_in_a_german_browser_is_the_number_sent(new_page: NewPage) -> None:
    """Chromium's number box read "2,5" as 25 in a de-DE browser, and sent 25: the text
    typed is read with the browser's own decimal mark, shown back in it, and sent as 2.5."""
    async with open_round([form_request(PRICES)]) as opened:
        page = await show(new_page, opened, **GERMAN)
        await page.locator("#q0-f0-input").press_sequentially("2,5")
        await page.locator("#q0-f1-input").press_sequentially("12")
        await page.click("#review")
        rows = page.locator("#review-list dd")
        await expect(rows.nth(0)).to_have_text("2,5")
        await expect(rows.nth(2)).to_have_text("0,5")  # the default as a German reads it
        await page.click("#change")
        await expect(page.locator("#q0-f2-input")).to_have_value("0,5")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(budget=2.5, guests=12, tip=0.5)]


@pytest.mark.parametrize(
    ("where", "typed", "said"),
    [
        (
            GERMAN,
            "1.000",
            "write the number without thousands separators and with “,” before any decimals, like 1000 or 2,5",
        ),
        (
            AMERICAN,
            "2,5",
            "write the number without thousands separators and with “.” before any decimals, like 1000 or 2.5",
        ),
    ],
    ids=["de-DE", "en-US"],
)
async def test_a_separator_that_reads_two_ways_is_refused_saying_why(
    new_page: NewPage, where: dict[str, str], typed: str, said: str
) -> None:
    """ "1.000" is a thousand in Germany and one elsewhere, "2,5" two and a half in Germany
    and 25 to Chromium's number box in the United States: neither is guessed at."""
    async with open_round([form_request(PRICES)]) as opened:
        page = await show(new_page, opened, **where)
        await page.locator("#q0-f0-input").press_sequentially("3")
        await page.locator("#q0-f1-input").press_sequentially(typed)
        await page.click("#review")
        await expect(page.locator("#alert")).to_have_text("1 answer needs fixing: Guests.")
        await expect(page.locator("#q0-f1-error")).to_have_text(f"Guests: “{typed}” reads two ways; {said}")
        await page.locator("#q0-f1-input").fill("1000")
        await expect(page.locator("#q0-f1-error")).to_have_text("")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(budget=3, guests=1000, tip=0.5)]


async def test_a_reload_keeps_what_was_typed_and_sending_forgets_it(new_page: NewPage) -> None:
    """Reloading the tab mid-answer lost everything typed: a draft in the tab's session
    storage, keyed by the round, brings it back; a password-like field's text is never
    stored; once sent, the draft is gone."""
    async with open_round([form_request(WITH_PASSWORD)]) as opened:
        page = await show(new_page, opened)
        _leave_without_asking(page)
        await page.fill("#q0-f0-input", "7")
        await page.fill("#q0-f1-input", "by the window")
        await page.locator("#q0-f2").get_by_label("out").check()
        await page.locator("#q0-f3").get_by_label("halal").check()
        await page.uncheck("#q0-f4-input")
        await page.fill("#q0-f5-input", "hunter2")
        await expect(page.locator("#q0-f5-input")).to_have_value("hunter2")
        assert "hunter2" not in json.dumps(await _draft(page))
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#q0-f0-input")).to_have_value("7")
        await expect(page.locator("#q0-f1-input")).to_have_value("by the window")
        await expect(page.locator("#q0-f2").get_by_label("out")).to_be_checked()
        await expect(page.locator("#q0-f3").get_by_label("halal")).to_be_checked()
        await expect(page.locator("#q0-f4-input")).not_to_be_checked()
        await expect(page.locator("#q0-f5-input")).to_have_value("")
        await page.fill("#q0-f5-input", "hunter3")
        await review_and_send(page)
        answers = await opened.answers()
        assert await _draft(page) == {}
    assert answers == [
        ElicitAnswer.accept(
            guests=7, note="by the window", seating="out", diet=["halal"], ok=False, password="hunter3"
        )
    ]


async def test_a_draft_keeps_no_url_step_and_goes_when_the_round_is_cancelled(new_page: NewPage) -> None:
    """With a URL question beside a form, a reload brings the form's answers back and
    nothing of the URL step; cancelling forgets the draft."""
    both = [form_request(SMALL), url_request("https://pay.example.com/")]
    async with open_round(both) as opened:
        page = await show(new_page, opened)
        _leave_without_asking(page)
        await page.fill("#q0-f0-input", "3")
        assert [json.loads(kept) for kept in (await _draft(page)).values()] == [
            {"fields": {"q0-f0-input": "3", "q0-f1-input": ""}, "declined": []}
        ]
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await expect(page.locator("#q1-done")).to_be_hidden()
        await page.click("#cancel")
        await expect(page.locator("#finished-title")).to_have_text("Cancelled")
        assert await _draft(page) == {}
        assert await opened.answers() == [ElicitAnswer.cancel()] * 2


async def test_a_question_declined_one_by_one_stays_declined_across_a_reload(new_page: NewPage) -> None:
    """A reload brought back what was typed, but not "Decline this question": the declined
    question was shown to be answered again, and sent as answered by a person who did not look
    again. The draft keeps it, and "Answer it after all" too."""
    requests = [
        form_request(SMALL, message="How many?", key="size"),
        form_request(Form(ok=Boolean(title="Newsletter")), message="Newsletter?", key="news"),
        url_request("https://pay.example.com/"),
    ]
    async with open_round(requests) as opened:
        page = await show(new_page, opened)
        _leave_without_asking(page)
        await page.fill("#q0-f0-input", "3")
        await page.click("#q1 button.decline-one")
        await page.click("#q2 button.decline-one")
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        for q in ("#q1", "#q2"):
            await expect(page.locator(f"{q}-declined")).to_be_visible()
            await expect(page.locator(f"{q} button.decline-one")).to_be_hidden()
        await expect(page.locator("#q1-f0-input")).to_be_hidden()
        await expect(page.locator("#q2-open")).to_be_hidden()
        await page.click("#q1 button.undecline")  # answered after all: kept so too
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#q1-declined")).to_be_hidden()
        await expect(page.locator("#q1-f0-input")).to_be_visible()
        await expect(page.locator("#q2-declined")).to_be_visible()
        await page.check("#q1-f0-input")
        await review_and_send(page)
        assert await opened.answers() == [
            ElicitAnswer.accept(guests=3),
            ElicitAnswer.accept(ok=True),
            ElicitAnswer.decline(),
        ]
        assert await _draft(page) == {}


@pytest.mark.parametrize("clicked", ["a URL's Open", "the page"])
async def test_a_draft_outlives_a_reload_after_a_click(new_page: NewPage, clicked: str) -> None:
    """A reload starts by stopping the page's loads, its event stream included, before the
    page is hidden: when the stream's failure arrived first (in Chromium, every time after a
    click, such as a URL question's Open), it was read as the answer server gone, which
    ended the page and forgot the draft. The page's COOP was not the cause: the draft was
    lost under any policy, ``unsafe-none`` included."""
    both = [form_request(SMALL), url_request("https://pay.example.com/")]
    async with open_round(both) as opened:
        page = await show(new_page, opened)
        _leave_without_asking(page)
        await page.fill("#q0-f0-input", "3")
        if clicked == "the page":
            await page.click("h1")
        else:
            async with page.expect_popup():
                await page.click("#q1-open")
            await page.bring_to_front()
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await page.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()] * 2


@pytest.mark.parametrize(
    ("field", "typed"),
    [
        (String(title="When", format="date-time"), "10000-01-01T00:00"),
        (String(title="When", format="date"), "10000-01-01"),
    ],
    ids=["date-time", "date"],
)
async def test_a_year_past_9999_is_refused_next_to_its_field(
    new_page: NewPage, field: String, typed: str
) -> None:
    """A date-picker takes years to 275760; the form's dates stop at 9999 (four digits, as
    RFC 3339 writes them). It read "must be a date ... like 2026-12-31T18:30:00Z" next to a
    date written just like that: the page says the year is the problem."""
    async with open_round([form_request(Form(when=field))]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", typed)
        await page.click("#review")
        await expect(page.locator("#q0-f0-error")).to_have_text(
            "When: the year must be from 0001 to 9999 (10000 is past it)"
        )
        await expect(page.locator("#review-step")).to_be_hidden()
        await page.fill("#q0-f0-input", typed.replace("10000", "9999"))
        await expect(page.locator("#q0-f0-error")).to_have_text("")
        await review_and_send(page)
        answers = await opened.answers()
    sent = "9999-01-01T00:00:00+01:00" if "T" in typed else "9999-01-01"
    assert answers == [ElicitAnswer.accept(when=sent)]


#: Fills this tab's session storage to the last kilobyte (Chromium's quota), under a key of
#: its own: the next draft larger than what is left cannot be saved.
_FILL_STORAGE = """() => {
  let n = 0;
  for (const size of [1 << 20, 1 << 16, 1 << 10]) {
    for (;;) {
      try { sessionStorage.setItem(`other-${n++}`, "x".repeat(size)); } catch (error) { break; }
    }
  }
}"""


async def test_a_draft_that_no_longer_fits_is_not_brought_back_stale(new_page: NewPage) -> None:
    """With the tab's storage full, saving the draft failed silently and the draft of some
    keys earlier stayed: a reload put that back ("What you typed ... is back") without what
    was typed since. A draft that cannot be saved is dropped instead."""
    async with open_round([form_request(WITH_PASSWORD)]) as opened:
        page = await show(new_page, opened)
        _leave_without_asking(page)
        await page.fill("#q0-f0-input", "7")
        assert any(key.startswith("mcp-elicit-draft:") for key in await _draft(page))
        await page.evaluate(_FILL_STORAGE)
        await page.fill("#q0-f1-input", "by the window " * 400)
        assert not any(key.startswith("mcp-elicit-draft:") for key in await _draft(page))
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#q0-f0-input")).to_have_value("")
        await page.fill("#q0-f0-input", "8")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(guests=8, diet=[], ok=True)]


@pytest.mark.parametrize(
    ("locale", "typed"),
    [
        ("fr-FR", "1\u202f000"),
        ("fr-FR", "1 000,5"),
        ("de-CH", "1’000"),
        ("ar-EG", "\u0661\u066c\u0660\u0660\u0660"),
    ],
    ids=["narrow no-break space", "space", "apostrophe", "arabic"],
)
async def test_digits_grouped_as_the_language_writes_them_are_refused_saying_why(
    new_page: NewPage, locale: str, typed: str
) -> None:
    """A French "1 000" (digits grouped by a narrow no-break space, as the browser itself
    writes a thousand) was refused as "Guests must be a number": it is one. The page says
    what to change, as it does for a thousands separator that reads two ways."""
    async with open_round([form_request(PRICES)]) as opened:
        page = await show(new_page, opened, locale=locale)
        mark = await page.evaluate("new Intl.NumberFormat().formatToParts(1.5)[1].value")
        await page.locator("#q0-f0-input").fill("3")
        await page.locator("#q0-f1-input").fill(typed)
        await page.click("#review")
        await expect(page.locator("#q0-f1-error")).to_have_text(
            f"Guests: “{typed}” has a separator between its digits; write the number without "
            f"thousands separators and with “{mark}” before any decimals, like 1000 or 2{mark}5"
        )
        await page.locator("#q0-f1-input").fill("1000")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(budget=3, guests=1000, tip=0.5)]


async def test_a_minus_sign_is_read_as_one(new_page: NewPage) -> None:
    """The minus sign (U+2212), as Swedish or Norwegian numbers are written (and copied),
    was refused as "must be a number"."""
    form = Form(change=Integer(title="Change"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened, locale="sv-SE")
        await page.locator("#q0-f0-input").fill("\u22125")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(change=-5)]
