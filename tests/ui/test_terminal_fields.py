"""A field at its own prompt, through prompt_toolkit's pipe input with the screen captured
(``support.terminal_answerer``): what is said of it there (its description, bounded),
going back to the field before it, and numbers read as the browser's page reads them."""

from __future__ import annotations

import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Form, Integer, MultiChoice, Number, String
from mcp_elicit.ui.columns import cells
from mcp_elicit.ui.field_prompt import ABOUT_ROWS
from mcp_elicit.ui.web_pages import check_form

from support.terminal_answerer import (
    CTRL_U,
    ENTER,
    ESC,
    answerer,
    elicit,
    elicit_typing,
    form_request,
    once_drawn,
)

SHIFT_TAB = "\x1b[Z"

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("kind", "typed", "value"), [(Integer, "\u22125", -5), (Number, "\u22122.5", -2.5)])
async def test_a_minus_sign_is_a_minus_in_the_terminal_as_on_the_page(
    kind: type[Integer] | type[Number], typed: str, value: float
) -> None:
    # "\u22125" (U+2212, as Swedish writes a minus) was refused at the prompt as "must be a whole
    # number", and the answer could not be sent, while the browser's page took it.
    form = Form(change=kind(title="Change"))
    async with answerer(ENTER + typed + ENTER + ENTER) as (ans, _, _):
        answer = await elicit(ans, form_request(form))
    assert answer == ElicitAnswer.accept(change=value)
    assert check_form(form, [typed]).content == {"change": value}  # the page's answer, read the same


def _after_question(text: str) -> list[str]:
    """The console's lines after the question's frame (its last line: "╰...╯")."""
    lines = text.splitlines()
    end = max(n for n, line in enumerate(lines) if line.startswith("╰"))
    return lines[end + 1 :]


async def test_a_fields_description_is_shown_again_at_its_prompt() -> None:
    # It was shown only in the question above, maybe a screen away from the field's prompt.
    form = Form(
        size=Integer(title="Party size", description="How many people, you included", minimum=1),
        note=String(title="Note", description="Anything the kitchen should know", required=False),
    )
    async with answerer(ENTER + "2" + ENTER + ENTER + ENTER) as (ans, screen, _):
        answer = await elicit(ans, form_request(form))
    assert answer == ElicitAnswer.accept(size=2)
    after = _after_question(screen.text)
    assert after[:2] == ["How many people, you included", "Anything the kitchen should know"], after
    # and what it takes, under its prompt (printed above it on a terminal that does not say
    # where its cursor is)
    assert "required · a whole number, at least 1 · Enter: next" in screen.drawn


@pytest.mark.parametrize("width", [100, 30])
async def test_a_long_description_takes_a_few_rows_at_its_prompt(width: int) -> None:
    form = Form(note=String(title="Note", description="Tell us more. " * 200, required=False))
    async with answerer(ENTER + ENTER + ENTER) as (ans, screen, _):
        screen.console.width = width
        answer = await elicit(ans, form_request(form))
    assert answer == ElicitAnswer.accept()
    after = _after_question(screen.text)
    rows = after[: next(n for n, line in enumerate(after) if "Your answers" in line)]
    assert len(rows) == ABOUT_ROWS, rows
    assert all(cells(row) <= width for row in rows), rows
    assert rows[0].startswith("Tell us more.") and rows[-1].endswith("…")


FORM = Form(
    size=Integer(title="Party size", minimum=1),
    date=String(title="Date", format="date"),
    note=String(title="Note", required=False),
)


async def test_shift_tab_goes_back_a_field_and_what_was_typed_there_is_kept() -> None:
    # There was no way back: a slip in one answer was seen only at the review.
    async with answerer(ENTER + "7" + ENTER) as (ans, screen, pipe):

        async def typing() -> None:
            await once_drawn(screen, "Date >", pipe, "2099-01-0" + SHIFT_TAB)
            await once_drawn(screen, "typing replaces your answer", pipe, CTRL_U + "8" + ENTER)
            await once_drawn(screen, "2099-01-0", pipe, "1" + ENTER)  # the draft, edited
            await once_drawn(screen, "Note (optional) >", pipe, SHIFT_TAB)
            await once_drawn(screen, "2099-01-01", pipe, ENTER + ENTER + ENTER)

        answer = await elicit_typing(ans, form_request(FORM), typing())
    assert answer == ElicitAnswer.accept(size=8, date="2099-01-01")
    assert "a whole number, at least 1 · Enter: next · Ctrl-N: decline" in screen.drawn  # first: no way back
    assert "a date, YYYY-MM-DD · Enter: next · Shift-Tab: back · Ctrl-N: decline" in screen.drawn


@pytest.mark.parametrize(("key", "action"), [("d", "decline"), (ESC, "cancel")])
async def test_the_review_after_going_back_still_declines_or_cancels(key: str, action: str) -> None:
    async with answerer(ENTER + "7" + ENTER) as (ans, screen, pipe):

        async def typing() -> None:
            await once_drawn(screen, "Date >", pipe, SHIFT_TAB)
            await once_drawn(
                screen, "typing replaces your answer", pipe, ENTER + "2099-01-01" + ENTER + ENTER
            )
            await once_drawn(screen, "Enter: send", pipe, key + (ENTER if key == "d" else ""))

        answer = await elicit_typing(ans, form_request(FORM), typing())
    assert answer.action == action
    assert answer.content is None


@pytest.mark.parametrize("back", [False, True], ids=["straight", "after-going-back"])
async def test_choices_cleared_are_none_of_them_after_going_back_too(back: bool) -> None:
    # Its ticked default cleared, a multi-choice is none of them; cleared, then Shift-Tab
    # back and forward again, the same line came back empty but Enter sent no answer (the
    # field left out: the server's default, the choice the person had cleared).
    form = Form(
        name=String(title="Name"),
        picks=MultiChoice(["tea", "coffee"], title="Drinks", required=False, default=["tea"]),
    )
    async with answerer(ENTER + "Ada" + ENTER) as (ans, screen, pipe):

        async def typing() -> None:
            if back:
                await once_drawn(screen, "Drinks (optional) >", pipe, CTRL_U + SHIFT_TAB)
                await once_drawn(screen, "typing replaces your answer", pipe, ENTER)
            await once_drawn(screen, "Drinks (optional) >", pipe, CTRL_U + ENTER)
            await once_drawn(screen, "Enter: send", pipe, ENTER)

        answer = await elicit_typing(ans, form_request(form), typing())
    assert answer == ElicitAnswer.accept(name="Ada", picks=[])
