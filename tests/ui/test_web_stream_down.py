"""The browser answerer's page in a real Chromium while its event stream is down: a round that
ends meanwhile is said as it ended, a page whose first stream never comes says so without
waiting for the browser's own retries, and a stream that keeps failing while the answer
server answers is asked for again less and less often, and not at all once the round ended."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.ui.web_round import Round
from ui.web_rounds import form_request, open_round, rounds_seen, until_streams

from support.browser import NewPage
from support.web_page import EVENTS, OSLO, SMALL, expect, review_and_send, show

if TYPE_CHECKING:
    from playwright.async_api import Page, Request

pytestmark = [pytest.mark.anyio]


async def _stream_down(page: Page, round_: Round, others: int) -> None:
    """The page's event stream dropped, and every new one refused before it reaches the
    answer server (as a proxy or a flaky network would); ``/api/check`` still gets through.
    Returns once the answer server saw it go (``others`` streams left, of other tabs)."""
    await page.route(EVENTS, lambda route: route.abort())
    await page.evaluate("window.stop()")
    await expect(page.locator("#app")).to_have_attribute("data-live", "0")
    await until_streams(round_, others)


async def _until(done: Callable[[], bool]) -> None:
    """Once ``done()``, bounded (10 s)."""
    for _ in range(200):
        if done():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not seen within 10 s")


def _asked(page: Page, path: str) -> list[str]:
    """Every request of ``page`` for ``path``, as it is made."""
    seen: list[str] = []

    def record(request: Request) -> None:
        if urlsplit(request.url).path == path:
            seen.append(request.url)

    page.on("request", record)
    return seen


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
            title, text = "Withdrawn", "withdrawn before you answered, so nothing was sent"
        else:
            assert other is not None
            await other.fill("#q0-f0-input", "4")
            await review_and_send(other)
            assert await opened.answers() == [ElicitAnswer.accept(guests=4)]
            title, text = "Sent", "Your answers went to Table bookings"
        await expect(page.locator("#finished-title")).to_have_text(title, timeout=10_000)
        await expect(page.locator("#finished-text")).to_contain_text(text)
        assert await page.evaluate("sessionStorage.length") == 0  # the draft of an ended round


async def test_a_page_whose_first_stream_never_comes_asks_at_once(new_page: NewPage) -> None:
    """The page's first stream failed and the answer server did not answer: the page waited
    for the browser to ask for the stream again (3 s each time, before the server's own
    ``retry`` could arrive), three times, before it said "No longer open". It now asks the
    answer server again by itself, and says so before the stream is asked for again."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await new_page(**OSLO)
        streams = _asked(page, "/api/events")
        await page.route(EVENTS, lambda route: route.abort())
        await page.route("**/api/check", lambda route: route.abort())
        await page.goto(opened.url)
        await expect(page.locator("#finished-title")).to_have_text("No longer open", timeout=10_000)
        assert len(streams) == 1, streams


async def test_a_stream_that_keeps_failing_is_asked_for_less_often_and_not_once_ended(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the answer server answered ``/api/check`` but every stream failed (a proxy that
    refuses event streams), the page asked for both every second, for good. It now waits
    longer each time (up to 8 s), and asks nothing more once it learns the round ended
    (here the wait runs out). Time on the page is Playwright's clock, run forward by the
    test; the grace without a stream is long here, so that the round stays open meanwhile."""
    rounds = rounds_seen(monkeypatch)

    async def page_time(seconds: int) -> None:
        for _ in range(seconds):  # a second at a time
            await page.clock.run_for(1000)
            await asyncio.sleep(0.05)  # the requests it made meanwhile go and come back

    async with open_round([form_request(SMALL)], grace=600) as opened:
        page = await new_page(**OSLO)
        await page.clock.install()
        streams = _asked(page, "/api/events")
        await page.goto(opened.url)
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        [round_] = rounds
        await page.route(EVENTS, lambda route: route.fulfill(status=503))
        await page.evaluate("window.stop()")
        await until_streams(round_, 0)
        await page_time(60)
        assert 3 <= len(streams) <= 15, streams  # every second: 60
        assert round_.deadline is not None
        round_.deadline.reschedule(asyncio.get_running_loop().time())
        await page_time(10)
        await expect(page.locator("#finished-title")).to_have_text("Timed out")
        before = len(streams)
        await page_time(20)
        assert len(streams) == before


async def test_each_tab_names_itself_on_its_stream_and_its_posts(new_page: NewPage) -> None:
    """The answer server counts a page told once however many times it hears how the round
    ended (its stream's end, then a 409 to a check it had sent): each load of the page names
    itself, the same on its event stream and its posts, and another tab otherwise."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        other = await page.context.new_page()
        names: dict[Page, list[tuple[str, str]]] = {page: [], other: []}
        for tab, seen in names.items():

            def record(request: Request, seen: list[tuple[str, str]] = seen) -> None:
                parts = urlsplit(request.url)
                if parts.path == "/api/events":
                    seen.append(("stream", parse_qs(parts.query).get("page", [""])[0]))
                elif parts.path == "/api/check":
                    seen.append(("post", request.headers.get("x-mcp-elicit-page", "")))

            tab.on("request", record)
        await other.goto(f"{opened.base}/form")
        await expect(other.locator("#app")).to_have_attribute("data-live", "1")
        await page.route(EVENTS, lambda route: route.abort())
        await page.evaluate("window.stop()")  # the stream fails, and the page asks with a check
        await _until(lambda: len(names[page]) > 1)
        await other.fill("#q0-f0-input", "3")  # checked as typed
        await _until(lambda: len(names[other]) > 1)
        mine = {name for _, name in names[page]}
        theirs = {name for _, name in names[other]}
        assert {kind for kind, _ in names[page]} == {kind for kind, _ in names[other]} == {"stream", "post"}
        assert len(mine) == len(theirs) == 1, names
        assert mine != theirs and "" not in mine | theirs


async def test_a_stream_that_opens_and_drops_at_once_is_asked_for_less_often(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream that comes up and is cut at once (a proxy that ends every response, here
    answering for the answer server) counted as a good stream: the page's wait went back to
    1 s each time, and it asked for a stream, and the answer server with a check, every
    second for good. Only a stream that stayed up a while now starts the waits over."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)], grace=600) as opened:
        page = await new_page(**OSLO)
        await page.clock.install()
        streams = _asked(page, "/api/events")
        await page.goto(opened.url)
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        [round_] = rounds
        cut = {"status": 200, "content_type": "text/event-stream", "body": "retry: 1000\n\n"}
        await page.route(EVENTS, lambda route: route.fulfill(**cut))
        await page.evaluate("window.stop()")
        await until_streams(round_, 0)
        for _ in range(60):  # a second of page time at a time
            await page.clock.run_for(1000)
            await asyncio.sleep(0.05)  # the requests it made meanwhile go and come back
        assert 3 <= len(streams) <= 15, streams  # every second: 60
