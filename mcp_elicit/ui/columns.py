"""Text measured and wrapped in the columns a terminal gives it, not in characters: a
Chinese or Japanese letter or an emoji takes two, a combining mark none.

Rules: one width table, rich's (``rich.cells``), for every text laid out on a terminal (the
terminal answerer's prompts, ``mcp-elicit check``'s report). It is imported only for text
that is not all ASCII: an ASCII character takes one column, and a stdio ``check`` of a server
writing ASCII does not load rich (``tests/cli/test_lazy_imports.py``). A terminal whose own
table differs from rich's (newer emoji, emoji sequences) can still draw a row wider.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["cells", "wrapped"]


def cells(text: str) -> int:
    """The columns ``text`` (one line, made inert: no control characters) takes."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


@cache
def _measure() -> Console:
    """A console that measures and wraps (it is never printed to)."""
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), width=80, color_system=None)


def wrapped(text: str, width: int) -> list[str]:
    """``text`` in rows of at most ``width`` columns (``cells``), broken between words
    (inside a word only when the word alone is too wide)."""
    from rich.text import Text

    lines = Text(text).wrap(_measure(), width, overflow="fold")
    rows = [line.plain.rstrip() if n == 0 else line.plain.strip() for n, line in enumerate(lines)]
    return [row for row in rows if row] or [text]
