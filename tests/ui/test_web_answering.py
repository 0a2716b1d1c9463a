"""The browser answerer in a real Chromium (Playwright): validation, review, decline and cancel: problems
shown next to their field and announced, the review going back, closing the tab, reloads,
the link opened from another site, no JavaScript, and time running out."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from mcp_elicit import Form, Integer, MultiChoice
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.answerers import SERVER_STOPPED
from mcp_elicit.ui import web_round
from ui.web_rounds import (
    DEFAULTS,
    form_request,
    open_round,
    rounds_seen,
    url_request,
)

from support.browser import NewPage
from support.web_page import EVENTS, OSLO, SMALL, expect, review_and_send, show

if TYPE_CHECKING:
    from playwright.async_api import Route

pytestmark = [pytest.mark.anyio]

SMALL_MESSAGE = "How many guests, and a note?"


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


async def test_a_multi_choice_unticked_is_none_of_them_as_in_the_terminal(new_page: NewPage) -> None:
    """Its default's boxes all unticked: [] is sent, and minItems 1 refuses it, as the
    terminal reads its default's choices all cleared (tests/ui/test_terminal.py)."""
    fruit = {"a": "Apples", "b": "Pears"}
    form = Form(
        m=MultiChoice(fruit, title="Fruit", default=["a", "b"]),
        n=MultiChoice(fruit, title="Kept", default=["a"], min_items=1),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        for box in ("#q0-f0-o0", "#q0-f0-o1", "#q0-f1-o0"):
            await page.uncheck(box)
        await page.click("#review")
        await expect(page.locator("#q0-f1-error")).to_have_text("Kept must have at least 1 choice")
        await page.check("#q0-f1-o1")
        await review_and_send(page)
        assert await opened.answers() == [ElicitAnswer.accept(m=[], n=["b"])]


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


async def test_the_review_shows_a_long_typed_answer_whole(new_page: NewPage) -> None:
    """The review cut a typed text at 200 characters ("… (286 characters)"), as it cuts a
    server's text: the person could not check the end of what they were about to send."""
    note = "Please " + "x" * 270 + " the end."
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "2")
        await page.fill("#q0-f1-input", note)
        await page.click("#review")
        await expect(page.locator("#review-list dd").nth(1)).to_have_text(note)
        await page.click("#send")
        assert await opened.answers() == [ElicitAnswer.accept(guests=2, note=note)]


async def test_back_on_the_review_goes_back_to_the_form(new_page: NewPage) -> None:
    """The review is a step of its own: the browser's Back there left the page (a "Leave
    site?" prompt, and the question cancelled once the page was gone) where a person means
    the form. Back now shows the form with its answers, Forward does not bring back a review
    of answers since changed, and Back after "Change answers" leaves the form as before."""
    dialogs: list[str] = []
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        page.on(
            "dialog", lambda dialog: (dialogs.append(dialog.type), asyncio.ensure_future(dialog.dismiss()))
        )
        await page.fill("#q0-f0-input", "3")
        await page.click("#review")
        await expect(page.locator("#review-title")).to_be_focused()
        await page.evaluate("history.back()")
        await expect(page.locator("#review-step")).to_be_hidden()
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await page.fill("#q0-f0-input", "4")
        await page.evaluate("history.forward()")
        await page.click("#review")
        await expect(page.locator("#review-list")).to_contain_text("Guests4")
        await page.click("#change")
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        assert await page.evaluate("history.state") is None  # the review's entry stepped back over
        await review_and_send(page)
        assert dialogs == []
        assert await opened.answers() == [ElicitAnswer.accept(guests=4)]


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


