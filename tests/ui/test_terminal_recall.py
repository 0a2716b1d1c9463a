"""Up at a field's prompt, driven through prompt_toolkit's pipe input: it brings back what
was typed for that field before (the same form asked again), never another field's answer,
nor a key typed at the question or the review."""

from __future__ import annotations

import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Form, String

from support.terminal_answerer import ENTER, answerer, elicit, elicit_typing, form_request, once_drawn

pytestmark = pytest.mark.anyio

UP = "\x1b[A"
FORM = Form(name=String(title="Name"), note=String(title="Note", required=False))


async def test_up_at_a_field_brings_back_no_other_fields_answer() -> None:
    # A person pressing Up at Note to go back to Name got "Bob", Name's answer, as the
    # note: every prompt shared one history (the question's and the review's keys too).
    async with answerer(ENTER + "Bob" + ENTER) as (ans, screen, pipe):

        async def typing() -> None:
            await once_drawn(screen, "Note (optional) >", pipe, UP + ENTER)
            await once_drawn(screen, "Enter: send", pipe, ENTER)

        answer = await elicit_typing(ans, form_request(FORM), typing())
    assert answer == ElicitAnswer.accept(name="Bob")


async def test_up_at_a_field_asked_again_brings_back_its_earlier_answer() -> None:
    # The same form again (a server that refused the answer asks anew): Up gives each
    # field its own answer back; with one history, Name got the last line typed, Note's.
    async with answerer(ENTER + "Bob" + ENTER + "later" + ENTER + ENTER) as (ans, screen, pipe):
        assert await elicit(ans, form_request(FORM)) == ElicitAnswer.accept(name="Bob", note="later")
        drawn = len(screen.drawn)

        async def typing() -> None:
            pipe.send_text(ENTER)
            await once_drawn(screen, "Name >", pipe, UP + ENTER)
            await once_drawn(screen, "Note (optional) >", pipe, UP + ENTER)
            await once_drawn(screen, "Enter: send", pipe, ENTER)

        screen.prompts.truncate(0)
        screen.prompts.seek(0)
        again = await elicit_typing(ans, form_request(FORM), typing())
    assert drawn and again == ElicitAnswer.accept(name="Bob", note="later")


async def test_up_at_a_field_of_another_form_brings_back_nothing_typed_under_its_name() -> None:
    # Another form (another question, another server) with a field of the same name: Up at
    # "Project" gave "Bob", typed as a person's name, since the field's name alone was
    # what Up recalled by.
    project = Form(name=String(title="Project", required=False))
    async with answerer(ENTER + "Bob" + ENTER + ENTER + ENTER) as (ans, screen, pipe):
        assert await elicit(ans, form_request(FORM)) == ElicitAnswer.accept(name="Bob")

        async def typing() -> None:
            pipe.send_text(ENTER)
            await once_drawn(screen, "Project (optional) >", pipe, UP + ENTER)
            await once_drawn(screen, "Enter: send", pipe, ENTER)

        screen.prompts.truncate(0)
        screen.prompts.seek(0)
        again = await elicit_typing(ans, form_request(project), typing())
    assert again == ElicitAnswer.accept()
