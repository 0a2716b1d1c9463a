"""Every page the browser answerer can show, run through axe-core (the WCAG 2.2 A and AA rules
and axe's best practices) in a real Chromium: the form with every kind of field, the same with
its problems shown, the review, each ending, URL consent and its wait, odd server text, phone
width, and both colour schemes and forced colours. No violation of moderate impact or more."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from ui.web_rounds import (
    DEFAULTS,
    LEGACY,
    SDK_BOUNDS,
    SDK_DESCRIBED,
    SERVER,
    form_request,
    open_round,
    url_request,
)

from support.axe import audit, blocking, describe
from support.browser import PHONE, NewPage
from support.web_page import SMALL, expect, show

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.anyio]

ODD = "Line one\nline two\u202e reversed? " + "W" * 300 + " <b>not bold</b> &amp; " + "ﷺ" * 3


def _requests(which: str) -> list[ElicitationRequest]:
    if which == "every kind":
        return [form_request()]
    if which == "defaults":
        return [form_request(DEFAULTS)]
    if which == "legacy titles":
        return [form_request(LEGACY)]
    if which == "sdk forms":
        return [form_request(SDK_BOUNDS, key="a"), form_request(SDK_DESCRIBED, key="b")]
    if which == "odd text":
        server = dataclasses.replace(SERVER, title="T" * 200, version="v" * 80)
        return [dataclasses.replace(form_request(SMALL, message=ODD), server=server)]
    if which == "url":
        return [url_request("https://pay.example.com/deposit?id=42")]
    if which == "url warned":
        return [
            url_request("https://bank.example.com@evil.example/login"),
            url_request("javascript:alert(1)", key="j"),
        ]
    if which == "mixed":
        return [form_request(SMALL), url_request("https://pay.example.com/")]
    raise AssertionError(which)


async def _clean(page: Page, where: str) -> None:
    found = await audit(page)
    assert not blocking(found), f"{where}: {describe(found)}"


async def _failed_submit(page: Page) -> None:
    await page.click("#review")
    await expect(page.locator("#alert")).not_to_have_text("")


async def _filled(page: Page) -> None:
    if await page.locator("#q0-f12-group").count() == 0:  # SMALL: guests and a note
        await page.fill("#q0-f0-input", "3")
        return
    for field, text in enumerate(["Ada", "ada@example.com", "https://ada.example/", "2026-12-24"]):
        await page.fill(f"#q0-f{field}-input", text)
    await page.fill("#q0-f4-input", "2026-12-24T18:30")
    await page.fill("#q0-f5-input", "4")
    for box in ("#q0-f8-o1", "#q0-f9-o1", "#q0-f12-o0"):
        await page.check(box)
    await page.select_option("#q0-f10-input", "t6")


async def _declined_one(page: Page) -> None:
    await page.click("#q1 button.decline-one")
    await expect(page.locator("#q1 button.undecline")).to_be_focused()


async def _sent(page: Page) -> None:
    await page.click("#send")
    await expect(page.locator("#finished-title")).to_have_text("Sent")


async def _review(page: Page) -> None:
    await page.click("#review")
    await expect(page.locator("#review-step")).to_be_visible()


async def _declined(page: Page) -> None:
    await page.click("#decline")
    await expect(page.locator("#finished-title")).to_be_focused()


async def _opened(page: Page) -> None:
    async with page.expect_popup():
        await page.click("#q0-open")
    await expect(page.locator("#q0-done")).to_be_visible()


async def _menu_opened(page: Page) -> None:
    await page.click("#q0-open", button="right")  # "I'm done" offered: the page cannot tell
    await expect(page.locator("#q0-done")).to_be_visible()


async def _reloaded(page: Page) -> None:
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))  # "Leave site?"
    await page.reload()
    await expect(page.locator("#app")).to_have_attribute("data-live", "1")
    await expect(page.locator("#review-step")).to_be_visible()  # reloaded on the review: shown again
    await expect(page.locator("#review-title")).to_be_focused()


STEPS: dict[str, Callable[[Page], Awaitable[None]]] = {
    "failed submit": _failed_submit,
    "filled": _filled,
    "sent": _sent,
    "declined one": _declined_one,
    "review": _review,
    "declined": _declined,
    "opened": _opened,
    "menu opened": _menu_opened,
    "reloaded": _reloaded,
}
MEDIA: dict[str, dict[str, Any]] = {
    "light": {"color_scheme": "light"},
    "dark": {"color_scheme": "dark"},
    "forced colours": {"forced_colors": "active"},
    "phone": {**PHONE},
}
CASES = [
    ("every kind", []),
    ("every kind", ["failed submit"]),
    ("every kind", ["filled", "review", "sent"]),
    ("defaults", ["review"]),
    ("defaults", ["declined"]),
    ("legacy titles", []),
    ("sdk forms", []),
    ("sdk forms", ["failed submit"]),
    ("odd text", ["filled", "review"]),
    ("url", ["opened"]),
    ("url", ["menu opened"]),
    ("url warned", []),
    ("mixed", ["filled", "declined one", "review"]),
    ("mixed", ["filled", "declined one", "review", "reloaded"]),
]


@pytest.mark.parametrize("media", list(MEDIA))
@pytest.mark.parametrize(("which", "steps"), CASES, ids=[f"{w}-{'-'.join(s) or 'shown'}" for w, s in CASES])
async def test_no_violations(new_page: NewPage, which: str, steps: list[str], media: str) -> None:
    async with open_round(_requests(which)) as opened:
        page = await show(new_page, opened, **MEDIA[media])
        await _clean(page, "shown")
        for step in steps:
            await STEPS[step](page)
            await _clean(page, step)
        if not await page.locator("#finished").is_visible():
            await page.click("#cancel:visible, #cancel-review:visible")
        await opened.answers()


async def test_the_audit_names_each_violations_rule_impact_and_element(new_page: NewPage) -> None:
    """The check can fail: a page with an unlabelled field and an image without text is
    reported, each violation by its rule, its impact and the element."""
    page = await new_page()
    await page.set_content(
        '<!doctype html><html lang="en"><title>t</title><main><input id="x"><img src="a.png"></main>'
    )
    found = {(v.rule, v.impact, v.target) for v in blocking(await audit(page))}
    assert {("label", "critical", "#x"), ("image-alt", "critical", "img")} <= found, describe(
        list(blocking(await audit(page)))
    )


#: The page's visible headings (and those only screen readers see), by level, in order.
HEADINGS = """() => [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")]
  .filter((h) => h.closest("[hidden]") === null)
  .map((h) => `${h.tagName[1]} ${h.textContent}`)"""


async def test_the_tab_title_says_what_is_asked_and_where_the_person_is(new_page: NewPage) -> None:
    """WCAG 2.4.2: the tab's title, which a screen reader reads first and a person sees among
    other tabs, names the server and its question; with problems, during the review and once
    it is over it says so, where it only ever said "Table bookings asks"."""
    async with open_round([form_request(SMALL, message="Table for how many?\nAnd a note?")]) as opened:
        page = await show(new_page, opened)
        asked = "Table bookings asks: Table for how many? And a note? · mcp-elicit"
        await expect(page).to_have_title(asked)
        assert await page.evaluate(HEADINGS) == ["1 Table bookings 1.0.0 asks", "2 The question"]
        await page.fill("#q0-f0-input", "30")
        await page.click("#review")
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await expect(page).to_have_title(f"1 answer needs fixing · {asked}")
        await page.fill("#q0-f0-input", "3")
        await page.click("#review")
        await expect(page).to_have_title(f"Check your answers · {asked}")
        assert await page.evaluate(HEADINGS) == ["1 Table bookings 1.0.0 asks", "2 Check your answers"]
        await page.click("#change")
        await expect(page).to_have_title(asked)
        await page.click("#review")
        await page.click("#send")
        await expect(page).to_have_title(f"Sent · {asked}")
        assert await page.evaluate(HEADINGS) == ["1 Table bookings 1.0.0 asks", "2 Sent"]
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_the_title_stops_saying_answers_need_fixing_once_they_are_fixed(new_page: NewPage) -> None:
    """The title follows the problems as the person fixes them, as the fields' messages do:
    it said "1 answer needs fixing" until the next review, however many were fixed."""
    async with open_round([form_request(SMALL, message="How many?")]) as opened:
        page = await show(new_page, opened)
        asked = "Table bookings asks: How many? · mcp-elicit"
        await page.fill("#q0-f0-input", "30")
        await page.click("#review")
        await expect(page).to_have_title(f"1 answer needs fixing · {asked}")
        await page.fill("#q0-f0-input", "3")
        await expect(page.locator("#q0-f0-input")).not_to_have_attribute("aria-invalid", "true")
        await expect(page).to_have_title(asked)
        await page.fill("#q0-f0-input", "31")
        await expect(page).to_have_title(f"1 answer needs fixing · {asked}")
        await page.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()]


async def test_several_questions_are_counted_in_the_title(new_page: NewPage) -> None:
    async with open_round([form_request(SMALL), url_request("https://pay.example.com/")]) as opened:
        page = await show(new_page, opened)
        await expect(page).to_have_title("Table bookings asks you 2 questions · mcp-elicit")
        await page.click("#cancel")
        await expect(page).to_have_title("Cancelled · Table bookings asks you 2 questions · mcp-elicit")
        assert await opened.answers() == [ElicitAnswer.cancel()] * 2


@pytest.mark.parametrize("media", list(MEDIA))
async def test_the_warning_that_time_runs_out_has_no_violations(new_page: NewPage, media: str) -> None:
    """The warning shows half the wait before the end: 5 seconds for the audit (the round
    ended during it under load, and the ending page was audited instead of the warning)."""
    wait = 10.0
    async with open_round([form_request(SMALL)], timeout=wait) as opened:
        page = await show(new_page, opened, **MEDIA[media])
        await expect(page.locator("#time")).to_be_visible(timeout=wait * 1000)
        await _clean(page, "time runs out")
        assert await page.locator("#time").is_visible()  # what was audited
        await page.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()]


@pytest.mark.parametrize("media", list(MEDIA))
async def test_the_step_to_the_form_has_no_violations(new_page: NewPage, media: str) -> None:
    """The page the link answers when followed from another site, as the answer server
    wrote it, shown at the answer server's address (its stylesheet is the server's)."""
    tab = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        step = (await client.get(opened.url, headers=tab)).text
        assert "Continue to the question" in step, step
        page = await new_page(**MEDIA[media])
        await page.route(
            f"{opened.base}/step", lambda route: route.fulfill(content_type="text/html", body=step)
        )
        await page.goto(f"{opened.base}/step")
        await _clean(page, "the step to the form")


@pytest.mark.parametrize("media", list(MEDIA))
async def test_the_link_opened_again_has_no_violations(new_page: NewPage, media: str) -> None:
    """The end page a link opened a second time answers (``web_pages.end_page``, as the
    question no longer open and a page opened without its cookie are)."""
    async with open_round([form_request(SMALL)]) as opened:
        first = await show(new_page, opened, **MEDIA[media])
        again = await new_page(**MEDIA[media])
        await again.goto(opened.url, wait_until="load")
        await expect(again.locator("main h1")).to_have_text("This link was already opened")
        await _clean(again, "the link opened again")
        await first.click("#cancel")
        await opened.answers()


#: Each box's border as drawn: [style, width in px, colour], by selector.
BORDERS = """(selectors) => selectors.map((s) => {
  const style = getComputedStyle(document.querySelector(s));
  return [s, style.borderTopStyle, parseFloat(style.borderTopWidth), style.borderTopColor];
})"""


async def test_boxes_set_apart_by_their_colour_keep_a_frame_in_forced_colours(new_page: NewPage) -> None:
    """Forced colours (Windows High Contrast) draw every background in the one page colour:
    the alert, a URL's warnings and the time warning, set apart by their background alone,
    became lines of text among the others. Each keeps a border there, in the text's colour."""
    wait = 4.0
    requests = [form_request(SMALL), url_request("https://xn--80ak6aa92e.com/", key="u")]
    async with open_round(requests, timeout=wait) as opened:
        page = await show(new_page, opened, forced_colors="active")
        await page.click("#review")
        await expect(page.locator("#alert")).not_to_have_text("")
        await expect(page.locator("#time")).to_be_visible(timeout=wait * 1000)
        boxes = ["#alert", "#q1 .warning", "#time"]
        for name, style, width, colour in await page.evaluate(BORDERS, boxes):
            assert style == "solid" and width >= 1 and colour != "rgba(0, 0, 0, 0)", (
                name,
                style,
                width,
                colour,
            )
        assert await opened.answers(wait + 5) == [ElicitAnswer.cancel()] * 2
