"""The terminal answerer on a terminal that can only show ASCII (``LC_ALL=C``, Python left
ASCII: ``ASCII_ONLY``), narrow: what it writes by code (``\\xe9``) is laid out as written,
so prompts wrap between words and table columns hold their cells whole
(``in_a_terminal``); on a UTF-8 terminal the same question is laid out on its letters."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from cli.pty_session import ENTER

from ui.test_terminal_pty import in_a_terminal
from ui.test_terminal_pty_keys import ASCII_ONLY

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

HOST = "Hôte 🎉 préféré à la fête du château"
DESSERT = ["crème brûlée", "île flottante"]
UTF8 = ("LANG=C.UTF-8", "LC_ALL=C.UTF-8")


def one_choice(title: str) -> dict[str, Any]:
    """A form of one required field titled ``title``, a choice of ``DESSERT``."""
    return {
        "type": "object",
        "properties": {"d": {"type": "string", "title": title, "enum": DESSERT}},
        "required": ["d"],
    }


def answered(
    schema: dict[str, Any], columns: int, environment: tuple[str, ...] = ASCII_ONLY, *, pick: str = "1"
) -> list[str]:
    """What is shown while ``schema``'s one field is answered (its choice ``pick``) on a
    terminal ``columns`` wide: the question, the choices and the field's prompt (up to its
    " >"), the review."""
    params = {"mode": "form", "message": "Au menu", "requestedSchema": schema}
    with in_a_terminal(
        "ask", f"params={json.dumps(params)}", columns=columns, environment=environment
    ) as pty:
        question = pty.expect("cancel >")
        pty.send(ENTER)
        field = pty.expect("Esc: cancel\n")  # the choices, then the keys, above the prompt
        field += "Esc: cancel\n" + pty.expect(" >")
        pty.send(pick + ENTER)
        review = pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect("Answered.")  # 2026-07-28: it goes with the retry
        assert pty.wait() == 0
        raw = pty.raw
    assert raw.isascii() or environment != ASCII_ONLY
    return [question, field + " >", review]


def rows(shown: str) -> list[str]:
    """The rows of ``shown``, each with its runs of spaces one space, none at its ends."""
    return [" ".join(row.split()) for row in shown.splitlines()]


@pytest.mark.parametrize(
    ("columns", "lines"),
    [
        (40, ["H\\xf4te \\U0001f389 pr\\xe9f\\xe9r\\xe9 \\xe0", "la f\\xeate du ch\\xe2teau >"]),
        (20, ["H\\xf4te \\U0001f389", "pr\\xe9f\\xe9r\\xe9", "\\xe0 la f\\xeate du", "ch\\xe2teau >"]),
    ],
)
def test_a_prompt_is_wrapped_between_words_as_it_is_written_by_code(columns: int, lines: list[str]) -> None:
    # The prompt was wrapped on the label's letters, then written by code: at 40 columns
    # "Hôte 🎉 préféré à la fête du château >" fitted one row, but its 64 characters as
    # written did not, and the terminal broke it inside a code ("\xe", "0 la f\xeate"); at
    # 20 columns the rows wrapped on the letters were cut at the edge ("pr\xe9f\xe9r").
    _, field, _ = answered(one_choice(HOST), columns)
    assert "\n".join(lines) in field, field


@pytest.mark.parametrize("columns", [40, 20])
def test_a_prompt_on_a_utf8_terminal_is_wrapped_on_its_letters(columns: int) -> None:
    _, field, _ = answered(one_choice(HOST), columns, UTF8)
    lines = {40: [f"{HOST} >"], 20: ["Hôte 🎉 préféré à la", "fête du château >"]}[columns]
    assert "\n".join(lines) in field, field


def test_a_choice_and_an_answer_keep_their_row_as_written_by_code_at_40_columns() -> None:
    # The columns of the choices and of the review were sized on the letters, then each
    # cell was written by code: "crème brûlée" took 12 columns, "cr\xe8me br\xfbl\xe9e"
    # 24, and was broken over two rows ("cr\xe8me", "br\xfbl\xe9e") with room beside it.
    _, field, review = answered(one_choice("Dessert"), 40, pick="2")
    choices = rows(field)
    assert "1. cr\\xe8me br\\xfbl\\xe9e" in choices, field
    assert "2. \\xeele flottante" in choices, field
    assert "1 Dessert \\xeele flottante" in rows(review), review


def test_an_answer_keeps_its_row_as_written_by_code_at_20_columns() -> None:
    # Under 40 columns the review puts each answer under its label, in a column sized on
    # the letters: "île flottante" took 13 columns, "\xeele flottante" 16 of the 18 there.
    _, _, review = answered(one_choice("Dessert"), 20, pick="2")
    assert "\\xeele flottante" in rows(review), review


@pytest.mark.parametrize("columns", [40, 20])
def test_the_choices_and_the_review_on_a_utf8_terminal_are_laid_out_on_their_letters(columns: int) -> None:
    _, field, review = answered(one_choice("Dessert"), columns, UTF8, pick="2")
    assert {"1. crème brûlée", "2. île flottante"} <= set(rows(field)), field
    assert ("1 Dessert île flottante" if columns == 40 else "île flottante") in rows(review), review
