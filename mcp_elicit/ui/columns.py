"""Text measured and wrapped in the columns a terminal gives it, not in characters: a
Chinese or Japanese letter or an emoji takes two, a combining mark none.

Rules: one measure for every text laid out on a terminal (the terminal answerer's prompts,
``mcp-elicit check``'s report): the more of rich's count (``rich.cells``: an emoji sequence
joined by ZWJ, or with a skin tone, is one emoji) and prompt_toolkit's (each character's own
width, as it lays out a row and cuts it off at the terminal's edge: "👩🏽‍💻" is six), so that
a row never runs past the edge of a terminal that draws a sequence either way. Both tables
are imported only for text that is not all ASCII: an ASCII character takes one column, and a
stdio ``check`` of a server writing ASCII loads neither (``tests/cli/test_lazy_imports.py``).
Without them (mcp-elicit installed without its ``cli`` extra) Unicode's own data measures:
an East Asian wide letter two columns, a mark or a joiner none.
A terminal whose own table is wider than both (newer emoji) can still draw a row wider.
A word too wide for a row is folded between whole characters and their marks, and
between whole codes of characters shown by code (``\\u5929``, ``<U+202E>``); a URL, when
asked, is not (``wrapped``).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from typing import Final

__all__ = ["cells", "wrapped"]

#: What joins the characters on either side into one (an emoji sequence).
_JOINER = "\u200d"
#: A character written as its code, read as one piece: by ``server_text.clean``
#: (``\\x1b``, ``<U+202E>``) or by ``for_encoding`` for a terminal that cannot show it
#: (``\\u5929``, ``\\U0001f389``); else one character.
_PIECE: Final = re.compile(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\U[0-9a-f]{8}|<U\+[0-9A-F]{4,6}>|.", re.DOTALL)


def cells(text: str) -> int:
    """The columns ``text`` (one line, made inert: no control characters) takes."""
    if text.isascii():
        return len(text)
    if "rich" not in sys.modules:  # a bare ``check``: not worth loading the terminal UI for
        return sum(map(_plain, text))
    try:
        from prompt_toolkit.utils import get_cwidth
        from rich.cells import cell_len
    except ImportError:  # no terminal extra (a bare ``check``): the standard library's table
        return sum(map(_plain, text))
    return max(cell_len(text), sum(map(get_cwidth, text)))


def _plain(char: str) -> int:
    """The columns one character takes by Unicode's own data: an East Asian wide or
    full-width one two, a mark or a format character (a joiner) none."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _own(char: str) -> int:
    """The columns one character takes alone (a combining mark or a joiner: none)."""
    return cells(char) if char.isascii() or unicodedata.category(char) not in ("Mn", "Me", "Cf") else 0


def _folded(word: str, width: int) -> list[str]:
    """``word``, too wide for a row alone, in rows of at most ``width`` columns, never
    parted from a mark on its letter (an emoji sequence too wide for a row is parted after
    a joiner, where prompt_toolkit would cut it off), nor inside a character's code
    (``_PIECE``: "\\u59" and "29" would read as other text)."""
    rows = [""]
    for piece in _PIECE.findall(word):
        if rows[-1] and _own(piece[0]) and cells(rows[-1] + piece) > width:
            rows.append("")
        rows[-1] += piece
    return rows


def wrapped(text: str, width: int, *, urls_whole: bool = False) -> list[str]:
    """``text`` in rows of at most ``width`` columns (``cells``), broken between words
    (inside a word only when the word alone is too wide); a line break in it stays one.
    With ``urls_whole``, a word with ``://`` in it (a URL) too wide for a row is not folded
    but given a row of its own, longer than ``width``: the terminal wraps it where the text
    is printed, and it copies as one (not where prompt_toolkit lays the rows out: it cuts a
    row off at the terminal's edge)."""
    rows: list[str] = []
    for line in text.split("\n"):
        start = len(rows)
        for word in line.split():
            if len(rows) > start and cells(f"{rows[-1]} {word}") <= width:
                rows[-1] += f" {word}"
            elif cells(word) > width and not (urls_whole and "://" in word):
                rows.extend(_folded(word, width))
            else:
                rows.append(word)
    return rows or [text]
