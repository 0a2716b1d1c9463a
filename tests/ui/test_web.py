"""The browser answerer in a real Chromium (Playwright): every kind of field filled and answered, defaults,
hints, option descriptions, invisible characters, line breaks, local times, empty options,
server markup kept as text."""

from __future__ import annotations

import dataclasses

import pytest

from mcp_elicit import Choice, Form
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Boolean, MultiChoice, String
from mcp_elicit.ui.form_text import OPTION_ABOUT_MAX, TITLE_MAX, fit
from ui.test_terminal import JOINED
from ui.web_rounds import (
    DEFAULTS,
    LEGACY,
    SDK_BOUNDS,
    SDK_DESCRIBED,
    form_request,
    open_round,
)

from support.browser import NewPage
from support.web_page import expect, review_and_send, show

pytestmark = [pytest.mark.anyio]


async def test_every_kind_of_field_is_filled_and_answered(new_page: NewPage) -> None:
    async with open_round([form_request(), form_request(LEGACY, key="legacy")]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "Ada")
        await page.fill("#q0-f1-input", "ada@example.com")
        await page.fill("#q0-f2-input", "https://ada.example/")
        await page.fill("#q0-f3-input", "2026-12-24")
        await page.fill("#q0-f4-input", "2026-12-24T18:30")
        await page.fill("#q0-f5-input", "4")
        await page.fill("#q0-f6-input", "42.5")
        await page.check("#q0-f7-input")
        await page.check("#q0-f8-o1")  # untitled radio: mains
        await page.get_by_label("On the terrace").check()  # titled radio
        await page.select_option("#q0-f10-input", "t6")  # six options: a select
        await page.check("#q0-f11-o0")
        await page.check("#q0-f11-o2")
        await page.get_by_label("Wine pairing").check()
        await page.get_by_label("Birthday cake").check()
        await page.get_by_label("Medium").check()  # legacy enumNames
        await page.click("#review")
        review = page.locator("#review-list")
        await expect(review).to_contain_text("On the terrace")
        await expect(review).to_contain_text("Wine pairing, Birthday cake")
        await expect(review).to_contain_text("Medium")
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(
            name="Ada",
            email="ada@example.com",
            site="https://ada.example/",
            day="2026-12-24",
            arrival="2026-12-24T18:30:00+01:00",  # the browser's zone, said
            guests=4,
            budget=42.5,
            terrace=True,
            course="mains",
            seating="out",
            table="t6",
            diet=["vegan", "nut allergy"],
            extras=["wine", "cake"],
        ),
        ElicitAnswer.accept(size="m"),
    ]