async def test_a_reload_is_not_a_close(new_page: NewPage, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reload closes the page's event stream and opens another: within the grace that is
    no close. The grace is a ratio of how long loading the page took on this machine now:
    a fixed 0.5 s was shorter than a reload on a loaded one (the round was cancelled and
    the reloaded page's stream never came up)."""
    rounds = rounds_seen(monkeypatch)
    loop = asyncio.get_running_loop()
    async with open_round([form_request(SMALL)]) as opened:
        page = await new_page(**OSLO)
        started = loop.time()
        await page.goto(opened.url)
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        [round_] = rounds
        round_.grace = max(0.5, 3 * (loop.time() - started))  # read when a stream closes
        await page.reload()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1", timeout=round_.grace * 1000)
        assert not opened.task.done()
        with pytest.raises(TimeoutError):  # the close the reload armed has passed, and ended nothing
            await opened.answers(timeout=round_.grace * 1.5)
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


async def test_a_page_of_another_site_that_opens_the_link_gets_no_hold_on_the_form(
    new_page: NewPage,
) -> None:
    """The page's ``Cross-Origin-Opener-Policy: same-origin``: a page of another site that
    opens the link in a window of its own gets no handle into the form (the window it holds
    reads as closed, the form has no opener), so it cannot script, navigate or watch it."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await new_page(**OSLO)
        stub = "<!doctype html><title>Notebook</title><p>Output</p>"
        await page.route(
            "https://notebook.example/", lambda route: route.fulfill(content_type="text/html", body=stub)
        )
        await page.goto("https://notebook.example/")
        async with page.expect_popup() as popup_info:
            await page.evaluate(f"window.held = window.open({opened.url!r}, 'answer')")
        form = await popup_info.value
        await expect(form.locator("#app")).to_have_attribute("data-live", "1")
        assert await form.evaluate("window.opener") is None
        assert await page.evaluate("window.held.closed") is True  # severed from its opener
        await form.fill("#q0-f0-input", "3")
        await review_and_send(form)
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_without_javascript_the_page_says_so_and_shows_no_dead_form(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With JavaScript off nothing on the page could send anything, and the round is
    cancelled when no event stream comes: the page says exactly that, and shows no form
    whose buttons would do nothing."""
    # long enough for a loaded machine to fetch the page once its link is used (0.5 s was not)
    monkeypatch.setattr(web_round, "FIRST_STREAM_SECONDS", 5.0)
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


async def test_without_javascript_or_stylesheet_the_page_still_shows_no_dead_form(
    new_page: NewPage,
) -> None:
    """What does nothing without JavaScript is hidden by the page itself, not by its
    stylesheet: a stylesheet that never arrives (the answer server gone once the round was
    cancelled, a proxy that drops it) shows no buttons either."""
    both = [form_request(SMALL, message=SMALL_MESSAGE), url_request("https://pay.example.com/")]
    async with open_round(both) as opened:
        page = await new_page(java_script_enabled=False)
        await page.route("**/static/app.css", lambda route: route.abort())
        await page.goto(opened.url)
        await expect(page.locator("#q0-message")).to_have_text(SMALL_MESSAGE)
        for role in ("button", "link", "textbox", "spinbutton", "checkbox"):
            await expect(page.get_by_role(role)).to_have_count(0)


async def test_waiting_too_long_cancels_and_the_page_says_so(
    new_page: NewPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait runs out once the page is up, however long loading it took (a wait of a few
    seconds could end before a loaded machine had shown the page: no stream, no "Timed out").
    The page then says so, and no longer claims a live stream."""
    rounds = rounds_seen(monkeypatch)
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        [round_] = rounds
        assert round_.deadline is not None
        round_.deadline.reschedule(asyncio.get_running_loop().time())  # the wait runs out now
        await expect(page.locator("#finished-title")).to_have_text("Timed out")
        await expect(page.locator("#finished-text")).to_contain_text("Nobody answered in time")
        assert await opened.answers() == [ElicitAnswer.cancel()]
        assert any("no answer within" in line for line in opened.said), opened.said
        await expect(page.locator("#app")).to_have_attribute("data-live", "0")  # its stream is closed


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
    """The question taken back (the server's cancellation, the client's call ending) said
    "Cancelled", the words of the person's own Cancel button, as if they had pressed it; the
    terminal says the question was withdrawn."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        opened.task.cancel()
        await expect(page.locator("#finished-title")).to_have_text("Withdrawn")
        await expect(page.locator("#finished-text")).to_have_text(
            "The question was withdrawn before you answered, so nothing was sent. You can close this tab."
        )


async def test_a_page_whose_server_stopped_says_so(new_page: NewPage) -> None:
    """The client withdraws a question whose server stopped with SERVER_STOPPED, and the
    terminal says "the server stopped": the page said "Cancelled / Nothing was sent", as if
    the server had taken the question back."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        opened.task.cancel(SERVER_STOPPED)
        await expect(page.locator("#finished-title")).to_have_text("Server stopped")
        await expect(page.locator("#finished-text")).to_have_text(
            "Table bookings stopped, so nothing was sent. You can close this tab."
        )


async def test_a_stream_the_browser_closed_is_asked_for_again(new_page: NewPage) -> None:
    """The browser closes the page's event stream when the tab stops its loads (Esc, or a
    reload starting): that alone ended the page ("No longer open") and forgot its draft, with
    the answer server still waiting. The page now asks for the stream again."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await page.evaluate("window.stop()")
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#finished")).to_be_hidden()
        await review_and_send(page)
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_stopping_the_tab_again_and_again_ends_nothing(new_page: NewPage) -> None:
    """Each stop (Esc, window.stop()) aborts the stream, the one being asked for again too:
    three in a row ended the page ("No longer open") and forgot its draft while the answer
    server was still waiting. A stream the browser dropped is no sign of a server gone."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        asked: asyncio.Queue[Route] = asyncio.Queue()
        await page.route(EVENTS, asked.put_nowait)  # held: the stream stays unanswered
        for _ in range(2):
            await page.evaluate("window.stop()")
            await asyncio.wait_for(asked.get(), 10)  # asked for again, held
        await page.unroute(EVENTS)
        await page.evaluate("window.stop()")  # the third stop in a row, of a stream still asked for
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#finished")).to_be_hidden()
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await review_and_send(page)
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]


async def test_a_stream_that_cannot_come_back_says_nobody_is_waiting(new_page: NewPage) -> None:
    """The stream fails, and the answer server, asked whether it still waits, does not say
    so (503 here, as a proxy would; refused once it has stopped): three times in a row end
    the page."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        for path in (EVENTS, "**/api/check"):
            await page.route(path, lambda route: route.fulfill(status=503))
        await page.evaluate("window.stop()")
        await expect(page.locator("#finished-title")).to_have_text("No longer open", timeout=5_000)
        assert await page.evaluate("sessionStorage.length") == 0  # the draft of an ended round
