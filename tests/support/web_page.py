"""What the browser answerer's tests in a real Chromium share: Playwright's ``expect`` (a module
importing this one is skipped without playwright), a small form, showing an opened round's page in a
new browser page, and reviewing and sending it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from ui.web_rounds import Opened

from support.browser import NewPage
from support.web_answers import SMALL

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["EVENTS", "OSLO", "SMALL", "expect", "review_and_send", "show"]

expect = pytest.importorskip(
    "playwright.async_api", reason="playwright is not installed (make install)"
).expect
OSLO = {"timezone_id": "Europe/Oslo", "locale": "en-GB"}
#: The page's event stream, for ``page.route`` (the page names itself in its query).
EVENTS = re.compile(r"/api/events(\?|$)")


async def show(new_page: NewPage, opened: Opened, **options: Any) -> Page:
    page = await new_page(**{**OSLO, **options})
    await page.goto(opened.url, wait_until="domcontentloaded")
    await expect(page.locator("#answers")).to_be_visible()
    await expect(page.locator("#app")).to_have_attribute("data-live", "1")  # its event stream is up
    return page


async def review_and_send(page: Page, said: str = "Sent") -> None:
    """Review and send; the page then says ``said``: "Sent" where the answer goes at once
    (2025-11-25, and a round started here without a client), "Answered" where it goes with
    a 2026-07-28 retry or task update."""
    await page.click("#review")
    await expect(page.locator("#review-step")).to_be_visible()
    await page.click("#send")
    await expect(page.locator("#finished-title")).to_have_text(said)
