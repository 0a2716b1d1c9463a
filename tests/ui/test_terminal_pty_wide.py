"""The terminal answerer's prompts on a UTF-8 terminal, narrow, with labels whose characters
do not each take one column: Chinese and Japanese letters and emoji take two, combining
marks none. A prompt is laid out in the columns its text takes (as rich measures them),
wrapped between words, so the terminal never breaks a row at its edge; a server's " · " in
a label is its text, not the client's separator between keys (``in_a_terminal``)."""

from __future__ import annotations

import itertools
import json
import sys
import unicodedata

import pytest
from cli.pty_session import CTRL_U, ENTER
from prompt_toolkit.utils import get_cwidth
from rich.cells import cell_len

from ui.test_terminal_pty import asking, in_a_terminal
from ui.test_terminal_pty_ascii import UTF8, answered, one_choice

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

LABELS = {
    "cjk": "お届け希望日 delivery date を選んでください",  # 29 characters, 43 columns
    "emoji": "🎉🎂 Party cake 🎈🎁 for the big day 🍰🎊 yay",  # 39 characters, 45 columns
    # 54 characters, 45 columns: each accent is a character of its own, on the letter before it
    "combining": "Cafe\u0301 cre\u0300me bru\u0302le\u0301e nai\u0308ve fiance\u0301e re\u0301sume\u0301 expose\u0301",
    "separator": "Tea · coffee or juice with your breakfast please",
    # emoji joined by ZWJ, with a skin tone: rich counts each sequence two columns,
    # prompt_toolkit draws each emoji in it in two
    "zwj": "Family 👨\u200d👩\u200d👧\u200d👦 and 👩🏽\u200d💻 coders 🏳️\u200d🌈 parade tonight",
}


def prompt_rows(field: str) -> list[str]:
    """The rows of a field's prompt, shown after the keys printed above it."""
    return field.rpartition("Esc: cancel\n")[2].split("\n")


def drawn(text: str) -> int:
    """The columns ``text`` takes: as rich counts them, or as prompt_toolkit draws it (each
    emoji of a ZWJ sequence in two columns), whichever is more."""
    return max(cell_len(text), sum(map(get_cwidth, text)))


def assert_wrapped_between_words(rows: list[str], text: str, columns: int) -> None:
    """``rows`` are ``text`` broken between its words only, each row within ``columns`` and
    holding as many words as fit (none broken early). A letter and its combining marks are
    drawn as one character where Unicode has one (NFC), each mark once."""
    assert " ".join(row.strip() for row in rows) == unicodedata.normalize("NFC", text), rows
    for row, after in itertools.pairwise(rows):
        assert drawn(row.rstrip()) <= columns, (row, rows)
        assert drawn(f"{row.rstrip()} {after.split()[0]}") > columns, (row, after, rows)
    assert drawn(rows[-1].rstrip()) <= columns, rows


@pytest.mark.parametrize("columns", [40, 20])
@pytest.mark.parametrize("kind", list(LABELS))
def test_a_prompt_is_wrapped_in_the_columns_its_letters_take(kind: str, columns: int) -> None:
    # The prompt was wrapped on its characters: a CJK or emoji label, two columns a letter,
    # made rows wider than the terminal, which broke them at its edge inside a word
    # ("お届け希望日 deliver", "y"); combining marks, no column, made rows end early. A " · "
    # in the server's label was taken for the client's separator between keys, so the row
    # ended there ("Tea", "coffee or juice ...") with room for more, and the " · " was lost.
    # prompt_toolkit drew a combining mark ending a row twice ("résumé́"), or dropped it.
    # Rows were then laid out in rich's columns, which count a ZWJ sequence as one emoji,
    # but prompt_toolkit draws each emoji in it in two and cut the row off at the terminal's
    # edge: "👩🏽‍💻" was never shown.
    _, field, _ = answered(one_choice(LABELS[kind]), columns, UTF8)
    assert_wrapped_between_words(prompt_rows(field), f"{LABELS[kind]} >", columns)


