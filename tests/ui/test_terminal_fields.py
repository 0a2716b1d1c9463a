"""A field at its own prompt, through prompt_toolkit's pipe input with the screen captured
(``support.terminal_answerer``): what is said of it there (its description, bounded),
going back to the field before it, and numbers read as the browser's page reads them."""

from __future__ import annotations

import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Form, Integer, Number
from mcp_elicit.ui.web_pages import check_form

from support.terminal_answerer import ENTER, answerer, elicit, form_request

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
