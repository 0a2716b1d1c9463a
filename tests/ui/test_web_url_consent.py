"""The browser answerer in a real Chromium (Playwright): several questions of a round on one page, and URL
consent: the whole URL, its site and every warning shown, opening in a new top-level tab,
refused URLs getting no link."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from mcp_elicit import Form
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.forms import Boolean
from ui.web_rounds import (
    SERVER,
    form_request,
    open_round,
    rounds_seen,
    url_request,
)

from support.browser import NewPage
from support.web_page import SMALL, expect, show

pytestmark = [pytest.mark.anyio]


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


async def test_the_done_button_hands_the_focus_on_as_it_goes(new_page: NewPage) -> None:
    # "I'm done" on a page of several questions hides itself: the focus fell to the page's
    # body, and a keyboard or screen reader user was left nowhere, back at the top.
    requests = [form_request(SMALL, message="How many?", key="size"), url_request("https://example.com/")]
    async with open_round(requests) as opened:
        page = await show(new_page, opened)
        async with page.expect_popup():
            await page.click("#q1-open")
        await page.focus("#q1-done")
        await page.keyboard.press("Enter")
        await expect(page.locator("#q1-state")).to_have_text("Done.")
        await expect(page.locator("#q1-open")).to_be_focused()
        await page.fill("#q0-f0-input", "2")
        await page.click("#review")
        await page.click("#send")
        assert await opened.answers() == [ElicitAnswer.accept(guests=2), ElicitAnswer.accept()]


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
        # not "Sent: your answers went to ...": this page asked nothing to answer
        await expect(page.locator("#finished-title")).to_have_text("Done")
        await expect(page.locator("#finished-text")).to_have_text(
            "Table bookings was told that you are done. You can close this tab."
        )
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


async def test_a_middle_click_on_open_counts_as_opening_the_page(new_page: NewPage) -> None:
    """A middle click opens the link in a new tab, but is no "click": the page went on as if
    nothing were opened (no "I'm done", and a 2025-11-25 server saying the step is finished
    was never taken, the answer server not having heard of the opening)."""
    said_done = asyncio.Event()
    request = dataclasses.replace(url_request("https://example.com/connect"), finished=said_done.wait)
    async with open_round([request]) as opened:
        page = await show(new_page, opened)
        async with page.context.expect_page():
            await page.click("#q0-open", button="middle")
        await expect(page.locator("#q0-done")).to_be_visible()
        await expect(page.locator("#q0-state")).to_contain_text("Opened in a new tab")
        said_done.set()
        await expect(page.locator("#finished-title")).to_have_text("Done")
        assert await opened.answers() == [ElicitAnswer.accept()]


@pytest.mark.parametrize("how", ["the link's menu", "a drag"])
async def test_the_links_menu_or_a_drag_offers_im_done(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Opened from the link's menu ("Open link in new tab") or dragged to the tab bar, the
    page was opened with no event saying so, and the page offered no way to say it was done
    (only Open again, or Decline). The menu opening or a drag starting shows "I'm done", as
    an offer: Open stays the way forward, and the answer server is told of no opening, so a
    2025-11-25 server's word that the step is finished still waits for the person."""
    rounds = rounds_seen(monkeypatch)
    said_done = asyncio.Event()
    request = dataclasses.replace(url_request("https://example.com/connect"), finished=said_done.wait)
    async with open_round([request]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-done")).to_be_hidden()
        link = page.locator("#q0-open")
        if how == "a drag":
            # a real drag, let go over the page, which takes no drop (as if over the tab bar)
            box = await link.bounding_box()
            assert box is not None
            await page.mouse.move(box["x"] + 5, box["y"] + 5)
            await page.mouse.down()
            await page.mouse.move(box["x"] + 60, box["y"] + 80, steps=5)
            await page.mouse.up()
        else:
            await link.click(button="right")
        await expect(page.locator("#q0-done")).to_be_visible()
        await expect(page.locator("#q0-state")).to_have_text(
            "Opened it from the link's menu or by dragging it? Press “I'm done” here when you have "
            "finished there."
        )
        await expect(link).to_have_text("Open the page")  # still the way forward
        said_done.set()
        assert not rounds[0].url_opened.is_set()  # the server's word is not taken for the person's
        await page.click("#q0-done")
        await expect(page.locator("#finished-title")).to_have_text("Done")
        await expect(page.locator("#finished-text")).to_contain_text("was told that you are done")
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


@pytest.mark.parametrize(
    ("url", "goes"),
    [
        ("http:evil.example/login", "http://evil.example/login"),
        ("http:/evil.example/login", "http://evil.example/login"),
        ("HTTP:evil.example/login", "http://evil.example/login"),
        ("https:evil.example/login", "https://evil.example/login"),
        ("http:///evil.example/login", "http://evil.example/login"),
    ],
)
async def test_a_url_written_oddly_opens_where_its_verdict_says(
    new_page: NewPage, url: str, goes: str
) -> None:
    """A URL with too few slashes after its scheme, read against the page's own address
    (http://127.0.0.1:PORT), would be a path on this answer server when the scheme is the
    page's own: the link opens the site the person was shown, as a browser given it alone."""
    verdict = judge_url(url, server=SERVER.where)
    assert verdict.site == "evil.example" and "odd-syntax" in verdict.codes
    async with open_round([url_request(url)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0 .url")).to_have_text(url)  # shown as the server wrote it
        assert await page.locator("#q0-open").evaluate("a => a.href") == goes
        await page.click("#decline")
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_a_message_that_imitates_the_url_box_is_framed_as_the_servers(new_page: NewPage) -> None:
    """The server's message stands in a frame of its own, named as the server's, as in the
    terminal: a message writing "The server asks you to open this web page:", an address
    and "Site bank.example" read in the page's own voice, just above the real box naming
    evil.example."""
    fake = (
        "Please confirm your bank login.\n\nThe server asks you to open this web page:\n"
        "https://bank.example/login\n\nSite\nbank.example"
    )
    async with open_round([url_request("https://evil.example/login", message=fake)]) as opened:
        page = await show(new_page, opened)
        frame = page.locator("#q0 .said")
        await expect(frame).to_be_visible()
        await expect(frame.locator("#q0-said")).to_have_text("The server's message")
        await expect(frame.locator("#q0-message")).to_have_text(fake)
        await expect(frame).to_have_attribute("aria-labelledby", "q0-said")
        border = await frame.evaluate(
            "e => getComputedStyle(e).borderTopStyle + ' ' + getComputedStyle(e).borderTopWidth"
        )
        assert border.split()[0] != "none" and border.split()[1] != "0px", border
        assert await frame.locator(".url-box, .site").count() == 0  # the client's own lines stay outside
        await expect(page.locator("#q0 .site-name")).to_have_text("evil.example")
        await page.click("#decline")
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_web_pages_each_declined_end_declined_not_done(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page of web-page steps only ended "Done: ... was told that you are done" once
    # sent, though the person had declined each step one by one and was done with none
    # (and a page loaded later: "no longer open: the answers were sent").
    rounds = rounds_seen(monkeypatch)
    requests = [
        url_request("https://pay.example.com/a", key="a"),
        url_request("https://pay.example.com/b", key="b"),
    ]
    async with open_round(requests) as opened:
        page = await show(new_page, opened)
        for q in ("#q0", "#q1"):
            await page.click(f"{q} button.decline-one")
        await page.click("#review")
        await page.click("#send")
        await expect(page.locator("#finished-title")).to_have_text("Declined")
        await expect(page.locator("#finished-text")).to_have_text(
            "Table bookings was told that you declined. You can close this tab."
        )
        assert await opened.answers() == [ElicitAnswer.decline(), ElicitAnswer.decline()]
    assert rounds[0].reason == "decline"  # what another tab, or a page loaded later, is told
