"""A peer's text made inert for display (``mcp_elicit.inert_text``): one rule, written once,
that ``core.quoting.shown_text`` (a server's text in a message to a person) and the telemetry
attributes and log lines (``telemetry_attributes.name_shown``, ``log_labels.inert``) share,
the only difference a parameter: whether a space separator stays a space."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from mcp_elicit import log_labels, telemetry_attributes
from mcp_elicit.core.quoting import shown_text
from mcp_elicit.inert_text import inert

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_elicit"
#: Every code point, in one text: a surrogate, a format character, a space separator, NUL.
EVERY = "".join(map(chr, range(0x110000)))


def _escaped(ch: str) -> str:
    return repr(ch)[1:-1]


def test_every_character_not_printable_is_written_as_its_escape() -> None:
    expected = "".join(ch if ch.isprintable() else _escaped(ch) for ch in EVERY)
    assert inert(EVERY) == expected
    assert inert(EVERY).isprintable()


def test_a_space_separator_stays_a_space_when_asked() -> None:
    kept = {"\u00a0", "\u3000", "\u2007", "\u202f", "\u1680"}
    assert kept <= {ch for ch in EVERY if unicodedata.category(ch) == "Zs"}
    expected = "".join(
        ch if ch.isprintable() or unicodedata.category(ch) == "Zs" else _escaped(ch) for ch in EVERY
    )
    assert inert(EVERY, spaces=True) == expected
    assert inert("山田\u3000太郎\u00a0様\n", spaces=True) == "山田\u3000太郎\u00a0様\\n"
    assert inert("山田\u3000太郎\u00a0様\n") == "山田\\u3000太郎\\xa0様\\n"


def test_printable_text_is_returned_as_is() -> None:
    text = "tools/call 'book' — ok ✓"
    assert inert(text) is text and inert(text, spaces=True) is text


def test_each_caller_uses_the_one_rule() -> None:
    """``shown_text`` keeps spaces, the telemetry attributes and log lines escape them; both
    are this module's rule, not copies of it."""
    assert shown_text(EVERY) == inert(EVERY, spaces=True)
    assert log_labels.inert is inert
    assert telemetry_attributes.name_shown("a\u3000b\x1b") == "a\\u3000b\\x1b"
    assert log_labels.peer_text("a\u3000b\x1b[2K") == "a\\u3000b\\x1b[2K"


def test_no_module_writes_escapes_of_its_own() -> None:
    """The rule is written once: no other module of the package escapes a character by
    cutting the quotes off its ``repr``."""
    copies = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "inert_text.py"
        and re.search(r"repr\(\w+\)\[1:-1\]", path.read_text(encoding="utf-8"))
    ]
    assert copies == []
