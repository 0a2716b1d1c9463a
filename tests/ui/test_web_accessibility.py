"""The browser answerer in a real Chromium (Playwright): keyboard only, a focus outline that stands out,
and phone width with no sideways scrolling even for long unbroken server text."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest

from mcp_elicit import Choice, Form, Integer
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Boolean, MultiChoice, String
from ui.web_rounds import (
    SDK_DESCRIBED,
    SERVER,
    form_request,
    open_round,
    url_request,
)

from support.browser import PHONE, NewPage
from support.web_page import SMALL, expect, show

if TYPE_CHECKING:
    from playwright.async_api import Locator

pytestmark = [pytest.mark.anyio]


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


@pytest.mark.parametrize("size", ["phone", "desktop"])
async def test_the_link_opened_again_gets_a_page_like_the_others(new_page: NewPage, size: str) -> None:
    """The link opened a second time answered bare monospace text, laid out for a desktop
    (tiny on a phone): it is now a page like the answer page's own, at any width."""
    options = PHONE if size == "phone" else {}
    async with open_round([form_request()]) as opened:
        first = await show(new_page, opened, **options)
        again = await new_page(**options)
        await again.goto(opened.url, wait_until="load")
        await expect(again.locator("main h1")).to_have_text("This link was already opened")
        await expect(again.locator("main p").last).to_contain_text("the tab it opened in")
        assert "already opened" in await again.title()
        looks = await again.evaluate(
            """() => [getComputedStyle(document.body).fontFamily,
                parseFloat(getComputedStyle(document.querySelector("main p:last-child")).fontSize),
                window.innerWidth, document.documentElement.scrollWidth]"""
        )
        assert "monospace" not in looks[0] and looks[1] >= 16, looks
        assert looks[3] <= looks[2] and (size != "phone" or looks[2] == 390), looks  # the phone's width
        await first.click("#cancel")
        assert await opened.answers() == [ElicitAnswer.cancel()]


#: Whether each of the page's texts, by selector, reads right to left.
READS_RTL = """(selectors) => selectors.map((s) => {
  const found = document.querySelector(s);
  return found === null ? `${s}: missing` : found.matches(":dir(rtl)");
})"""


async def test_right_to_left_server_text_reads_right_to_left(new_page: NewPage) -> None:
    """A server writing Arabic gets its message, labels, descriptions and option titles laid
    out right to left (its full stop and question mark at the end, on the left), on a page that
    is otherwise English; what a person types in a text box too. English text stays as it is."""
    form = Form(
        name=String(title="الاسم الكامل", description="كما في جواز السفر."),
        city=Choice({"ry": "الرياض", "jd": "جدة"}, title="المدينة؟"),
        size=Choice({f"s{n}": f"الحجم {n}" for n in range(6)}, title="الحجم؟", default="s1"),
        extras=MultiChoice({"w": "نبيذ"}, title="إضافات", required=False),
        ok=Boolean(title="موافق؟", default=True),
    )
    message = "هل تريد حجز طاولة لـ 4 أشخاص؟"
    async with open_round([form_request(form, message=message)]) as opened:
        page = await show(new_page, opened)
        rtl = [
            "#q0-message",
            "label[for=q0-f0-input]",
            "#q0-f0-desc",
            "#q0-f0-input",
            "#q0-f1-group legend",
            "label[for=q0-f1-o0]",
            "label[for=q0-f2-input]",
            "#q0-f2-input",
            "#q0-f3-group legend",
            "label[for=q0-f3-o0]",
            "label[for=q0-f4-input]",
        ]
        await page.fill("#q0-f0-input", "زيد")
        assert await page.evaluate(READS_RTL, rtl) == [True] * len(rtl)
        assert await page.evaluate(READS_RTL, ["h1", "#q0-f1-hint", "#review"]) == [False] * 3
        await page.check("#q0-f1-o0")
        await page.click("#review")
        await expect(page.locator("#review-step")).to_be_visible()
        shown = ["#review-list .message", "#review-list dt", "#review-list dd"]
        assert await page.evaluate(READS_RTL, shown) == [True] * len(shown)
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(name="زيد", city="ry", size="s1", extras=[], ok=True)]


#: Two seats whose titles differ only past what a title shows (``form_text.TITLE_MAX``).
_ROW = "A seat in the middle of row twelve, " * 8
SEATS = {"w": _ROW + "by the window", "d": _ROW + "near the door"}  # as long


@pytest.mark.parametrize("many", [False, True], ids=["radio buttons", "a select"])
async def test_choices_cut_short_still_read_apart(new_page: NewPage, many: bool) -> None:
    """Titles cut at the same place read the same ("A seat in… (301 characters)" twice): a
    person could not tell which button was which. The part where they differ is shown."""
    options = {**SEATS, **({f"x{n}": f"Seat {n}" for n in range(5)} if many else {})}
    async with open_round([form_request(Form(seat=Choice(options, title="Seat")))]) as opened:
        page = await show(new_page, opened)
        if many:
            names = await page.locator("#q0-f0-input option").all_text_contents()
        else:
            names = await page.locator("#q0-f0 label").all_text_contents()
        shown = [name for name in names if name.startswith("A seat")]
        assert len(shown) == 2 and shown[0] != shown[1], shown
        assert "window" in shown[0] and "door" in shown[1], shown
        if many:
            await page.select_option("#q0-f0-input", "d")
        else:
            await page.get_by_role("radio", name=shown[1]).check()
        await page.click("#review")
        await expect(page.locator("#review-list dd").first).to_have_text(shown[1])


async def test_the_servers_message_is_named_once(new_page: NewPage) -> None:
    """A screen reader names the frame of the server's message (its group) and reads what
    the server wrote: "The server's message" was read twice, as the group's name and again
    as the label's text inside it. On the question and again on the review."""
    form = Form(ok=Boolean(title="Confirm", default=True))
    async with open_round([form_request(form, message="Table for four at eight?")]) as opened:
        page = await show(new_page, opened)
        await _named_once(page.locator("#q0 .said"))
        await page.click("#review")
        await _named_once(page.locator("#review-list .said"))
        await page.click("#send")
        assert await opened.answers() == [ElicitAnswer.accept(ok=True)]


async def _named_once(frame: Locator) -> None:
    await expect(frame.locator(".said-label")).to_be_visible()  # still seen on the screen
    tree = await frame.aria_snapshot()
    assert tree.count("The server's message") == 1, tree
    assert 'group "The server\'s message"' in tree and "Table for four at eight?" in tree, tree


async def test_the_finished_page_keeps_no_complaint_about_a_field_for_a_screen_reader(
    new_page: NewPage,
) -> None:
    # The polite status line (read by screen readers, hidden from sight) kept the last
    # complaint said about the focused field: on the "Sent" page a screen reader still
    # found "Guests must be at most 20" before "Sent".
    async with open_round([form_request(SMALL)]) as opened:
        page = await show(new_page, opened)
        await page.focus("#q0-f0-input")
        await page.keyboard.type("30")
        await expect(page.locator("#status")).to_have_text("Guests must be at most 20")
        await page.keyboard.press("Backspace")
        await expect(page.locator("#q0-f0-error")).to_have_text("")
        await page.click("#review")
        await page.click("#send")
        await expect(page.locator("#finished-title")).to_have_text("Sent")
        await expect(page.locator("#status")).to_have_text("")
        assert await opened.answers() == [ElicitAnswer.accept(guests=3)]