def refusal_rows(title: str, columns: int) -> list[str]:
    """The rows of the reason "9" is refused at a field titled ``title`` (a whole number
    from 1 to 5), on a UTF-8 terminal ``columns`` wide."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "title": title, "minimum": 1, "maximum": 5}},
        "required": ["n"],
    }
    params = {"mode": "form", "message": "How many?", "requestedSchema": schema}
    with in_a_terminal("ask", f"params={json.dumps(params)}", columns=columns, environment=UTF8) as pty:
        pty.expect("cancel >")
        pty.send(ENTER)
        pty.expect("Esc: cancel\n")
        pty.expect(" >")
        pty.send("9")
        reason = pty.expect("must") + "must"  # one word: never broken
        reason += pty.expect("5") + "5"
    return [row for row in reason.rpartition("9")[2].split("\n") if row.strip()]


@pytest.mark.parametrize("columns", [40, 20])
@pytest.mark.parametrize("kind", ["cjk", "emoji", "combining", "zwj"])
def test_the_reason_an_answer_is_refused_is_wrapped_in_its_columns(kind: str, columns: int) -> None:
    # The reason under the prompt, which names the field, was wrapped on its characters too.
    rows = refusal_rows(LABELS[kind], columns)
    assert_wrapped_between_words(rows, f"{LABELS[kind]} must be at most 5", columns)


def sent(default: str, typed: str | None) -> str:
    """The answer the server is sent (as its tool returns it, JSON) for a text field whose
    default is ``default``, on a UTF-8 terminal: Enter on the default, or ``typed`` in its
    place."""
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "title": "Nom", "default": default}},
        "required": ["s"],
    }
    with in_a_terminal(*asking("Au menu", schema), columns=40, environment=UTF8) as pty:
        pty.expect("cancel >")
        pty.send(ENTER)
        pty.expect("Nom >")
        if typed is not None:
            pty.send(CTRL_U + typed)
        pty.send(ENTER)
        pty.expect("Enter: send")
        pty.send(ENTER)
        pty.expect("Answered.")  # 2026-07-28: it goes with the retry
        assert pty.wait() == 0
        return pty.screen[pty.screen.rindex('{"action"') :].split("\n")[0].strip()


@pytest.mark.parametrize(
    ("default", "typed"),
    [("Cafe\u0301 cre\u0300me", None), ("x", "re\u0301sume\u0301 nai\u0308ve"), ("Cafe\u0301", "Cafe\u0301")],
)
def test_an_answer_is_sent_as_it_was_typed_or_given_never_composed(default: str, typed: str | None) -> None:
    # The prompt's text is drawn composed (NFC); what the person answers is theirs, and
    # reaches the server byte for byte as typed, or as the server's default was.
    answer = sent(default, typed)
    want = typed if typed is not None else default
    assert json.loads(answer) == {"action": "accept", "content": {"s": want}}, answer


HOSTILE = {
    "ambiguous": "Größe ±5° ①②③ ※ §¶ Ω ★☆ → ← ×÷ ½ ¼ settings ok",
    "tab": "Left\tright\tand\tcentre of the\ttable please now",
    "joiners": "a\u200db\u200cc\u2060d word\u200d ZW\u200dJ joined here ok",
    # one emoji sequence joined too long for a row: broken inside it, as a long word is
    "chain": "Team " + "\u200d".join(["👨", "👩", "👧", "👦"] * 3) + " ok",
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_awkward_server_text_never_makes_a_row_wider_than_the_terminal(kind: str) -> None:
    # East Asian ambiguous letters, tabs, lone joiners and a chain of emoji joined wider
    # than the terminal in a label: the prompt is drawn whole, every row within 20 columns.
    # A chain was never broken after a joiner, so prompt_toolkit cut its row off at the edge.
    _, field, _ = answered(one_choice(HOSTILE[kind]), 20, UTF8)
    rows = prompt_rows(field)
    assert rows and rows[-1].endswith(">"), rows
    if kind != "joiners":  # a lone joiner is shown by its code
        # a joiner, no column, that ends a full row is not drawn: it joins nothing there
        seen, said = ("".join(text.replace("\u200d", "").split()) for text in ("".join(rows), HOSTILE[kind]))
        assert seen == f"{said}>", rows
    for row in rows:
        assert drawn(row.rstrip()) <= 20, (row, rows)
