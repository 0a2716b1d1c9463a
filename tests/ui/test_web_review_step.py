"""The review in a real Chromium (Playwright): the browser's Back while the answers are on
their way, and a typed text shown as typed (its lines, its spaces, a long word on a phone)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from mcp_elicit import Form, String
from mcp_elicit.client import ElicitAnswer
from ui.web_rounds import form_request, open_round

from support.browser import PHONE, NewPage
from support.web_page import SMALL, expect, show

if TYPE_CHECKING:
    from playwright.async_api import Route

pytestmark = [pytest.mark.anyio]

#: A text field shown as a text area (its default has a line break).
NOTE = Form(note=String(title="Note", default="first line\nsecond line"))


async def test_back_while_the_answers_are_sent_keeps_the_review(new_page: NewPage) -> None:
    """Back on the review while Send was on its way showed the form, its answers editable,
    then "Sent" with the answers as they were before the change: what was sent was not what
    the page showed. The review now stays until the answer server has said."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await page.click("#review")
        await expect(page.locator("#review-step")).to_be_visible()
        arrived = asyncio.Event()
        release = asyncio.Event()

        async def held(route: Route) -> None:
            arrived.set()
            await release.wait()
            await route.continue_()

        await page.route("**/api/answer", held)
        await page.click("#send")
        await arrived.wait()
        # Back, and wait for its popstate (heard after the page's own listener)
        await page.evaluate(
            "new Promise((done) => { addEventListener('popstate', done, { once: true }); history.back(); })"
        )
        assert await page.evaluate("Boolean(history.state)")  # the review's entry back
        await expect(page.locator("#review-step")).to_be_visible()
        await expect(page.locator("#answers")).to_be_hidden()
        release.set()
        await expect(page.locator("#finished-title")).to_have_text("Sent")
        await page.evaluate("history.back()")  # and after it: the ended page stays as it is
        await expect(page.locator("#finished-title")).to_have_text("Sent")
        await expect(page.locator("#answers")).to_be_hidden()
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_the_review_shows_a_typed_text_with_its_lines_and_spaces(new_page: NewPage) -> None:
    """The review ran a typed text's lines and spaces together ("Dear host, two lines"):
    the person could not check what they were about to send. Markup stays text, and a
    character that turns text around is shown by its code."""
    note = "Dear  host,\n\n  two lines\nend <script>alert(1)</script> \u202eabc"
    async with open_round([form_request(NOTE)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", note)
        await page.click("#review")
        await expect(page.locator("#review-step")).to_be_visible()
        # as it reads (innerText), not as Playwright's matchers see it (runs of spaces as one)
        shown = await page.locator("#review-list dd").nth(0).evaluate("(dd) => dd.innerText")
        assert shown == note.replace("\u202e", "<U+202E>")
        await page.click("#send")
        await expect(page.locator("#finished-title")).to_have_text("Sent")
        assert await opened.answers() == [ElicitAnswer.accept(note=note)]


async def test_a_long_word_in_the_review_fits_a_phone(new_page: NewPage) -> None:
    word = "x" * 10_000
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened, **PHONE)
        await page.fill("#q0-f0-input", "2")
        await page.fill("#q0-f1-input", word)
        await page.click("#review")
        await expect(page.locator("#review-list dd").nth(1)).to_have_text(word)
        assert await page.evaluate("document.documentElement.scrollWidth <= innerWidth")