async def test_defaults_are_prefilled_and_required_fields_marked(new_page: NewPage) -> None:
    async with open_round([form_request(DEFAULTS)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("2")
        await expect(page.locator("#q0-f1-input")).to_have_value("window seat")
        await expect(page.locator("#q0-f2-input")).to_have_value("2026-12-24T19:30")  # 18:30Z in Oslo
        await expect(page.get_by_label("On the terrace")).to_be_checked()
        await expect(page.locator("#q0-f4-input")).to_have_value("c")
        await expect(page.locator("#q0-f5-o0")).to_be_checked()
        await expect(page.locator("#q0-f6-input")).to_be_checked()
        # required: the attribute and a visible mark; optional: neither
        await expect(page.locator("#q0-f0-input")).to_have_attribute("required", "")
        await expect(page.locator("#q0 label[for=q0-f0-input] .req")).to_have_text(" *")
        assert await page.locator("#q0 label[for=q0-f1-input] .req").count() == 0
        await expect(page.locator("#q0-f3-group")).to_have_attribute("aria-required", "true")
        # the description and the hint are tied to the control
        await expect(page.locator("#q0-f0-desc")).to_have_text("You included")
        await expect(page.locator("#q0-f0-hint")).to_have_text("a whole number from 1 to 20")
        described = await page.get_attribute("#q0-f0-input", "aria-describedby")
        assert described == "q0-f0-desc q0-f0-hint q0-f0-error"
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(
            guests=2,
            note="window seat",
            arrival="2026-12-24T18:30:00Z",  # shown in Oslo time, sent back as the server wrote it
            seating="out",
            course="c",
            diet=["vegan"],
            ok=True,
        )
    ]


async def test_exclusive_bounds_and_a_step_are_in_the_fields_hint(new_page: NewPage) -> None:
    async with open_round([form_request(SDK_BOUNDS)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-hint")).to_have_text("a number, more than 0 and less than 1")
        await expect(page.locator("#q0-f1-hint")).to_have_text("a whole number, at least 0, a multiple of 2")
        assert await page.locator("#q0 .warning").count() == 0  # the fields say them
        await page.fill("#q0-f0-input", "1")
        await page.fill("#q0-f1-input", "3")
        await expect(page.locator("#q0-f0-error")).to_have_text("Share must be less than 1")
        await expect(page.locator("#q0-f1-error")).to_have_text("Pair must be a multiple of 2")
        await page.fill("#q0-f0-input", "0.5")
        await page.fill("#q0-f1-input", "4")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(share=0.5, pair=4)]


async def test_joiners_a_script_needs_reach_the_page_and_no_others(new_page: NewPage) -> None:
    # The message was shown as "\u0645\u06cc<U+200C>..." and the family in pieces.
    form = Form(ok=Choice({"y": "yes", "n": "y\u200des"}, title="OK?"))
    async with open_round([form_request(form, message=JOINED)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-message")).to_have_text(JOINED)
        await expect(page.locator("label[for=q0-f0-o1]")).to_have_text("y<U+200D>es")
        await page.click("#decline")
        assert await opened.answers() == [ElicitAnswer.decline()]


async def test_option_descriptions_are_shown_under_their_options(new_page: NewPage) -> None:
    async with open_round([form_request(SDK_DESCRIBED)]) as opened:
        page = await show(new_page, opened)
        # radio buttons, not a select, though there are six: a select cannot show them
        await expect(page.locator("#q0-f0-o0")).to_have_attribute("aria-describedby", "q0-f0-o0-desc")
        await expect(page.locator("#q0-f0-o0-desc")).to_have_text("One bed, no<U+202E> view")
        long = await page.locator("#q0-f0-o1-desc").text_content()
        assert long is not None and len(long) == OPTION_ABOUT_MAX and long.endswith("…")
        assert await page.locator("#q0-f0-o2").get_attribute("aria-describedby") is None
        await expect(page.locator("#q0-f1-o0-desc")).to_have_text("Served 7 to 10")
        await page.get_by_label("Single").check()
        await page.get_by_label("Breakfast").check()
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(room="s", extras=["b"])]


async def test_values_with_invisible_characters_come_back_unchanged(new_page: NewPage) -> None:
    # A Persian word with a zero-width non-joiner, an emoji with zero-width joiners: shown
    # made visible in labels, but sent back as they are (else no choice could be picked).
    word, family, many = "می\u200cخواهم", "👨\u200d👩\u200d👧", [f"n{n}\u200c" for n in range(6)]
    form = Form(
        want=Choice([word, "نه"], title="Want"),
        who=MultiChoice([family, "solo", "two\rlines"], title="Who"),
        size=Choice(many, title="Size"),
        note=String(title="Note", default="نامه\u200cها", required=False),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.check("#q0-f0-o0")
        await page.check("#q0-f1-o0")
        await page.check("#q0-f1-o2")
        await page.select_option("#q0-f2-input", index=3)  # after "Choose one"
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(want=word, who=[family, "two\rlines"], size=many[2], note="نامه\u200cها")
    ]


async def test_a_default_with_line_breaks_is_shown_in_lines_and_sent_exactly(new_page: NewPage) -> None:
    # A text box drops line breaks: "a\nb" left untouched came back as "ab".
    form = Form(
        note=String(title="Note", default="\nfirst\nsecond", required=False),
        lines=String(title="Lines", default="one\r\ntwo\rthree", required=False),
        edited=String(title="Edited", default="x\ny", required=False),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("\nfirst\nsecond")
        await page.fill("#q0-f2-input", "x\ny\nz")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [
        ElicitAnswer.accept(note="\nfirst\nsecond", lines="one\r\ntwo\rthree", edited="x\ny\nz")
    ]


async def test_date_time_defaults_are_shown_in_local_time_and_sent_back_as_given(new_page: NewPage) -> None:
    """A date-time default is shown as wall time in the browser's zone; left alone it goes
    back exactly as the server wrote it (its zone, its fraction, a leap second, an hour
    that happens twice on the clock), not re-written from the control's local time."""
    when = String(format="date-time", required=False)
    defaults = {
        "utc": ("2026-12-24T18:30:00Z", "2026-12-24T19:30"),
        "zone": ("2026-12-24T18:30:00+05:45", "2026-12-24T13:45"),
        "leap": ("2016-12-31T23:59:60Z", "2017-01-01T00:59:59"),  # the control stops at :59
        "leap_zone": ("2016-12-31T18:59:60-05:00", "2017-01-01T00:59:59"),
        "twice": ("2026-10-25T01:30:00Z", "2026-10-25T02:30"),  # the second 02:30 in Oslo
        "fraction": ("2026-12-24T18:30:00.250Z", "2026-12-24T19:30"),
        "lower": ("2026-12-24t18:30:00z", "2026-12-24T19:30"),
        "edited": ("2026-12-24T18:30:00Z", "2026-12-24T19:30"),
    }
    form = Form(**{name: dataclasses.replace(when, default=d) for name, (d, _) in defaults.items()})
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        for n, (_, shown) in enumerate(defaults.values()):
            await expect(page.locator(f"#q0-f{n}-input")).to_have_value(shown)
        await page.fill("#q0-f7-input", "2026-12-25T10:00")
        await review_and_send(page)
        answers = await opened.answers()
    expected = {name: d for name, (d, _) in defaults.items()}
    assert answers == [ElicitAnswer.accept(**{**expected, "edited": "2026-12-25T10:00:00+01:00"})]


async def test_the_review_shows_a_date_time_in_the_time_the_field_showed(new_page: NewPage) -> None:
    """The field shows a default in the person's time (19:30 in Oslo); the review showed
    only "2026-12-24T18:30:00Z", another hour on its face: it now says the person's time too."""
    form = Form(
        arrival=String(title="Arrival", format="date-time", default="2026-12-24T18:30:00Z"),
        leave=String(title="Leave", format="date-time"),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("2026-12-24T19:30")
        await page.fill("#q0-f1-input", "2026-12-24T22:00")
        await page.click("#review")
        rows = page.locator("#review-list dd")
        await expect(rows.nth(0)).to_have_text("2026-12-24T18:30:00Z (24 Dec 2026, 19:30:00 your time)")
        await expect(rows.nth(1)).to_have_text("2026-12-24T22:00:00+01:00 (24 Dec 2026, 22:00:00 your time)")
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(arrival="2026-12-24T18:30:00Z", leave="2026-12-24T22:00:00+01:00")]


async def test_an_untitled_option_of_empty_text_has_a_label(new_page: NewPage) -> None:
    """An untitled option "" is named "(empty text)" in the form and in the review, not
    shown as a nameless button."""
    form = Form(who=Choice(["", "a"], title="Who"), host=Choice(["", *"abcde"], title="Host"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.locator("#q0-f0").get_by_label("(empty text)").check()
        await page.select_option("#q0-f1-input", label="(empty text)")
        await page.click("#review")
        await expect(page.locator("#review-list")).to_contain_text("Who(empty text)Host(empty text)")
        await page.click("#send")
        assert await opened.answers() == [ElicitAnswer.accept(who="", host="")]


@pytest.mark.parametrize("pick", ["Nobody", "(no answer)"])
async def test_an_option_whose_value_is_empty_text_can_be_chosen(new_page: NewPage, pick: str) -> None:
    """An option may be "" (JSON Schema allows it): choosing it is an answer, not "no answer"."""
    six = {"": "Nobody", "a": "Ann", "b": "Bo", "c": "Cy", "d": "Di", "e": "Ed"}
    form = Form(
        who=Choice({"": "Nobody", "a": "Ann"}, title="Who"),
        host=Choice(six, title="Host", required=False),
        guest=Choice({"": "Nobody", "a": "Ann"}, title="Guest", required=False),
    )
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.locator("#q0-f0").get_by_label("Nobody").check()
        await page.select_option("#q0-f1-input", label=pick)
        await page.locator("#q0-f2").get_by_label(pick).check()
        await review_and_send(page)
        answers = await opened.answers()
    chosen = {"host": "", "guest": ""} if pick == "Nobody" else {}
    assert answers == [ElicitAnswer.accept(who="", **chosen)]


async def test_a_date_time_in_a_zone_whose_offset_had_seconds_gets_whole_minutes(new_page: NewPage) -> None:
    """Before 1906 Kolkata was 5:21:10 ahead of UTC; RFC 3339 offsets are whole minutes, so
    the time typed is sent with the nearest one (it was sent as "+05:21.166...", refused)."""
    form = Form(when=String(title="When", format="date-time"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened, timezone_id="Asia/Kolkata")
        await page.fill("#q0-f0-input", "1900-06-01T12:00")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(when="1900-06-01T12:00:00+05:21")]


async def test_a_date_time_the_clocks_skip_is_refused_with_a_reason(new_page: NewPage) -> None:
    """On 2026-03-29 Oslo's clocks go from 02:00 to 03:00: 02:30 is no time there. It was
    sent as "02:30:00+02:00", an instant the person's clock showed as 01:30; it is refused,
    next to the field, saying why, and a time that exists is then sent."""
    form = Form(when=String(title="When", format="date-time"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "2026-03-29T02:30")
        await page.click("#review")
        await expect(page.locator("#alert")).to_have_text("1 answer needs fixing: When.")
        await expect(page.locator("#q0-f0-error")).to_have_text(
            "When: there is no 02:30 on 2026-03-29 in your time zone (the clocks skip it); pick another time"
        )
        await expect(page.locator("#q0-f0-input")).to_be_focused()
        await page.fill("#q0-f0-input", "2026-03-29T03:30")
        await expect(page.locator("#q0-f0-error")).to_have_text("")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(when="2026-03-29T03:30:00+02:00")]


async def test_a_whole_day_the_clocks_skip_is_refused(new_page: NewPage) -> None:
    """Samoa skipped 2011-12-30 (from the 29th at 23:59:59, UTC-10, to the 31st, UTC+14):
    10:00 that day names no instant. Only the hour and minute were compared, so it was
    sent as "2011-12-30T10:00:00+14:00", the instant Samoa's clocks showed as 10:00 on the
    29th; it is refused, saying why."""
    form = Form(when=String(title="When", format="date-time"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened, timezone_id="Pacific/Apia")
        await page.fill("#q0-f0-input", "2011-12-30T10:00")
        await page.click("#review")
        await expect(page.locator("#q0-f0-error")).to_have_text(
            "When: there is no 10:00 on 2011-12-30 in your time zone (the clocks skip it); pick another time"
        )
        await page.fill("#q0-f0-input", "2011-12-31T10:00")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(when="2011-12-31T10:00:00+14:00")]


async def test_a_date_time_before_the_year_100_is_sent_in_its_own_year(new_page: NewPage) -> None:
    """JavaScript's Date reads a year below 100 as 19xx: 02:30 on 2 April 45 was taken for
    1945, when Oslo's clocks skipped 02:00 to 03:00, and refused; another year would have
    been sent with 1945's offset. It is sent in year 45, with Oslo's offset then (its
    local mean time, 0:53:28 ahead of UTC, to the whole minute)."""
    form = Form(when=String(title="When", format="date-time"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f0-input", "0045-04-02T02:30")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(when="0045-04-02T02:30:00+00:53")]


async def test_markup_in_server_text_and_values_stays_text_in_the_browser(new_page: NewPage) -> None:
    """Markup in every place a server writes (titles, descriptions, option titles and
    values, defaults, the message) is shown as text, runs nothing, and values go back as
    they were given."""
    evil = '"><img src=x onerror="document.title=1"><script>document.title=2</script>'
    area = "</textarea><script>document.title=3</script>\n" + evil
    form = Form(
        text=String(title=evil, description=evil, default=evil),
        area=String(title=evil, default=area),
        pick=Choice({evil: evil, "b": evil + "b"}, title=evil, default=evil),
        many=Choice({f"{evil}{n}": f"{evil} {n}" for n in range(6)}, title=evil, default=f"{evil}3"),
        tick=MultiChoice({evil: evil, "b": "B"}, title=evil, default=[evil]),
    )
    async with open_round([form_request(form, message=evil)]) as opened:
        page = await show(new_page, opened)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        assert await page.locator("#answers img, #answers script").count() == 0
        await expect(page.locator("#q0-message")).to_have_text(evil)
        title = await page.title()
        await review_and_send(page)
        answers = await opened.answers()
    assert (
        not dialogs and title == f"Table bookings asks: {fit(evil, TITLE_MAX)} · mcp-elicit"
    )  # no script set it
    assert answers == [ElicitAnswer.accept(text=evil, area=area, pick=evil, many=f"{evil}3", tick=[evil])]


async def test_a_long_text_is_sent(new_page: NewPage) -> None:
    """A field without a length limit takes a long text, as the terminal does: a 300,000
    character default left as it is, and as much pasted into another field."""
    long = "word " * 60_000
    form = Form(
        kept=String(title="Kept", default=long), pasted=String(title="Pasted", format="uri", required=False)
    )
    pasted = "https://example.com/?" + "q" * 300_000
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await page.fill("#q0-f1-input", pasted)
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(kept=long, pasted=pasted)]


@pytest.mark.parametrize(("pick", "expected"), [(None, {}), ("No", {"news": False}), ("Yes", {"news": True})])
async def test_an_optional_yes_or_no_can_be_left_unanswered(
    new_page: NewPage, pick: str | None, expected: dict[str, bool]
) -> None:
    """A checkbox left unticked would answer "no" for the person: an optional boolean
    without a default offers "(no answer)", "Yes" and "No", and starts unanswered."""
    form = Form(news=Boolean(title="Newsletter", required=False), name=String(title="Name"))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.get_by_label("(no answer)")).to_be_checked()
        if pick is not None:
            await page.get_by_label(pick, exact=True).check()
        await page.fill("#q0-f1-input", "Ada")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(name="Ada", **expected)]


async def test_a_default_that_reorders_its_own_text_is_not_put_in_the_box(new_page: NewPage) -> None:
    """A default with a bidirectional override read in its box as other text ("I agree to
    pay 1$ to 10000" for "...1<U+202E>00001 ot $"), as the terminal never pre-fills: the
    box is left empty, the hint shows the default made visible, and an empty box gives it."""
    default = "I agree to pay 1\u202e00001 ot $"
    form = Form(agree=String(title="Agreed", default=default))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("")
        await expect(page.locator("#q0-f0-hint")).to_contain_text("I agree to pay 1<U+202E>00001 ot $")
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept()]  # no answer: the default, as from the terminal


async def test_a_default_that_direction_marks_reorder_is_not_put_in_the_box(new_page: NewPage) -> None:
    """Right-to-left marks (U+200F), with no override or isolate, reorder what is around
    them too: the box drew "Refund 05.10 to me" for "Refund 10.50 to me" written with
    them. The box is left empty, the hint shows the default made visible."""
    default = "Refund \u200f10\u200f.5\u200f0 to me"
    form = Form(refund=String(title="Refund", default=default))
    async with open_round([form_request(form)]) as opened:
        page = await show(new_page, opened)
        await expect(page.locator("#q0-f0-input")).to_have_value("")
        await expect(page.locator("#q0-f0-hint")).to_contain_text(
            "Refund <U+200F>10<U+200F>.5<U+200F>0 to me"
        )
        await review_and_send(page)
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept()]  # no answer: the default, as from the terminal


async def test_the_review_frames_the_servers_message_as_the_question_does(new_page: NewPage) -> None:
    """The review, where the person confirms, repeats the server's message: in the same
    frame named as the server's, so a message writing "Your answers: Amount 10" reads as the
    server's, not as the page's own account of what is sent."""
    fake = "Your answers:\nAmount\n10 (checked by your bank)"
    form = Form(amount=String(title="Amount", default="10000"))
    async with open_round([form_request(form, message=fake)]) as opened:
        page = await show(new_page, opened)
        await page.click("#review")
        frame = page.locator("#review-list .said")
        await expect(frame).to_have_count(1)
        await expect(frame.locator(".said-label")).to_have_text("The server's message")
        await expect(frame.locator(".message")).to_have_text(fake)
        label_id = await frame.locator(".said-label").get_attribute("id")
        await expect(frame).to_have_attribute("role", "group")
        await expect(frame).to_have_attribute("aria-labelledby", label_id or "")
        await page.click("#send")
        answers = await opened.answers()
    assert answers == [ElicitAnswer.accept(amount="10000")]
