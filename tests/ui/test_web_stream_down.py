"""The browser answerer's page in a real Chromium while its event stream is down: a round that
ends meanwhile is said as it ended."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.ui.web_round import Round
from ui.web_rounds import form_request, open_round, rounds_seen, until_streams

from support.browser import NewPage
from support.web_page import SMALL, expect, review_and_send, show

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.anyio]


async def _stream_down(page: Page, round_: Round, others: int) -> None:
    """The page's event stream dropped, and every new one refused before it reaches the
    answer server (as a proxy or a flaky network would); ``/api/check`` still gets through.
    Returns once the answer server saw it go (``others`` streams left, of other tabs)."""
    await page.route("**/api/events", lambda route: route.abort())
    await page.evaluate("window.stop()")
    await expect(page.locator("#app")).to_have_attribute("data-live", "0")
    await until_streams(round_, others)


@pytest.mark.parametrize("how", ["timed out", "withdrawn by the client", "answered in another tab"])
async def test_a_round_that_ends_while_the_stream_is_down_is_said_as_it_ended(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The answer server stopped as soon as its round ended: a page whose stream was down
    then (a flaky network, a proxy) found nobody to ask and said "No longer open" whatever
    happened. The answer server now stays a while for such a page, which learns how the
    round ended and says it as it would have with its stream up."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        other = None
        if how == "answered in another tab":  # the same browser: the page's cookie works there
            other = await page.context.new_page()
            await other.goto(f"{opened.base}/form")
            await expect(other.locator("#app")).to_have_attribute("data-live", "1")
        [round_] = rounds
        await _stream_down(page, round_, 0 if other is None else 1)
        if how == "timed out":
            assert round_.deadline is not None
            round_.deadline.reschedule(asyncio.get_running_loop().time())
            title, text = "Timed out", "Nobody answered in time"
        elif how == "withdrawn by the client":
            opened.task.cancel()
            title, text = "Cancelled", "Nothing was sent"
        else:
            assert other is not None
            await other.fill("#q0-f0-input", "4")
            await review_and_send(other)
            assert await opened.answers() == [ElicitAnswer.accept(guests=4)]
            title, text = "Sent", "Your answers went to Table bookings"
        await expect(page.locator("#finished-title")).to_have_text(title, timeout=10_000)
        await expect(page.locator("#finished-text")).to_contain_text(text)
        assert await page.evaluate("sessionStorage.length") == 0  # the draft of an ended round
