"""A number field in a real Chromium (Playwright) is an ARIA spin button: a text box (read with
the language's decimal mark) that says its bounds and value to assistive technology, as the
number box it replaced did, and steps its value with the Up and Down arrows, within the bounds."""

from __future__ import annotations

import pytest

from mcp_elicit import Form, Integer
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Number
from ui.web_rounds import form_request, open_round

from support.browser import NewPage
from support.web_page import expect, review_and_send, show

pytestmark = [pytest.mark.anyio]

GERMAN = {"locale": "de-DE", "timezone_id": "Europe/Berlin"}
PARTY = Form(
    guests=Integer(title="Guests", minimum=1, maximum=20, default=3),
    budget=Number(title="Budget", minimum=0.5, maximum=100),
    share=Number(title="Share", minimum=0, maximum=1, required=False),
    tip=Integer(title="Tip", required=False),
)


async def test_a_number_field_says_its_role_bounds_and_value_as_typed(new_page: NewPage) -> None:
    async with open_round([form_request(PARTY)]) as opened:
        page = await show(new_page, opened, **GERMAN)
        guests = page.get_by_role("spinbutton", name="Guests")
        await expect(guests).to_have_attribute("aria-valuemin", "1")
        await expect(guests).to_have_attribute("aria-valuemax", "20")
        await expect(guests).to_have_attribute("aria-valuenow", "3")  # its default
        budget = page.get_by_role("spinbutton", name="Budget")
        await expect(budget).to_have_attribute("aria-valuemin", "0.5")
        assert await budget.get_attribute("aria-valuenow") is None  # nothing typed yet
        await budget.press_sequentially("2,5")  # a German two and a half
        await expect(budget).to_have_attribute("aria-valuenow", "2.5")
        await expect(budget).to_have_attribute("aria-valuetext", "2,5")
        await budget.fill("2.500")  # a thousands separator here: no value to say
        await budget.press("End")
        await budget.press("Backspace")
        await expect(budget).to_have_value("2.50")
        assert await budget.get_attribute("aria-valuenow") is None
        tip = page.get_by_role("spinbutton", name="Tip")
        assert await tip.get_attribute("aria-valuemin") is None  # no bound, none said
        snapshot = await page.locator("#q0-f0").aria_snapshot()
        assert 'spinbutton "Guests' in snapshot, snapshot


async def test_the_arrows_step_the_value_within_its_bounds(new_page: NewPage) -> None:
    async with open_round([form_request(PARTY)]) as opened:
        page = await show(new_page, opened, **GERMAN)
        guests = page.get_by_role("spinbutton", name="Guests")
        await guests.press("ArrowUp")
        await expect(guests).to_have_value("4")
        await expect(guests).to_have_attribute("aria-valuenow", "4")
        for _ in range(3):
            await guests.press("ArrowDown")
        await expect(guests).to_have_value("1")
        await guests.press("ArrowDown")  # the lowest it takes
        await expect(guests).to_have_value("1")
        await guests.fill("19")
        await guests.press("ArrowUp")
        await guests.press("ArrowUp")
        await expect(guests).to_have_value("20")  # the highest
        await expect(guests).to_have_attribute("aria-valuenow", "20")
        budget = page.get_by_role("spinbutton", name="Budget")
        await budget.press("ArrowUp")  # empty: starts at its lowest
        await expect(budget).to_have_value("0,5")
        await budget.fill("99,5")
        await budget.press("ArrowUp")
        await expect(budget).to_have_value("100")  # a step of 1 past it: the bound
        await budget.press("ArrowDown")
        await expect(budget).to_have_value("99")
        share = page.get_by_role("spinbutton", name="Share")  # from 0 to 1: steps of 0.1
        await share.fill("0,2")
        await share.press("ArrowUp")
        await expect(share).to_have_value("0,3")  # not 0.30000000000000004
        await expect(share).to_have_attribute("aria-valuenow", "0.3")
        tip = page.get_by_role("spinbutton", name="Tip")  # no bounds: from 0
        await tip.press("ArrowDown")
        await expect(tip).to_have_value("0")
        await tip.press("ArrowDown")
        await expect(tip).to_have_value("-1")
        await tip.fill("seven")
        await tip.press("ArrowUp")  # no number: left as typed
        await expect(tip).to_have_value("seven")
        await tip.fill("-1")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(guests=20, budget=99, share=0.3, tip=-1)]


async def test_a_number_with_a_minus_sign_is_said_and_stepped(new_page: NewPage) -> None:
    # The script no longer turns "\u22125" (U+2212) into "-5" before sending it (the answer
    # server reads it, as the terminal does), but the spin button still says and steps it.
    async with open_round([form_request(PARTY)]) as opened:
        page = await show(new_page, opened, locale="sv-SE")
        tip = page.get_by_role("spinbutton", name="Tip")
        await tip.fill("\u22125")
        await expect(tip).to_have_attribute("aria-valuenow", "-5")
        await tip.press("ArrowUp")
        await expect(tip).to_have_value("-4")
        await tip.fill("\u22125")
        await page.get_by_role("spinbutton", name="Budget").fill("2")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(guests=3, budget=2, tip=-5)]
