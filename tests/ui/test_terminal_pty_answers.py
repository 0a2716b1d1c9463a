"""Answers typed at a field's prompt in a real terminal (``in_a_terminal``): each kind of
field read from the words a person types for it, and an answer that does not fit refused
beside the prompt, saying what was wrong and what to type instead, then asked again."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from cli.pty_session import CTRL_C, CTRL_U, ENTER

from ui.test_terminal_pty import asking, in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

YES_NO = {"type": "boolean", "title": "Agree"}
TAGS = {"type": "array", "title": "Tags", "items": {"enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2}
PLAIN_CHOICE = {"type": "string", "title": "Color", "enum": ["red", "green"]}
TITLED_CHOICE = {
    "type": "string",
    "title": "Size",
    "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
}


def answered(field: dict[str, Any], typed: str) -> Any:
    """The value the server gets for the one required field ``field`` answered ``typed``."""
    schema = {"type": "object", "properties": {"f": field}, "required": ["f"]}
    with in_a_terminal(*asking("Answer", schema)) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect(f"{field['title']} >")
        pty.send(typed + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect("Answered.")  # 2026-07-28: it goes with the retry
        assert pty.wait() == 0
        shown = pty.screen
    return json.loads(shown[shown.index('{"action"') :].splitlines()[0])["content"]["f"]


@pytest.mark.parametrize(
    ("field", "typed", "value"),
    # One of each kind end to end; every word each kind takes is read in test_form_text.
    [
        (YES_NO, "Yes", True),
        (PLAIN_CHOICE, "RED", "red"),  # by its value, any case
        (TITLED_CHOICE, "large", "l"),  # by its title
        (TAGS, "3, a", ["c", "a"]),  # several, by number and by value, in the order typed
    ],
)
def test_an_answer_is_read_from_the_words_a_person_types(
    field: dict[str, Any], typed: str, value: Any
) -> None:
    assert answered(field, typed) == value


@pytest.mark.parametrize(
    ("field", "refused", "why", "accepted", "value"),
    [
        (YES_NO, "maybe", "Agree must be yes or no: type y or n", "n", False),
        (YES_NO, "", "Agree is required: type an answer, or Ctrl-N to decline", "y", True),
        (TAGS, "1, a", "Tags names 'a' more than once: type each choice once", "1", ["a"]),
        (TAGS, "-", "Tags must have at least 1 choice", "a,b", ["a", "b"]),
    ],
)
def test_an_answer_that_does_not_fit_says_what_to_type_and_is_asked_again(
    field: dict[str, Any], refused: str, why: str, accepted: str, value: Any
) -> None:
    schema = {"type": "object", "properties": {"f": field}, "required": ["f"]}
    with in_a_terminal(*asking("Answer", schema)) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect(f"{field['title']} >")
        pty.send(refused + ENTER)  # Enter does nothing while refused
        pty.expect(why, timeout=5)
        pty.send(CTRL_U + accepted + ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect(json.dumps({"action": "accept", "content": {"f": value}}))
        assert pty.wait() == 0


def test_an_empty_required_field_on_a_dumb_terminal_names_the_word_that_declines() -> None:
    # A dumb terminal has no Ctrl-N: its way out is the word "!d", typed as an answer.
    schema = {"type": "object", "properties": {"f": YES_NO}, "required": ["f"]}
    with in_a_terminal(*asking("Answer", schema), term="dumb") as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("Agree >")
        pty.send(ENTER)
        pty.expect("Agree is required: type an answer, or !d to decline")
        pty.send("!d" + ENTER)
        pty.expect('{"action": "decline"')
        assert pty.wait() == 0


def test_what_a_person_types_replaces_the_default_named_in_the_fields_keys() -> None:
    # The default was prefilled as text the person typed after: "a" then "2, 3" was
    # "a2, 3", refused, with nothing saying to clear it first.
    assert answered({**TAGS, "default": ["a"]}, "2, 3") == ["b", "c"]
    schema = {"type": "object", "properties": {"f": {**TAGS, "default": ["a"]}}, "required": ["f"]}
    with in_a_terminal(*asking("Answer", schema)) as pty:
        pty.expect("Enter: fill in the form")
        pty.send(ENTER)
        pty.expect("typing replaces the default")
        pty.send(CTRL_C)
        assert pty.wait() == 0
