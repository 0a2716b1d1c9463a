"""The review in a real Chromium (Playwright): the browser's Back while the answers are on
their way, a reload on the review and the round ending there (the tab's history then: one Back
goes to the form, or leaves an ended page), and a typed text shown as typed (its lines, its
spaces, a long word on a phone)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from mcp_elicit import Form, String
from mcp_elicit.client import ElicitAnswer
from ui.web_rounds import Opened, form_request, open_round, url_request

from support.browser import PHONE, NewPage
from support.web_page import OSLO, SMALL, expect, show

if TYPE_CHECKING:
    from playwright.async_api import Page, Route

pytestmark = [pytest.mark.anyio]

#: A text field shown as a text area (its default has a line break).
NOTE = Form(note=String(title="Note", default="first line\nsecond line"))
#: The page the tab showed before the question's (a stub: nothing leaves the machine).
BEFORE = "https://example.com/before"


async def _after_another_page(new_page: NewPage, opened: Opened) -> Page:
    """The round's page, opened in a tab that showed ``BEFORE`` first: a Back that leaves
    the page has somewhere to go."""
    page = await new_page(**OSLO)
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))  # "Leave site?"
    await page.goto(BEFORE)
    await page.goto(opened.url, wait_until="domcontentloaded")
    await expect(page.locator("#app")).to_have_attribute("data-live", "1")
    return page


async def _review(page: Page) -> None:
    await page.click("#review")
    await expect(page.locator("#review-step")).to_be_visible()


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
        await page.wait_for_function(
            "() => history.state === null"
        )  # the ended page is off the review's entry
        await expect(page.locator("#finished-title")).to_have_text("Sent")  # and stays as it is
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


async def test_a_reload_on_the_review_shows_it_again_and_one_back_goes_to_the_form(
    new_page: NewPage,
) -> None:
    """Reloaded on the review, the page showed the form on the review's entry: the Back after
    it stepped to the form's own entry and seemed to do nothing (the same form again), and a
    second Back was needed to leave. The reload now shows the review again, from the tab's
    draft; one Back shows the form with its answers, and the next leaves the page."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await _after_another_page(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await _review(page)
        await page.reload()
        await expect(page.locator("#review-step")).to_be_visible()
        await expect(page.locator("#review-list dd").nth(0)).to_have_text("3")
        await expect(page.locator("#review-title")).to_be_focused()
        await expect(page.locator("#answers")).to_be_hidden()
        await page.go_back()
        await expect(page.locator("#answers")).to_be_visible()
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await expect(page.locator("#review-step")).to_be_hidden()
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await page.go_back()
        assert page.url == BEFORE


async def test_a_reload_on_a_review_the_draft_cannot_hold_steps_back_to_the_form(
    new_page: NewPage,
) -> None:
    """A URL step is not kept across a reload (the person says again that its page is
    done), so a review with one cannot be shown again: the reloaded page steps back to the
    form's own entry, where the form shows what was typed, and one Back then leaves the
    page rather than step from the form to the same form."""
    both = [form_request(SMALL), url_request("https://pay.example.com/")]
    async with open_round(both) as opened:
        page = await _after_another_page(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        async with page.expect_popup():
            await page.click("#q1-open")
        await page.click("#q1-done")
        await _review(page)
        await page.reload()
        await page.wait_for_function("() => history.state === null")  # on the form's entry
        await expect(page.locator("#answers")).to_be_visible()
        await expect(page.locator("#review-step")).to_be_hidden()
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await expect(page.locator("#q1-done")).to_be_hidden()  # to be opened again
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await page.go_back()
        assert page.url == BEFORE


async def test_a_round_withdrawn_on_the_review_leaves_no_entry_behind(new_page: NewPage) -> None:
    """A round that ended while the review was shown (withdrawn by the client here) left the
    review's entry in the tab's history: the first Back on the ended page did nothing, and
    a second was needed to leave. The page steps off that entry as it ends."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await _after_another_page(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await _review(page)
        opened.task.cancel()
        await expect(page.locator("#finished-title")).to_have_text("Withdrawn")
        await page.wait_for_function("() => history.state === null")
        await expect(page.locator("#finished-title")).to_have_text("Withdrawn")  # the ended page stays
        await page.go_back()
        assert page.url == BEFORE


async def test_forward_to_the_review_on_an_ended_page_steps_back(new_page: NewPage) -> None:
    """The ended page steps off the review's entry, but Forward took the tab back onto it,
    where the ended page stayed: the next Back stepped to the form's entry, the same ended
    page, and seemed to do nothing. The ended page steps back over it there too."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await _after_another_page(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await _review(page)
        opened.task.cancel()
        await expect(page.locator("#finished-title")).to_have_text("Withdrawn")
        await page.wait_for_function("() => history.state === null")
        await page.go_forward()
        await page.wait_for_function("() => history.state === null")  # stepped back over it
        await expect(page.locator("#finished-title")).to_have_text("Withdrawn")
        await expect(page.locator("#answers")).to_be_hidden()
        await page.go_back()
        assert page.url == BEFORE


#: A tab whose session storage is refused (the browser set to keep no site data): no draft.
_NO_STORAGE = (
    "Object.defineProperty(window, 'sessionStorage', "
    "{ get() { throw new DOMException('Access is denied', 'SecurityError'); } })"
)


async def test_a_reload_on_the_review_without_a_draft_shows_the_form(new_page: NewPage) -> None:
    """With no draft to read (the tab's storage refused, or full), a reload on the review
    showed the review again of what the reloaded form held: "(no answer)" where the person
    had typed a note, to be sent as checked. Only a draft of the round brings the review
    back; without one the page steps back to the form's entry, and one Back leaves."""
    optional = Form(note=String(title="Note", required=False))
    async with open_round([form_request(optional)]) as opened:
        page = await new_page(**OSLO)
        await page.add_init_script(_NO_STORAGE)
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await page.goto(BEFORE)
        await page.goto(opened.url, wait_until="domcontentloaded")
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await page.fill("#q0-f0-input", "by the window")
        await _review(page)
        await expect(page.locator("#review-list dd").nth(0)).to_have_text("by the window")
        await page.reload()
        await page.wait_for_function("() => history.state === null")  # on the form's entry
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        await expect(page.locator("#answers")).to_be_visible()
        await expect(page.locator("#review-step")).to_be_hidden()
        await page.go_back()
        assert page.url == BEFORE


async def test_a_reload_on_a_review_of_untouched_defaults_shows_it_again(new_page: NewPage) -> None:
    """Nothing typed keeps no draft as the form is filled in; the review keeps one, so a
    reload there shows the review again rather than step back to the form."""
    async with open_round([form_request(NOTE)]) as opened:
        page = await _after_another_page(new_page, opened)
        await _review(page)
        await page.reload()
        await expect(page.locator("#review-step")).to_be_visible()
        shown = await page.locator("#review-list dd").nth(0).evaluate("(dd) => dd.innerText")
        assert shown == "first line\nsecond line"
        await page.click("#send")
        await expect(page.locator("#finished-title")).to_have_text("Sent")
        assert await opened.answers() == [ElicitAnswer.accept(note="first line\nsecond line")]


async def test_a_reload_on_the_review_whose_check_fails_steps_back(new_page: NewPage) -> None:
    """Reloaded on the review, the page checks the draft's answers again before showing
    them; when that check could not be made (the answer server said 503 here), the page
    said so on the form, left on the review's entry: the first Back seemed to do nothing.
    It steps back to the form's entry, and one Back leaves."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await _after_another_page(new_page, opened)
        await page.fill("#q0-f0-input", "3")
        await _review(page)
        await page.route("**/api/check", lambda route: route.fulfill(status=503, json={}))
        await page.reload()
        await expect(page.locator("#alert")).to_have_text(
            "This could not be sent: the answer server said 503."
        )
        await page.wait_for_function("() => history.state === null")  # on the form's entry
        await expect(page.locator("#answers")).to_be_visible()
        await expect(page.locator("#q0-f0-input")).to_have_value("3")
        await page.go_back()
        assert page.url == BEFORE
